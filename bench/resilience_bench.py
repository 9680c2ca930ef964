"""Resilience under faults, the long run: ``make bench-resilience`` /
``python -m bench.resilience_bench``.

The scenarios of ``tests/resilience`` (:mod:`tests.resilience.scenarios`), with more
replicas, tables, time and races, on a throwaway PostgreSQL cluster of its own
(:func:`infra.pgcluster.throwaway_server`; never ``$DATABASE_URL``'s server, since the
last phase stops and restarts it):

1. **across replicas** — a command through replica A reaches an SSE subscriber of
   replica B; polls through every replica answer its version.
2. **kill -9** — ``--tables`` bot tables play through the API for ``--seconds`` while a
   random replica is killed with SIGKILL every ``--kill-every`` seconds (and started
   again); clients retry with the same Idempotency-Key on another replica. Then: every
   acknowledged command's event present exactly once, every match rebuilt from its events
   equal to what every replica's view shows (R34), sampled keys replayed with the
   original answer.
3. **races** — ``--races`` pairs of conflicting commands at the same If-Match version,
   sent at once to two replicas: exactly one wins, the other gets 409 (lost at the
   store) or 412 (the winner had already committed when it loaded).
4. **PostgreSQL restart** — the cluster stops for ``--down`` seconds during play:
   commands wait within the library's retry, 503 ``store-unavailable`` with Retry-After
   past it; recovery with no restart.

The last line is machine-readable::

    resilience kills=<n> acked=<n> lost=<n> duplicated=<n> races=<n> double_wins=<n>
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from infra.pgcluster import Cluster, throwaway_server
from tests.resilience.checks import Verdict
from tests.resilience.scenarios import Stack, cross_replica, kill_run, outage_run, race_run


def _verdict(name: str, v: Verdict) -> str:
    return (
        f"  {name}: acked={v.acked} lost={v.lost} duplicated={v.duplicated} "
        f"replay_mismatches={len(v.replay_mismatches)} version_gaps={v.version_gaps}"
    )


async def run(
    args: argparse.Namespace, url: str, cluster: Cluster
) -> tuple[int, list[Verdict], int, int]:
    started = time.monotonic()
    stack = await Stack.start(url, args.replicas, seed=args.seed)
    try:
        print(f"{args.replicas} replicas up in {time.monotonic() - started:.1f}s", flush=True)
        (table,) = await stack.tables(1, seed=1)
        seen = await cross_replica(stack, table)
        print(
            f"across replicas: frame on the last replica {seen.delivered_ms:.0f} ms after "
            f"the command's answer; polls {seen.polls} (version {seen.version})",
            flush=True,
        )

        tables = await stack.tables(args.tables, seed=1000)
        killed = await kill_run(
            stack, tables, seconds=args.seconds, every_s=args.kill_every, replays=10
        )
        stats = stack.client.stats
        print(
            f"kill -9: kills={killed.kills} commands={sum(killed.commands_per_table)} "
            f"connection_errors={stats.connection_errors} in_flight_409={stats.in_flight} "
            f"answers_replayed_on_retry={stats.replayed} "
            f"replays_checked={killed.replays_checked} replays_wrong={killed.replays_wrong}",
            flush=True,
        )
        print(_verdict("kill -9", killed.verdict), flush=True)

        race_tables = await stack.tables(args.race_tables, seed=5000)
        per_table = -(-args.races // args.race_tables)
        t0 = time.monotonic()
        raced = await race_run(stack, race_tables, races_per_table=per_table)
        print(
            f"races: {raced.races} in {time.monotonic() - t0:.1f}s, double_wins="
            f"{raced.double_wins}, losers by status {dict(sorted(raced.losers.items()))}, "
            f"unexpected {len(raced.refused)}",
            flush=True,
        )
        print(_verdict("races", raced.verdict), flush=True)

        outage_tables = await stack.tables(args.tables // 2 or 1, seed=9000)
        before = stats.unavailable
        outage = await outage_run(
            stack, cluster, outage_tables, warm_s=3, down_s=args.down, after_s=6
        )
        print(
            f"postgres restart ({args.down:g}s down): 503s={outage.unavailable - before} "
            f"readyz_while_down={outage.readyz_down} recovered_in={outage.recovered_s:.1f}s "
            f"cross-replica after: {outage.after.delivered_ms:.0f} ms, polls "
            f"{outage.after.polls}; hub LISTEN connections {outage.hub_connections}; "
            f"unexpected={len(outage.unexpected)}",
            flush=True,
        )
        print(_verdict("restart", outage.verdict), flush=True)
        verdicts = [killed.verdict, raced.verdict, outage.verdict]
        return killed.kills, verdicts, raced.races, raced.double_wins
    finally:
        await stack.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--kill-every", type=float, default=3)
    parser.add_argument("--race-tables", type=int, default=8)
    parser.add_argument("--races", type=int, default=2000)
    parser.add_argument("--down", type=float, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with throwaway_server() as cluster:
        kills, verdicts, races, double_wins = asyncio.run(run(args, cluster.url, cluster))
    acked = sum(v.acked for v in verdicts)
    lost = sum(v.lost + len(v.replay_mismatches) + v.version_gaps for v in verdicts)
    duplicated = sum(v.duplicated for v in verdicts)
    print(
        f"resilience kills={kills} acked={acked} lost={lost} duplicated={duplicated} "
        f"races={races} double_wins={double_wins}"
    )
    return 0 if lost == duplicated == double_wins == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
