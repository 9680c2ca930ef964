"""``shengji export``: the finished matches as tidy tables, Parquet or CSV, partitioned by
day (docs/analysis.md).

Reads the store the environment configures (as ``shengji serve``: ``DATABASE_URL``,
``SQLITE_PATH`` …) and writes ``--out DIR/<table>/day=YYYY-MM-DD/part-0.<format>``
(:func:`services.analysis.dump.write_dump`). ``--reader public`` (the default) writes what
anyone may read (R33, R35, R36: what is redacted, docs/analysis.md); ``--reader operator``
everything. ``--since DAY`` writes only the partitions of that day and later: run it
periodically (cron, a Kubernetes CronJob) with yesterday's date and sync the folder to an
object store; each run rewrites those days' partitions whole, so it is idempotent. On
SQLite the server must be stopped first (one process owns the file); on PostgreSQL it
runs beside the replicas. The ``ratings`` table is read from the ratings' read model,
brought up to the log first (docs/decisions.md D-ratings).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from eventsourcing.utils import strtobool

from infra.cli_store import open_store
from infra.ratingviews import open_ratings_view
from services.analysis.dump import FORMATS, write_dump
from services.analysis.rows import READERS
from services.game import GameService
from services.ratings.boards import RatingModels
from services.ratings.runner import RatingsFollower


def ratings_of(service: GameService) -> RatingModels:
    """The store's ratings, followed to the log's end (its tables made as the store's
    are, ``CREATE_TABLE``)."""
    view = open_ratings_view(service, create=strtobool(service.env.get("CREATE_TABLE") or "y"))
    schedule = service.env.get("RATING_SEASONS") or "monthly"
    follower = RatingsFollower(service, view, schedule=schedule)
    follower.catch_up()
    return RatingModels(service, view, follower, schedule)


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a day is YYYY-MM-DD, got {text!r}") from None


def add_export_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "export",
        help="write the finished matches as tidy tables (Parquet or CSV, by day)",
        description="Write the finished matches as tidy tables partitioned by day "
        "(docs/analysis.md).",
    )
    parser.add_argument("--format", choices=FORMATS, default="parquet", help="%(default)s")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write into")
    parser.add_argument(
        "--reader",
        choices=READERS,
        default="public",
        help="whose view: `public` (redacted, the default) or `operator` (everything)",
    )
    parser.add_argument(
        "--since", type=_day, default=None, help="only the partitions of this day (UTC) and later"
    )


def run_export(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    service = open_store("export", err)
    if service is None:
        return 2
    try:
        started = time.perf_counter()
        done = write_dump(
            service, args.out, args.format, args.reader, args.since, ratings_of(service)
        )
        seconds = time.perf_counter() - started
        rows = sum(done.rows.values())
        out.write(
            f"exported {done.matches} matches ({rows} rows, {done.bytes} bytes in "
            f"{len(done.files)} files) to {args.out} in {seconds:.2f} s\n"
        )
        for table, count in done.rows.items():
            out.write(f"  {table}: {count} rows\n")
        return 0
    finally:
        service.close()
