"""Table talk on the match's live stream (R37, docs/decisions.md D-talk): each message a
viewer reads arrives as an ``event: talk`` frame right after the frame of the version it
was said at, in the order said; once one was sent the frames' ids are ``V.T``, and a
reconnect with that Last-Event-ID resumes exactly — no frame lost, none twice; a seat's
mutes apply to its own stream only."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import anyio
import pytest

from api.sse import LiveStreams, StreamSettings
from domain.rules.ruleset import RuleSet
from domain.talk.options import TalkOptions
from infra.localhub import InProcessHub
from services.access import Credential
from services.accounts.commands import ErasePlayer
from services.bus import SERVICE
from services.handlers import build_bus
from services.match_commands import ClaimSeat, CreateMatch
from services.talk.commands import Mute, Say
from services.talk.live import LiveTalk
from tests.api.sse_driver import Table, build_app, new_service, stream, table, url
from tests.commands import claim_as_player, create_player

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def blocks(s: Any, n: int) -> list[tuple[str, str]]:
    """The next ``n`` frames with an id: (event, id), a talk frame's phrase after a colon."""
    out: list[tuple[str, str]] = []
    while len(out) < n:
        ev = await s.next()
        assert ev is not None, "the stream ended"
        if ev.tag is None:
            continue
        what = ev.event if ev.event != "talk" else f"talk:{json.loads(ev.data)['phrase']}"
        out.append((what, ev.tag))
    return out


async def say(t: Table, seat: int, phrase: str) -> None:
    bus = build_bus(t.service)
    cred = Credential.parse(t.tokens[seat])
    await anyio.to_thread.run_sync(lambda: bus.execute(Say(t.match_id, phrase=phrase), cred))


async def mute(t: Table, seat: int, source: str) -> None:
    bus = build_bus(t.service)
    cred = Credential.parse(t.tokens[seat])
    await anyio.to_thread.run_sync(lambda: bus.execute(Mute(t.match_id, source), cred))


async def test_talk_frames_follow_their_version_and_a_resume_is_exact() -> None:
    async with table() as t:
        v = t.version()
        async with (
            stream(t.app, url(t)) as public,
            stream(t.app, url(t), {"authorization": f"Bearer {t.tokens[1]}"}) as seat1,
        ):
            assert await blocks(public, 1) == [("view", f"{v}")]
            assert await blocks(seat1, 1) == [("view", f"{v}")]
            await say(t, 0, "good-luck")
            assert await blocks(public, 1) == [("talk:good-luck", f"{v}.1")]
            assert await blocks(seat1, 1) == [("talk:good-luck", f"{v}.1")]
            await t.steps(1)
            assert await blocks(public, 1) == [("view", f"{v + 1}.1")]
            await mute(t, 1, "seat-0")
            await say(t, 0, "oops")
            await say(t, 2, "sorry")
            assert await blocks(public, 2) == [
                ("talk:oops", f"{v + 1}.2"),
                ("talk:sorry", f"{v + 1}.3"),
            ]
            # seat 1 muted seat 0: its stream passes "oops" silently
            assert await blocks(seat1, 2) == [("view", f"{v + 1}.1"), ("talk:sorry", f"{v + 1}.3")]
            await t.steps(1)
            assert await blocks(public, 1) == [("view", f"{v + 2}.3")]
        # a reconnect resumes exactly where each id says
        async with stream(t.app, url(t), {"last-event-id": f"{v}.1"}) as again:
            assert await blocks(again, 4) == [
                ("view", f"{v + 1}.1"),
                ("talk:oops", f"{v + 1}.2"),
                ("talk:sorry", f"{v + 1}.3"),
                ("view", f"{v + 2}.3"),
            ]
        async with stream(t.app, url(t), {"last-event-id": f"{v}"}) as old:  # no talk yet
            assert await blocks(old, 5) == [
                ("talk:good-luck", f"{v}.1"),
                ("view", f"{v + 1}.1"),
                ("talk:oops", f"{v + 1}.2"),
                ("talk:sorry", f"{v + 1}.3"),
                ("view", f"{v + 2}.3"),
            ]
        async with stream(t.app, url(t), {"last-event-id": f"{v + 1}.2"}) as late:
            assert await blocks(late, 2) == [
                ("talk:sorry", f"{v + 1}.3"),
                ("view", f"{v + 2}.3"),
            ]
        async with stream(t.app, url(t), {"last-event-id": f"{v + 1}.9"}) as ahead:
            assert ahead.status == 422
        # a new stream starts at the current version, with the talk said so far counted
        async with stream(t.app, url(t)) as fresh:
            assert await blocks(fresh, 1) == [("view", f"{v + 2}.3")]


async def test_an_erased_players_words_are_gone_from_a_replay() -> None:
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    live = LiveStreams(service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
    app = build_app(live)
    bus = build_bus(service)
    made = bus.execute(CreateMatch(RuleSet(), name="words", talk=TalkOptions(free_text=True)))
    match_id = UUID(made.match_id)
    account, player = create_player(service, "Mei")
    claim_as_player(service, account, match_id, 0)
    for seat in (1, 2, 3):
        bus.execute(ClaimSeat(match_id, seat, f"g{seat}"), SERVICE)
    mei = Credential.parse(player)
    said = await anyio.to_thread.run_sync(
        lambda: bus.execute(Say(match_id, text="private words"), mei)
    )
    path = f"/v1/matches/{match_id}/stream"
    async with app.lifespan():
        async with stream(app, path, {"last-event-id": str(said.message.at_version)}) as before:
            ev = await next_talk(before)
            assert json.loads(ev)["text"] == "private words"
        await anyio.to_thread.run_sync(lambda: bus.execute(ErasePlayer(), mei))
        async with stream(app, path, {"last-event-id": str(said.message.at_version)}) as after:
            message = json.loads(await next_talk(after))
            assert (message["text"], message["erased"]) == (None, True)
    service.close()


async def next_talk(s: Any) -> str:
    while True:
        ev = await s.next()
        assert ev is not None, "the stream ended"
        if ev.event == "talk":
            assert ev.data is not None
            return str(ev.data)


async def test_a_frame_asks_the_talk_only_once_something_was_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A version's frame goes out without a look through the table's talk while nothing
    was said since the stream's last message (docs/decisions.md D-fan); once a message
    is said, it follows its version's frame as before (R37)."""
    asked: list[int] = []
    due = LiveTalk.due

    def counted(self: LiveTalk, *args: Any) -> Any:
        asked.append(1)
        return due(self, *args)

    monkeypatch.setattr(LiveTalk, "due", counted)
    async with table() as t:
        v = t.version()
        async with stream(t.app, url(t), {"authorization": f"Bearer {t.tokens[1]}"}) as seat1:
            assert await blocks(seat1, 1) == [("view", f"{v}")]
            await t.steps(3)
            assert await blocks(seat1, 3) == [("view", f"{v + n}") for n in (1, 2, 3)]
            assert asked == []
            await say(t, 0, "good-luck")
            assert await blocks(seat1, 1) == [("talk:good-luck", f"{v + 3}.1")]
            assert asked
