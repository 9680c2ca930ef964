"""The round simulator: bots play whole rounds of one match (RULES R16–R32).

Each round: the seeded shuffle and the paced deal (R16, R35) — every seat may declare as
its cards arrive (R17, R18) — the end of the deal (R19 fallback or redeal, §10 暴动), the
overcall window and burying (R20, R21), every trick with every play validated by
:class:`domain.rules.play.TrickPlay` (R22–R25), then the score (R26–R29: trick points,
bottom bonus, throw penalties) and the level change and next dealer (R30–R32), carried
into the next round. Players see only their redacted views (R33).

Randomness is drawn here, never in the domain (ARCHITECTURE §5): a 32-byte seed per deal,
from ``random.Random(seed)`` when a run seed is given (so a run is reproducible) or from
``secrets``; the deal's seed also seeds the players' ``random.Random``.
"""

from __future__ import annotations

import random
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from domain.players import BidView, Player, PlayViews, SeatView, make_player
from domain.players.base import BURY_SIZE
from domain.rules.bidding import Bidding, Phase
from domain.rules.cards import BJ, POINTS, SJ, Card, contains, format_cards, points_of
from domain.rules.context import trump_context
from domain.rules.errors import IllegalMoveError
from domain.rules.play import TrickPlay
from domain.rules.ruleset import STANDARD, RuleSet
from domain.rules.scoring import (
    Settlement,
    advance_level,
    attackers_total,
    bottom_bonus,
    bottom_multiplier,
    match_over,
    next_dealer,
    settle,
    throw_penalty,
)
from domain.rules.shapes import ShapeKind
from domain.rules.shows import Show, Strength, may_request_redeal
from domain.rules.shuffle import SEED_BYTES, Deal, deal, shuffle_deck


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One scored round, with both parts of the attackers' total (R29)."""

    match: int
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


@dataclass(slots=True)
class _Match:
    """The match state carried from round to round (R30–R32)."""

    levels: list[int] = field(default_factory=lambda: [0, 0])
    dealer: int | None = None
    """None before round 1 (抢报, R18)."""
    rounds: int = 0
    number: int = 0


@dataclass(frozen=True, slots=True)
class SimulationSummary:
    """Figures of a simulation run; ``records`` only when asked for."""

    rules: RuleSet
    players: tuple[str, ...]
    seed: int | None
    totals: tuple[int, ...]
    """Attackers' total T of each round (R29)."""
    bands: dict[str, int]
    """R30 band label → rounds."""
    bonus_rounds: int
    """Rounds with a bottom bonus > 0 (R28)."""
    bonus_sum: int
    last_trick_attackers: int
    """Rounds whose last trick the attackers won."""
    throws: int
    failed_throws: int
    redeals: int
    fallbacks: int
    overcalls: int
    plays: int
    matches_finished: int
    levels: tuple[int, int]
    """Level rank index of teams {0,2} and {1,3} at the end of the run."""
    elapsed: float
    records: tuple[RoundRecord, ...] = ()

    @property
    def rounds(self) -> int:
        return len(self.totals)

    @property
    def mean_total(self) -> float:
        return statistics.fmean(self.totals) if self.totals else 0.0

    @property
    def stdev_total(self) -> float:
        return statistics.pstdev(self.totals) if len(self.totals) > 1 else 0.0

    @property
    def mean_bonus(self) -> float:
        return self.bonus_sum / self.bonus_rounds if self.bonus_rounds else 0.0

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def plays_per_s(self) -> float:
        return self.plays / self.elapsed if self.elapsed > 0 else 0.0

    def histogram(self, width: int = 40, top: int = 240) -> list[tuple[str, int]]:
        """Rounds per ``width``-point bin of T, the last bin open-ended ("240+")."""
        counts = Counter(min(t, top) // width for t in self.totals)
        bins = [(f"{i * width}-{i * width + width - 5}", counts[i]) for i in range(top // width)]
        return [*bins, (f"{top}+", counts[top // width])]


def simulate(
    rounds: int,
    *,
    rules: RuleSet = STANDARD,
    players: Sequence[str | Player] = ("random", "random", "random", "random"),
    seed: int | None = None,
    keep_records: bool = False,
) -> SimulationSummary:
    """Play ``rounds`` complete rounds of one match (a new match starts if one ends, R32)."""
    if len(players) != 4:
        raise ValueError(f"four players are needed (R1), got {len(players)}")
    seats = [make_player(p) if isinstance(p, str) else p for p in players]
    seeder = random.Random(seed) if seed is not None else None
    match = _Match()
    records: list[RoundRecord] = []
    totals: list[int] = []
    redeals = matches = 0
    start = time.perf_counter()
    while len(totals) < rounds:
        deal_seed = seeder.randbytes(SEED_BYTES) if seeder else secrets.token_bytes(SEED_BYTES)
        record = play_round(match, deal_seed, seats, rules)
        if record is None:
            redeals += 1
            continue
        totals.append(record.total)
        records.append(record)
        if _settle_match(match, record, rules):
            matches += 1
    elapsed = time.perf_counter() - start
    bands: Counter[str] = Counter(r.settlement.band for r in records)
    return SimulationSummary(
        rules=rules,
        players=tuple(p.name for p in seats),
        seed=seed,
        totals=tuple(totals),
        bands=dict(sorted(bands.items(), key=lambda kv: int(kv[0].split("-")[0]))),
        bonus_rounds=sum(1 for r in records if r.bonus > 0),
        bonus_sum=sum(r.bonus for r in records),
        last_trick_attackers=sum(1 for r in records if r.won_last),
        throws=sum(r.throws for r in records),
        failed_throws=sum(r.failed_throws for r in records),
        redeals=redeals,
        fallbacks=sum(1 for r in records if r.fallback),
        overcalls=sum(r.overcalls for r in records),
        plays=sum(r.plays for r in records),
        matches_finished=matches,
        levels=(match.levels[0], match.levels[1]),
        elapsed=elapsed,
        records=tuple(records) if keep_records else (),
    )


def play_round(
    match: _Match, deal_seed: bytes, players: Sequence[Player], rules: RuleSet
) -> RoundRecord | None:
    """One round from the shuffle to the score; None when it is redealt (R19, §10)."""
    dealer = match.dealer
    if dealer is None:
        bidding = Bidding.round_one(rules, match.levels[0])
    else:
        bidding = Bidding.later_round(rules, dealer, (match.levels[0], match.levels[1]))
    dealt = deal(shuffle_deck(deal_seed), 0 if dealer is None else dealer)
    game = _Round(bidding, dealt, players, random.Random(deal_seed))
    game.draw()
    game.bidding = game.bidding.end_deal(dealt.bottom, game.hands)
    if not game.settle_bidding():
        return None
    return game.play_and_score(match.number)


class _Round:
    """The mutable state of one round while the simulator drives it."""

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
            hand = hands[seat]
            hand.append(card)
            if bidding.standing is not None:
                continue
            if card >= SJ or card % 13 == levels[seat]:
                options[seat] = bidding.legal_shows(seat, hand)
            if options[seat]:
                view = BidView(seat, levels[seat], tuple(hand), bidding.dealer, None, True, rules)
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
                False,
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
                view = BidView(
                    seat, level, hand, bidding.dealer, bidding.standing, False, self.rules
                )
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
        view = SeatView(
            seat, ctx, tuple(hand), dealer, attackers, (), None, (), 0, None, self.rules
        )
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

    def play_and_score(self, match_number: int) -> RoundRecord:
        """R22–R29: every trick, each play checked, then the attackers' total and R30."""
        bidding = self.bidding
        rules = self.rules
        dealer = bidding.dealer
        assert dealer is not None
        level = bidding.level
        trump = bidding.trump
        attackers = (dealer + 1) % 2
        tp = TrickPlay(trump_context(level, trump), self.hands, dealer, attackers)
        players = self.players
        rng = self.rng
        bottom = self.bottom
        views = PlayViews(tp, dealer=dealer, rules=rules, burier=self.burier, bottom=bottom)
        plays = throws = 0
        while not tp.finished:
            seat = tp.turn
            outcome = tp.check(seat, players[seat].play(views.view(seat), rng))
            leading = not tp.trick
            tp.apply(outcome)
            plays += 1
            if leading and (outcome.attempted is not None or _is_throw(tp)):
                throws += 1
        assert tp.last_trick is not None and tp.last_lead is not None
        won_last = tp.last_trick[2] % 2 == attackers
        bonus = bottom_bonus(bottom, tp.last_lead, won_last, rules)
        penalties = tuple(
            throw_penalty(rules, len(cards), seat % 2 != attackers)
            for seat, cards in tp.failed_throws
        )
        total = attackers_total(tp.attacker_points, bonus, penalties)
        return RoundRecord(
            match=match_number,
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


def _settle_match(match: _Match, record: RoundRecord, rules: RuleSet) -> bool:
    """R30–R32: the team that goes up, the next dealer; True when the match ended."""
    s = record.settlement
    defenders = record.dealer % 2
    team = defenders if s.defenders_keep else 1 - defenders
    change = advance_level(match.levels[team], s.levels, rules, defending=s.defenders_keep)
    match.levels[team] = change.level
    match.dealer = next_dealer(record.dealer, s.defenders_keep)
    match.rounds += 1
    if match_over(match.rounds, rules, won=change.match_won):
        match.levels = [0, 0]
        match.dealer = None
        match.rounds = 0
        match.number += 1
        return True
    return False
