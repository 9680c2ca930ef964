"""Fair play and bounded cost, measured as an attacker sees it: a served instance
(``python -m infra.serve`` on SQLite in a temporary folder, a subprocess) driven over HTTP
with httpx (docs/security.md, docs/decisions.md D-fair).

Prints one line per figure; the timing ones as same-run ratios:

* ``rate``: answers one account got in a minute at ``RATE_LIMIT_PER_MINUTE=20`` while
  rotating its token 6 times (the limit follows the account: 20, not 7 x 20);
* ``quota``: matches made through quick-play tickets (``botsAfterSeconds: 0``) once
  ``MATCH_QUOTA_PER_HOUR`` is spent (0);
* ``streams``: for each kind of stream, the status of the 9th one an identity (or address)
  opens (429);
* ``revoked``: streams (match, player, ticket) that ended with ``event: revoked`` within
  1 s of their token's rotation, and the latency (max, median);
* ``oidc``: malformed identity-provider tokens answered 401 (of how many), 5xx seen;
* ``webhooks``: internal webhook URLs answered 422 (of how many);
* ``idle_cpu``: the server's idle CPU (% of a core) before and after one player opened
  ``--lobbies`` lobbies (distinct rule sets), and their ratio (flat: ~1);
* ``sweep``: one lobby sweep's CPU with those lobbies in the store (in this process, on
  SQLite): reading every lobby ever opened (the sweep before) over reading the lobbies
  where a ticket waits (the sweep now);
* ``resume``: server CPU of ``--resumes`` player streams resuming with ``Last-Event-ID:
  0`` over that of as many fresh ones (~1: a resume from far back costs a snapshot, not a
  scan of the log), the log's size, and an ordinary GET's median latency with those
  streams open over without.

Run ``python -m bench.fairplay_bench`` (``make bench-fairplay``; ``--lobbies 1000
--resumes 100`` are the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from eventsourcing.utils import get_topic

from api.streams import KINDS
from bench._api_server import CLK_TCK, HOST, ROOT, free_port
from domain.accounts.lobby import LobbyOpened
from domain.rules.ruleset import STANDARD, RuleSet
from infra.settings import Settings
from infra.store import build_service
from services.access import Credential
from services.accounts import lobby
from services.accounts.commands import CreatePlayer
from services.accounts.lobby_commands import CancelTicket, MakeDueMatch, QueueTicket
from services.handlers import build_bus
from tests.api.limits import CUP
from tests.api.rest import auth

Json = dict[str, Any]
OPERATOR = "operator-token-of-the-fair-play-bench"
ISSUER = "https://id.bench/"
AUDIENCE = "shengji-bench"
INTERNAL_URLS = (
    "https://127.0.0.1/hook",
    "https://127.0.0.1:5432/",
    "https://localhost/hook",
    "https://[::1]/hook",
    "https://0.0.0.0/hook",
    "https://2130706433/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://10.1.2.3/hook",
    "https://192.168.1.1/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "http://push.example/hook",
)


class Served:
    """``python -m infra.serve`` in a subprocess with ``env`` over the bench's defaults."""

    def __init__(self, workdir: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PERSISTENCE")}
        base.update(
            HOST=HOST,
            PORT=str(self.port),
            PERSISTENCE="sqlite",
            SQLITE_PATH=str(workdir / f"fair-{self.port}.sqlite3"),
            LOG_LEVEL="WARNING",
            SHUTDOWN_TIMEOUT="2",
            OPERATOR_TOKEN=OPERATOR,
            WEBHOOK_INTERVAL_MS="0",
            **env,
        )
        self.log = (workdir / f"server-{self.port}.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "infra.serve"],
            cwd=ROOT,
            env=base,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    async def ready(self) -> None:
        async with httpx.AsyncClient() as c:
            for _ in range(300):
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the server exited ({self.proc.returncode})")
                with contextlib.suppress(httpx.HTTPError):
                    if (await c.get(f"{self.url}/readyz")).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        raise RuntimeError("the server did not get ready")

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@contextlib.asynccontextmanager
async def served(workdir: Path, **env: str) -> AsyncIterator[tuple[Served, httpx.AsyncClient]]:
    server = Served(workdir, **env)
    try:
        await server.ready()
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        async with httpx.AsyncClient(base_url=server.url, timeout=30, limits=limits) as c:
            yield server, c
    finally:
        server.stop()


async def new_player(c: httpx.AsyncClient, name: str = "Mei") -> Json:
    r = await c.post("/v1/players", json={"displayName": name})
    r.raise_for_status()
    body: Json = r.json()
    return body


# -- limits: rotation, quotas ------------------------------------------------------------------


async def rate_and_quota(workdir: Path) -> None:
    env = {
        "RATE_LIMIT_PER_MINUTE": "20",
        "MATCH_QUOTA_PER_HOUR": "5",
        "SESSION_QUOTA_PER_HOUR": "100",
    }
    async with served(workdir, **env) as (_, c):
        token = (await new_player(c))["token"]
        tokens, answered = [token], 0
        for _ in range(6):  # six new tokens of the same account, at once
            r = await c.post("/v1/players/me/token", headers=auth(tokens[-1]))
            answered += r.status_code != 429
            if r.status_code == 200:
                tokens.append(r.json()["token"])
        for token in tokens:  # then a minute's worth with each
            for _ in range(20):
                r = await c.get("/v1/players/me", headers=auth(token))
                answered += r.status_code != 429
        print(
            f"rate limit=20/min rotations={len(tokens) - 1} requests={6 + 20 * len(tokens)} "
            f"answers={answered}"
        )
        for _ in range(5):  # spend the address's match quota
            await c.post("/v1/matches", json={})
        other = await new_player(c, "Bo")
        extra = 0
        for _ in range(12):
            r = await c.post(
                "/v1/lobby/tickets", json={"botsAfterSeconds": 0}, headers=auth(other["token"])
            )
            extra += r.status_code == 201
        print(f"quota match_quota=5 spent quick_play_tickets=12 extra_matches={extra}")


# -- streams: caps, revocation ------------------------------------------------------------------


class Stream:
    """One SSE stream read in a task: its status and events as they come."""

    def __init__(self, c: httpx.AsyncClient, path: str, headers: dict[str, str]) -> None:
        self.status = 0
        self.last_id = 0
        self.events: asyncio.Queue[tuple[str, float]] = asyncio.Queue()
        self.started = asyncio.Event()
        self.task = asyncio.create_task(self._run(c, path, headers))

    async def _run(self, c: httpx.AsyncClient, path: str, headers: dict[str, str]) -> None:
        try:
            async with c.stream("GET", path, headers=headers, timeout=None) as r:
                self.status = r.status_code
                self.started.set()
                async for line in r.aiter_lines():
                    if line.startswith("id: "):
                        self.last_id = int(line[4:])
                    elif line.startswith("event: "):
                        self.events.put_nowait((line[7:], time.perf_counter()))
        finally:
            self.started.set()
            self.events.put_nowait(("(end)", time.perf_counter()))

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
            await self.task


async def opened(c: httpx.AsyncClient, path: str, headers: dict[str, str]) -> Stream:
    s = Stream(c, path, headers)
    await asyncio.wait_for(s.started.wait(), 10)
    return s


async def seated_player(c: httpx.AsyncClient, n: int = 0) -> tuple[Json, str, str]:
    """A player seated in a match, waiting with a ticket (a lobby of its own, ``n``, so no
    four tickets make a match): (player, match id, ticket id)."""
    p = await new_player(c)
    match_id = (await c.post("/v1/matches", json={})).json()["matchId"]
    claim = {"matchId": match_id, "seat": 0}
    (await c.post("/v1/players/me/seats", json=claim, headers=auth(p["token"]))).raise_for_status()
    body = {"rules": {"matchEnd": f"rounds:{100 + n}"}}
    ticket = await c.post("/v1/lobby/tickets", json=body, headers=auth(p["token"]))
    ticket.raise_for_status()
    return p, match_id, ticket.json()["ticketId"]


async def caps_and_revocation(workdir: Path, provider: Provider, revocations: int) -> None:
    env = {
        "RATE_LIMIT_PER_MINUTE": "100000",
        "MATCH_QUOTA_PER_HOUR": "0",
        "SESSION_QUOTA_PER_HOUR": "0",
        "PLAYER_QUOTA_PER_HOUR": "0",
        "SSE_MAX_PER_ADDRESS": "8",
        "OIDC_ISSUER": ISSUER,
        "OIDC_AUDIENCE": AUDIENCE,
        "OIDC_JWKS_URL": provider.url,
    }
    async with served(workdir, **env) as (_, c):
        p, match_id, ticket_id = await seated_player(c)
        tablet = (await c.post("/v1/players/me/sessions", headers=auth(p["token"]))).json()
        tournament = (await c.post("/v1/tournaments", json=CUP)).json()["tournamentId"]
        paths = {
            "match": f"/v1/matches/{match_id}/stream",
            "player": "/v1/players/me/stream",
            "ticket": f"/v1/lobby/tickets/{ticket_id}/stream",
            "standings": f"/v1/tournaments/{tournament}/standings/stream",
            "display": f"/v1/tournaments/{tournament}/display/stream",
            "feed": "/v1/events/stream",
        }
        assert set(paths) == set(KINDS), "a declared stream kind (api.streams) is not benched"
        ninth = {}
        for kind, path in paths.items():
            streams = []
            for i in range(9):  # the player's two devices: one account
                token = p["token"] if i < 4 else tablet["token"]
                private = kind in ("match", "player", "ticket")
                streams.append(await opened(c, path, auth(token) if private else {}))
            ninth[kind] = streams[-1].status
            for s in streams:
                await s.close()
        print("streams ninth_status " + " ".join(f"{k}={v}" for k, v in ninth.items()))

        took: list[float] = []
        ended = 0
        for i in range(revocations):
            p, match_id, ticket_id = await seated_player(c, i + 1)
            kind = ("match", "player", "ticket")[i % 3]
            path = {
                "match": f"/v1/matches/{match_id}/stream",
                "player": "/v1/players/me/stream",
                "ticket": f"/v1/lobby/tickets/{ticket_id}/stream",
            }[kind]
            s = await opened(c, path, auth(p["token"]))
            await asyncio.wait_for(s.events.get(), 10)  # the stream is going
            started = time.perf_counter()
            (await c.post("/v1/players/me/token", headers=auth(p["token"]))).raise_for_status()
            try:
                async with asyncio.timeout(5):
                    while True:
                        event, at = await s.events.get()
                        if event in ("revoked", "(end)"):
                            break
            except TimeoutError:
                event, at = "(none)", time.perf_counter()
            if event != "revoked":
                print(f"  ({kind} stream ended with {event})")
            if event == "revoked" and at - started < 1.0:
                ended += 1
            took.append((at - started) * 1000)
            await s.close()
        print(
            f"revoked streams={revocations} ended_within_1s={ended} "
            f"max_ms={max(took):.0f} median_ms={statistics.median(took):.0f}"
        )

        answers = []
        for token in provider.malformed():
            r = await c.post("/v1/players/oidc", headers=auth(token))
            answers.append(r.status_code)
        print(
            f"oidc malformed={len(answers)} answered_401={answers.count(401)} "
            f"answered_5xx={sum(a >= 500 for a in answers)}"
        )

        refused = 0
        for url in INTERNAL_URLS:
            body = {"url": url, "secret": "s" * 32, "kinds": ["your-turn"]}
            r = await c.post("/v1/webhooks", json=body, headers=auth(OPERATOR))
            refused += r.status_code == 422
        print(f"webhooks internal_urls={len(INTERNAL_URLS)} answered_422={refused}")


class Provider:
    """A local JWKS (an RSA key with alg RS256, an EC key) and malformed tokens."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        keys = [
            {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa.public_key())), "kid": "r"},
            {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec.public_key())), "kid": "e"},
        ]
        keys[0]["alg"] = "RS256"
        body = json.dumps({"keys": keys}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.url = f"http://{HOST}:{self.server.server_address[1]}/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def malformed(self) -> Iterator[str]:
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "u", "exp": now + 600}
        yield jwt.encode(claims, self.ec, algorithm="ES256", headers={"kid": "r"})
        yield jwt.encode(claims, self.rsa, algorithm="RS256", headers={"kid": "e"})
        yield jwt.encode(claims, self.rsa, algorithm="PS256", headers={"kid": "r"})
        yield jwt.encode(claims, self.rsa, algorithm="RS512", headers={"kid": "r"})
        yield jwt.encode(claims, self.rsa, algorithm="RS384", headers={"kid": "r"})
        yield jwt.encode(claims, "", algorithm="none", headers={"kid": "r"})
        yield jwt.encode(claims, "a-shared-secret-of-32-characters", algorithm="HS256")
        yield jwt.encode(claims, self.rsa, algorithm="RS256")  # no kid
        yield jwt.encode(claims, self.rsa, algorithm="RS256", headers={"kid": "zz"})
        yield "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln"
        yield "a.b.c"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- cost strangers cannot grow: lobbies, resumes --------------------------------------------------


async def idle_cpu(server: Served, seconds: float) -> float:
    before, t0 = server.cpu(), time.perf_counter()
    await asyncio.sleep(seconds)
    return 100 * (server.cpu() - before) / (time.perf_counter() - t0)


async def get_ms(c: httpx.AsyncClient, n: int = 20) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        (await c.get("/v1/matches")).raise_for_status()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def open_and_read(c: httpx.AsyncClient, token: str, last: str | None, n: int) -> list[Stream]:
    headers = auth(token) | ({} if last is None else {"Last-Event-ID": last})
    streams = [Stream(c, "/v1/players/me/stream", headers) for _ in range(n)]
    for s in streams:
        await asyncio.wait_for(s.started.wait(), 60)
    return streams


async def lobbies_and_resumes(workdir: Path, lobbies: int, resumes: int, idle_s: float) -> None:
    env = {
        "RATE_LIMIT_PER_MINUTE": "0",
        "SWEEP_INTERVAL_MS": "1000",
    }
    async with served(workdir, **env) as (server, c):
        baseline = await idle_cpu(server, idle_s)
        p = await new_player(c)
        for n in range(1, lobbies + 1):
            body = {"rules": {"matchEnd": f"rounds:{n}"}, "botsAfterSeconds": 3600}
            r = await c.post("/v1/lobby/tickets", json=body, headers=auth(p["token"]))
            r.raise_for_status()
            await c.delete(f"/v1/lobby/tickets/{r.json()['ticketId']}", headers=auth(p["token"]))
        await asyncio.sleep(2)  # the sweeper reads the new lobby events once
        after = await idle_cpu(server, idle_s)
        print(
            f"idle_cpu lobbies={lobbies} before_pct={baseline:.1f} after_pct={after:.1f} "
            f"ratio={after / max(baseline, 0.05):.2f}"
        )

        plain_ms = await get_ms(c)
        cpu0 = server.cpu()
        fresh = await open_and_read(c, p["token"], None, resumes)
        await asyncio.sleep(1.0)
        fresh_cpu = server.cpu() - cpu0
        log_end = max(s.last_id for s in fresh)
        for s in fresh:
            await s.close()
        cpu0 = server.cpu()
        resumed = await open_and_read(c, p["token"], "0", resumes)
        await asyncio.sleep(1.0)
        resumed_cpu = server.cpu() - cpu0
        with_streams_ms = await get_ms(c)
        for s in resumed:
            await s.close()
        print(
            f"resume streams={resumes} from=0 log_positions={log_end} "
            f"cpu_s={resumed_cpu:.2f} fresh_cpu_s={fresh_cpu:.2f} "
            f"ratio={resumed_cpu / max(fresh_cpu, 0.01):.2f} get_ms={plain_ms:.1f} "
            f"get_ms_with_streams={with_streams_ms:.1f} "
            f"get_ratio={with_streams_ms / max(plain_ms, 0.1):.2f}"
        )


def sweep_cost(workdir: Path, lobbies: int, sweeps: int = 10) -> None:
    """CPU of one lobby sweep with ``lobbies`` empty lobbies in the store (SQLite, this
    process): the sweep before D-fair (every lobby ever opened read each time) against
    the sweep now (the lobbies where a ticket waits for bots), same run, same store."""
    service = build_service(Settings(backend="sqlite", sqlite_path=workdir / "sweep.sqlite3"))
    try:
        bus = build_bus(service)
        mei = Credential.parse(bus.execute(CreatePlayer("Mei")).token)
        for n in range(1, lobbies + 1):
            rules = RuleSet.from_mapping({**STANDARD.to_mapping(), "match_end": f"rounds:{n}"})
            ticket = bus.execute(QueueTicket(rules, None, None, 3_600_000, "random"), mei)
            bus.execute(CancelTicket(UUID(ticket.ticket_id)), mei)
        opened = service.recorder.select_notifications(
            0, lobbies + 10, topics=[get_topic(LobbyOpened)], inclusive_of_start=False
        )
        every = [UUID(str(n.originator_id)) for n in opened]

        def every_lobby() -> None:
            for lid in every:
                found = lobby.get_lobby(service, lid)
                assert found is None or found.next_bots_at() is None

        waiting = lobby.Lobbies()

        def waiting_only() -> None:
            for lid in lobby.due_lobbies(service, waiting):
                bus.execute(MakeDueMatch(lid))

        waiting_only()  # the first sweep reads the log once
        timings = {}
        for name, sweep in (("every_lobby", every_lobby), ("waiting_only", waiting_only)):
            t0 = time.process_time()
            for _ in range(sweeps):
                sweep()
            timings[name] = 1000 * (time.process_time() - t0) / sweeps
        print(
            f"sweep lobbies={len(every)} every_lobby_ms={timings['every_lobby']:.2f} "
            f"waiting_only_ms={timings['waiting_only']:.3f} "
            f"ratio={timings['every_lobby'] / max(timings['waiting_only'], 1e-3):.0f}"
        )
    finally:
        service.close()


async def main(args: argparse.Namespace) -> None:
    provider = Provider()
    try:
        with tempfile.TemporaryDirectory(prefix="fairplay-") as tmp:
            workdir = Path(tmp)
            await rate_and_quota(workdir)
            await caps_and_revocation(workdir, provider, args.revocations)
            await lobbies_and_resumes(workdir, args.lobbies, args.resumes, args.idle_s)
            sweep_cost(workdir, args.lobbies)
    finally:
        provider.close()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lobbies", type=int, default=1000)
    parser.add_argument("--resumes", type=int, default=100)
    parser.add_argument("--revocations", type=int, default=30)
    parser.add_argument("--idle-s", type=float, default=10.0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
