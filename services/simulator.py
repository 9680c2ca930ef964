"""The round simulator: bots play whole rounds of one match (RULES R16–R32).

Each round is shuffled from a fresh seed (R35), dealt from the dealer's seat (R16) and
played by :func:`domain.bots.table.play_round` — declaring, overcalling, burying,
every trick validated, the score (R17–R30); the level change and next dealer (R30–R32)
are carried into the next round, and a match that ends (R32 ``match_end``) is followed
by a new one. The figures of the run are gathered in a :class:`SimulationSummary`.

Randomness is drawn here, never in the domain (docs/decisions.md F5): a 32-byte seed per deal,
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

from domain.bots import Player, make_player
from domain.bots.table import RoundRecord, play_round
from domain.rules.bidding import Bidding
from domain.rules.ruleset import STANDARD, RuleSet
from domain.rules.scoring import advance_level, match_over, next_dealer
from domain.rules.shuffle import SEED_BYTES, deal, shuffle_deck

__all__ = ["RoundRecord", "SimulationSummary", "simulate"]

MAX_REDEALS = 1000
"""Redeals in a row (R19, §10 暴动) after which a run gives up: bots that never declare."""


@dataclass(slots=True)
class _Match:
    """The match state carried from round to round (R30–R32)."""

    levels: list[int] = field(default_factory=lambda: [0, 0])
    dealer: int | None = None
    """None before round 1 (抢报, R18)."""
    rounds: int = 0


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
    """Wall-clock seconds of the run."""
    cpu: float
    """CPU seconds of this process during the run (one core)."""
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
    """Play ``rounds`` complete rounds of one match (a new match starts if one ends, R32).

    ``seed`` makes the run reproducible; ``keep_records`` keeps every :class:`RoundRecord`.
    """
    if len(players) != 4:
        raise ValueError(f"four players are needed (R1), got {len(players)}")
    seats = [make_player(p) if isinstance(p, str) else p for p in players]
    seeder = random.Random(seed) if seed is not None else None
    match = _Match()
    records: list[RoundRecord] = []
    totals: list[int] = []
    bands: Counter[str] = Counter()
    n: Counter[str] = Counter()
    redeals_in_a_row = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while len(totals) < rounds:
        deal_seed = seeder.randbytes(SEED_BYTES) if seeder else secrets.token_bytes(SEED_BYTES)
        r = _play_round(match, deal_seed, seats, rules)
        if r is None:
            n["redeals"] += 1
            redeals_in_a_row += 1
            if redeals_in_a_row >= MAX_REDEALS:
                raise RuntimeError(f"{MAX_REDEALS} redeals in a row: do the players declare?")
            continue
        redeals_in_a_row = 0
        totals.append(r.total)
        bands[r.settlement.band] += 1
        n["bonus_rounds"] += r.bonus > 0
        n["bonus_sum"] += r.bonus
        n["won_last"] += r.won_last
        n["throws"] += r.throws
        n["failed_throws"] += r.failed_throws
        n["fallbacks"] += r.fallback
        n["overcalls"] += r.overcalls
        n["plays"] += r.plays
        n["matches"] += _settle_match(match, r, rules)
        if keep_records:
            records.append(r)
    return SimulationSummary(
        rules=rules,
        players=tuple(p.name for p in seats),
        seed=seed,
        totals=tuple(totals),
        bands=dict(sorted(bands.items(), key=lambda kv: int(kv[0].split("-", 1)[0]))),
        bonus_rounds=n["bonus_rounds"],
        bonus_sum=n["bonus_sum"],
        last_trick_attackers=n["won_last"],
        throws=n["throws"],
        failed_throws=n["failed_throws"],
        redeals=n["redeals"],
        fallbacks=n["fallbacks"],
        overcalls=n["overcalls"],
        plays=n["plays"],
        matches_finished=n["matches"],
        levels=(match.levels[0], match.levels[1]),
        elapsed=time.perf_counter() - start,
        cpu=time.process_time() - cpu_start,
        records=tuple(records),
    )


def _play_round(
    match: _Match, deal_seed: bytes, players: Sequence[Player], rules: RuleSet
) -> RoundRecord | None:
    """One round from the shuffle to the score; None when it is redealt (R19, §10)."""
    dealer = match.dealer
    if dealer is None:
        bidding = Bidding.round_one(rules, match.levels[0])
    else:
        bidding = Bidding.later_round(rules, dealer, (match.levels[0], match.levels[1]))
    dealt = deal(shuffle_deck(deal_seed), 0 if dealer is None else dealer)
    return play_round(bidding, dealt, players, random.Random(deal_seed))


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
        return True
    return False
