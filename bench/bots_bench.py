"""Bot strength benchmark: duplicate deals between two bot kinds (RULES R30, R36).

Every deal — a seed (R35), a dealer and the two teams' levels, all drawn from the run's
seed — is played twice with the same cards at the same seats: once with pair A at seats
{0, 2} and pair B at {1, 3}, once swapped (R36). Each round runs from the first card
drawn to the score (declaring, overcalling, burying, every play validated; R16–R30) as
a later round of a match (the dealer fixed, R18). A round's *level difference* is the
levels pair A gained less those pair B gained (R30: the team that goes up gains, the
other gains nothing); a deal's is the mean over its two plays, and the benchmark reports
the mean over deals with a 95% confidence interval (normal approximation, deals
independent). It also times every decision of the strong bot (plays and burials) and
measures the PettingZoo environment's steps per second. The last line is exactly (one
line)::

    bots strong_vs_heuristic=<mean> ci_low=<lower 95% bound>
         heuristic_vs_random=<mean> strong_ms_p99=<ms>

Deals are spread over ``--workers`` processes (results do not depend on how many).
Decision times are CPU time of the deciding process (one core's cost, unaffected by other
work on a shared machine); wall-clock times are printed beside them. Run
``python -m bench.bots_bench --deals 500 --budget 1500 --workers 2``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from domain.bots import Player, StrongPlayer, make_player
from domain.bots.table import RoundRecord, play_round
from domain.bots.view import BidView, BotView
from domain.rules.bidding import Bidding
from domain.rules.cards import Card
from domain.rules.ruleset import STANDARD
from domain.rules.shows import Show
from domain.rules.shuffle import SEED_BYTES, deal, shuffle_deck

DEFAULT_DEALS = 500
DEFAULT_BUDGET = 1500
"""The strong bot's budget in the benchmark (simulated plays per decision, about 60 ms of
CPU on average, 90 ms p99): half the service default
(:data:`domain.bots.strong.DEFAULT_BUDGET`, about 200 ms p99), so that 500 deals take
about 20 minutes on two cores."""
DEFAULT_WORKERS = 2
DEFAULT_ENV_STEPS = 20_000


@dataclass(slots=True)
class Timed:
    """A player whose play and bury decisions are timed: CPU ms of this process (what the
    decision costs one core, whatever else the machine runs) and wall-clock ms."""

    player: Player
    times: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.player.name

    def declare(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        return self.player.declare(view, options, rng)

    def overcall(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        return self.player.overcall(view, options, rng)

    def request_redeal(self, view: BidView, rng: random.Random) -> bool:
        return self.player.request_redeal(view, rng)

    def bury(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        cpu, wall = time.process_time(), time.perf_counter()
        cards = self.player.bury(view, rng)
        self._took(cpu, wall)
        return cards

    def play(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        cpu, wall = time.process_time(), time.perf_counter()
        cards = self.player.play(view, rng)
        self._took(cpu, wall)
        return cards

    def _took(self, cpu: float, wall: float) -> None:
        self.times.append((time.process_time() - cpu) * 1000)
        self.walls.append((time.perf_counter() - wall) * 1000)


@dataclass(frozen=True, slots=True)
class Deal:
    seed: bytes
    dealer: int
    levels: tuple[int, int]


def deals(n: int, seed: int) -> list[Deal]:
    """The run's deals: seed, dealer and levels of each, from the run seed."""
    rng = random.Random(seed)
    return [
        Deal(rng.randbytes(SEED_BYTES), rng.randrange(4), (rng.randrange(13), rng.randrange(13)))
        for _ in range(n)
    ]


def gained(record: RoundRecord, team: int) -> int:
    """Levels ``team`` (seat parity) gained in the round (R30)."""
    s = record.settlement
    defenders = record.dealer % 2
    up = defenders if s.defenders_keep else 1 - defenders
    return s.levels if up == team else 0


def play(d: Deal, seats: Sequence[Player]) -> RoundRecord:
    """One round of ``d`` with these players at seats 0..3 (no redeal in a later round)."""
    bidding = Bidding.later_round(STANDARD, d.dealer, d.levels)
    record = play_round(bidding, deal(shuffle_deck(d.seed), d.dealer), seats, random.Random(d.seed))
    assert record is not None
    return record


def _player(kind: str, budget: int) -> Player:
    return StrongPlayer(budget) if kind == "strong" else make_player(kind)


def run_chunk(
    chunk: Sequence[Deal], kind_a: str, kind_b: str, budget: int
) -> tuple[list[float], list[float], list[float]]:
    """Level differences (pair A less pair B, mean of the two plays) of each deal, and the
    strong bot's decision times (CPU ms, wall ms)."""
    a, b = Timed(_player(kind_a, budget)), Timed(_player(kind_b, budget))
    diffs = []
    for d in chunk:
        first = play(d, [a, b, a, b])
        second = play(d, [b, a, b, a])
        diff = gained(first, 0) - gained(first, 1) + gained(second, 1) - gained(second, 0)
        diffs.append(diff / 2)
    strong = [p for p in (a, b) if p.name == "strong"]
    return diffs, [t for p in strong for t in p.times], [t for p in strong for t in p.walls]


@dataclass(frozen=True, slots=True)
class Pairing:
    kind_a: str
    kind_b: str
    deals: int
    mean: float
    ci_low: float
    ci_high: float
    times: tuple[float, ...]
    """The strong bot's decisions, CPU ms."""
    walls: tuple[float, ...]
    """The same decisions, wall-clock ms."""
    wall: float

    def line(self) -> str:
        return (
            f"{self.kind_a} vs {self.kind_b}: {self.deals} deals x 2, level difference per "
            f"deal {self.mean:+.3f} (95% CI {self.ci_low:+.3f} .. {self.ci_high:+.3f}), "
            f"{self.wall:.0f} s"
        )


def pairing(
    kind_a: str, kind_b: str, all_deals: Sequence[Deal], budget: int, workers: int
) -> Pairing:
    start = time.perf_counter()
    size = max(1, math.ceil(len(all_deals) / (workers * 4)))
    chunks = [all_deals[i : i + size] for i in range(0, len(all_deals), size)]
    diffs: list[float] = []
    times: list[float] = []
    walls: list[float] = []
    if workers <= 1:
        results = [run_chunk(c, kind_a, kind_b, budget) for c in chunks]
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(run_chunk, c, kind_a, kind_b, budget) for c in chunks]
            results = [f.result() for f in futures]
    for d, t, w in results:
        diffs += d
        times += t
        walls += w
    mean = statistics.fmean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else math.inf
    wall = time.perf_counter() - start
    return Pairing(
        kind_a, kind_b, len(diffs), mean, mean - half, mean + half, tuple(times), tuple(walls), wall
    )


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def env_steps_per_s(steps: int, seed: int) -> float:
    """Random masked actions in the PettingZoo environment: steps per second (one core)."""
    from services.training.example import random_steps  # noqa: PLC0415 - optional heavy deps

    start = time.perf_counter()
    done = random_steps(steps, seed)
    return done / (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=DEFAULT_DEALS, help="deals per pairing")
    parser.add_argument(
        "--budget", type=int, default=DEFAULT_BUDGET, help="strong bot: simulated plays/decision"
    )
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="processes")
    parser.add_argument("--seed", type=int, default=2026, help="the run's seed")
    parser.add_argument("--env-steps", type=int, default=DEFAULT_ENV_STEPS)
    args = parser.parse_args(argv)
    run = deals(args.deals, args.seed)
    print(f"bots-bench: {args.deals} deals per pairing, each played twice (seats swapped)")
    print(f"strong bot budget {args.budget} simulated plays per decision, {args.workers} workers")
    hr = pairing("heuristic", "random", run, args.budget, args.workers)
    print(hr.line(), flush=True)
    sh = pairing("strong", "heuristic", run, args.budget, args.workers)
    print(sh.line(), flush=True)
    mean_ms = statistics.fmean(sh.times) if sh.times else 0.0
    p99 = percentile(sh.times, 0.99)
    print(
        f"strong bot decisions: {len(sh.times)}, CPU mean {mean_ms:.1f} ms, "
        f"p50 {percentile(sh.times, 0.5):.1f} ms, p99 {p99:.1f} ms, max {max(sh.times):.1f} ms; "
        f"wall-clock mean {statistics.fmean(sh.walls):.1f} ms, "
        f"p99 {percentile(sh.walls, 0.99):.1f} ms (the machine's load included)"
    )
    print(f"pettingzoo env: {env_steps_per_s(args.env_steps, args.seed):.0f} steps/s", flush=True)
    print(
        f"bots strong_vs_heuristic={sh.mean:.3f} ci_low={sh.ci_low:.3f} "
        f"heuristic_vs_random={hr.mean:.3f} strong_ms_p99={p99:.1f}"
    )


if __name__ == "__main__":
    main()
