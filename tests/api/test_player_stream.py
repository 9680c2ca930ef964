"""One stream per player (docs/players.md): a snapshot first, then ``ticket``,
``match-found``, ``your-turn`` and ``match-finished`` frames whose ids are event log
positions, so ``Last-Event-ID`` resumes with nothing lost and nothing repeated."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

import anyio
import pytest
from litestar import Litestar
from litestar.testing import TestClient

import api.players.stream as player_stream
from domain.rules.ruleset import STANDARD
from services.access import Credential, player_of
from services.accounts import lobby
from services.accounts.commands import EndSession, ErasePlayer, OpenSession, RotateToken
from services.accounts.feed import PlayerFeed
from tests.api.rest import Json, Table, auth, client, new_service
from tests.api.sse_driver import stream
from tests.api.test_rest_lobby import ticket
from tests.api.test_rest_players import new_player
from tests.apps import make_app
from tests.commands import bus_of, create_player, open_ticket


def frames(text: str) -> list[tuple[int, str, str]]:
    out = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != ":"
        )
        if "event" in fields:
            out.append((int(fields["id"]), fields["event"], fields["data"]))
    return out


def read_stream(c: TestClient[Litestar], token: str, last: int | None = None) -> str:
    headers = auth(token) | ({} if last is None else {"Last-Event-ID": str(last)})
    with c.stream("GET", "/v1/players/me/stream", headers=headers) as r:
        assert r.status_code == 200, r.read()
        return "".join(r.iter_text())


@pytest.fixture(autouse=True)
def short_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(player_stream, "LIFETIME_S", 0.5)
    monkeypatch.setattr(player_stream, "POLL_S", 0.1)


def test_the_stream_carries_tickets_match_found_turns_and_the_end() -> None:
    service = new_service()
    with client(service) as c:
        players = [new_player(c, f"p{i}") for i in range(4)]
        mei = players[0]["token"]
        start = frames(read_stream(c, mei))
        assert [k for _, k, _ in start] == ["snapshot"]
        position = start[0][0]
        made = [ticket(c, p["token"]) for p in players]
        match_id = made[-1]["matchId"]
        text = read_stream(c, mei, position)
        got = frames(text)
        kinds = [k for _, k, _ in got]
        assert kinds[:2] == ["ticket", "match-found"] and kinds[2] == "ticket"
        assert [i for i, _, _ in got] == sorted(i for i, _, _ in got)  # log order
        assert match_id in got[1][2]
        # play until it is Mei's turn; the frames follow the moves
        table = Table(c, match_id, "", [p["token"] for p in players])
        feed = PlayerFeed(service, UUID(players[0]["playerId"]), got[-1][0])
        turns: list[Json] = []
        for _ in range(80):
            table.step()
            turns += [f.data for f in feed.poll() if f.kind == "your-turn"]
        assert turns and all(t["seat"] == 0 and t["yourTurn"] for t in turns)
        # resuming from a frame gives exactly the frames after it
        again = frames(read_stream(c, mei, got[0][0]))
        assert again[: len(got) - 1] == got[1:]
        c.post(f"/v1/matches/{match_id}/finish", headers={})  # no organiser: refused
        assert not [f for f in feed.poll() if f.kind == "match-finished"]


def test_a_finished_match_is_told() -> None:
    service = new_service()
    with client(service) as c:
        mei = new_player(c)
        created = c.post("/v1/matches", json={}).json()
        r = c.post(
            "/v1/players/me/seats",
            json={"matchId": created["matchId"], "seat": 1},
            headers=auth(mei["token"]),
        )
        assert r.status_code == 201
        feed = PlayerFeed(service, UUID(mei["playerId"]), 0)
        assert [f.kind for f in feed.poll()] == ["match-found"]
        c.post(f"/v1/matches/{created['matchId']}/finish", headers=auth(created["organiserToken"]))
        ended = feed.poll()
        assert [(f.kind, f.data["matchId"]) for f in ended] == [
            ("match-finished", created["matchId"])
        ]


@pytest.fixture(scope="module")
def refusing() -> Iterator[TestClient[Litestar]]:
    """One app for the refusals: no stream is opened, and its log stays short."""
    with client() as c:
        yield c


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), (auth("s.00000000000000000000000000000000.x"), 403)],
)
def test_the_stream_refuses_without_a_player_token(
    refusing: TestClient[Litestar], headers: dict[str, str], status: int
) -> None:
    c = refusing
    assert c.get("/v1/players/me/stream", headers=headers).status_code == status


def test_a_position_beyond_the_log_is_422(refusing: TestClient[Litestar]) -> None:
    c = refusing
    mei = new_player(c)["token"]
    r = c.get("/v1/players/me/stream", headers=auth(mei) | {"Last-Event-ID": "999999"})
    assert (r.status_code, r.json()["code"]) == (422, "last-event-id-ahead")


@pytest.mark.parametrize("how", ["session ended", "token rotated", "player erased"])
@pytest.mark.anyio
async def test_a_revoked_device_hears_nothing_more(
    monkeypatch: pytest.MonkeyPatch, how: str, anyio_backend: str
) -> None:
    """A lost phone signed out from another device (or a rotated token, or an erased
    player) gets no more frames on a stream it opened before: the stream ends with
    `event: revoked` (its reconnection is a 401), though events concerning the player keep
    coming."""
    monkeypatch.setattr(player_stream, "LIFETIME_S", 2.0)
    service = new_service()
    app = make_app(service)
    account, lost = create_player(service, "Mei", "en")
    bus, phone = bus_of(service), Credential.parse(lost)
    tablet = bus.execute(OpenSession("tablet"), phone).token

    def revoke() -> None:
        signed = player_of(service, phone)
        assert signed is not None
        if how == "session ended":
            bus.execute(EndSession(signed.session_id), phone)
        elif how == "token rotated":
            bus.execute(RotateToken(), phone)
        else:
            bus.execute(ErasePlayer(), phone)
            return
        queued = lobby.TicketRequest(account.id, STANDARD, None, None, None, "heuristic")
        open_ticket(service, queued)  # from the tablet: a frame for the player

    async with stream(app, "/v1/players/me/stream", auth(lost)) as s:
        while (ev := await s.next()) is None or ev.event != "snapshot":
            assert ev is not None, "the stream ended before its snapshot"
        await anyio.to_thread.run_sync(revoke)
        rest = await s.rest()
    assert [ev.event for ev in rest if ev.event] == ["revoked"], rest
    assert tablet and player_of(service, Credential.parse(lost)) is None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_resume_from_far_back_starts_from_the_snapshot_not_a_scan_of_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The finding: 100 player streams with `Last-Event-ID: 0` each scanned the whole log
    (an ordinary GET went from 15-40 ms to 0.9-1.6 s on a 6k-event log). A resume reads
    at most RESUME_WINDOW positions; from further back the stream starts with the
    snapshot at the log's end."""
    monkeypatch.setattr(player_stream, "RESUME_WINDOW", 12)
    service = new_service()
    read: list[int] = []
    real = service.recorder.select_notifications

    def counting(start: int, limit: int, *args: object, **kwargs: object) -> object:
        found = real(start, limit, *args, **kwargs)  # type: ignore[arg-type]
        read.extend(n.id for n in found)
        return found

    with client(service) as c:
        players = [new_player(c, f"p{i}") for i in range(4)]
        for p in players:
            ticket(c, p["token"])  # a match: its seating and deal fill the log
        end = service.recorder.max_notification_id() or 0
        assert end > 24
        c.get("/v1/matches")  # the read models' follower has read the log to its end
        monkeypatch.setattr(service.recorder, "select_notifications", counting)
        got = frames(read_stream(c, players[0]["token"], 0))
        assert [k for _, k, _ in got][:1] == ["snapshot"] and got[0][0] >= end
        assert not [i for i in read if i <= end - 12], "the stream read the log from 0"
        read.clear()
        near = frames(read_stream(c, players[0]["token"], end - 10))
        assert "snapshot" not in [k for _, k, _ in near]  # within the window: exact resume
        assert min(read) == end - 9
