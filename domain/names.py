"""One policy for every name a person writes and others read: players' display names,
seat names, team, player, match and tournament names, and the names of an imported
record (docs/decisions.md D-integrity, D-doors).

A name is stored Unicode-normalised (NFC) and shown exactly as written; nothing is removed
from it silently. It is refused, with a problem naming the field and what was refused
(422 ``invalid-name``), when it holds, or is:

* a control character, or a bidirectional override or isolate (they reorder the text
  around them);
* a **default-ignorable** code point (Unicode's Default_Ignorable_Code_Point: zero-width
  spaces and joiners, the Hangul fillers, variation selectors, tag characters …) — except
  inside an emoji sequence Unicode recommends (RGI: ``❤️``, ``👨‍👩‍👧``, a subdivision flag),
  where they are part of the emoji;
* a character UTS 39 marks as not for ordinary text (its Identifier_Type: technical —
  the braille blank U+2800, the ligature U+FDFD —, obsolete, historic, deprecated, or not a
  character);
* more than four combining marks in a row, or one mark twice in a row (UTS 39 §5.4:
  "Zalgo" text spilling over its neighbours);
* letters of scripts UTS 39's **moderately restrictive** level does not allow together
  (``еrased`` with a Cyrillic е; Latin with Han, Hiragana, Katakana or Hangul is fine),
  or digits of two numbering systems;
* no letter, digit, symbol or emoji at all, or more than its limit — counted in
  characters after compatibility decomposition (NFKC), so a ligature that stands for a
  phrase counts as the phrase;
* **confusable** (UTS 39 skeleton, case ignored) with a name the service shows itself —
  ``erased player``, ``unavailable name``, ``organiser``, the bots' default names
  (``random bot 2``; only the service names a bot so) — or a look-alike of the names it
  gives a person who wrote none (``guest``, ``player``: those very names are allowed);
* at a table, confusable with another seat's name (:func:`check_apart`: ``Kirn`` beside
  ``Kim``; two seats may both be a plain ``guest``).

Unicode's data comes from ICU (UTS 39's reference implementation, through PyICU: its
``SpoofChecker``, properties and emoji sets), pure functions over tables, no IO
(docs/decisions.md D-doors). A name that looks like a sealed value (``enc:v1:…``) is plain
text and reads as written, since sealed values are typed (:mod:`services.accounts.keys`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import Final

import icu  # PyICU: no type hints (pyproject.toml: mypy ignores its imports)

from domain.rules.errors import InvalidInputError

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Marks and embeddings, overrides and isolates (Unicode Bidi_Control)."""
BOT_KINDS: Final = ("random", "heuristic", "strong")
BOT_NAMES: Final = frozenset(f"{kind} bot {seat}" for kind in BOT_KINDS for seat in range(4))
"""The bots' default seat names (a person's name may not pass for a bot's)."""
SHOWN: Final = frozenset({"erased player", "unavailable name", "organiser", "organizer"})
"""What the service shows in place of a name, or for someone who is not a seat."""
DEFAULTS: Final = frozenset({"guest", "player"})
"""What the service calls a person who wrote no name: allowed as written, not a look-alike."""
MAX_MARKS: Final = 4
"""Combining marks in a row (UTS 39 §5.4)."""
UNFIT_TYPES: Final = ("Technical", "Obsolete", "Exclusion", "Deprecated", "Not_Character")
"""UTS 39 Identifier_Types of characters not for ordinary text."""

_UNFIT: Final = {t: icu.UnicodeSet(f"[:Identifier_Type={t}:]") for t in UNFIT_TYPES}
_IGNORABLE: Final = icu.UnicodeSet("[:Default_Ignorable_Code_Point:]")
_EMOJI: Final = icu.UnicodeSet("[:RGI_Emoji:]")
_MARKS: Final = frozenset({"Mn", "Me"})
_SEEN: Final = frozenset({"L", "N", "S"})
_CHECKS: Final = (
    icu.USpoofChecks.RESTRICTION_LEVEL
    | icu.USpoofChecks.MIXED_SCRIPT_CONFUSABLE
    | icu.USpoofChecks.INVISIBLE
    | icu.USpoofChecks.MIXED_NUMBERS
)


def _spoof_checker() -> icu.SpoofChecker:
    checker = icu.SpoofChecker()
    checker.setChecks(_CHECKS)
    checker.setRestrictionLevel(icu.URestrictionLevel.MODERATELY_RESTRICTIVE)
    return checker


_CHECKER: Final = _spoof_checker()


class InvalidNameError(InvalidInputError):
    """A name the policy refuses; ``field`` names it."""

    code = "invalid-name"

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field} {why}")
        self.field = field


def _named(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '(unnamed)')}"


def _clusters(text: str) -> Iterator[str]:
    """``text``'s grapheme clusters (what a reader sees as one character, UAX 29)."""
    breaks = icu.BreakIterator.createCharacterInstance(icu.Locale.getRoot())
    unit = icu.UnicodeString(text)
    breaks.setText(unit)
    start = breaks.first()
    for end in breaks:
        yield str(unit[start:end])
        start = end


def keys(name: str) -> frozenset[str]:
    """What ``name`` looks like: its UTS 39 skeleton, case and runs of spaces ignored
    (two names look alike when their keys meet)."""
    found = set()
    for form in (name, name.casefold(), unicodedata.normalize("NFKC", name).casefold()):
        skeleton = str(_CHECKER.getSkeleton(0, form)).casefold()
        found.add(" ".join(skeleton.split()))
    return frozenset(found)


def _keys_of(names: Iterable[str]) -> frozenset[str]:
    return frozenset(k for n in names for k in keys(n))


_SHOWN_KEYS: Final = _keys_of(SHOWN)
_BOT_KEYS: Final = _keys_of(BOT_NAMES)
_DEFAULT_KEYS: Final = _keys_of(DEFAULTS)


def look_alike(a: str, b: str) -> bool:
    """``a`` and ``b`` are confusable (UTS 39), case and spacing aside."""
    return not keys(a).isdisjoint(keys(b))


def _check_characters(name: str, field: str) -> None:
    for cluster in _clusters(name):
        if _EMOJI.contains(cluster):
            continue  # an emoji sequence: its joiners and selectors belong to it
        for ch in cluster:
            if ch in BIDI_CONTROLS:
                raise InvalidNameError(
                    field, f"may not hold the bidirectional control {_named(ch)}"
                )
            category = unicodedata.category(ch)
            if category in ("Cc", "Cs", "Co", "Cn") or ch in "\u2028\u2029":
                raise InvalidNameError(field, f"may not hold the control character {_named(ch)}")
            if _IGNORABLE.contains(ch):
                raise InvalidNameError(
                    field, f"may not hold {_named(ch)}, an invisible (default-ignorable) character"
                )
            unfit = next((t for t, s in _UNFIT.items() if s.contains(ch)), None)
            if unfit is not None:
                raise InvalidNameError(
                    field, f"may not hold {_named(ch)}: not for ordinary text ({unfit}, UTS 39)"
                )
        run = 0
        for ch in unicodedata.normalize("NFD", cluster):
            run = run + 1 if unicodedata.category(ch) in _MARKS else 0
            if run > MAX_MARKS:
                raise InvalidNameError(
                    field, f"may not stack more than {MAX_MARKS} combining marks on one letter"
                )


def _check_scripts(name: str, field: str) -> None:
    found = _CHECKER.check(name)
    if found & icu.USpoofChecks.INVISIBLE:
        raise InvalidNameError(field, "may not repeat a combining mark on one letter")
    if found & icu.USpoofChecks.MIXED_NUMBERS:
        raise InvalidNameError(field, "may not mix digits of two numbering systems")
    if found:
        scripts = sorted({icu.Script.getScript(ch).getName() for ch in name if ch.isalpha()})
        raise InvalidNameError(
            field,
            f"mixes letters of scripts not written together ({' and '.join(scripts)}; UTS 39 "
            "moderately restrictive: Latin goes with one other script, Cyrillic and Greek "
            "with none)",
        )


def _checked_characters(text: str, field: str, max_length: int) -> str:
    """``text`` NFC-normalised, once its characters, length and scripts pass the policy
    (everything but the names the service shows): InvalidNameError otherwise."""
    if not isinstance(text, str):
        raise InvalidNameError(field, "must be text")
    name = unicodedata.normalize("NFC", text)
    if not 1 <= len(name) <= max_length:
        raise InvalidNameError(field, f"must be 1 to {max_length} characters, got {len(name)}")
    _check_characters(name, field)
    if not any(unicodedata.category(ch)[0] in _SEEN for ch in name):
        raise InvalidNameError(field, "must hold a visible character (a letter, digit or symbol)")
    expanded = len(unicodedata.normalize("NFKC", name))
    if expanded > max_length:
        raise InvalidNameError(
            field, f"must be at most {max_length} characters written out (NFKC), got {expanded}"
        )
    _check_scripts(name, field)
    return name


class InvalidTextError(InvalidNameError):
    """A message's text the policy refuses (table talk, R37); ``field`` names it."""

    code = "invalid-text"


def checked_text(text: str, field: str, *, max_length: int) -> str:
    """A message a person writes at a table (R37): ``text`` NFC-normalised, under the same
    checks of characters, length and scripts as a name — no control, bidirectional or
    invisible character, no character unfit for ordinary text, no "Zalgo" marks, no mix
    of scripts or of digits meant to deceive — or InvalidTextError naming ``field``."""
    try:
        return _checked_characters(text, field, max_length)
    except InvalidTextError:
        raise
    except InvalidNameError as e:
        raise InvalidTextError(field, e.detail.removeprefix(f"{field} ")) from None


def checked_name(text: str, field: str, *, max_length: int = 100, bot: bool = False) -> str:
    """``text`` NFC-normalised, or InvalidNameError naming ``field`` and what was refused
    (the module docstring). ``bot``: the service names a bot's seat, so the bots' default
    names are allowed."""
    name = _checked_characters(text, field, max_length)
    shown = name.strip()
    folded = " ".join(shown.casefold().split())
    mine = keys(name)
    if not mine.isdisjoint(_SHOWN_KEYS) or (
        not mine.isdisjoint(_BOT_KEYS) and not (bot and folded in BOT_NAMES)
    ):
        raise InvalidNameError(field, f"{shown!r} is, or looks like, a name the service shows")
    if not mine.isdisjoint(_DEFAULT_KEYS) and folded not in DEFAULTS:
        raise InvalidNameError(
            field, f"{shown!r} looks like {sorted(DEFAULTS)}, the service's names for a person"
        )
    return name


def check_apart(name: str, others: Iterable[str], field: str) -> None:
    """``name`` does not look like any of ``others`` (the names already at a table, or the
    other teams'): InvalidNameError naming the one it looks like. A plain default name
    (``guest``) may repeat: it stands for no one."""
    if " ".join(name.casefold().split()) in DEFAULTS:
        return
    for other in others:
        if look_alike(name, other):
            raise InvalidNameError(
                field, f"{name.strip()!r} looks like {other.strip()!r}, here already"
            )


def checked_title(text: str, field: str, *, max_length: int = 200) -> str:
    """A match's or tournament's name: as :func:`checked_name`, but may be empty (a match
    created without one)."""
    return "" if text == "" else checked_name(text, field, max_length=max_length, bot=True)
