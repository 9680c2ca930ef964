"""Webhook deliveries survive ``kill -9`` (docs/webhooks.md): a real ``infra.serve``
process on an SQLite file, a local receiver that fails and then recovers. The server is
killed right after the events that feed deliveries are saved (before or while the outbox
follows them) and again while retries wait; after the restarts every player's deliveries
arrive, in order, none lost (deduplicated by ``Shengji-Delivery``: at least once)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.resilience.harness import SECRET, TLS, Process, Receiver, free_port
from tests.resilience.zygote import Zygote

OPERATOR = "operator-token-0123456789abcdef"


class Server:
    """A server on a SQLite file, forked from the zygote (D-suite)."""

    def __init__(self, path: Path, zygote: Zygote) -> None:
        self.zygote = zygote
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = path.parent / "server.log"
        self.env = {
            **os.environ,
            "PERSISTENCE": "sqlite",
            "SQLITE_PATH": str(path),
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "RATE_LIMIT_PER_MINUTE": "0",
            "LOG_LEVEL": "WARNING",
            "OPERATOR_TOKEN": OPERATOR,
            "WEBHOOK_INTERVAL_MS": "100",
            "WEBHOOK_ALLOW_HTTP": "true",  # the receiver is a local test server
            "WEBHOOK_PRIVATE_TARGETS": "127.0.0.1",
        }
        self.proc: Process | None = None

    def start(self) -> None:
        self.proc = self.zygote.fork(("infra.serve",), self.env, self.log)
        deadline = time.monotonic() + 90  # a loaded machine starts a server slowly
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/readyz", timeout=1, verify=TLS).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise TimeoutError(self.log.read_text()[-2000:])

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


@pytest.fixture
def server(tmp_path: Path, zygote: Zygote) -> Iterator[Server]:
    s = Server(tmp_path / "events.sqlite3", zygote)
    s.start()
    yield s
    if s.proc is not None and s.proc.poll() is None:
        s.proc.terminate()
        s.proc.wait(timeout=10)


def post(s: Server, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = httpx.post(s.base + path, json=body, headers=headers, timeout=10, verify=TLS)
    assert r.status_code in (200, 201), r.text
    return r.json()


def deliveries(s: Server, subscription_id: str) -> list[dict[str, Any]]:
    """The subscription's delivery log."""
    log: list[dict[str, Any]] = httpx.get(
        s.base + f"/v1/webhooks/{subscription_id}/deliveries",
        headers={"Authorization": f"Bearer {OPERATOR}"},
        timeout=10,
        verify=TLS,
    ).json()
    return log


def refusal_logged(s: Server, subscription_id: str) -> bool:
    """The subscription's delivery log records an attempt the receiver refused (503)."""
    return any(a["status"] == 503 for d in deliveries(s, subscription_id) for a in d["attempts"])


def test_no_delivery_is_lost_across_kill_9(server: Server) -> None:
    receiver = Receiver()
    kinds = ["match-found", "your-turn", "match-finished"]
    sub = post(
        server, "/v1/webhooks", {"url": receiver.url, "secret": SECRET, "kinds": kinds}, OPERATOR
    )
    players = [post(server, "/v1/players", {"displayName": f"p{i}"}) for i in range(4)]
    match = post(server, "/v1/matches", {})
    for seat, p in enumerate(players):
        post(
            server, "/v1/players/me/seats", {"matchId": match["matchId"], "seat": seat}, p["token"]
        )
    server.kill()  # at once: the outbox may not have followed the claims yet
    server.start()
    # some deliveries are tried and refused (503), waiting their backoff: wait until the
    # server has recorded a refusal (a loaded machine may take a while to start the outbox
    # again; a refusal the receiver answered but the outbox had not yet recorded when the
    # server is killed below is tried again, not logged: at least once)
    deadline = time.monotonic() + 60
    while not refusal_logged(server, sub["subscriptionId"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert receiver.refused > 0 and refusal_logged(server, sub["subscriptionId"])
    post(server, f"/v1/matches/{match['matchId']}/finish", {}, match["organiserToken"])
    server.kill()
    server.start()
    receiver.failing = False
    ids = {p["playerId"] for p in players}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        with receiver.lock:
            finished = {b["playerId"] for _, b in receiver.got if b["kind"] == "match-finished"}
        if finished == ids:
            break
        time.sleep(0.3)
    per_queue: dict[str, list[tuple[int, str]]] = {}
    for delivery, body in receiver.got:
        queue, seq = delivery.rsplit(":", 1)
        per_queue.setdefault(queue, []).append((int(seq), body["kind"]))
    assert len(per_queue) == 4
    for items in per_queue.values():
        unique = sorted(set(items))
        assert [s for s, _ in unique] == list(range(1, len(unique) + 1))  # none lost
        assert [s for s, _ in items] == sorted(s for s, _ in items)  # in order
        assert unique[0][1] == "match-found" and unique[-1][1] == "match-finished"
    # the receiver holds a body before the outbox records its answer: wait for the record
    deadline = time.monotonic() + 30
    log = deliveries(server, sub["subscriptionId"])
    while not all(d["deliveredAt"] for d in log) and time.monotonic() < deadline:
        time.sleep(0.1)
        log = deliveries(server, sub["subscriptionId"])
    assert all(d["deliveredAt"] for d in log), [d for d in log if not d["deliveredAt"]]
    assert any(a["status"] == 503 for d in log for a in d["attempts"])
    receiver.server.shutdown()
    receiver.server.server_close()
    print(f"webhooks across 2 kills: {len(receiver.got)} received, {receiver.refused} refused")
