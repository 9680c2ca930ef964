"""A friend came online reaches webhooks (docs/decisions.md D-social), on every store: the
board of the process that saw it queues the player, the notice is saved off the request
path through the bus as the service, and the outbox delivers one ``friend-online`` per
friend who asked — none to one who did not, to a blocked one or a stranger; at most one
notice a window (a reconnect, a second process); none while appearing offline; none from
a replica that only heard the presence relayed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast
from uuid import UUID

import pytest
from eventsourcing.utils import get_topic

from domain.accounts.friend_online import FriendCameOnline
from domain.accounts.webhooks import Enqueued
from infra.socialviews import open_social_view
from infra.store import outbox_env
from services.access import Credential
from services.bus import Bus
from services.errors import ForbiddenError
from services.game import GameService
from services.handlers import build_bus
from services.ratings.boards import RatingModels
from services.social.commands import (
    AnswerFriendRequest,
    BlockPlayer,
    ChoosePresence,
    SendFriendRequest,
)
from services.social.notices import friend_online
from services.social.online_notices import NoteFriendOnline, OnlineNotices
from services.social.presence import PresenceBoard
from services.social.reads import SocialModels
from services.social.rebuild import follower
from services.webhooks.outbox import WebhookOutbox
from tests.commands import create_player, register_webhook
from tests.conftest import Backend, FakeClock
from tests.services.test_ranked import FakeStandings

WINDOW_S = 600


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class World:
    backend: Backend
    service: GameService
    bus: Bus
    models: SocialModels
    notices: OnlineNotices
    ticks: Ticks
    clock: FakeClock

    def player(self, name: str) -> tuple[UUID, Credential]:
        account, token = create_player(self.service, name)
        return account.id, Credential.parse(token)

    def send(self, command: object, who: Credential) -> object:
        return self.bus.handle(command, who).body

    def friends(self, a: Credential, b: Credential) -> None:
        self.send(SendFriendRequest(player_id=cast(UUID, b.owner)), a)
        self.send(AnswerFriendRequest(cast(UUID, a.owner), accept=True), b)

    def hears(self, who: Credential) -> None:
        self.send(ChoosePresence(appear_offline=False, notify_friend_online=True), who)

    def later(self, seconds: float) -> None:
        self.ticks.now += seconds
        self.clock.advance(seconds=seconds)

    def deliveries(self) -> list[dict[str, Any]]:
        outbox = WebhookOutbox(outbox_env(self.backend.settings), leader=self.service)
        try:
            outbox.catch_up()
            found = outbox.recorder.select_notifications(0, 1000, topics=[get_topic(Enqueued)])
            events: list[Any] = [outbox.mapper.to_domain_event(n) for n in found]
            return [json.loads(e.body) for e in events]
        finally:
            outbox.close()

    def noted(self) -> int:
        topic = get_topic(FriendCameOnline)
        return len(self.service.recorder.select_notifications(0, 1000, topics=[topic]))


def _world(backend: Backend, clock: FakeClock, service: GameService, ticks: Ticks) -> World:
    view = open_social_view(service, create=True)
    board = PresenceBoard(away_after_s=60, offline_after_s=10, clock=ticks)
    models = SocialModels(service, view, follower(service, view), board)
    bus = build_bus(
        service,
        social=models,
        ratings=cast(RatingModels, FakeStandings()),
        friend_online_window=timedelta(seconds=WINDOW_S),
    )
    notices = OnlineNotices(bus, models, WINDOW_S, threaded=False)
    board.arrived = notices.arrived
    return World(backend, service, bus, models, notices, ticks, clock)


@pytest.fixture
def world(backend: Backend, clock: FakeClock) -> Iterator[World]:
    yield _world(backend, clock, backend.service(), Ticks())


def test_opted_in_friends_hear_by_webhook_others_not(world: World) -> None:
    register_webhook(world.service, "https://push.example/hook", "s" * 32, ("friend-online",))
    p_id, p = world.player("Ping")
    heard_id, heard = world.player("Hears")
    _, deaf = world.player("Deaf")
    _, blocked = world.player("Blocked")
    _, stranger = world.player("Stranger")
    for other in (heard, deaf, blocked):
        world.friends(p, other)
    for other in (heard, blocked, stranger):
        world.hears(other)
    world.send(BlockPlayer(cast(UUID, blocked.owner)), p)

    world.models.board.opened(p_id)
    assert world.noted() == 0  # queued only: the save is off the request path
    assert world.notices.drain() == 1
    bodies = world.deliveries()
    assert [(b["kind"], b["playerId"]) for b in bodies] == [("friend-online", str(heard_id))]
    assert bodies[0]["data"] == friend_online(p_id, "Ping")
    assert bodies[0]["data"]["text"] == {"en": "Ping is online", "zh-CN": "Ping 上线了"}
    # the stream's frame stays pushed by the board, with the same data (docs D-social)


def test_reconnecting_within_the_window_notes_once(world: World, clock: FakeClock) -> None:
    p_id, p = world.player("Ping")
    _, friend = world.player("Friend")
    world.friends(p, friend)
    world.hears(friend)
    board = world.models.board
    board.opened(p_id)
    world.notices.drain()
    board.closed(p_id)
    world.later(100)  # past away_after_s and offline_after_s: offline, then back
    board.sweep()
    assert board.of(p_id).state == "offline"
    board.opened(p_id)
    assert world.notices.drain() == 0
    # another process (its own memory of who it told) in the same window: the store refuses
    second = _world(world.backend, clock, world.backend.service(), world.ticks)
    second.notices.arrived(p_id)
    assert second.notices.drain() == 0
    assert world.noted() == 1
    # a window later: told again
    board.closed(p_id)
    world.later(WINDOW_S)
    board.sweep()
    board.opened(p_id)
    assert world.notices.drain() == 1 and world.noted() == 2


def test_appearing_offline_notes_nothing(world: World) -> None:
    p_id, p = world.player("Ping")
    _, friend = world.player("Friend")
    world.friends(p, friend)
    world.hears(friend)
    world.send(ChoosePresence(appear_offline=True, notify_friend_online=False), p)
    world.models.board.opened(p_id)
    assert world.notices.drain() == 0
    world.notices.arrived(p_id)  # even when queued, the command reads the stored choice
    assert world.notices.drain() == 0 and world.noted() == 0


def test_a_relayed_presence_notes_nothing_more(world: World, clock: FakeClock) -> None:
    replica = _world(world.backend, clock, world.backend.service(), world.ticks)
    here, there = world.models.board, replica.models.board
    there.origin = "replica"  # (the tests seed uuid4: two boards would share one)
    here.relay, there.relay = there.heard, here.heard
    p_id, p = world.player("Ping")
    _, friend = world.player("Friend")
    world.friends(p, friend)  # Ping's commands reach this process: online here
    world.hears(friend)
    here.opened(p_id)
    assert there.of(p_id).state == "online"  # the replica heard it
    assert replica.notices.drain() == 0
    assert world.notices.drain() == 1 and world.noted() == 1


def test_the_command_is_the_services_own(world: World) -> None:
    p_id, p = world.player("Ping")
    with pytest.raises(ForbiddenError):
        world.send(NoteFriendOnline(p_id, ()), p)
