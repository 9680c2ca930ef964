"""Four bots at a table: one round driven through the rules engine (RULES R16–R29).

:func:`play_round` takes a dealt deck (R16) and a fresh :class:`Bidding`, and lets the
players act wherever the rules give them a choice: every seat may declare as its cards
arrive (R17, R18); then 暴动 (§10), late declaring, the overcall window and burying
(R18–R21), R19 handled by the bidding; every trick with every play validated by
:class:`domain.rules.play.TrickPlay` (R22–R25); and the score (R26–R30: trick points,
bottom bonus, throw penalties, the R30 settlement). Players see only their redacted views
(R33). Pure: the only randomness is the injected ``random.Random`` handed to the players.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from domain.bots.base import BURY_SIZE, Player
from domain.bots.view import BidView, BotView, PlayViews
from domain.rules.bidding import Bidding, Phase
from domain.rules.cards import BJ, POINTS, SJ, Card, contains, format_cards, points_of
from domain.rules.context import trump_context
from domain.rules.errors import IllegalMoveError
from domain.rules.play import TrickPlay
from domain.rules.scoring import (
    Settlement,
    attackers_total,
    bottom_bonus,
    bottom_multiplier,
    settle,
    throw_penalty,
)
from domain.rules.shapes import ShapeKind
from domain.rules.shows import Show, Strength, may_request_redeal
from domain.rules.shuffle import HAND_SIZE, Deal


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One scored round, with both parts of the attackers' total (R29)."""

    first_round: bool
    """Round 1 of a match (抢报, R18)."""
    dealer: int
    level: int
    trump: int | None
    attackers: int
    """Parity of the attacking seats (R2)."""
    trick_points: int
    """Points in the tricks the attackers won (R27)."""
    played_points: int
    """Points of every card played in tricks, whoever won them (R26)."""
    played: tuple[Card, ...]
    bottom: tuple[Card, ...]
    """The 8 buried cards at the end of the round (R21)."""
    won_last: bool
    """The attackers won the last trick (R28)."""
    multiplier: int
    """The last lead's bottom multiplier (R28), whoever won the trick."""
    bonus: int
    """Bottom bonus (R28): 0 unless the attackers won the last trick."""
    penalties: tuple[int, ...]
    """Signed throw penalties applied to the total (§10 throw_penalty_points)."""
    settlement: Settlement
    fallback: bool
    """Trump named by the bottom's 3rd card (R19)."""
    overcalls: int
    plays: int
    throws: int
    failed_throws: int

    @property
    def bottom_points(self) -> int:
        return points_of(self.bottom)

    @property
    def total(self) -> int:
        return self.settlement.total


def play_round(
    bidding: Bidding, dealt: Deal, players: Sequence[Player], rng: random.Random
) -> RoundRecord | None:
    """One round from the first card drawn to the score; None when it is to be redealt
    (R19 in round 1 or variant ``no_declaration=redeal``, §10 暴动).

    ``bidding`` is fresh (:meth:`Bidding.round_one` or :meth:`Bidding.later_round`);
    ``dealt`` was dealt from the dealer's seat (R16, round 1: seat 0).
    """
    game = _Round(bidding, dealt, players, rng)
    game.draw()
    game.bidding = game.bidding.end_deal(dealt.bottom, game.hands)
    if not game.settle_bidding():
        return None
    return game.play_and_score()


@dataclass(frozen=True, slots=True)
class Bid:
    """A round once declaring, overcalling and burying are over (R16–R21): ready to play."""

    bidding: Bidding
    """Phase DONE: the dealer and the trump are known."""
    hands: tuple[tuple[Card, ...], ...]
    """The four hands of 25 cards after burying."""
    bottom: tuple[Card, ...]
    """The 8 buried cards (R21)."""
    burier: int
    """The seat that buried them last (R21, R20 炒底): the only one that sees them."""


def bid_round(
    bidding: Bidding, dealt: Deal, players: Sequence[Player], rng: random.Random
) -> Bid | None:
    """:func:`play_round` up to the first lead: the deal, declaring, overcalling and
    burying by ``players``; None when the round is to be redealt (R19, §10)."""
    game = _Round(bidding, dealt, players, rng)
    game.draw()
    game.bidding = game.bidding.end_deal(dealt.bottom, game.hands)
    if not game.settle_bidding():
        return None
    hands = tuple(tuple(h) for h in game.hands)
    return Bid(game.bidding, hands, tuple(game.bottom), game.burier)


class _Round:
    """The mutable state of one round while the bots play it."""

    __slots__ = ("bidding", "bottom", "burier", "dealt", "hands", "players", "rng", "rules")

    def __init__(
        self, bidding: Bidding, dealt: Deal, players: Sequence[Player], rng: random.Random
    ) -> None:
        self.bidding = bidding
        self.rules = bidding.rules
        self.dealt = dealt
        self.players = players
        self.rng = rng
        self.hands: list[list[Card]] = [[], [], [], []]
        self.bottom = list(dealt.bottom)
        self.burier = -1
        """The seat that buried ``bottom`` (R21); -1 before anyone has."""

    def draw(self) -> None:
        """R16/R17: draw card by card; each seat may declare as its cards arrive.

        A seat's shows change only when a level card or a joker arrives, so its options
        are recomputed then, and offered again with every later card until somebody
        declares (the first declaration stands while drawing, R17).
        """
        bidding = self.bidding
        rules = self.rules
        hands = self.hands
        options: list[list[Show]] = [[], [], [], []]
        levels = [bidding.level_for(seat) for seat in range(4)]
        for seat, card in self.dealt.draws:
            if bidding.standing is not None:
                # Nobody may declare any more (R17): the rest is plain drawing.
                self.hands = [list(h) for h in self.dealt.hands]
                break
            hand = hands[seat]
            hand.append(card)
            if card >= SJ or card % 13 == levels[seat]:
                options[seat] = bidding.legal_shows(seat, hand)
            if options[seat]:
                left = HAND_SIZE - len(hand)
                view = BidView(seat, levels[seat], tuple(hand), bidding.dealer, None, left, rules)
                show = self.players[seat].declare(view, options[seat], self.rng)
                if show is not None:
                    bidding = bidding.declare(seat, show.cards, hand)
        self.bidding = bidding

    def settle_bidding(self) -> bool:
        """R18–R21 after the deal: 暴动, late declaring, the overcall window, burying.

        False when the round is to be redealt (R19, §10).
        """
        asked = self.rules.weak_hand_redeal is None
        while True:
            bidding = self.bidding
            phase = bidding.phase
            if not asked and bidding.redeal_requests_open:
                asked = True
                self._offer_redeal()
            elif phase is Phase.DONE:
                return True
            elif phase is Phase.REDEAL:
                return False
            elif phase is Phase.BURY:
                assert bidding.burier is not None
                self._bury(bidding.burier)
                self.bidding = bidding.bury(bidding.burier)
            else:
                self._speak()

    def _speak(self) -> None:
        """R20 overcall or pass; R18 (declare_with_joker) late declaration or pass."""
        bidding = self.bidding
        seat = bidding.to_speak
        assert seat is not None
        hand = self.hands[seat]
        overcalling = bidding.phase is Phase.OVERCALL
        standing = bidding.standing
        if overcalling and standing is not None and not _may_beat(hand, bidding.level, standing):
            options: list[Show] = []
        else:
            options = bidding.legal_shows(seat, hand)
        show: Show | None = None
        if options:
            view = BidView(
                seat,
                bidding.level_for(seat),
                tuple(hand),
                bidding.dealer,
                bidding.standing,
                0,
                self.rules,
            )
            player = self.players[seat]
            if overcalling:
                show = player.overcall(view, options, self.rng)
            else:
                show = player.declare(view, options, self.rng)
        if show is None:
            self.bidding = bidding.pass_(seat)
        elif overcalling:
            self.bidding = bidding.overcall(seat, show.cards, hand)
        else:
            self.bidding = bidding.declare(seat, show.cards, hand)

    def _offer_redeal(self) -> None:
        """§10 暴动: each weak hand, in play order from the dealer, may ask for a redeal."""
        bidding = self.bidding
        first = bidding.dealer or 0
        for k in range(4):
            seat = (first + k) % 4
            hand = self.dealt.hands[seat]
            if may_request_redeal(hand, self.rules):
                level = bidding.level_for(seat)
                view = BidView(seat, level, hand, bidding.dealer, bidding.standing, 0, self.rules)
                if self.players[seat].request_redeal(view, self.rng):
                    self.bidding = bidding.request_redeal(seat, hand)
                    return

    def _bury(self, seat: int) -> None:
        """R21 (and R20 炒底): ``seat`` takes the 8 cards into hand and buries 8."""
        bidding = self.bidding
        hand = self.hands[seat]
        hand += self.bottom
        dealer = bidding.dealer if bidding.dealer is not None else seat
        ctx = trump_context(bidding.level, bidding.trump)
        attackers = (dealer + 1) % 2
        view = BotView(seat, ctx, tuple(hand), dealer, attackers, (), None, (), 0, None, self.rules)
        buried = list(self.players[seat].bury(view, self.rng))
        if len(buried) != BURY_SIZE or not contains(hand, buried):
            raise IllegalMoveError(
                f"seat {seat} must bury {BURY_SIZE} of its own cards, not {format_cards(buried)}",
                rule="R21",
                code="illegal-bury",
            )
        for c in buried:
            hand.remove(c)
        self.bottom = buried
        self.burier = seat

    def play_and_score(self) -> RoundRecord:
        """R22–R29: every trick, each play checked, then the attackers' total and R30."""
        bidding = self.bidding
        rules = self.rules
        dealer = bidding.dealer
        assert dealer is not None
        level = bidding.level
        trump = bidding.trump
        attackers = (dealer + 1) % 2
        tp = TrickPlay(trump_context(level, trump), self.hands, dealer, attackers)
        rng = self.rng
        bottom = self.bottom
        views = PlayViews(
            tp, dealer=dealer, rules=rules, burier=self.burier, bottom=bottom, shows=bidding.shows
        )
        check, apply, view = tp.check, tp.apply, views.view
        moves = [player.play for player in self.players]
        plays = throws = 0
        while not tp.finished:  # one trick per turn of the loop: a lead, three follows
            seat = tp.turn
            outcome = check(seat, moves[seat](view(seat), rng))
            apply(outcome)
            if outcome.attempted is not None or _is_throw(tp):
                throws += 1
            for _ in range(3):
                seat = tp.turn
                apply(check(seat, moves[seat](view(seat), rng)))
            plays += 4
        assert tp.last_trick is not None and tp.last_lead is not None
        won_last = tp.last_trick[2] % 2 == attackers
        bonus = bottom_bonus(bottom, tp.last_lead, won_last, rules)
        penalties = tuple(
            throw_penalty(rules, len(cards), seat % 2 != attackers)
            for seat, cards in tp.failed_throws
        )
        total = attackers_total(tp.attacker_points, bonus, penalties)
        return RoundRecord(
            first_round=bidding.first_round,
            dealer=dealer,
            level=level,
            trump=trump,
            attackers=attackers,
            trick_points=tp.attacker_points,
            played_points=sum(POINTS[c] for c in tp.played),
            played=tuple(tp.played),
            bottom=tuple(bottom),
            won_last=won_last,
            multiplier=bottom_multiplier(tp.last_lead, rules),
            bonus=bonus,
            penalties=penalties,
            settlement=settle(total, rules),
            fallback=bidding.fallback,
            overcalls=max(0, len(bidding.shows) - 1),
            plays=plays,
            throws=throws,
            failed_throws=len(tp.failed_throws),
        )


def _may_beat(hand: Sequence[Card], level: int, standing: Show) -> bool:
    """A cheap necessary condition for an overcall (R20): the hand holds a show shape
    strictly stronger than the standing one (single < level pair < SJ SJ < BJ BJ)."""
    strength = standing.strength
    if strength >= Strength.BJ_PAIR:
        return False
    if hand.count(BJ) == 2:
        return True
    if strength >= Strength.SJ_PAIR:
        return False
    if hand.count(SJ) == 2:
        return True
    if strength >= Strength.LEVEL_PAIR:
        return False
    return any(hand.count(suit * 13 + level) == 2 for suit in range(4))


def _is_throw(tp: TrickPlay) -> bool:
    shape = tp.lead_shape
    return shape is not None and shape.kind is ShapeKind.THROW
