"""Shows (亮主): the cards a player lays down to declare or overcall trump (RULES R17, R20).

A **show** is one of (``L`` = a level card of suit *s*, ``J`` = the joker of *s*'s colour:
BJ for H/D, SJ for S/C):

==================  =======================  ==============================  ===========
strength            standard rules           variant ``declare_with_joker``  trump
==================  =======================  ==============================  ===========
1 ``SINGLE``        ``L``         (R17)       ``L J``                         suit *s*
2 ``LEVEL_PAIR``    ``L L``       (定主, R17)  ``L L J``                       suit *s*
3 ``SJ_PAIR``       ``SJ SJ``     (R20)       ``SJ SJ``                       no-trump
4 ``BJ_PAIR``       ``BJ BJ``     (R20)       ``BJ BJ``                       no-trump
==================  =======================  ==============================  ===========

Strength alone decides which show beats which (R20: single < level pair < SJ pair < BJ
pair); the suit never matters, and in the joker variant the joker is an admission ticket
that adds no strength (so ``2H 2H BJ`` and ``2S 2S SJ`` are equal). A level pair
**locks** (定主, R17): only a strictly stronger show — a joker pair — can overcall it.
Jokers alone never *declare* (R17, 常主不可进行报主); a joker pair only *overcalls*.
Reasoning: docs/bidding.md.

The weak-hand redeal (暴动, §10 ``weak_hand_redeal``) is judged here too: only the hand's
points count (R26), never its jokers or trumps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from domain.rules.cards import (
    BJ,
    NUM_KINDS,
    RANKS,
    SJ,
    SUIT_NAMES,
    Card,
    count_kinds,
    format_cards,
    make_card,
    points_of,
)
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import RuleSet


class Strength(IntEnum):
    """How strong a show is (R20): a stronger show overcalls a weaker one."""

    SINGLE = 1  # one level card (variant: + matching joker), R17
    LEVEL_PAIR = 2  # two identical level cards (variant: + matching joker), 定主, R17
    SJ_PAIR = 3  # SJ SJ: no-trump, R20
    BJ_PAIR = 4  # BJ BJ: no-trump, R20


def matching_joker(suit: int) -> Card:
    """The joker of ``suit``'s colour (R17 variant): BJ (red) for H/D, SJ (black) for S/C."""
    return BJ if suit in (1, 3) else SJ


@dataclass(frozen=True, slots=True)
class Show:
    """A declaration or overcall: who showed which cards, the trump it names, its strength."""

    seat: int
    cards: tuple[Card, ...]
    """The shown cards, sorted by kind (level cards first, the joker(s) last)."""
    trump: int | None
    """The suit (0..3) the show makes trump; None = no-trump (R9, joker pairs)."""
    strength: Strength

    @property
    def locks(self) -> bool:
        """A level pair or stronger: only a strictly stronger show overcalls it (定主, R17)."""
        return self.strength >= Strength.LEVEL_PAIR

    @property
    def is_joker_pair(self) -> bool:
        """SJ SJ or BJ BJ: never a declaration, only an overcall (R17, R20)."""
        return self.strength >= Strength.SJ_PAIR

    def __str__(self) -> str:
        trump = "no-trump" if self.trump is None else f"{SUIT_NAMES[self.trump]} trump"
        return f"{format_cards(self.cards)} ({self.strength.name.lower()}, {trump})"


def _illegal(detail: str, code: str, rule: str = "R17") -> IllegalMoveError:
    return IllegalMoveError(detail, rule=rule, code=code)


def _check_args(seat: int, cards: Iterable[object], level: int) -> tuple[Card, ...]:
    if type(seat) is not int or not 0 <= seat <= 3:
        raise InvalidInputError(f"seat must be 0..3, got {seat!r}")
    if type(level) is not int or not 0 <= level <= 12:
        raise InvalidInputError(f"level rank index must be 0..12, got {level!r}")
    kinds: list[Card] = []
    for c in cards:
        if type(c) is not int or not 0 <= c < NUM_KINDS:
            raise InvalidInputError(f"{c!r} is not a card kind (0..53)")
        kinds.append(c)
    return tuple(sorted(kinds))


def parse_show(seat: int, cards: Sequence[Card], level: int, rules: RuleSet) -> Show:
    """The show ``cards`` make at level rank ``level`` (0 = '2'); IllegalMoveError otherwise.

    Only the shape is judged here (R17, R20, the table in the module docstring); whether
    the show may be made now — declaring or overcalling, by whom, how strong — is
    :class:`domain.rules.bidding.Bidding`'s business. Codes: ``not-a-show``,
    ``not-a-level-card``, ``jokers-cannot-declare``, ``no-joker-of-matching-colour``.
    """
    kinds = _check_args(seat, cards, level)
    names = format_cards(kinds) or "(no cards)"
    rank = RANKS[level]
    if not kinds:
        raise _illegal("an empty show: declare with a level card (R17)", "not-a-show")
    jokers = [c for c in kinds if c >= SJ]
    plain = [c for c in kinds if c < SJ]
    if not plain:
        if kinds == (SJ, SJ):
            return Show(seat, kinds, None, Strength.SJ_PAIR)
        if kinds == (BJ, BJ):
            return Show(seat, kinds, None, Strength.BJ_PAIR)
        if len(kinds) == 1:
            raise _illegal(f"{names}: jokers alone never declare (R17)", "jokers-cannot-declare")
        raise _illegal(
            f"{names} is not a show: the joker shows are SJ SJ and BJ BJ (R13, R20)",
            "not-a-show",
            "R20",
        )
    strangers = [c for c in plain if c % 13 != level]
    if strangers:
        raise _illegal(
            f"{format_cards(strangers)}: not a level card (the level rank is {rank}); "
            f"a show is made of level cards (R17)",
            "not-a-level-card",
        )
    if len(plain) > 2 or (len(plain) == 2 and plain[0] != plain[1]):
        raise _illegal(
            f"{names} is not a show: it needs one level card or two identical ones "
            f"(two level cards of different suits are not a pair, R13)",
            "not-a-show",
        )
    suit = plain[0] // 13
    strength = Strength.SINGLE if len(plain) == 1 else Strength.LEVEL_PAIR
    if rules.declare_with_joker:
        joker = matching_joker(suit)
        if len(jokers) > 1:
            raise _illegal(
                f"{names} is not a show: one {format_cards([joker])} goes with the level "
                f"card(s) (R17, declare_with_joker)",
                "not-a-show",
            )
        if jokers != [joker]:
            raise _illegal(
                f"{names}: a show of {SUIT_NAMES[suit]} needs the matching-colour joker "
                f"{format_cards([joker])} with the level card(s) (R17, declare_with_joker)",
                "no-joker-of-matching-colour",
            )
    elif jokers:
        raise _illegal(
            f"{names} is not a show: a level card, a pair of identical level cards, "
            f"SJ SJ or BJ BJ (R17, R20)",
            "not-a-show",
        )
    return Show(seat, kinds, suit, strength)


def possible_shows(
    hand: Sequence[Card], level: int, rules: RuleSet, *, seat: int = 0
) -> list[Show]:
    """Every show ``hand`` can make (R17, R20), joker pairs included; weakest first.

    One show per (strength, suit): a hand holding 2H 2H at level 2 offers both ``2H``
    and ``2H 2H``.
    """
    _check_args(seat, hand, level)
    counts = count_kinds(hand)
    shows: list[Show] = []
    for strength in (Strength.SINGLE, Strength.LEVEL_PAIR):
        n = int(strength)
        for suit in range(4):
            card = make_card(level, suit)
            if counts[card] < n:
                continue
            cards = (card,) * n
            if rules.declare_with_joker:
                joker = matching_joker(suit)
                if counts[joker] < 1:
                    continue
                cards = (*cards, joker)
            shows.append(Show(seat, cards, suit, strength))
    for joker, strength in ((SJ, Strength.SJ_PAIR), (BJ, Strength.BJ_PAIR)):
        if counts[joker] >= 2:
            shows.append(Show(seat, (joker, joker), None, strength))
    return shows


def possible_declarations(
    hand: Sequence[Card], level: int, rules: RuleSet, *, seat: int = 0
) -> list[Show]:
    """Every show ``hand`` can *declare* with (R17): :func:`possible_shows` minus joker pairs."""
    return [s for s in possible_shows(hand, level, rules, seat=seat) if not s.is_joker_pair]


def may_request_redeal(hand: Sequence[Card], rules: RuleSet) -> bool:
    """True when variant ``weak_hand_redeal`` (暴动, §10) is on and ``hand`` holds < N points.

    Only points count (R26: 5s, 10s, Ks), as in seed 000 (手里的牌少于15分); jokers, level
    cards and trumps make no difference. Pass the 25 dealt cards (never the bottom).
    """
    n = rules.weak_hand_redeal
    return n is not None and points_of(hand) < n


def check_redeal_request(hand: Sequence[Card], rules: RuleSet) -> None:
    """Raise IllegalMoveError unless :func:`may_request_redeal` (codes ``weak-hand-redeal-off``,
    ``weak-hand-too-strong``). The timing (after the deal, before burying) is checked by
    :meth:`domain.rules.bidding.Bidding.check_weak_hand_redeal`."""
    n = rules.weak_hand_redeal
    if n is None:
        raise IllegalMoveError(
            "this match's rules have no weak-hand redeal (暴动, §10 weak_hand_redeal is off)",
            rule="§10",
            code="weak-hand-redeal-off",
        )
    points = points_of(hand)
    if points >= n:
        raise IllegalMoveError(
            f"the hand holds {points} points; a redeal (暴动) needs fewer than {n} (§10)",
            rule="§10",
            code="weak-hand-too-strong",
        )
