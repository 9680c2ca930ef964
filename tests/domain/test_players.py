"""Bot policies (domain/bots): every choice legal (R17–R23), and the heuristic's habits.

Table cases are in card notation; seat 0 is "me", seat 2 my partner (R2).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from domain.bots import BURY_SIZE, BidView, BotView, HeuristicPlayer, Player, RandomPlayer
from domain.bots.view import PlayViews, seat_view
from domain.rules.cards import HEARTS, SPADES, Card, format_cards, parse_cards, parse_rank
from domain.rules.context import TrumpContext, trump_context
from domain.rules.follow import check_follow
from domain.rules.play import TrickPlay
from domain.rules.ruleset import STANDARD
from domain.rules.shapes import ShapeKind, decompose
from domain.rules.shows import possible_declarations
from domain.rules.shuffle import deal, shuffle_deck
from domain.rules.throws import check_throw

ME = 0
HEURISTIC = HeuristicPlayer()
RANDOM = RandomPlayer(throw_chance=0.3)


def _ctx(level: str = "2", trump: int | None = HEARTS) -> TrumpContext:
    return trump_context(parse_rank(level), trump)


def _view(
    hand: str,
    trick: tuple[tuple[int, str], ...] = (),
    *,
    ctx: TrumpContext | None = None,
    played: str = "",
    attackers: int = 1,
) -> BotView:
    """Seat 0's view with the given trick so far, (seat, cards) from the leader."""
    ctx = ctx or _ctx()
    plays = tuple((seat, tuple(parse_cards(cards))) for seat, cards in trick)
    lead = decompose(ctx, plays[0][1]) if plays else None
    return BotView(
        ME, ctx, tuple(parse_cards(hand)), 0, attackers, plays, lead,
        tuple(parse_cards(played)), 0, None, STANDARD,
    )  # fmt: skip


def _same(cards: list[Card] | tuple[Card, ...], expected: str) -> bool:
    return Counter(cards) == Counter(parse_cards(expected))


# -- every choice is legal -------------------------------------------------------------


def _random_round(seed: int, players: list[Player]) -> tuple[int, int]:
    """A round with a random trump and bury: check every play; (plays, failed throws)."""
    rng = random.Random(seed)
    ctx = trump_context(rng.randrange(13), rng.choice([None, 0, 1, 2, 3]))
    dealt = deal(shuffle_deck(rng.randbytes(32)), 0)
    hands = [list(h) for h in dealt.hands]
    dealer = rng.randrange(4)
    hands[dealer] += dealt.bottom
    bury_view = BotView(
        dealer, ctx, tuple(hands[dealer]), dealer, (dealer + 1) % 2, (), None, (), 0, None,
        STANDARD,
    )  # fmt: skip
    buried = list(players[dealer].bury(bury_view, rng))
    assert len(buried) == BURY_SIZE
    for c in buried:
        hands[dealer].remove(c)  # raises if the bot buried cards it does not hold (R21)
    tp = TrickPlay(ctx, hands, dealer, (dealer + 1) % 2)
    views = PlayViews(tp, dealer=dealer, rules=STANDARD, burier=dealer, bottom=buried)
    plays = 0
    while not tp.finished:
        seat = tp.turn
        view = views.view(seat)
        assert view == seat_view(
            tp, seat, dealer=dealer, rules=STANDARD, bottom=buried if seat == dealer else None
        )
        cards = list(players[seat].play(view, rng))
        if tp.lead_shape is not None:
            verdict = check_follow(ctx, tp.lead_shape, tp.hands[seat], cards)
            assert verdict.legal, (format_cards(tp.hands[seat]), format_cards(cards), verdict)
        tp.play(seat, cards)  # TrickPlay.check raises IllegalMoveError on an illegal play
        plays += 1
    heuristic_fails = sum(1 for s, _ in tp.failed_throws if isinstance(players[s], HeuristicPlayer))
    return plays, heuristic_fails


@pytest.mark.parametrize(
    "players",
    [
        pytest.param([RANDOM] * 4, id="random"),
        pytest.param([HEURISTIC] * 4, id="heuristic"),
        pytest.param([HEURISTIC, RANDOM, HEURISTIC, RANDOM], id="mixed"),
    ],
)
def test_every_play_is_legal_and_heuristic_throws_never_fail(players: list[Player]) -> None:
    total = 0
    for seed in range(25):
        plays, heuristic_fails = _random_round(seed, players)
        assert heuristic_fails == 0  # R22: the heuristic throws only boss components
        total += plays
    assert total >= 25 * 40


@pytest.mark.parametrize("player", [HEURISTIC, RANDOM], ids=["heuristic", "random"])
def test_declare_and_overcall_choose_among_the_options(player: Player) -> None:
    rng = random.Random(5)
    chosen = 0
    for _ in range(200):
        hand = tuple(rng.sample(parse_cards("2S 2S 2H 2H 2C 2D SJ SJ BJ 3H 4H 5H 6S 7C 8D"), 9))
        options = possible_declarations(hand, 0, STANDARD)
        view = BidView(ME, 0, hand, None, None, 25 - len(hand), STANDARD)
        for choice in (player.declare(view, options, rng), player.overcall(view, options, rng)):
            assert choice is None or choice in options
            chosen += choice is not None
    assert chosen > 0


# -- the heuristic's habits ------------------------------------------------------------

FEED_PARTNER = [
    # (trick so far from the leader, my hand, expected play): partner (seat 2) holds it
    (((1, "3S"), (2, "AS"), (3, "5S")), "10S 6S 9C", "10S"),
    (((1, "3C"), (2, "AC"), (3, "4C")), "10D 3D 4S 9H", "10D"),
    (((1, "3D 4D"), (2, "AD 6D"), (3, "5D 7D")), "KD 10D 7D 8D 9C", "KD 10D"),
    (((1, "6C"), (2, "AC"), (3, "7C")), "KC 5C 3C", "KC"),
]


@pytest.mark.parametrize(("trick", "hand", "expected"), FEED_PARTNER)
def test_heuristic_gives_points_to_a_winning_partner(
    trick: tuple[tuple[int, str], ...], hand: str, expected: str
) -> None:
    cards = HEURISTIC.play(_view(hand, trick), random.Random(0))
    assert _same(list(cards), expected), format_cards(cards)


WIN_POINTS = [
    # last to play, an opponent holds a trick with points: take it as cheaply as possible
    (((1, "KS"), (2, "4S"), (3, "5S")), "AS 3S 8C", "AS"),
    (((1, "10C"), (2, "3C"), (3, "KC")), "4H 9S 6D", "4H"),  # void in clubs: trump (毙牌)
    (((1, "10C"), (2, "3C"), (3, "5H")), "4H 9H 6D", "9H"),  # over-trump the opponent's 5H
    (((1, "10D 10D"), (2, "3D 4D"), (3, "6D 7D")), "QD QD KD 5D 8S", "QD QD"),
    (((1, "KS"),), "AS QS 3S", "AS"),  # not last: only a boss will do
]


@pytest.mark.parametrize(("trick", "hand", "expected"), WIN_POINTS)
def test_heuristic_wins_a_point_trick_when_it_can(
    trick: tuple[tuple[int, str], ...], hand: str, expected: str
) -> None:
    cards = HEURISTIC.play(_view(hand, trick), random.Random(0))
    assert _same(list(cards), expected), format_cards(cards)


DISCARD_LOW = [
    # cannot win: part with a low non-point card, keep points, pairs and trumps
    (((1, "AS"), (2, "3S"), (3, "4S")), "KS 6S 9C", "6S"),
    (((1, "AC"), (2, "3C"), (3, "4C")), "KD 10D 4S 4S 3D AH", "3D"),
    (((1, "7S"), (2, "8S"), (3, "BJ")), "10D 3C AH", "3C"),  # the BJ cannot be beaten
]


@pytest.mark.parametrize(("trick", "hand", "expected"), DISCARD_LOW)
def test_heuristic_discards_low_when_it_cannot_win(
    trick: tuple[tuple[int, str], ...], hand: str, expected: str
) -> None:
    cards = HEURISTIC.play(_view(hand, trick), random.Random(0))
    assert _same(list(cards), expected), format_cards(cards)


LEADS = [
    # (my hand, cards already played, expected lead)
    ("AS AS KS 3C 5D", "", "AS AS KS"),  # a throw that cannot fail (R22)
    ("QS QS 3C 5D", "AS AS KS KS", "QS QS"),  # with both A and K pairs gone, QS QS is boss
    ("3C 4C 4C 7D AH", "", "3C"),  # nothing strong: a low plain card, not from a pair
    ("AD 3C 9S", "", "AD"),  # a side-suit ace
]


@pytest.mark.parametrize(("hand", "played", "expected"), LEADS)
def test_heuristic_leads_from_strength(hand: str, played: str, expected: str) -> None:
    view = _view(hand, played=played)
    cards = HEURISTIC.play(view, random.Random(0))
    assert _same(list(cards), expected), format_cards(cards)
    shape = decompose(view.ctx, list(cards))
    if shape.kind is ShapeKind.THROW:
        others = [parse_cards("KS QS JS"), [], []]  # the best another hand could hold
        assert check_throw(view.ctx, shape, others).valid


def test_heuristic_buries_low_plain_non_point_cards() -> None:
    ctx = _ctx("2", SPADES)
    hand = parse_cards(
        "3H 4H 6H 7H 9H JH 3C 4C 6C 8C 5D 10D KD AD AD 2S 2H 2C SJ BJ "
        "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS QH QC"
    )
    view = BotView(ME, ctx, tuple(hand), ME, 1, (), None, (), 0, None, STANDARD)
    buried = list(HEURISTIC.bury(view, random.Random(0)))
    assert len(buried) == BURY_SIZE
    assert not any(ctx.is_trump(c) for c in buried)
    assert sum(1 for c in buried if c in parse_cards("5D 10D KD")) == 0
    assert _same(buried, "3H 4H 6H 7H 3C 4C 6C 8C")


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("2H 3H 5H 8H 2S 4S", "2H"),  # hearts is the longest suit
        ("2H 3S 5S 8S 2S 4H", "2S"),
        ("2H 3S", None),  # too early to tell: wait for more cards
    ],
)
def test_heuristic_declares_its_longest_suit(hand: str, expected: str | None) -> None:
    cards = tuple(parse_cards(hand))
    options = possible_declarations(cards, 0, STANDARD)
    view = BidView(ME, 0, cards, None, None, 25 - len(cards), STANDARD)
    show = HEURISTIC.declare(view, options, random.Random(0))
    if expected is None:
        assert show is None
    else:
        assert show is not None and _same(show.cards, expected)
