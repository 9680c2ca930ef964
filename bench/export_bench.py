"""Archive benchmark: bulk export rate and memory, and the feed followed from
position 0 to the end, on a store of a few hundred finished matches.

The store is a SQLite file in a temporary folder (``--postgres``: a throwaway PostgreSQL
cluster; ``--database-url``: a given one). Its
matches are played once by four ``random`` bots in memory (one round each, ``rounds:1``)
and imported as records (``POST /v1/records?store=true``'s path): one save per match.
Then, on the store:

* ``export``: :func:`services.records.bulk.finished_records` read to the end — records/s,
  MB/s — and again under ``tracemalloc`` for the peak; the same through the HTTP handler
  (the Litestar test client, ``GET /v1/records``), plain and gzip;
* ``feed``: ``GET /v1/events`` paged from 0 to the end (public and operator), and the
  SSE stream's generator (``api.feed.Archive.frames``) followed from 0 to the last
  position — events/s;
* ``rebuild``: every registered projection rebuilt from the log (``shengji rebuild``);
* ``parquet``: the tidy tables written as Parquet partitions (``shengji export``,
  :func:`services.analysis.dump.write_dump`) — rows/s and bytes per match — and one table
  streamed over HTTP (``GET /v1/exports/plays.parquet``).

The last lines are machine-readable::

    export-bench matches=<n> records_per_s=<f> mb_per_s=<f> peak_kib=<f> http_mb_per_s=<f>
    gzip_ratio=<f> feed_events_per_s=<f> stream_events_per_s=<f> rebuild_events_per_s=<f>
    parquet matches=<n> parquet_rows_per_s=<f> parquet_bytes_per_match=<f>
    http_plays_rows_per_s=<f>

Run ``python -m bench.export_bench [--matches 300]`` (``make bench-export``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import re
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec
import pyarrow.parquet as pq
from litestar import Litestar
from litestar.testing import TestClient

from api.feed import Archive
from bench._tables import new_match, seat_bots
from domain.rules.ruleset import MatchEnd, MatchEndKind, preset
from infra.bootstrap import build_app
from infra.pgcluster import postgres_url
from infra.settings import Settings
from infra.store import build_service
from services.analysis.dump import write_dump
from services.bot_driver import run_bots
from services.feed import last_position
from services.game import GameService
from services.handlers import build_bus
from services.projections import rebuild
from services.records.bulk import BulkFilter, finished_records
from services.records.export import export_match
from services.records.replay import ImportRecord

TOKEN = "bench-operator-token-0000"
FRAME_ID = re.compile(rb"^id: ([0-9]+)$", re.MULTILINE)


def fill(service: GameService, matches: int) -> int:
    """Play ``matches`` one-round bot matches in memory and import them into ``service``."""
    scratch = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bus, into = build_bus(scratch), build_bus(service)
    rules = dataclasses.replace(preset("standard"), match_end=MatchEnd(MatchEndKind.ROUNDS, 1))
    for i in range(matches):
        mid = new_match(bus, rules, f"bench {i}", "standard")
        seat_bots(bus, mid)
        run_bots(bus, mid, 100_000)
        into.execute(ImportRecord(export_match(scratch, mid), store=True))
    return matches


def export_rate(service: GameService) -> tuple[int, int, float]:
    started = time.perf_counter()
    count = size = 0
    for line in finished_records(service, BulkFilter()):
        count += 1
        size += len(line)
    return count, size, time.perf_counter() - started


def export_peak(service: GameService) -> int:
    tracemalloc.start()
    try:
        for _ in finished_records(service, BulkFilter()):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def http_export(client: TestClient[Litestar], gzip: bool) -> tuple[int, float]:
    """Bytes on the wire and seconds for ``GET /v1/records``."""
    headers = {"Accept-Encoding": "gzip" if gzip else "identity"}
    started = time.perf_counter()
    with client.stream("GET", "/v1/records", headers=headers) as r:
        size = sum(len(chunk) for chunk in r.iter_raw())
    return size, time.perf_counter() - started


def feed_pages(client: TestClient[Litestar], operator: bool) -> tuple[int, float]:
    headers = {"Authorization": f"Bearer {TOKEN}"} if operator else {}
    after = items = 0
    started = time.perf_counter()
    while True:
        page = client.get("/v1/events", params={"after": after, "limit": 1000}, headers=headers)
        body = page.json()
        items += len(body["items"])
        after = body["next"]
        if not body["more"]:
            return items, time.perf_counter() - started


async def follow_stream(service: GameService) -> tuple[int, float]:
    archive = Archive(service, anyio.CapacityLimiter(5), batch=1000)
    last = last_position(service)
    frames = 0
    started = time.perf_counter()
    async for chunk in archive.frames(0, operator=False):
        found = FRAME_ID.search(chunk)  # ``event: event\nid: <position>\ndata: …``
        if found:
            frames += 1
            if int(found[1]) >= last:
                break
    return frames, time.perf_counter() - started


def parquet_dump(service: GameService, folder: Path) -> tuple[int, int, int, float]:
    """Matches, rows and bytes of the operator's Parquet dump, and its seconds."""
    started = time.perf_counter()
    done = write_dump(service, folder, "parquet", "operator")
    return done.matches, sum(done.rows.values()), done.bytes, time.perf_counter() - started


def http_plays(client: TestClient[Litestar], folder: Path) -> tuple[int, float]:
    """Rows of ``GET /v1/exports/plays.parquet`` (public) and its seconds."""
    path = folder / "plays.parquet"
    started = time.perf_counter()
    with client.stream("GET", "/v1/exports/plays.parquet") as r, path.open("wb") as f:
        for chunk in r.iter_bytes():
            f.write(chunk)
    seconds = time.perf_counter() - started
    rows: int = pq.ParquetFile(path).metadata.num_rows
    return rows, seconds


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--database-url", default=None, help="PostgreSQL instead of SQLite")
    parser.add_argument("--postgres", action="store_true", help="on a throwaway PostgreSQL cluster")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory())
        url = args.database_url
        if args.postgres and url is None:
            url = stack.enter_context(postgres_url({}))  # never a shared server
        if url:
            settings = Settings(backend="postgres", database_url=url)
        else:
            settings = Settings(backend="sqlite", sqlite_path=Path(folder) / "bench.sqlite3")
        settings = msgspec.structs.replace(
            settings, rate_limit_per_minute=0, sweep_interval_ms=0, operator_token=TOKEN
        )
        service = build_service(settings)
        try:
            started = time.perf_counter()
            fill(service, args.matches)
            print(
                f"store: {settings.backend}, {args.matches} matches, "
                f"{last_position(service)} events, filled in {time.perf_counter() - started:.1f} s"
            )
            export_rate(service)  # warm: the first read of the file fills the OS's cache
            count, size, seconds = export_rate(service)
            peak = export_peak(service)
            mb = size / 1e6
            print(
                f"export (service): {count} records, {mb:.1f} MB in {seconds:.2f} s: "
                f"{count / seconds:.0f} records/s, {mb / seconds:.1f} MB/s; "
                f"peak {peak / 1024:.0f} KiB (tracemalloc)"
            )
            with TestClient(build_app(settings, service=service)) as client:
                plain, plain_s = http_export(client, gzip=False)
                packed, packed_s = http_export(client, gzip=True)
                print(
                    f"export (HTTP): {plain / 1e6:.1f} MB in {plain_s:.2f} s "
                    f"({plain / 1e6 / plain_s:.1f} MB/s); gzip {packed / 1e6:.2f} MB in "
                    f"{packed_s:.2f} s (ratio {plain / packed:.1f})"
                )
                public, public_s = feed_pages(client, operator=False)
                full, full_s = feed_pages(client, operator=True)
                print(
                    f"feed (HTTP pages of 1000): public {public} events in {public_s:.2f} s "
                    f"({public / public_s:.0f}/s); operator {full} in {full_s:.2f} s "
                    f"({full / full_s:.0f}/s)"
                )
                plays, plays_s = http_plays(client, Path(folder))
            frames, stream_s = asyncio.run(follow_stream(service))
            print(
                f"feed (SSE generator, 0 to the end): {frames} frames in {stream_s:.2f} s "
                f"({frames / stream_s:.0f}/s)"
            )
            projections, done = rebuild(service)
            names = ", ".join(p.name for p in projections)
            print(f"rebuild ({names}): {done.done} events at {done.rate:.0f} events/s")
            dumped, rows, size, dump_s = parquet_dump(service, Path(folder) / "dump")
            print(
                f"parquet (shengji export, operator): {dumped} matches, {rows} rows, "
                f"{size / 1e6:.2f} MB in {dump_s:.2f} s ({rows / dump_s:.0f} rows/s, "
                f"{size / dumped:.0f} bytes/match); HTTP plays.parquet: {plays} rows in "
                f"{plays_s:.2f} s ({plays / plays_s:.0f} rows/s)"
            )
            print(
                f"export-bench matches={args.matches} records_per_s={count / seconds:.1f} "
                f"mb_per_s={mb / seconds:.2f} peak_kib={peak / 1024:.1f} "
                f"http_mb_per_s={plain / 1e6 / plain_s:.2f} gzip_ratio={plain / packed:.2f} "
                f"feed_events_per_s={public / public_s:.1f} "
                f"stream_events_per_s={frames / stream_s:.1f} "
                f"rebuild_events_per_s={done.rate:.1f}"
            )
            print(
                f"parquet matches={dumped} parquet_rows_per_s={rows / dump_s:.1f} "
                f"parquet_bytes_per_match={size / dumped:.1f} "
                f"http_plays_rows_per_s={plays / plays_s:.1f}"
            )
        finally:
            service.close()


if __name__ == "__main__":
    main()
