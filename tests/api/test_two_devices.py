"""Two players on their devices, against the served app over HTTP (docs/players.md
"Friends"; docs/decisions.md D-social): A asks B, B accepts on another session, A's
player stream sees B come online (within the 2 s presence promise: a deadline, never a
timed assertion beyond it), A invites B to a private table, B accepts and is seated, they
play round 1 with two bots exchanging quick chat that every seat and a spectator hear in
order (R37) while B's player stream and B's table stream each reconnect with
``Last-Event-ID`` and resume exactly; then B blocks A and every path refuses A as it
refuses a stranger."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.api.rest import choose
from tests.api.served import served_here

Json = dict[str, Any]
PRESENCE_S = 2.0
"""The presence promise: a friend's change reaches the stream within this."""
DEADLINE_S = 60.0


@dataclass
class Frame:
    event: str
    data: Json
    id: int | None


@dataclass
class Reader:
    """One player stream read on a thread of its own: every frame, in order."""

    frames: list[Frame] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    stop: threading.Event = field(default_factory=threading.Event)

    def add(self, frame: Frame) -> None:
        with self.changed:
            self.frames.append(frame)
            self.changed.notify_all()

    def wait_for(self, found: Callable[[Frame], bool], timeout: float = DEADLINE_S) -> Frame:
        deadline = time.monotonic() + timeout
        seen = 0
        with self.changed:
            while True:
                for frame in self.frames[seen:]:
                    if found(frame):
                        return frame
                seen = len(self.frames)
                left = deadline - time.monotonic()
                assert left > 0, f"no such frame within {timeout} s: {self.frames[-5:]}"
                self.changed.wait(left)

    @property
    def ids(self) -> list[int]:
        with self.changed:
            return [f.id for f in self.frames if f.id is not None]


@contextmanager
def following(
    base: str,
    path: str,
    headers: dict[str, str],
    stop: threading.Event,
    on_block: Callable[[dict[str, str]], None],
) -> Iterator[None]:
    """``GET path`` as an SSE stream read on a thread of its own: each frame's fields
    (``event``, ``id``, ``data``) handed to ``on_block`` in order, until ``stop`` is set."""
    opened = threading.Event()

    def run() -> None:
        try:
            read()
        except httpx.HTTPError:  # the server stopped, or the test let go of the stream
            opened.set()

    def read() -> None:
        with (
            httpx.Client(base_url=base, timeout=None) as c,
            c.stream("GET", path, headers=headers) as r,
        ):
            assert r.status_code == 200, r.read()
            opened.set()
            block: dict[str, str] = {}
            for line in r.iter_lines():
                if stop.is_set():
                    return
                if not line:
                    on_block(block)
                    block = {}
                elif not line.startswith(":") and ": " in line:
                    name, value = line.split(": ", 1)
                    block[name] = value

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert opened.wait(DEADLINE_S), "the stream did not open"
    try:
        yield
    finally:
        stop.set()  # the thread ends at the next frame or ping; it is a daemon


@contextmanager
def player_stream(base: str, token: str, last: int | None = None) -> Iterator[Reader]:
    reader = Reader()
    headers = {"Authorization": f"Bearer {token}"}
    if last is not None:
        headers["Last-Event-ID"] = str(last)

    def add(block: dict[str, str]) -> None:
        if "event" in block:
            fid = int(block["id"]) if "id" in block else None
            reader.add(Frame(block["event"], json.loads(block["data"]), fid))

    with following(base, "/v1/players/me/stream", headers, reader.stop, add):
        yield reader


def call(c: httpx.Client, method: str, path: str, token: str | None = None, **kw: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = c.request(method, path, headers=headers, **kw)
    assert r.status_code < 300, (method, path, r.status_code, r.text)
    return r.json() if r.content else None


def refused(c: httpx.Client, method: str, path: str, token: str, **kw: Any) -> Json:
    r = c.request(method, path, headers={"Authorization": f"Bearer {token}"}, **kw)
    assert r.status_code == 404, (method, path, r.status_code, r.text)
    body: Json = r.json()
    return body


@dataclass
class TableFrame:
    """A frame of a match's live stream: its event, its id (``V`` or ``V.T`` once talk was
    said) and, for a talk frame, the phrase."""

    event: str
    id: str | None
    phrase: str | None


@dataclass
class TableReader:
    """One match stream read on a thread of its own: every frame, in order."""

    frames: list[TableFrame] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    stop: threading.Event = field(default_factory=threading.Event)

    def add(self, frame: TableFrame) -> None:
        with self.changed:
            self.frames.append(frame)
            self.changed.notify_all()

    def wait_for(self, found: Callable[[list[TableFrame]], bool]) -> list[TableFrame]:
        deadline = time.monotonic() + DEADLINE_S
        with self.changed:
            while not found(self.frames):
                left = deadline - time.monotonic()
                assert left > 0, f"not within {DEADLINE_S} s: {self.frames[-5:]}"
                self.changed.wait(left)
            return list(self.frames)

    def said(self) -> list[str]:
        with self.changed:
            return [f.phrase for f in self.frames if f.phrase is not None]

    def ids(self) -> list[str]:
        with self.changed:
            return [f.id for f in self.frames if f.id is not None]


@contextmanager
def table_stream(
    base: str, match_id: str, token: str | None, last: str | None = None
) -> Iterator[TableReader]:
    """``GET /v1/matches/{id}/stream`` as ``token``'s viewer (a seat, or a spectator)."""
    reader = TableReader()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if last is not None:
        headers["Last-Event-ID"] = last

    def add(block: dict[str, str]) -> None:
        if "data" in block:
            event = block.get("event", "message")
            phrase = json.loads(block["data"])["phrase"] if event == "talk" else None
            reader.add(TableFrame(event, block.get("id"), phrase))

    with following(base, f"/v1/matches/{match_id}/stream", headers, reader.stop, add):
        yield reader


def say(c: httpx.Client, match_id: str, token: str, phrase: str) -> None:
    """Quick chat (R37): a phrase of the catalogue, said from a seat."""
    call(c, "POST", f"/v1/matches/{match_id}/talk", token, json={"phrase": phrase})


def quick_chat(c: httpx.Client, match_id: str, a: str, b: str) -> None:
    """A and B exchange quick chat in the middle of the round."""
    say(c, match_id, a, "nice")
    say(c, match_id, b, "thanks")


def play_round(
    c: httpx.Client, match_id: str, organiser: str, people: list[str], middle: Callable[[], None]
) -> None:
    """Round 1 played by A and B (the test's moves) and two bots (the server's), calling
    ``middle`` once about halfway through the moves."""
    url = f"/v1/matches/{match_id}"
    moves, called = 0, False
    deadline = time.monotonic() + 90
    last: Any = None
    while call(c, "GET", url, organiser)["rounds"][0]["status"] != "scored":
        assert time.monotonic() < deadline, (
            f"round 1 did not end: {last} {call(c, 'GET', url + '/public', organiser)}"
        )
        moved = False
        for token in people:
            view = call(c, "GET", f"{url}/view", token)
            choice = choose(view)
            if choice is None or (choice[0] == "pass" and view.get("phase") == "dealing"):
                continue  # the declaring time ends by itself (R17)
            r = c.post(
                f"{url}/actions/{choice[0]}",
                json={"cards": choice[1]},
                headers={"Authorization": f"Bearer {token}"},
            )
            if r.status_code == 200:
                moved, moves = True, moves + 1
            else:
                last = (choice, r.status_code, r.text[:300], call(c, "GET", url, organiser))
        if moves >= 12 and not called:
            called = True
            middle()
        if not moved:
            time.sleep(0.05)
    if not called:
        middle()


def test_two_friends_on_two_devices(tmp_path: Path) -> None:
    with (
        served_here(tmp_path, BOT_DECISION_MS="50", DECLARE_MS="500") as base,
        httpx.Client(base_url=base) as c,
    ):
        a = call(c, "POST", "/v1/players", json={"displayName": "Ah", "label": "A's phone"})
        b = call(c, "POST", "/v1/players", json={"displayName": "Bo", "label": "B's phone"})
        b_tablet = call(c, "POST", "/v1/players/me/sessions", b["token"], json={"label": "tab"})
        a_tok, b_phone, b_tab = a["token"], b["token"], b_tablet["token"]
        # B appears offline while the friendship is made on B's tablet
        call(c, "PUT", "/v1/players/me/presence", b_tab, json={"appearOffline": True})
        code = call(c, "POST", "/v1/players/me/friend-code", b_tab)["code"]
        with player_stream(base, a_tok) as a_stream:
            a_stream.wait_for(lambda f: f.event == "snapshot")
            asked = call(
                c, "POST", "/v1/players/me/friend-requests", a_tok, json={"friendCode": code}
            )
            assert asked == {"playerId": b["playerId"], "status": "requested"}
            incoming = call(c, "GET", "/v1/players/me/friend-requests?direction=in", b_tab)
            assert [i["playerId"] for i in incoming["items"]] == [a["playerId"]]
            call(
                c,
                "POST",
                f"/v1/players/me/friend-requests/{a['playerId']}/answer",
                b_tab,
                json={"accept": True},
            )
            a_stream.wait_for(lambda f: f.event == "friend-accepted")
            a_stream.wait_for(
                lambda f: (
                    f.event == "presence"
                    and f.data["playerId"] == b["playerId"]
                    and f.data["state"] == "offline"
                )
            )
            # B no longer hides and opens the phone's stream: A sees B come online
            call(c, "PUT", "/v1/players/me/presence", b_tab, json={"appearOffline": False})
            with player_stream(base, b_phone) as b_stream:
                a_stream.wait_for(
                    lambda f: (
                        f.event == "presence"
                        and f.data["playerId"] == b["playerId"]
                        and f.data["state"] in ("online", "in-match")
                    ),
                    timeout=PRESENCE_S,
                )
                # A's private table, A seated; A invites B to seat 2
                made = call(c, "POST", "/v1/matches", json={"name": "friends"})
                match_id, organiser = made["matchId"], made["organiserToken"]
                seat = {"matchId": match_id, "seat": 0}
                call(c, "POST", "/v1/players/me/seats", a_tok, json=seat)
                call(c, "POST", f"/v1/matches/{match_id}/invites", organiser)  # private now
                sent = call(
                    c,
                    "POST",
                    f"/v1/matches/{match_id}/friend-invitations",
                    a_tok,
                    json={"playerId": b["playerId"], "seat": 2},
                )
                invited = b_stream.wait_for(lambda f: f.event == "table-invitation")
                assert invited.data["invitationId"] == sent["invitationId"]
                assert invited.data["text"]["en"] and invited.data["text"]["zh-CN"]
                took = call(
                    c,
                    "POST",
                    f"/v1/players/me/invitations/{sent['invitationId']}/answer",
                    b_phone,
                    json={"accept": True},
                )
                assert took["seat"] == 2
                for bot_seat in (1, 3):
                    call(
                        c,
                        "POST",
                        f"/v1/matches/{match_id}/seats/{bot_seat}/bot",
                        organiser,
                        json={"kind": "random"},
                    )
                b_stream.wait_for(lambda f: f.event == "match-found")
                # round 1, with B's tablet following throughout and B's phone reconnecting;
                # the table's streams: A's seat, B's tablet (the reference), B's phone (cut in
                # the middle and resumed) and a spectator (the organiser, who reads as one)
                with (
                    player_stream(base, b_tab) as reference,
                    table_stream(base, match_id, a_tok) as a_table,
                    table_stream(base, match_id, b_tab) as b_table,
                    table_stream(base, match_id, organiser) as watcher,
                ):
                    start = reference.wait_for(lambda f: f.event == "snapshot").id or 0
                    phone: list[int] = []
                    resumed: list[Reader] = []
                    phone_table: list[str] = []
                    resumed_table: list[TableReader] = []
                    say(c, match_id, a_tok, "hello")
                    say(c, match_id, b_phone, "good-luck")

                    def middle() -> None:
                        quick_chat(c, match_id, a_tok, b_phone)
                        phone.extend(b_stream.ids)
                        b_stream.stop.set()
                        resumed.append(
                            stack.enter_context(player_stream(base, b_phone, last=phone[-1]))
                        )
                        cut = b_phone_table.wait_for(lambda fs: "thanks" in [f.phrase for f in fs])
                        b_phone_table.stop.set()
                        phone_table.extend(f.id for f in cut if f.id is not None)
                        resumed_table.append(
                            stack.enter_context(
                                table_stream(base, match_id, b_phone, last=phone_table[-1])
                            )
                        )

                    with ExitStack() as stack:
                        b_phone_table = stack.enter_context(table_stream(base, match_id, b_phone))
                        play_round(c, match_id, organiser, [a_tok, b_phone], middle)
                        say(c, match_id, b_phone, "good-game")
                        say(c, match_id, a_tok, "well-played")
                        again = resumed[0]
                        end = reference.ids[-1]
                        again.wait_for(lambda f: f.id is not None and f.id >= end)
                        assert not [f for f in again.frames if f.event == "snapshot"]
                        after = [i for i in again.ids if i <= end]
                        mine = [i for i in reference.ids if i <= end]
                        assert [i for i in mine if i > phone[-1]] == after  # nothing lost
                        before = [i for i in mine if start < i <= phone[-1]]
                        assert [i for i in phone if i > start] == before  # nor repeated
                        # every seat and the spectator hear the same talk, in the order said
                        said = ["hello", "good-luck", "nice", "thanks", "good-game", "well-played"]
                        for table in (a_table, b_table, watcher, resumed_table[0]):
                            table.wait_for(lambda fs: "well-played" in [f.phrase for f in fs])
                        assert a_table.said() == b_table.said() == watcher.said() == said
                        # the phone's table stream resumed exactly: the tablet's frames after
                        # the cut, none lost, none twice, the talk among them in its place
                        tablet = b_table.ids()
                        cut_at = tablet.index(phone_table[-1])
                        # the two streams are read on threads of their own: the resumed one
                        # may be a frame behind the tablet's when it is looked at
                        resumed_table[0].wait_for(lambda fs: tablet[-1] in [f.id for f in fs])
                        later = resumed_table[0].ids()
                        assert later[: len(tablet) - cut_at - 1] == tablet[cut_at + 1 :]
                        shared = [i for i in phone_table if i in tablet]
                        assert shared == tablet[cut_at + 1 - len(shared) : cut_at + 1]
                        assert resumed_table[0].said() == ["good-game", "well-played"]
        # B blocks A: every path refuses A as it refuses a stranger
        call(c, "PUT", f"/v1/players/me/blocks/{a['playerId']}", b_phone)
        stranger = call(c, "POST", "/v1/players", json={"displayName": "S"})
        nobody = "00000000-0000-4000-8000-000000000000"
        asked = refused(
            c, "POST", "/v1/players/me/friend-requests", a_tok, json={"playerId": b["playerId"]}
        )
        unknown = refused(
            c, "POST", "/v1/players/me/friend-requests", a_tok, json={"playerId": nobody}
        )
        assert asked["detail"] == unknown["detail"]
        assert (
            refused(c, "POST", "/v1/players/me/friend-requests", a_tok, json={"friendCode": code})[
                "detail"
            ]
            == unknown["detail"]
        )
        table = call(c, "POST", "/v1/matches", json={"name": "again"})
        call(
            c, "POST", "/v1/players/me/seats", a_tok, json={"matchId": table["matchId"], "seat": 0}
        )
        path = f"/v1/matches/{table['matchId']}/friend-invitations"
        blocked = refused(c, "POST", path, a_tok, json={"playerId": b["playerId"]})
        other = refused(c, "POST", path, a_tok, json={"playerId": stranger["playerId"]})
        assert blocked["detail"] == other["detail"]
        assert call(c, "GET", "/v1/players/me/friends", a_tok)["items"] == []
        assert call(c, "GET", "/v1/players/me/friend-requests?direction=in", b_phone)["items"] == []
