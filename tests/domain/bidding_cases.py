"""Hands, rule sets and bidding states the bidding tests start from
(:mod:`tests.domain.test_bidding`,
:mod:`tests.domain.test_bidding_errors`).
"""

from __future__ import annotations

from domain.rules.bidding import Bidding
from domain.rules.cards import RANKS, parse_cards
from domain.rules.ruleset import RuleSet

STD = RuleSet()
JOKER = RuleSet(declare_with_joker=True)
SELF = RuleSet(self_overcall=True)
WEAK = RuleSet(weak_hand_redeal=15)
S, H, C, D = 0, 1, 2, 3
L2, L5 = RANKS.index("2"), RANKS.index("5")

ALL = parse_cards("2S 2S 2H 2H 2C 2C 2D 2D SJ SJ BJ BJ")
"""A hand holding every show at level 2."""
ALL5 = parse_cards("5S 5S 5H 5H 5C 5C 5D 5D SJ SJ BJ BJ")
BOTTOM = parse_cards("3S 4S 7C 6H 8D 9D JS QS")
"""bottom[2] = 7C (R19)."""
POOR = parse_cards("2S 3S 4S 6H 7H 8H 9C JC QC AD 10D")  # 10 points (R26)
RICH = parse_cards("KS KH 5D 3C")  # 25 points


def c(cards: str) -> list[int]:
    return parse_cards(cards)


def r1_declared(rules: RuleSet = STD, seat: int = 2, cards: str = "2H") -> Bidding:
    """Round 1, seat ``seat`` declared during the deal (R17, R18)."""
    return Bidding.round_one(rules).declare(seat, c(cards), ALL)


def r1_window(rules: RuleSet = STD, seat: int = 2, cards: str = "2H") -> Bidding:
    """Round 1, deal over, the 反主反打 window open (R20)."""
    return r1_declared(rules, seat, cards).end_deal(BOTTOM)


def later(rules: RuleSet = STD, dealer: int = 1, levels: tuple[int, int] = (L2, L2)) -> Bidding:
    return Bidding.later_round(rules, dealer, levels)


def later_window(
    rules: RuleSet = STD, dealer: int = 1, declarer: int = 0, cards: str = "2H"
) -> Bidding:
    """A later round: ``declarer`` declared; the deal ended; the dealer buried (R20 炒底)."""
    b = later(rules, dealer).declare(declarer, c(cards), ALL)
    return b.end_deal(BOTTOM).bury(dealer)


def passes(b: Bidding, *seats: int) -> Bidding:
    for seat in seats:
        b = b.pass_(seat)
    return b


def late_declaring(rules: RuleSet = JOKER) -> Bidding:
    """declare_with_joker after round 1, dealer 0 (level 2), team {1,3} at level 5; the
    dealer's team cannot declare → the other team's turn (R18 variant)."""
    hands = [c("3S 4H"), ALL5, c("AS BJ 2C"), ALL5]
    return later(rules, 0, (L2, L5)).end_deal(BOTTOM, hands)
