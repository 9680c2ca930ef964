"""What one anonymous client may cost a served instance (docs/decisions.md D-bounded):
``python -m infra.serve`` on SQLite in a temporary folder (a subprocess, its defaults but
a high request rate), driven over HTTP with httpx. Clients are told apart by the address
a trusted proxy names (``X-Forwarded-For``, ``TRUSTED_PROXIES=127.0.0.1``).

Before the server starts, ``--history`` one-round bot matches that ended three days ago
are stored (played in memory, imported as records): the exports' history, in settled
days' partitions.

* ``bots``: another person plays a match with three ``strong`` bots; each bot answer is
  the time from the live stream's frame before it to the frame of the bot's move. First
  alone (the baseline), then while an anonymous 64-team tournament of ``strong`` bots
  plays its first round (32 bots-only tables): p50 and p99 of each, and their ratio.
* ``quota``: the anonymous caller then loops cancelling and scheduling that round, making
  a match, ending it and asking its rematch each time, until refused (and a quick-play
  ticket): the matches the log holds that it made, against ``MATCH_QUOTA_PER_HOUR``, and
  the statuses it was answered.
* ``exports``: a plain ``GET /v1/matches/{id}`` every 20 ms, alone (baseline), then while
  24 anonymous clients export at once (half the whole plays table, half a settled day's
  partition of it; each asks again after a refusal's ``Retry-After``) until each has its
  file or ``--export-s`` seconds pass: p50 and p99 of the GET, their ratio, the exports'
  statuses and how long they took.
* ``display``: the anonymous caller opens ``SSE_MAX_PER_ADDRESS + 8`` display streams of
  its tournament: how many were opened past the cap.

The last line is machine-readable::

    bounded created=<n> quota=<n> other_bot_p99_ms=<f> export_get_p99_ms=<f> display_over_cap=<n>

Run ``python -m bench.bounded_bench`` (``make bench-bounded``; under two minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from bench._api_server import HOST, ROOT, free_port
from bench._tables import new_match, seat_bots
from domain.rules.ruleset import MatchEnd, MatchEndKind, preset
from infra.settings import Settings
from infra.store import build_service
from services.bot_driver import run_bots
from services.game import GameService
from services.handlers import build_bus
from services.records.export import export_match
from services.records.replay import ImportRecord

Json = dict[str, Any]
OPERATOR = "operator-token-of-the-bounded-bench"
ATTACKER = "198.51.100.7"
PERSON = "203.0.113.9"
PROBE = "192.0.2.10"
ACTIONS = frozenset({"TrumpDeclared", "Overcalled", "Passed", "BottomBuried", "CardPlayed"})
MATCH_QUOTA = 60
ADDRESS_CAP = 32
EXPORTERS = 24


def of(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def auth(token: str, address: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **of(address)}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- the history --------------------------------------------------------------------------


def store_history(path: Path, matches: int) -> None:
    """``matches`` one-round random-bot matches that ended three days ago, stored in the
    SQLite file at ``path`` as imported records."""
    past = datetime.now(UTC) - timedelta(days=3)
    scratch = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=lambda: past)
    service = build_service(Settings(backend="sqlite", sqlite_path=path))
    try:
        bus, into = build_bus(scratch), build_bus(service)
        rules = dataclasses.replace(preset("standard"), match_end=MatchEnd(MatchEndKind.ROUNDS, 1))
        for i in range(matches):
            mid = new_match(bus, rules, f"history {i}", "standard")
            seat_bots(bus, mid)
            run_bots(bus, mid, 100_000)
            into.execute(ImportRecord(export_match(scratch, mid), store=True))
    finally:
        service.close()


# -- the server ------------------------------------------------------------------------------


class Served:
    """``python -m infra.serve`` on the SQLite file ``store``."""

    def __init__(self, workdir: Path, store: Path) -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PERSISTENCE")}
        env.update(
            HOST=HOST,
            PORT=str(self.port),
            PERSISTENCE="sqlite",
            SQLITE_PATH=str(store),
            LOG_LEVEL="WARNING",
            SHUTDOWN_TIMEOUT="2",
            OPERATOR_TOKEN=OPERATOR,
            WEBHOOK_INTERVAL_MS="0",
            RATE_LIMIT_PER_MINUTE="100000",  # the quotas and caps, not the request rate
            TRUSTED_PROXIES="127.0.0.1",
            SSE_LIFETIME_S="3600",
        )
        self.log = (workdir / "server.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "infra.serve"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    async def ready(self) -> None:
        async with httpx.AsyncClient() as c:
            for _ in range(600):
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the server exited ({self.proc.returncode})")
                with contextlib.suppress(httpx.HTTPError):
                    if (await c.get(f"{self.url}/readyz")).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        raise RuntimeError("the server did not get ready")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# -- another person's bots -----------------------------------------------------------------------


def choose(view: Json) -> tuple[str, list[str]] | None:
    """Only what the view offers: bury the first 8, follow the first hint or lead the first
    card, pass while declaring."""
    legal = view.get("legal") or {}
    actions = legal.get("actions") or []
    if "bury" in actions:
        return "bury", legal["buryFrom"][: legal["buryCount"]]
    if "play" in actions:
        return "play", legal["follows"][0] if legal["follows"] else view["hand"][:1]
    if "pass" in actions:
        return "pass", []
    return None


async def frames(c: httpx.AsyncClient, url: str, headers: dict[str, str]) -> AsyncIterator[Json]:
    """The live stream's ``view`` frames, each with the time it arrived (``at``)."""
    async with c.stream("GET", url, headers=headers, timeout=None) as r:
        r.raise_for_status()
        event = ""
        async for line in r.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "view":
                frame: Json = json.loads(line[5:])
                frame["at"] = time.perf_counter()
                yield frame


async def persons_table(c: httpx.AsyncClient, seconds: float) -> tuple[str, list[float]]:
    """A person at seat 0 with three strong bots, playing at once whenever offered, for
    ``seconds`` (or to the match's end): the match, and each bot answer's latency in ms."""
    made = await c.post("/v1/matches", json={"rules": {"matchEnd": "rounds:3"}}, headers=of(PERSON))
    made.raise_for_status()
    url, org = f"/v1/matches/{made.json()['matchId']}", made.json()["organiserToken"]
    seat = await c.post(f"{url}/seats/0", json={"name": "Mei"}, headers=of(PERSON))
    seat.raise_for_status()
    token = seat.json()["token"]
    for n in (1, 2, 3):
        r = await c.post(f"{url}/seats/{n}/bot", json={"kind": "strong"}, headers=auth(org, PERSON))
        r.raise_for_status()
    answers: list[float] = []
    deadline = time.perf_counter() + seconds
    previous: float | None = None
    last_version = 0
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds + 30):
            async for frame in frames(c, f"{url}/stream", auth(token, PERSON)):
                event = frame["event"]
                if (
                    previous is not None
                    and event["type"] in ACTIONS
                    and event["data"].get("seat") in (1, 2, 3)
                ):
                    answers.append(1000 * (frame["at"] - previous))
                previous = frame["at"]
                view = frame["view"]
                if view.get("finished") or time.perf_counter() > deadline:
                    break
                choice = choose(view)
                if choice is not None and frame["version"] > last_version:
                    last_version = frame["version"]
                    action, cards = choice
                    await c.post(
                        f"{url}/actions/{action}",
                        json={"cards": cards},
                        headers=auth(token, PERSON),
                    )
    return made.json()["matchId"], answers


def strong_cup(teams: int) -> Json:
    return {
        "name": "strong cup",
        "format": "swiss",
        "swissRounds": 1,
        "matchLength": 1,
        "teams": [
            {
                "name": f"team {i}",
                "players": [{"name": "a", "kind": "strong"}, {"name": "b", "kind": "strong"}],
            }
            for i in range(teams)
        ],
    }


# -- the quota ---------------------------------------------------------------------------------


async def match_ids(c: httpx.AsyncClient) -> set[str]:
    """Every match the log's ``MatchCreated`` events name (the operator's feed)."""
    found: set[str] = set()
    after = 0
    while True:
        page = await c.get(
            "/v1/events",
            params={"after": after, "limit": 1000, "type": "MatchCreated"},
            headers={"Authorization": f"Bearer {OPERATOR}"},
        )
        page.raise_for_status()
        body = page.json()
        found |= {item["stream"]["id"] for item in body["items"]}
        after = body["next"]
        if not body["more"]:
            return found


def status(route: str, r: httpx.Response) -> str:
    """``route status`` (and the problem's code when refused)."""
    if r.is_success:
        return f"{route} {r.status_code}"
    with contextlib.suppress(ValueError, KeyError):
        return f"{route} {r.status_code} {r.json()['code']}"
    return f"{route} {r.status_code}"


async def attack_quota(c: httpx.AsyncClient, url: str, org: str, seconds: float) -> Counter[str]:
    """The finding's loop — cancel round 1, schedule it again — with a match made (ended and
    rematched) each time, until a match is refused and ten schedulings were tried (or
    ``seconds`` pass); then a quick-play ticket with bots at once: the statuses, by route."""
    statuses: Counter[str] = Counter()
    cancel = {"reason": "again", "by": "TD"}
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        r = await c.post(f"{url}/rounds/1/cancel", json=cancel, headers=auth(org, ATTACKER))
        statuses[status("cancel", r)] += 1
        r = await c.post(f"{url}/rounds", headers=auth(org, ATTACKER))
        statuses[status("schedule", r)] += 1
        r = await c.post("/v1/matches", json={}, headers=of(ATTACKER))
        statuses[status("match", r)] += 1
        if r.status_code == 201:
            made = r.json()
            mine = auth(made["organiserToken"], ATTACKER)
            done = f"/v1/matches/{made['matchId']}"
            await c.post(f"{done}/finish", json={}, headers=mine)
            r = await c.post(f"{done}/rematch", headers=mine)
            statuses[status("rematch", r)] += 1
        tried = sum(n for key, n in statuses.items() if key.startswith("schedule"))
        if statuses["match 429 quota-exceeded"] and tried >= 10:
            break
    player = await c.post("/v1/players", json={"displayName": "Bo"}, headers=of(ATTACKER))
    if player.status_code == 201:
        ticket = {"botsAfterSeconds": 0}
        r = await c.post(
            "/v1/lobby/tickets", json=ticket, headers=auth(player.json()["token"], ATTACKER)
        )
        statuses[status("ticket", r)] += 1
    return statuses


# -- exports -----------------------------------------------------------------------------------


async def probe(c: httpx.AsyncClient, path: str, stop: asyncio.Event) -> list[float]:
    """A plain GET every 20 ms until ``stop``: its latencies, in ms."""
    latencies = []
    while not stop.is_set():
        started = time.perf_counter()
        r = await c.get(path, headers=of(PROBE))
        latencies.append(1000 * (time.perf_counter() - started))
        r.raise_for_status()
        await asyncio.sleep(0.02)
    return latencies


async def exporter(
    c: httpx.AsyncClient, path: str, stop: asyncio.Event, seen: Counter[str]
) -> None:
    """One client's export: asked until it is answered with the file (a 429 or 503 asks
    again after its ``Retry-After``), or ``stop``. A connection the server closed while
    idle (its keep-alive ran out during a wait) is asked on again."""
    while not stop.is_set():
        try:
            async with c.stream("GET", path, headers=of(ATTACKER), timeout=None) as r:
                async for _ in r.aiter_raw():
                    pass
        except httpx.TransportError:
            seen["reconnected"] += 1
            continue
        seen[str(r.status_code)] += 1
        if r.status_code not in (429, 503):
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), int(r.headers.get("retry-after", "1")))


async def plain_gets(c: httpx.AsyncClient, path: str, seconds: float) -> list[float]:
    stop = asyncio.Event()
    task = asyncio.create_task(probe(c, path, stop))
    await asyncio.sleep(seconds)
    stop.set()
    return await task


async def exports_attack(
    c: httpx.AsyncClient, prober: httpx.AsyncClient, path: str, seconds: float, day: str
) -> tuple[list[float], Counter[str], float]:
    """``EXPORTERS`` anonymous clients export at once (half the whole plays table, half a
    settled day's partition of it) while ``prober`` asks a plain GET, until every one has
    its file or ``seconds`` pass: the GET's latencies, the exports' statuses, the seconds."""
    stop = asyncio.Event()
    seen: Counter[str] = Counter()
    files = [
        "/v1/exports/plays.parquet" if i % 2 else f"/v1/exports/plays.parquet?day={day}"
        for i in range(EXPORTERS)
    ]
    started = time.perf_counter()
    probing = asyncio.create_task(probe(prober, path, stop))
    tasks = [asyncio.create_task(exporter(c, f, stop, seen)) for f in files]
    await asyncio.wait(tasks, timeout=seconds)
    took = time.perf_counter() - started
    stop.set()
    await asyncio.gather(*tasks)
    return await probing, seen, took


# -- display streams ----------------------------------------------------------------------------


async def open_displays(c: httpx.AsyncClient, url: str, count: int) -> int:
    """Open ``count`` display streams at once from one address: how many were opened."""
    async with contextlib.AsyncExitStack() as stack:
        statuses = []
        for _ in range(count):
            r = await stack.enter_async_context(
                c.stream("GET", f"{url}/display/stream", headers=of(ATTACKER), timeout=30)
            )
            statuses.append(r.status_code)
        return statuses.count(200)


# -- the run -----------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bounded-bench-") as tmp:
        workdir = Path(tmp)
        store = workdir / "bounded.sqlite3"
        started = time.perf_counter()
        store_history(store, args.history)
        day = (datetime.now(UTC) - timedelta(days=3)).date().isoformat()
        print(f"history matches={args.history} day={day} s={time.perf_counter() - started:.1f}")
        server = Served(workdir, store)
        try:
            await server.ready()
            limits = httpx.Limits(max_connections=300, max_keepalive_connections=100)
            async with (
                httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as c,
                httpx.AsyncClient(base_url=server.url, timeout=60) as prober,
            ):
                await measure(c, prober, args, day)
        except BaseException:
            server.stop()
            tail = (workdir / "server.log").read_text(errors="replace").splitlines()[-20:]
            print("\n".join(["the server's log, last lines:", *tail]), file=sys.stderr)
            raise
        else:
            server.stop()


async def measure(
    c: httpx.AsyncClient, prober: httpx.AsyncClient, args: argparse.Namespace, day: str
) -> None:
    before = await match_ids(c)
    first, alone = await persons_table(c, args.bots_s / 3)
    made = await c.post("/v1/tournaments", json=strong_cup(64), headers=of(ATTACKER))
    made.raise_for_status()
    url, org = f"/v1/tournaments/{made.json()['tournamentId']}", made.json()["organiserToken"]
    scheduled = await c.post(f"{url}/rounds", headers=auth(org, ATTACKER))
    scheduled.raise_for_status()
    tables = len(scheduled.json()["round"]["tables"])
    second, beside = await persons_table(c, args.bots_s)
    ratio = pct(beside, 0.99) / pct(alone, 0.99)
    print(
        f"bots alone n={len(alone)} p50_ms={pct(alone, 0.5):.0f} p99_ms={pct(alone, 0.99):.0f}; "
        f"beside {tables} bots-only tables n={len(beside)} p50_ms={pct(beside, 0.5):.0f} "
        f"p99_ms={pct(beside, 0.99):.0f}; p99 ratio={ratio:.2f}"
    )
    statuses = await attack_quota(c, url, org, args.quota_s)
    created = len((await match_ids(c)) - before - {first, second})
    print(f"quota statuses {dict(sorted(statuses.items()))}")
    print(f"quota created={created} quota={MATCH_QUOTA} (of them round 1's tables: {tables})")
    path = f"/v1/matches/{second}"
    quiet = await plain_gets(prober, path, 3)
    loaded, seen, took = await exports_attack(c, prober, path, args.export_s, day)
    print(
        f"exports plain GET alone p50_ms={pct(quiet, 0.5):.1f} p99_ms={pct(quiet, 0.99):.1f}; "
        f"beside {EXPORTERS} exporters p50_ms={pct(loaded, 0.5):.1f} "
        f"p99_ms={pct(loaded, 0.99):.1f} (n={len(loaded)}); p99 ratio="
        f"{pct(loaded, 0.99) / pct(quiet, 0.99):.2f}; exports answered "
        f"{dict(sorted(seen.items()))} in {took:.1f} s"
    )
    opened = await open_displays(c, url, ADDRESS_CAP + 8)
    print(f"display opened={opened} of {ADDRESS_CAP + 8} cap={ADDRESS_CAP}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"bounded created={created} quota={MATCH_QUOTA} other_bot_p99_ms={pct(beside, 0.99):.1f} "
        f"export_get_p99_ms={pct(loaded, 0.99):.1f} "
        f"display_over_cap={max(0, opened - ADDRESS_CAP)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history", type=int, default=40, help="matches stored before")
    parser.add_argument("--bots-s", type=float, default=24.0, help="the person's play, loaded")
    parser.add_argument("--quota-s", type=float, default=20.0, help="the quota loop, at most")
    parser.add_argument("--export-s", type=float, default=20.0, help="the exports' attack")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
