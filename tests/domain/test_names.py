"""The name policy against spoofing (domain/names.py, docs/decisions.md D-doors): names that
pass for the service's own, hide characters, blank out or spill over their neighbours are
refused with a detail naming what was refused; ordinary names in any script, with accents
and emoji, are kept as written; at a table, a name may not look like another seat's."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest

from domain.game.match import Match
from domain.names import InvalidNameError, check_apart, checked_name
from domain.rules.ruleset import STANDARD

T0 = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)

SPOOFS = [
    # (name, what the detail says)
    ("\u0435rased player", "Cyrillic and Latin"),  # a Cyrillic е
    ("erased pl\u0430yer", "Cyrillic and Latin"),  # a Cyrillic а
    ("ERASED PLAYER", "name the service shows"),
    ("erased\u00a0player", "name the service shows"),  # a no-break space
    ("unavailable  name", "name the service shows"),
    ("heuristic bot l", "name the service shows"),  # l for 1
    ("Heuristic Bot I", "name the service shows"),  # I for 1
    ("strong bot \U0001d7d0", "name the service shows"),  # a mathematical bold 2
    ("random bot \uff10", "name the service shows"),  # a full-width 0
    ("g\u057dest", "the service's names for a person"),  # an Armenian ս
    ("Organiser", "name the service shows"),
    ("\u043erganiser", "Cyrillic and Latin"),
    ("Mei\u200b", "U+200B ZERO WIDTH SPACE"),
    ("\u200dAnn", "U+200D ZERO WIDTH JOINER"),  # a joiner outside an emoji
    ("An\u00adn", "U+00AD SOFT HYPHEN"),
    ("Ann\u2060", "U+2060 WORD JOINER"),
    ("\ufe0fAnn", "U+FE0F VARIATION SELECTOR-16"),  # a selector outside an emoji
    ("\u3164", "U+3164 HANGUL FILLER"),
    ("\u3164Lin", "U+3164 HANGUL FILLER"),
    ("\u2800", "U+2800 BRAILLE PATTERN BLANK"),
    ("\u2800\u2800\u2800", "U+2800 BRAILLE PATTERN BLANK"),
    ("Ann\U000e0041\U000e0042", "U+E0041 TAG LATIN CAPITAL LETTER A"),  # hidden tag text
    ("\U000e0067\U000e0062", "U+E0067 TAG LATIN SMALL LETTER G"),
    ("Z" + "\u0301\u0302\u0303\u0304\u0305" * 4 + "algo", "more than 4 combining marks"),
    ("a\u0301\u0301", "repeat a combining mark"),
    ("\ufdfd" * 100, "U+FDFD ARABIC LIGATURE BISMILLAH"),
    ("\u0410nn Smith", "Cyrillic and Latin"),  # a Cyrillic А
    ("Player \u06612", "digits of two numbering systems"),
]

ORDINARY = [
    "李明",
    "王小红",
    "José Álvarez",
    "Zoë",
    "Nguyễn Thị Thu",  # two marks on one letter
    "Дмитрий",
    "Ελένη",
    "さくら",
    "김민수",
    "محمد",
    "Mei 李",  # Latin with Han
    "O'Brien",
    "Jean-Luc",
    "🐼",
    "Mei 🐼",
    "❤️ Lin",  # a variation selector inside an emoji
    "👨\u200d👩\u200d👧 family",  # joiners inside an emoji
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Scot",  # a flag's tags
    "guest",  # the service's name for a person: written by a person, it means the same
    "random bot 2 fan",
]


@pytest.mark.parametrize(("name", "why"), SPOOFS)
def test_spoofing_names_are_refused_saying_what(name: str, why: str) -> None:
    with pytest.raises(InvalidNameError) as refused:
        checked_name(name, "displayName")
    assert refused.value.code == "invalid-name"
    assert refused.value.detail.startswith("displayName ") and why in refused.value.detail


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names_are_kept_as_written(name: str) -> None:
    assert checked_name(name, "displayName") == name


def test_the_service_names_its_bots() -> None:
    assert checked_name("heuristic bot 1", "name", bot=True) == "heuristic bot 1"
    with pytest.raises(InvalidNameError):
        checked_name("heuristic bot l", "name", bot=True)  # not the bot's own name either


@pytest.mark.parametrize(
    ("here", "name", "apart"),
    [
        ("Kim", "Kirn", False),  # rn for m
        ("poe", "\u0440\u043e\u0435", False),  # Cyrillic р о е, one script
        ("Kim", "KIM", False),
        ("Kim", "Kim", False),
        ("guest", "guest", True),  # two guests who wrote no name
        ("Ann", "Anne", True),
        ("李明", "李朋", True),
    ],
)
def test_at_a_table_a_name_may_not_look_like_another_seats(
    here: str, name: str, apart: bool
) -> None:
    match = Match.create(STANDARD, T0, match_id=UUID(int=1))
    match.take_seat(0, here, "human", "h0", T0, distinct=True)
    if apart:
        match.take_seat(1, name, "human", "h1", T0, distinct=True)
        check_apart(name, [here], "name")
    else:
        with pytest.raises(InvalidNameError) as refused:
            match.take_seat(1, name, "human", "h1", T0, distinct=True)
        assert f"looks like {here!r}" in refused.value.detail
        match.take_seat(1, name, "human", "h1", T0)  # the service seats names chosen elsewhere
