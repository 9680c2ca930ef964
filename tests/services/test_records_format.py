"""The record's JSON format, its canonical encoding and the text notation (docs/records.md;
docs/records.md): tables of what reads, what is refused (``record-invalid``, naming
the field or the line), and text ↔ JSON conversions that lose nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
import pytest

from domain.game import round_events as ev
from domain.game.match_events import MatchCreated, RoundBegun, RoundRecorded, SeatTaken
from domain.rules.cards import card_names
from services.records.canonical import canonical
from services.records.export import (
    CONSEQUENCES,
    MOVE_EVENTS,
    UnknownEventError,
    export_match,
    round_moves,
)
from services.records.format import (
    FORMAT,
    RecordInvalidError,
    decode,
    digest,
    encode,
    offset_text,
)
from services.records.text import read_text, write_text
from tests.conftest import T0
from tests.services.test_records_play import play_match, rules_of

SEED = "ab" * 32
COMMITMENT = "9f" * 32
Doc = dict[str, Any]


def sample() -> Doc:
    """A record of the right shape (not a replayable game: the format alone is tested)."""
    at = "2026-01-01T12:00:00.000000Z"
    return {
        "format": FORMAT,
        "kind": "match",
        "name": 'Friday "club" 周五',
        "preset": "standard",
        "rules": rules_of(1).to_mapping(),
        "timers": {"declareMs": 20000, "buryMs": 30000, "playMs": 15000},
        "started": at,
        "seats": [
            {"seat": 2, "name": "北 north", "kind": "human", "at": "2026-01-01T12:00:01.500000Z"},
            {"seat": 0, "name": "b0", "kind": "heuristic", "at": "2026-01-01T12:00:02.000000Z"},
        ],
        "rounds": [
            {
                "number": 1,
                "dealer": None,
                "levels": ["2", "2"],
                "deals": [
                    {
                        "at": "2026-01-01T12:00:02.000000Z",
                        "firstSeat": 0,
                        "intervalMs": 250,
                        "declareMs": 30000,
                        "windowMs": 0,
                        "seed": SEED,
                        "commitment": COMMITMENT,
                    }
                ],
                "actions": [
                    _move("12:00:03.000001", 1, "declare", ["2H"]),
                    _move("12:00:03.000001", None, "claim", []),
                    _move("12:00:40.000000", 2, "pass", []),
                    _move("12:00:41.250000", 0, "bury", parse_names("3S 3S 4C 5D 6D 7H 8H 9C")),
                    _move("12:01:00.000000", 0, "play", ["10H", "10H", "JH", "JH"], "seat 3"),
                ],
                "result": {
                    "dealer": 0,
                    "trickPoints": 60,
                    "bottom": ["5D", "KD"],
                    "bottomPoints": 15,
                    "multiplier": 4,
                    "bottomBonus": 60,
                    "penalties": [10, 0],
                    "attackersTotal": 130,
                    "outcome": "attackers_take_over_and_up",
                    "band": "120-155",
                    "levelsGained": 1,
                    "defendersKeep": False,
                    "nextDealer": 1,
                },
                "abandoned": None,
            },
        ],
        "end": {
            "at": "2026-01-01T12:05:00.000000Z",
            "reason": "the club closes",
            "winner": None,
            "levels": ["3", "2"],
            "laps": [0, 1],
        },
    }


def parse_names(text: str) -> list[str]:
    return text.split()


def _move(
    time: str, seat: int | None, action: str, cards: list[str], timeout: str | None = None
) -> Doc:
    return {
        "at": f"2026-01-01T{time}Z",
        "seat": seat,
        "action": action,
        "cards": cards,
        "timeout": timeout,
    }


def read(doc: Doc) -> bytes:
    return encode(canonical(decode(msgspec.json.encode(doc))))


# -- canonical JSON ---------------------------------------------------------------------------


def _values(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [v for value in node.values() for v in _values(value)]
    if isinstance(node, list):
        return [v for value in node for v in _values(value)]
    return [node]


def test_canonical_json_has_a_fixed_key_order_no_floats_and_raw_utf8() -> None:
    data = read(sample())
    assert data.startswith(b'{"format":"shengji-record/1","kind":"match","name":')
    assert "周五".encode() in data and b"\\u" not in data  # UTF-8, not \u escapes
    decoded = msgspec.json.decode(data)
    assert msgspec.json.encode(decoded) == data  # no insignificant whitespace
    assert list(decoded["rules"]) == sorted(decoded["rules"])
    assert list(decoded["rounds"][0]["result"])[:3] == ["dealer", "trickPoints", "bottom"]
    assert not any(isinstance(v, float) for v in _values(decoded))
    assert read(decoded) == data  # canonical is a fixed point


@pytest.mark.parametrize(
    ("path", "given", "canonical_value"),
    [
        (("rounds", 0, "actions", 0, "cards"), ["2h"], ["2H"]),  # R4 tokens in upper case
        (("rounds", 0, "actions", 4, "cards"), ["10h", "10H", "jh", "JH"],
         ["10H", "10H", "JH", "JH"]),
        (("started",), "2026-01-01T12:00:00Z", "2026-01-01T12:00:00.000000Z"),
        (("started",), "2026-01-01T20:00:00+08:00", "2026-01-01T12:00:00.000000Z"),
        (("rounds", 0, "deals", 0, "seed"), SEED.upper(), SEED),
        (("rules", "level_cap"), "none", None),  # §10 spelling of "no cap"
        (("timers",), {"declareMs": 0, "buryMs": 0, "playMs": 0}, None),  # no limits = none
    ],
)  # fmt: skip
def test_canonical_form(path: tuple[Any, ...], given: object, canonical_value: object) -> None:
    doc = sample()
    target: Any = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = given
    out = msgspec.json.decode(read(doc))
    for step in path:
        out = out[step]
    assert out == canonical_value


def test_the_digest_is_the_sha256_of_the_canonical_bytes() -> None:
    data = read(sample())
    assert digest(data).startswith("sha256:") and len(digest(data)) == 71
    other = sample()
    other["name"] = "another"
    assert digest(read(other)) != digest(data)


INVALID = [
    ("not JSON", None, "not JSON"),
    ("format", lambda d: d.update(format="shengji-record/2"), "format"),
    ("unknown field", lambda d: d.update(extra=1), "extra"),
    ("missing field", lambda d: d.pop("started"), "started"),
    ("float", lambda d: d["end"].update(winner=0.5), "winner"),
    ("card token", lambda d: d["rounds"][0]["actions"][0].update(cards=["11H"]), "11H"),
    ("rule set", lambda d: d["rules"].update(bottom_multiplier="cubic"), "bottom_multiplier"),
    ("unknown rule", lambda d: d["rules"].update(jokers_wild=True), "jokers_wild"),
    ("timer", lambda d: d["timers"].update(playMs=5), "play"),
    ("time", lambda d: d.update(started="yesterday"), "started"),
    ("time zone", lambda d: d.update(started="2026-01-01T12:00:00"), "time zone"),
    ("seed", lambda d: d["rounds"][0]["deals"][0].update(seed="xyz"), "seed"),
    ("seat", lambda d: d["seats"][0].update(seat=4), "seat"),
    ("seat twice", lambda d: d["seats"][1].update(seat=2), "R1"),
    ("claim with a seat", lambda d: d["rounds"][0]["actions"][1].update(seat=1), "claim"),
    ("pass with cards", lambda d: d["rounds"][0]["actions"][2].update(cards=["2H"]), "pass"),
    ("play without cards", lambda d: d["rounds"][0]["actions"][4].update(cards=[]), "needs cards"),
    ("unknown action", lambda d: d["rounds"][0]["actions"][2].update(action="fold"), "fold"),
    ("timeout of a claim", lambda d: d["rounds"][0]["actions"][1].update(timeout="x"), "timeout"),
    ("round number", lambda d: d["rounds"][0].update(number=2), "round 1 expected"),
    ("no end", lambda d: d.update(end=None), "end"),
    ("unscored round", lambda d: d["rounds"][0].update(result=None), "scored or abandoned"),
    ("abandoned with moves", lambda d: d["rounds"][0].update(
        abandoned={"at": d["started"], "reason": "x"}, result=None), "secret"),
    ("round record of two rounds", lambda d: d.update(kind="round", end=None,
        rounds=[*d["rounds"], d["rounds"][0]]), "exactly one round"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "change", "names"), INVALID, ids=[c[0] for c in INVALID])
def test_an_unreadable_record_is_invalid_naming_the_field(
    name: str, change: Any, names: str
) -> None:
    doc = sample()
    if change is None:
        data = b"{not json"
    else:
        change(doc)
        data = msgspec.json.encode(doc)
    with pytest.raises(RecordInvalidError) as info:
        canonical(decode(data))
    assert info.value.code == "record-invalid"
    assert names in info.value.detail, info.value.detail


# -- text notation ----------------------------------------------------------------------------


def test_text_holds_exactly_what_json_holds() -> None:
    record = canonical(decode(msgspec.json.encode(sample())))
    text = write_text(record)
    assert encode(read_text(text)) == encode(record)
    assert write_text(read_text(text)) == text


@pytest.mark.parametrize("band", ["0", "80", "120-155"])
def test_a_band_that_reads_like_a_number_stays_text(band: str) -> None:
    """R30's bands are text ("0" attackers' points is a band of its own): the notation
    must not turn "0" into a number (found by the round-trip property test)."""
    doc = msgspec.json.decode(msgspec.json.encode(sample()))
    doc["rounds"][-1]["result"]["band"] = band
    record = canonical(decode(msgspec.json.encode(doc)))
    text = write_text(record)
    assert encode(read_text(text)) == encode(record)


def test_the_text_notation_reads_like_this() -> None:
    text = write_text(canonical(decode(msgspec.json.encode(sample()))))
    lines = text.splitlines()
    assert lines[:4] == [
        "% Shengji game record: docs/records.md",
        '[Format "shengji-record/1"]',
        '[Kind "match"]',
        '[Name "Friday \\"club\\" 周五"]',
    ]
    assert '[Seat "2 human +1.5 北 north"]' in lines
    assert '[Timers "declare=20000 bury=30000 play=15000"]' in lines
    assert f'[Deal "+2 0 250 30000 0 {SEED} {COMMITMENT}"]' in lines
    assert "1. S1 declare 2H {+3.000001}" in lines
    assert "2. claim" in lines  # same time as the move before: no clock
    assert "4. S0 bury 3S 3S 4C 5D 6D 7H 8H 9C {+41.25}" in lines
    assert "5. S0 play 10H 10H JH JH (timeout: seat 3) {+60}" in lines
    assert any(line.startswith('[Result "dealer=0 trickPoints=60 bottom=5D,KD ') for line in lines)
    assert "penalties=10,0" in text
    assert lines[-1] == '[End "+300 - 3 2 0 1 the club closes"]'


def test_text_accepts_comments_blank_lines_and_lower_case_cards() -> None:
    record = canonical(decode(msgspec.json.encode(sample())))
    text = write_text(record).replace("1. S1 declare 2H", "% a comment\n\n1. S1 declare 2h")
    assert encode(read_text(text)) == encode(record)


BAD_TEXT = [
    ("[Format shengji]", 2, "tag pair"),
    ('[Colour "red"]', 2, "unknown tag"),
    ("1. S1 declare 2H", 2, "before the Started tag"),
    ("7. S1 play 2H", 0, "move 1 expected"),
    ("1. S5 play 2H", 0, "neither a tag nor a move"),
    ("1. S1 play 2H {3.5}", 0, "neither a tag nor a move"),
    ('[Seat "1 human"]', 2, "expected 4 fields"),
    ('[Rules "level_cap"]', 2, "name=value"),
    ('[Result "score=12"]', 0, "a result field is one of"),
]


@pytest.mark.parametrize(("line", "where", "says"), BAD_TEXT, ids=[b[0] for b in BAD_TEXT])
def test_unreadable_text_is_invalid_naming_the_line(line: str, where: int, says: str) -> None:
    good = write_text(canonical(decode(msgspec.json.encode(sample())))).splitlines()
    if where:  # inserted right after the comment line
        lines = [good[0], line, *good[1:]]
        number = 2
    else:  # in place of the first move
        number = next(i for i, text in enumerate(good) if text.startswith("1. ")) + 1
        lines = [*good[: number - 1], line, *good[number:]]
    with pytest.raises(RecordInvalidError) as info:
        read_text("\n".join(lines))
    assert info.value.detail.startswith(f"line {number}: "), info.value.detail
    assert says in info.value.detail


@pytest.mark.parametrize(
    ("micros", "text"),
    [
        (0, "+0"),
        (3_250_000, "+3.25"),
        (1, "+0.000001"),
        (-1_500_000, "-1.5"),
        (86_400_000_000, "+86400"),
    ],
)
def test_times_are_seconds_since_started(micros: int, text: str) -> None:
    moment = T0 + timedelta(microseconds=micros)
    assert offset_text(moment, T0) == text


# -- events → moves ---------------------------------------------------------------------------


def test_every_round_event_is_a_move_or_a_consequence() -> None:
    """A new event the record does not cover fails here (and the export refuses it)."""
    covered = set(CONSEQUENCES) | set(MOVE_EVENTS)
    assert set(ev.ROUND_EVENTS) <= covered, set(ev.ROUND_EVENTS) - covered


def test_an_unknown_event_fails_the_export_loudly() -> None:
    class Mystery:
        timestamp = T0

    with pytest.raises(UnknownEventError):
        round_moves([Mystery()])


def test_moves_come_from_the_events_of_a_played_match() -> None:
    svc, match_id = play_match(1)
    match_events = list(svc.events.get(match_id))
    assert isinstance(match_events[0], MatchCreated)
    assert sum(isinstance(e, SeatTaken) for e in match_events) == 4
    begun = next(e for e in match_events if isinstance(e, RoundBegun))
    events = list(svc.events.get(begun.round_id))
    deals, moves = round_moves(events)
    plays = [e for e in events if isinstance(e, ev.CardPlayed)]
    failed = [e for e in events if isinstance(e, ev.ThrowFailed)]
    assert len([m for m in moves if m.action == "play"]) == len(plays)  # R22: one per play
    for f in failed:  # a failed throw is the play of the cards attempted (R22)
        assert any(m.cards == [c for c in card_names(f.attempted)] for m in moves)
    assert len(deals) == sum(isinstance(e, ev.Dealt) for e in events)
    passes = sum(isinstance(e, ev.Passed) for e in events)
    assert len([m for m in moves if m.action == "pass"]) == passes
    assert any(isinstance(e, RoundRecorded) for e in match_events)


def test_an_export_is_the_same_bytes_every_time() -> None:
    svc, match_id = play_match(2)
    first = encode(export_match(svc, match_id))
    assert first == encode(export_match(svc, match_id))
    assert encode(canonical(decode(first))) == first
