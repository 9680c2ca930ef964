"""PostgreSQL's statements in the capacity bench's measured windows
(:mod:`bench.capacity_bench` ``--pg-statements N``): the throwaway cluster loads
``pg_stat_statements``; each window starts with its counters reset and ends with the top
``N`` statements by total execution time, with calls and milliseconds per command."""

from __future__ import annotations

import psycopg

SETTINGS = (
    "shared_preload_libraries = 'pg_stat_statements'",
    "pg_stat_statements.track = all",
    "pg_stat_statements.max = 1000",
)
"""The cluster's ``postgresql.conf`` lines for the statistics."""


def install(url: str) -> None:
    """Create the extension (its view) in the bench's database."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")


def reset(url: str) -> None:
    """Zero the counters: a measured window begins."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


def top(url: str, n: int, commands: int) -> str:
    """The ``n`` statements that took most execution time since :func:`reset`, per
    command (``commands`` answered in the window)."""
    per = max(1, commands)
    with psycopg.connect(url, autocommit=True) as conn:
        total = conn.execute(
            "SELECT coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0) "
            "FROM pg_stat_statements"
        ).fetchone()
        rows = conn.execute(
            "SELECT total_exec_time, calls, rows, query FROM pg_stat_statements "
            "ORDER BY total_exec_time DESC LIMIT %s",
            (n,),
        ).fetchall()
    assert total is not None
    lines = [
        f"    PostgreSQL statements: {float(total[0]) / per:.2f} ms executing and "
        f"{int(total[1]) / per:.1f} calls per command (all statements); top {n} by time:"
    ]
    for ms, calls, nrows, query in rows:
        text = " ".join(str(query).split())
        lines.append(
            f"      {float(ms) / per:7.3f} ms/cmd {int(calls) / per:6.2f} calls/cmd "
            f"{float(ms) / max(1, int(calls)):7.3f} ms/call {int(nrows) / max(1, int(calls)):8.1f} "
            f"rows/call  {text[:220]}"
        )
    return "\n".join(lines)
