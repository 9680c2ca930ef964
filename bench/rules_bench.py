"""Rules-engine benchmark: random-legal Shengji rounds against python-chess random play.

Plays complete rounds (seeded shuffle and paced deal, declaring and overcalling, burying,
every trick with every play validated by the engine, scoring and the level change —
RULES R16–R32) between four random-legal players on one core, and in the same run
measures python-chess random play from the start position (random legal moves until the
game is over or 200 plies) as the baseline. The two workloads alternate in blocks so
that a busy machine slows both alike. The last line is machine-readable::

    rules-bench rounds_per_s=<float> plays_per_s=<float> chess_plies_per_s=<float> ratio=<float>

with ratio = plays_per_s / chess_plies_per_s. Run ``python -m bench.rules_bench``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import chess

from services.simulator import simulate

DEFAULT_ROUNDS = 3000
BLOCKS = 5
MAX_PLIES = 200


@dataclass(slots=True)
class BenchResult:
    """Work done by each side of the benchmark, and its CPU and wall-clock seconds.

    Rates are per CPU second of this one process (one core), so that other work on a
    shared machine slows the figures as little as possible; wall-clock rates are printed
    beside them.
    """

    rounds: int = 0
    plays: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    plies: int = 0
    chess_cpu: float = 0.0
    chess_wall: float = 0.0

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.cpu if self.cpu > 0 else 0.0

    @property
    def plays_per_s(self) -> float:
        return self.plays / self.cpu if self.cpu > 0 else 0.0

    @property
    def plies_per_s(self) -> float:
        return self.plies / self.chess_cpu if self.chess_cpu > 0 else 0.0

    @property
    def ratio(self) -> float:
        return self.plays_per_s / self.plies_per_s if self.plies_per_s > 0 else 0.0


def chess_random_plies(seconds: float, rng: random.Random) -> tuple[int, float, float]:
    """Random games from the start position for about ``seconds`` of CPU:
    (plies, CPU seconds, wall seconds)."""
    board = chess.Board()
    plies = 0
    wall = time.perf_counter()
    start = time.process_time()
    cpu = 0.0
    while cpu < seconds:
        board.reset()
        for _ in range(MAX_PLIES):
            if board.is_game_over():
                break
            board.push(rng.choice(list(board.legal_moves)))
            plies += 1
        cpu = time.process_time() - start
    return plies, cpu, time.perf_counter() - wall


def run(rounds: int, seed: int = 2024) -> BenchResult:
    """Alternate blocks of Shengji rounds and of chess play (a third of the time)."""
    result = BenchResult()
    rng = random.Random(seed)
    for block in range(BLOCKS):
        n = rounds // BLOCKS + (1 if block < rounds % BLOCKS else 0)
        if n == 0:
            continue
        summary = simulate(n, seed=seed + block)
        result.rounds += summary.rounds
        result.plays += summary.plays
        result.cpu += summary.cpu
        result.wall += summary.elapsed
        plies, cpu, wall = chess_random_plies(max(0.2, summary.cpu / 3), rng)
        result.plies += plies
        result.chess_cpu += cpu
        result.chess_wall += wall
    return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rules_bench",
        description="Random-legal Shengji rounds/s against python-chess random plies/s.",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help="Shengji rounds to play (default %(default)s, about 10 s)",
    )
    parser.add_argument("--seed", type=int, default=2024, help="run seed (default %(default)s)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    r = run(args.rounds, args.seed)
    print(
        f"shengji: {r.rounds} random-legal rounds (deal, declare, bury, play, score), "
        f"{r.plays} plays validated, {r.plays / max(r.rounds, 1):.1f} plays/round"
    )
    print(
        f"  {r.cpu:.2f} CPU s on one core: {r.rounds_per_s:.1f} rounds/s, "
        f"{r.plays_per_s:.0f} plays/s (wall clock {r.wall:.2f} s: "
        f"{r.rounds / max(r.wall, 1e-9):.1f} rounds/s)"
    )
    print(
        f"python-chess {chess.__version__}: {r.plies} random plies, {r.chess_cpu:.2f} CPU s: "
        f"{r.plies_per_s:.0f} plies/s (wall clock {r.plies / max(r.chess_wall, 1e-9):.0f})"
    )
    print(
        f"rules-bench rounds_per_s={r.rounds_per_s:.1f} plays_per_s={r.plays_per_s:.1f} "
        f"chess_plies_per_s={r.plies_per_s:.1f} ratio={r.ratio:.3f}"
    )


if __name__ == "__main__":
    main()
