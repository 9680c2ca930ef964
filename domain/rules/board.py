"""A board (R36, docs/decisions.md D-boards): a deal whose dealer, level rank and trump are
fixed before the first card is drawn, the same at every table of a duplicate event.

A board takes the place of R18–R20 for its round: nobody declares or overcalls, the
board's dealer (庄家) takes the bottom and buries (R21), and the board's level rank and
trump suit (or no-trump, R9) are the round's. Its cards come from the same seed at every
table and are drawn from the board's dealer (R16), so every table holds the same hands
seat for seat. A weak-hand redeal (暴动, §10 ``weak_hand_redeal``) is a property of the
board's cards (:func:`weak_seat`), made at every table alike, never asked by one player.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.rules.cards import Card, points_of
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from domain.values import Value

MAX_DEALINGS = 20
"""A board is dealt at most this many times (a weak hand redeals it, §10): the last
dealing stands, so a threshold near the largest (50) cannot deal forever."""


@dataclass(frozen=True, slots=True)
class Board(Value):
    """Deal ``number`` of a duplicate event: its dealer seat (R6), level rank (R5) and
    trump suit (R7; None: no-trump, R9), fixed for every table."""

    number: int
    """The deal (the match round) it is played as: 1, 2, …"""
    dealer: int
    """The dealer's seat 0..3; the dealer's team defends (R6) and the dealer leads (R22)."""
    level: int
    """The level rank (R5: 2 … A; stored as its index 0..12): the rank of the level cards."""
    trump: int | None
    """The trump suit (S H C D; stored as 0..3); none: no-trump (R9)."""

    def __post_init__(self) -> None:
        for name, value, low, high in (
            ("number", self.number, 1, 100_000),
            ("dealer", self.dealer, 0, 3),
            ("level", self.level, 0, 12),
        ):
            if type(value) is not int or not low <= value <= high:
                raise InvalidInputError(f"a board's {name} is {low}..{high}, not {value!r}")
        if self.trump is not None and (type(self.trump) is not int or not 0 <= self.trump <= 3):
            raise InvalidInputError(f"a board's trump is a suit 0..3 or none, not {self.trump!r}")


def weak_seat(hands: Sequence[Sequence[Card]], dealer: int, rules: RuleSet) -> int | None:
    """§10 暴动 on a board: the first seat from the dealer, in play order (R1), whose dealt
    hand holds fewer than ``weak_hand_redeal`` points; None when none does (or the rule
    set has no weak-hand redeal)."""
    n = rules.weak_hand_redeal
    if n is None:
        return None
    for k in range(4):
        seat = (dealer + k) % 4
        if points_of(hands[seat]) < n:
            return seat
    return None
