"""A match's rule set: the named variants of RULES §10, and the presets.

Every field of :class:`RuleSet` is one row of the §10 table, with the same name and the
same default. A rule set is fixed when a match is created and reported with every match,
so it has one canonical JSON-able form (:meth:`RuleSet.to_mapping`) that round-trips
through :meth:`RuleSet.from_mapping`.

Canonical forms (see docs/rules-decisions.md, "Rule-set mapping"):

* ``level_cap`` and ``weak_hand_redeal`` are ``int`` or ``None`` (JSON ``null``).
  ``from_mapping`` also accepts the §10 spellings ``"none"`` (level cap) and ``"off"``
  (weak-hand redeal) and turns them into ``None``.
* ``match_end`` is the string ``"wrap"``, ``"finish_at_A"`` or ``"rounds:N"`` (N >= 1),
  held as a :class:`MatchEnd` value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Final, TypeVar

from domain.rules.errors import InvalidRuleSetError
from domain.values import Value


class BottomMultiplier(StrEnum):
    """R28: multiplier of a tractor of n pairs taking the last trick."""

    LINEAR = "linear"  # ×4·n (seed 000, default)
    EXPONENTIAL = "exponential"  # ×2^(n+1) (seeds 001, 003)


class NoDeclaration(StrEnum):
    """R19: what happens after round 1 when nobody declared."""

    BOTTOM_THIRD_CARD = "bottom_third_card"  # the bottom's 3rd card names trump (default)
    REDEAL = "redeal"


class MatchEndKind(StrEnum):
    """R32: how a match ends."""

    WRAP = "wrap"  # past A wraps round to 2; the organiser ends the match (default)
    FINISH_AT_A = "finish_at_A"  # win a round while defending at A
    ROUNDS = "rounds"  # a fixed number of rounds


_ROUNDS_RE: Final = re.compile(r"rounds:([0-9]+)")


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The ``match_end`` variant (R32, §10): ``kind`` plus ``rounds`` for ``rounds:N``.

    ``str(match_end)`` is the canonical string form; :meth:`parse` reads it back.
    """

    kind: MatchEndKind = MatchEndKind.WRAP
    rounds: int | None = None
    """N of ``rounds:N`` (>= 1); None for the other kinds."""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, MatchEndKind):
            raise InvalidRuleSetError(f"match_end: unknown kind {self.kind!r}")
        if self.kind is MatchEndKind.ROUNDS:
            if type(self.rounds) is not int or self.rounds < 1:
                raise InvalidRuleSetError(
                    f"match_end: rounds:N needs an integer N >= 1, got {self.rounds!r}"
                )
        elif self.rounds is not None:
            raise InvalidRuleSetError(f"match_end: {self.kind} takes no round count")

    @classmethod
    def parse(cls, text: object) -> MatchEnd:
        """Read ``"wrap"``, ``"finish_at_A"`` or ``"rounds:N"``; InvalidRuleSetError otherwise."""
        if isinstance(text, MatchEnd):
            return text
        if not isinstance(text, str):
            raise InvalidRuleSetError(
                f"match_end: expected a string ('wrap', 'finish_at_A', 'rounds:N'), "
                f"got {type(text).__name__}"
            )
        if text == MatchEndKind.WRAP:
            return cls(MatchEndKind.WRAP)
        if text == MatchEndKind.FINISH_AT_A:
            return cls(MatchEndKind.FINISH_AT_A)
        m = _ROUNDS_RE.fullmatch(text)
        if m is None:
            raise InvalidRuleSetError(
                f"match_end: {text!r} is not one of 'wrap', 'finish_at_A', 'rounds:N'"
            )
        return cls(MatchEndKind.ROUNDS, int(m.group(1)))

    def __str__(self) -> str:
        if self.kind is MatchEndKind.ROUNDS:
            return f"rounds:{self.rounds}"
        return str(self.kind.value)


WRAP: Final = MatchEnd(MatchEndKind.WRAP)
FINISH_AT_A: Final = MatchEnd(MatchEndKind.FINISH_AT_A)

_E = TypeVar("_E", bound=StrEnum)

WEAK_HAND_MAX: Final = 50
"""Largest ``weak_hand_redeal`` threshold. The four hands hold at most 200 points, so the
weakest holds at most 50; with N > 50 some player could always ask for a redeal and a
round might never start."""


def _int_field(name: str, value: object, *, minimum: int) -> int:
    # bool is an int subclass: True must not pass for 1.
    if type(value) is not int:
        raise InvalidRuleSetError(f"{name}: expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise InvalidRuleSetError(f"{name}: must be >= {minimum}, got {value}")
    return value


def _bool_field(name: str, value: object) -> bool:
    if type(value) is not bool:
        raise InvalidRuleSetError(f"{name}: expected true or false, got {type(value).__name__}")
    return value


def _enum_field(name: str, enum: type[_E], value: object) -> _E:
    if isinstance(value, enum):
        return value
    if isinstance(value, str):
        for member in enum:
            if member.value == value:
                return member
    allowed = ", ".join(repr(m.value) for m in enum)
    raise InvalidRuleSetError(f"{name}: {value!r} is not one of {allowed}")


@dataclass(frozen=True, slots=True)
class RuleSet(Value):
    """The variants of RULES §10; the defaults are the standard rules (seeds 000/002)."""

    declare_with_joker: bool = False
    """R17: declaring needs a level card plus the matching-colour joker (seed 000)."""
    self_overcall: bool = False
    """R20: the declarer may reinforce (自保) or switch (自反) while the window is open."""
    bottom_multiplier: BottomMultiplier = BottomMultiplier.LINEAR
    """R28: tractor multiplier, ×4·n (linear) or ×2^(n+1) (exponential)."""
    no_declaration: NoDeclaration = NoDeclaration.BOTTOM_THIRD_CARD
    """R19: after round 1, nobody declared → the bottom's 3rd card, or a redeal."""
    throw_penalty_points: int = 0
    """R22/§10: points per card of a failed throw (0 = no penalty)."""
    level_cap: int | None = 6
    """R30: largest level change of one round; None = no cap."""
    match_end: MatchEnd = field(default=WRAP)
    """R32: wrap, finish_at_A or rounds:N."""
    weak_hand_redeal: int | None = None
    """§10 (暴动): a hand with fewer than N points may ask for a redeal; None = off."""

    def __post_init__(self) -> None:
        _bool_field("declare_with_joker", self.declare_with_joker)
        _bool_field("self_overcall", self.self_overcall)
        for name, enum in (
            ("bottom_multiplier", BottomMultiplier),
            ("no_declaration", NoDeclaration),
        ):
            if not isinstance(getattr(self, name), enum):
                raise InvalidRuleSetError(
                    f"{name}: expected a {enum.__name__} member (from_mapping reads strings)"
                )
        _int_field("throw_penalty_points", self.throw_penalty_points, minimum=0)
        if self.level_cap is not None:
            _int_field("level_cap", self.level_cap, minimum=1)
        if not isinstance(self.match_end, MatchEnd):
            raise InvalidRuleSetError(
                f"match_end: expected a MatchEnd, got {type(self.match_end).__name__}"
            )
        if self.weak_hand_redeal is not None:
            n = _int_field("weak_hand_redeal", self.weak_hand_redeal, minimum=1)
            if n > WEAK_HAND_MAX:
                raise InvalidRuleSetError(
                    f"weak_hand_redeal: must be <= {WEAK_HAND_MAX} (the weakest of four "
                    f"hands never holds more), got {n}"
                )

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> RuleSet:
        """Build a rule set from snake_case or camelCase field names; missing → default.

        Unknown fields, a field given twice (in both spellings) and impossible values
        raise InvalidRuleSetError naming the field.
        """
        if not isinstance(data, Mapping):
            raise InvalidRuleSetError(
                f"rule set: expected a mapping of fields, got {type(data).__name__}"
            )
        values: dict[str, object] = {}
        unknown: list[str] = []
        for key, value in data.items():
            name = _ALIASES.get(key) if isinstance(key, str) else None
            if name is None:
                unknown.append(repr(key))
                continue
            if name in values:
                raise InvalidRuleSetError(
                    f"{name}: given more than once (snake_case and camelCase)"
                )
            values[name] = value
        if unknown:
            raise InvalidRuleSetError(
                f"unknown rule-set field(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}"
            )
        kwargs: dict[str, object] = {}
        for name, value in values.items():
            kwargs[name] = _convert(name, value)
        return cls(**kwargs)  # type: ignore[arg-type]

    def to_mapping(self) -> dict[str, bool | int | str | None]:
        """The canonical snake_case, JSON-able form (None for "no cap" / "off")."""
        return {
            "declare_with_joker": self.declare_with_joker,
            "self_overcall": self.self_overcall,
            "bottom_multiplier": str(self.bottom_multiplier.value),
            "no_declaration": str(self.no_declaration.value),
            "throw_penalty_points": self.throw_penalty_points,
            "level_cap": self.level_cap,
            "match_end": str(self.match_end),
            "weak_hand_redeal": self.weak_hand_redeal,
        }


FIELDS: Final[tuple[str, ...]] = (
    "declare_with_joker",
    "self_overcall",
    "bottom_multiplier",
    "no_declaration",
    "throw_penalty_points",
    "level_cap",
    "match_end",
    "weak_hand_redeal",
)
"""The §10 field names, in table order."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_ALIASES: Final[dict[str, str]] = {
    **{name: name for name in FIELDS},
    **{_camel(name): name for name in FIELDS},
}


def _convert(name: str, value: object) -> object:
    """Turn one mapping value into the typed value of field ``name`` (or raise)."""
    if name in ("declare_with_joker", "self_overcall"):
        return _bool_field(name, value)
    if name == "bottom_multiplier":
        return _enum_field(name, BottomMultiplier, value)
    if name == "no_declaration":
        return _enum_field(name, NoDeclaration, value)
    if name == "throw_penalty_points":
        return _int_field(name, value, minimum=0)
    if name == "level_cap":
        return None if value is None or value == "none" else _int_field(name, value, minimum=1)
    if name == "weak_hand_redeal":
        return None if value is None or value == "off" else _int_field(name, value, minimum=1)
    assert name == "match_end"
    return MatchEnd.parse(value)


STANDARD: Final = RuleSet()
"""Seeds 000/002: every §10 default."""

TUOLAJI: Final = RuleSet(
    self_overcall=True,
    bottom_multiplier=BottomMultiplier.EXPONENTIAL,
    level_cap=None,
)
"""Seed 001 (拖拉机): 自保/自反, ×2^(n+1) bottom, no level cap."""

DUIJIA: Final = RuleSet(
    bottom_multiplier=BottomMultiplier.EXPONENTIAL,
    match_end=FINISH_AT_A,
)
"""Seed 003 (打对家): ×2^(n+1) bottom, the match is won by defending at A."""

PRESETS: Final[Mapping[str, RuleSet]] = MappingProxyType(
    {"standard": STANDARD, "tuolaji": TUOLAJI, "duijia": DUIJIA}
)
"""Named rule sets (§10); reasoning in docs/rules-decisions.md, "Presets"."""


def preset(name: str) -> RuleSet:
    """The preset called ``name``; InvalidRuleSetError listing the known ones otherwise."""
    found = PRESETS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InvalidRuleSetError(
            f"unknown rule-set preset {name!r}; known: {', '.join(sorted(PRESETS))}"
        )
    return found
