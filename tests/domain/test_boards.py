"""Boards (R36; docs/decisions.md D-boards): a duplicate event's deal has the same dealer,
level, trump and hands at every table, whatever each table's match went through, and a
weak hand redeals it at every table alike (§10 weak_hand_redeal)."""

from __future__ import annotations

import hashlib
import hmac
from uuid import UUID, uuid5

import pytest

from domain.game import round_events as ev
from domain.game.round import Round, RoundPhase
from domain.rules.board import MAX_DEALINGS, Board, weak_seat
from domain.rules.cards import parse_cards, points_of
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import STANDARD, RuleSet
from domain.tournament.duplicate import board, deal_seed
from tests.conftest import T0, given, kinds, rejects, when

SECRET = bytes(range(32))
WEAK_30 = RuleSet.from_mapping({**STANDARD.to_mapping(), "weak_hand_redeal": 30})

# Four tables of one tournament round whose matches went differently before this deal:
# the teams' levels (R5, R30) and the dealer R31 would have chosen differ at each.
HISTORIES = [
    ((0, 0), 0),  # table 1: both teams at 2, seat 0 would deal
    ((5, 9), 3),  # table 2: 7 and J, seat 3
    ((12, 2), 1),  # table 3: A and 4, seat 1
    ((7, 7), 2),  # table 4: 9 and 9, seat 2
]


def dealt_round(table: int, deal: int, rules: RuleSet) -> Round:
    """Deal ``deal`` of a table's match as played in a duplicate event of boards: the
    board, not the match's levels or dealer, is what the round plays; dealt from the
    round's seeds until no redeal is left (as the service does). Its events pending."""
    levels, _ = HISTORIES[table]
    b = board(SECRET, deal)
    match_id = uuid5(UUID(int=0), f"table {table}")
    r = Round.start(match_id, deal, rules, levels, b.dealer, T0, board=b)
    r.deal(deal_seed(SECRET, deal, 1), T0)
    while r.phase is RoundPhase.REDEAL:
        r.deal(deal_seed(SECRET, deal, r.deal_no + 1), T0)
    return r


def table_round(table: int, deal: int, rules: RuleSet = STANDARD) -> Round:
    return given(dealt_round(table, deal, rules))


def table_events(table: int, deal: int, rules: RuleSet) -> list[object]:
    return list(dealt_round(table, deal, rules).collect_events())


@pytest.mark.parametrize("deal", [1, 2, 3, 7, 12])
def test_r36_a_board_is_the_same_dealer_trump_level_and_hands_at_every_table(deal: int) -> None:
    rounds = [table_round(t, deal) for t in range(len(HISTORIES))]
    b = board(SECRET, deal)
    for r in rounds:
        assert r.board == b and r.bidding.dealer == b.dealer  # not R31's dealer
        assert r.level == b.level  # not the dealer team's level (R5)
        assert r.bidding.trump_known and r.bidding.trump == b.trump  # before any card (R17)
        assert r.dealt is not None and r.dealt.draws[0][0] == b.dealer  # R16
    first = rounds[0].dealt
    assert first is not None
    for r in rounds[1:]:
        assert r.dealt is not None
        assert (r.dealt.hands, r.dealt.bottom) == (first.hands, first.bottom)
        assert r.commitment == rounds[0].commitment


@pytest.mark.parametrize(
    ("deal", "dealer", "level", "trump"),
    # by hand from HMAC-SHA256(secret = bytes 0..31, "shengji-board:{deal}"): the first
    # three 8-byte words mod 4, 13 and 5 (4: no-trump)
    [(1, 1, 2, 0), (3, 3, 12, 0), (4, 1, 4, 2), (7, 2, 12, None)],
)
def test_r36_a_board_is_drawn_from_the_round_secret(
    deal: int, dealer: int, level: int, trump: int | None
) -> None:
    digest = hmac.new(SECRET, f"shengji-board:{deal}".encode(), hashlib.sha256).digest()
    words = [int.from_bytes(digest[8 * k : 8 * k + 8], "big") for k in range(3)]
    assert (words[0] % 4, words[1] % 13, words[2] % 5) == (
        dealer,
        level,
        4 if trump is None else trump,
    )
    assert board(SECRET, deal) == Board(deal, dealer, level, trump)


@pytest.mark.parametrize("table", range(len(HISTORIES)))
def test_r36_the_level_is_the_board_s_not_the_match_s_progression(table: int) -> None:
    levels, r31_dealer = HISTORIES[table]
    r = table_round(table, 3)  # board 3: seat 3 deals at level A, spades trump
    assert (r.bidding.dealer, r.level, r.bidding.trump) == (3, 12, 0)
    assert r.levels == levels  # the match's levels are kept for the record only
    # what the match alone would have played (R5, R31): another level, maybe another dealer
    assert levels[r31_dealer % 2] != r.level


def test_r36_nobody_declares_on_a_board_the_dealer_buries_then_leads() -> None:
    r = table_round(0, 3)
    assert r.dealt is not None
    hands = r.dealt.hands
    level_card = next(c for c in hands[1] if c % 13 == 12 and c < 52)  # an ace: level A
    rejects(r, lambda: r.declare(1, (level_card,), T0), "board-trump-fixed")
    assert r.bidding.legal_shows(1, hands[1]) == []
    for seat in range(3):
        r.pass_turn(seat, T0)
    events = when(r, lambda: r.pass_turn(3, T0))
    assert kinds(events) == ["Passed", "DrawingEnded"]
    assert r.phase is RoundPhase.BURYING and r.to_act() == 3  # R21: the board's dealer
    r = given(r)
    r.bury(3, tuple(r.hands[3][:8]), T0)
    assert r.phase is RoundPhase.PLAYING and r.to_act() == 3  # no window (R20): play, R22


def weak_board(rules: RuleSet) -> int:
    """The first deal whose first dealing holds a hand under ``weak_hand_redeal``."""
    for deal in range(1, 50):
        b = board(SECRET, deal)
        r = Round.start(uuid5(UUID(int=0), "probe"), deal, rules, (0, 0), b.dealer, T0, board=b)
        r.deal(deal_seed(SECRET, deal, 1), T0)
        if r.deal_no == 1 and r.phase is RoundPhase.REDEAL:
            return deal
    raise AssertionError("no weak board in 49 deals")


def test_r36_a_weak_hand_redeals_the_board_at_every_table_alike() -> None:
    deal = weak_board(WEAK_30)
    tables = [table_events(t, deal, WEAK_30) for t in range(len(HISTORIES))]
    seen = [
        [
            (type(e).__name__, getattr(e, "seat", None), getattr(e, "commitment", None))
            for e in events
            if not isinstance(e, ev.RoundStarted)
        ]
        for events in tables
    ]
    assert all(s == seen[0] for s in seen)
    # the first dealing: the first hand from the dealer under 30 points redeals it
    b = board(SECRET, deal)
    first = tables[0][1]
    assert isinstance(first, ev.Dealt) and first.deal_no == 1 and first.board == b
    hands = ev.deal_for(first.seed, first.first_seat).hands
    seat = weak_seat(hands, b.dealer, WEAK_30)
    assert seat is not None and points_of(hands[seat]) < 30
    redealt = tables[0][2]
    assert isinstance(redealt, ev.Redealt)
    assert (redealt.reason, redealt.seat) == (ev.BOARD_WEAK_HAND, seat)
    # the dealing that stands is the next after the last redeal, and holds no weak hand
    last = tables[0][-1]
    assert isinstance(last, ev.Dealt) and last.deal_no > 1
    assert weak_seat(ev.deal_for(last.seed, last.first_seat).hands, b.dealer, WEAK_30) is None
    assert kinds(tables[0]).count("Redealt") == last.deal_no - 1


def test_r36_nobody_asks_for_a_board_s_redeal() -> None:
    r = table_round(0, 1, WEAK_30)
    for seat in range(4):
        r.pass_turn(seat, T0)
    weakest = min(range(4), key=lambda s: points_of(r.dealt_hand(s)))
    rejects(r, lambda: r.request_redeal(weakest, T0), "board-redeal-shared")


@pytest.mark.parametrize(
    ("hands", "dealer", "threshold", "seat"),
    [
        # 20, 30, 10, 5 points: from dealer 0 the first hand under 15 is seat 2's
        (["5S 5H KD", "KS KH 10C", "10D", "5C"], 0, 15, 2),
        # from dealer 3 the first weak seat is 3 itself
        (["5S 5H KD", "KS KH 10C", "10D", "5C"], 3, 15, 3),
        # nobody under 5 points
        (["5S", "KS", "10D", "5C"], 1, 5, None),
    ],
)
def test_r36_weak_seat_is_the_first_weak_hand_from_the_dealer(
    hands: list[str], dealer: int, threshold: int, seat: int | None
) -> None:
    rules = RuleSet.from_mapping({**STANDARD.to_mapping(), "weak_hand_redeal": threshold})
    assert weak_seat([parse_cards(h) for h in hands], dealer, rules) == seat
    assert weak_seat([parse_cards(h) for h in hands], dealer, STANDARD) is None


def test_r36_a_board_is_dealt_at_most_max_dealings_times() -> None:
    always_weak = RuleSet.from_mapping({**STANDARD.to_mapping(), "weak_hand_redeal": 50})
    r = table_round(0, 1, always_weak)
    assert r.phase is RoundPhase.DEALING and r.deal_no <= MAX_DEALINGS


@pytest.mark.parametrize(
    "fields",
    [
        {"number": 0, "dealer": 0, "level": 0, "trump": None},
        {"number": 1, "dealer": 4, "level": 0, "trump": None},
        {"number": 1, "dealer": 0, "level": 13, "trump": None},
        {"number": 1, "dealer": 0, "level": 0, "trump": 4},
    ],
)
def test_r36_a_board_out_of_range_is_invalid(fields: dict[str, int | None]) -> None:
    with pytest.raises(InvalidInputError):
        Board(**fields)  # type: ignore[arg-type]


def test_r36_a_round_refuses_a_board_of_another_deal_or_dealer() -> None:
    b = board(SECRET, 2)
    for number, dealer in ((1, b.dealer), (2, (b.dealer + 1) % 4)):
        with pytest.raises(InvalidInputError):
            Round.start(uuid5(UUID(int=0), "x"), number, STANDARD, (0, 0), dealer, T0, board=b)
