"""PostgreSQL's statements in the capacity bench's measured windows
(:mod:`bench.capacity_bench` ``--pg-statements N``): the throwaway cluster loads
``pg_stat_statements``; each window starts with its counters reset and ends with the top
``N`` statements by total execution and planning time, with calls and milliseconds per command."""

from __future__ import annotations

import psycopg

SETTINGS = (
    "shared_preload_libraries = 'pg_stat_statements'",
    "pg_stat_statements.track = all",
    "pg_stat_statements.max = 1000",
    "pg_stat_statements.track_planning = on",
)
"""The cluster's ``postgresql.conf`` lines for the statistics (planning timed too)."""


def install(url: str) -> None:
    """Create the extension (its view) in the bench's database."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")


_SESSIONS = "SELECT coalesce(sum(sessions), 0) FROM pg_stat_database"


def reset(url: str) -> int:
    """Zero the counters: a measured window begins; the sessions opened so far."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")
        row = conn.execute(_SESSIONS).fetchone()
    return 0 if row is None else int(row[0])


def top(url: str, n: int, commands: int, sessions: int) -> str:
    """The ``n`` statements that took most execution time since :func:`reset`, per
    command (``commands`` answered in the window); the sessions (connections) opened
    since ``sessions`` (what :func:`reset` answered)."""
    per = max(1, commands)
    with psycopg.connect(url, autocommit=True) as conn:
        total = conn.execute(
            "SELECT coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0), "
            "coalesce(sum(total_plan_time), 0), coalesce(sum(plans), 0) "
            "FROM pg_stat_statements"
        ).fetchone()
        opened = conn.execute(_SESSIONS).fetchone()
        rows = conn.execute(
            "SELECT total_exec_time, calls, rows, query, total_plan_time, max_exec_time "
            "FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT %s",
            (n,),
        ).fetchall()
    assert total is not None and opened is not None
    lines = [
        f"    PostgreSQL statements: {float(total[0]) / per:.2f} ms executing and "
        f"{int(total[1]) / per:.1f} calls per command (all statements), "
        f"{float(total[2]) / per:.2f} ms planning ({int(total[3]) / per:.1f} plans); "
        f"{int(opened[0]) - sessions} connections opened in the window; top {n} by time:"
    ]
    for ms, calls, nrows, query, plan, longest in rows:
        text = " ".join(str(query).split())
        lines.append(
            f"      {float(ms) / per:7.3f} ms/cmd {int(calls) / per:6.2f} calls/cmd "
            f"{float(ms) / max(1, int(calls)):7.3f} ms/call (at most {float(longest):6.1f}) "
            f"{int(nrows) / max(1, int(calls)):8.1f} "
            f"rows/call {float(plan) / per:6.3f} ms/cmd planning  {text[:200]}"
        )
    return "\n".join(lines)
