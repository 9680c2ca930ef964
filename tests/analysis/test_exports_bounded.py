"""What an export may cost (docs/decisions.md D-bounded): a settled day's partition built
once and answered with its validators (304, free), rebuilt only when an event that could
change it happens; at most ``EXPORT_CONCURRENCY`` exports built at once (503
``exports-busy`` with ``Retry-After``); ``EXPORT_QUOTA_PER_HOUR`` built a client (429).

The finding: 24 concurrent anonymous exports took 7.2 s, the process grew from 230 to
420 MB, and an ordinary read or write waited up to 5.9 s.
"""

from __future__ import annotations

import asyncio
import csv
import io
import threading
from collections.abc import Iterator
from datetime import timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from litestar import Litestar

from api import exports as exports_route
from api.records import bulk as bulk_route
from domain.rules.ruleset import STANDARD
from infra.settings import Settings
from services.access import Credential
from services.accounts.commands import ErasePlayer
from services.analysis import dump, partitions
from services.game import GameService
from services.records.export import export_match
from tests.analysis.population import kinds_match
from tests.api.limits import client_at
from tests.apps import make_app
from tests.archive.matches import bot_teams
from tests.commands import bus_of, create_player, import_record
from tests.conftest import T0, FakeClock, FixedSeeds
from tests.tournaments import Tournaments

pytestmark = pytest.mark.anyio

DAY = T0.date().isoformat()
MATCHES = f"/v1/exports/matches.csv?day={DAY}"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def played(clock: FakeClock, matches: int) -> GameService:
    """A store whose ``matches`` bot matches ended on T0's day, read two days later."""
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, seeds=FixedSeeds()
    )
    for _ in range(matches):
        kinds_match(service, "standard", ["random"] * 4, 1)
    clock.advance(timedelta(days=2))
    return service


def app_of(service: GameService, **settings: Any) -> Litestar:
    base = Settings(backend="popo", sweep_interval_ms=0, webhook_interval_ms=0)
    return make_app(service, settings=base, **{"rate_limit_per_minute": 0, **settings})


def rows(body: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body.decode())))


class Builds(list[str]):
    """The partitions built (their tables), counted where they are built."""


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Builds:
    seen = Builds()
    chunks = dump.table_chunks

    def counted(service: GameService, table: str, *args: Any, **kw: Any) -> Iterator[bytes]:
        seen.append(table)
        return chunks(service, table, *args, **kw)

    monkeypatch.setattr(partitions, "table_chunks", counted)
    return seen


async def test_a_settled_days_partition_has_validators_and_answers_304() -> None:
    """``Last-Modified``: what happened before the process first looked is not read back,
    so it is that moment (two days after T0) until a change follows."""
    clock = FakeClock()
    app = app_of(played(clock, 2))
    async with app.lifespan(), client_at(app) as c:
        r = await c.get(MATCHES)
        assert r.status_code == 200, r.text
        assert len(rows(r.content)) == 2 and {row["day"] for row in rows(r.content)} == {DAY}
        tag, modified = r.headers["etag"], r.headers["last-modified"]
        assert tag.startswith('"') and not tag.startswith("W/")  # strong: the file's sha256
        assert modified == format_datetime(clock(), usegmt=True) == "Sat, 03 Jan 2026 12:00:00 GMT"
        assert f"matches-{DAY}.csv" in r.headers["content-disposition"]
        same = await c.get(MATCHES, headers={"If-None-Match": tag})
        assert (same.status_code, same.content, same.headers["etag"]) == (304, b"", tag)
        since = await c.get(MATCHES, headers={"If-Modified-Since": modified})
        assert since.status_code == 304
        before = format_datetime(T0, usegmt=True)
        assert (await c.get(MATCHES, headers={"If-Modified-Since": before})).status_code == 200
        other = await c.get(MATCHES, headers={"If-None-Match": '"another"'})
        assert (other.status_code, other.content) == (200, r.content)


async def test_a_day_not_settled_is_built_each_time_and_not_kept(builds: Builds) -> None:
    clock = FakeClock()
    app = app_of(played(clock, 1))
    today = clock().date().isoformat()
    async with app.lifespan(), client_at(app) as c:
        for _ in range(2):
            r = await c.get(f"/v1/exports/matches.csv?day={today}")
            assert r.status_code == 200, r.text
            assert "etag" not in r.headers and r.headers["cache-control"] == "no-store"
            assert rows(r.content) == []
        assert (await c.get("/v1/exports/matches.csv?day=null")).status_code == 422
    assert builds == []  # streamed: never a kept partition


async def test_a_settled_partition_is_built_once_until_a_change_could_alter_it(
    builds: Builds,
) -> None:
    """Served again from memory; a record imported whose match ended that day is a
    change that could alter it: built again, with the new match and a new ETag."""
    clock = FakeClock()
    service = played(clock, 2)
    app = app_of(service)
    async with app.lifespan(), client_at(app) as c:
        first = await c.get(MATCHES)
        again = await c.get(MATCHES)
        assert again.content == first.content and builds == ["matches"]
        other_table = await c.get(f"/v1/exports/rounds.csv?day={DAY}")
        assert other_table.status_code == 200 and builds == ["matches", "rounds"]
        scratch = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
        source = kinds_match(scratch, "standard", ["random"] * 4, 1)
        import_record(service, export_match(scratch, source), store=True)  # ended at T0
        changed = await c.get(MATCHES, headers={"If-None-Match": first.headers["etag"]})
        assert changed.status_code == 200 and builds == ["matches", "rounds", "matches"]
        assert len(rows(changed.content)) == 3
        assert changed.headers["etag"] != first.headers["etag"]
        assert changed.headers["last-modified"] == format_datetime(clock(), usegmt=True)


class Held:
    """A build that waits in its worker thread until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def chunks(self, *args: Any, **kw: Any) -> Iterator[bytes]:
        self.entered.set()
        self.release.wait(10)
        yield b"done\n"


@pytest.mark.parametrize(
    ("path", "module", "name"),
    [
        ("/v1/exports/plays.parquet", exports_route, "table_chunks"),
        ("/v1/records", bulk_route, "finished_records"),
    ],
)
async def test_an_export_past_the_cap_is_refused_at_once(
    monkeypatch: pytest.MonkeyPatch, path: str, module: Any, name: str
) -> None:
    """``EXPORT_CONCURRENCY=1``: while one is being built, another is 503 ``exports-busy``
    with ``Retry-After`` — and an ordinary read is answered meanwhile."""
    held = Held()
    monkeypatch.setattr(module, name, held.chunks)
    app = app_of(played(FakeClock(), 1), export_concurrency=1)
    async with app.lifespan(), client_at(app) as c:
        first = asyncio.create_task(c.get(path))
        assert await asyncio.to_thread(held.entered.wait, 10)
        try:
            busy = await c.get(path)
            assert (await c.get("/v1/matches")).status_code == 200
        finally:
            held.release.set()
        assert (await first).status_code == 200
        after = await c.get(path)
    assert busy.status_code == 503, busy.text
    assert busy.json()["code"] == "exports-busy"
    assert busy.json()["type"].endswith("/problems/exports-busy")
    assert busy.headers["content-type"].startswith("application/problem+json")
    assert int(busy.headers["retry-after"]) >= 1
    assert after.status_code == 200  # its place was given back


async def test_exports_spend_a_quota_per_client_and_a_kept_partition_is_free() -> None:
    app = app_of(played(FakeClock(), 1), rate_limit_per_minute=10_000, export_quota_per_hour=2)
    async with app.lifespan(), client_at(app) as c:
        assert (await c.get("/v1/exports/matches.csv")).status_code == 200
        assert (await c.get(MATCHES)).status_code == 200  # built: spends one
        spent = await c.get("/v1/records")
        assert spent.status_code == 429, spent.text
        assert spent.json()["code"] == "quota-exceeded"
        assert "EXPORT_QUOTA_PER_HOUR" in spent.json()["detail"]
        assert int(spent.headers["retry-after"]) >= 1
        assert (await c.get("/v1/exports/matches.csv")).status_code == 429
        kept = await c.get(MATCHES)  # the kept partition: free
        assert kept.status_code == 200
        etag = {"If-None-Match": kept.headers["etag"]}
        assert (await c.get(MATCHES, headers=etag)).status_code == 304
    async with app.lifespan(), client_at(app, "203.0.113.9") as other:
        assert (await other.get("/v1/exports/matches.csv")).status_code == 200


def test_the_marks_move_with_what_could_change_a_settled_partition() -> None:
    """A player erased moves every table's mark (their name in the rows); a tournament's
    event moves ``tournament_tables``' only; a match played today moves none."""
    clock = FakeClock()
    service = played(clock, 1)
    changes = partitions.Changes(service)
    start = {table: changes.mark(table) for table in ("matches", "tournament_tables")}
    kinds_match(service, "standard", ["random"] * 4, 1)
    assert {table: changes.mark(table) for table in start} == start
    Tournaments(service).create(
        name="cup", rules=STANDARD, teams=bot_teams(4), fmt="round_robin", match_length=1
    )
    assert changes.mark("matches") == start["matches"]
    assert changes.mark("tournament_tables").position > start["tournament_tables"].position
    _, token = create_player(service, "Mei", "en")
    bus_of(service).execute(ErasePlayer(), Credential.parse(token))
    erased = changes.mark("matches")
    assert erased.position > start["matches"].position and erased.at == clock()
    assert changes.mark("tournament_tables") == erased


async def test_requests_for_a_partition_being_built_wait_for_it(builds: Builds) -> None:
    """Eight at once, one export built at a time: one build, eight files, no refusal."""
    app = app_of(played(FakeClock(), 1), export_concurrency=1)
    async with app.lifespan(), client_at(app) as c:
        answers = await asyncio.gather(*(c.get(MATCHES) for _ in range(8)))
    assert [r.status_code for r in answers] == [200] * 8
    assert len({r.content for r in answers}) == 1 and builds == ["matches"]
