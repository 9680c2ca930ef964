"""Friends on every store (docs/decisions.md D-social): the commands through the bus, the
friends' view kept in tables from the log (SQLite, PostgreSQL) with its tracking position
and rebuilt the same, blocks that hide one player from the other everywhere (requests,
invitations, presence, the ranked queue), appear offline, and erasure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast
from uuid import UUID

import pytest
from eventsourcing.utils import get_topic

from domain.accounts.ticket import Ticket
from domain.accounts.webhooks import Enqueued
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import STANDARD
from infra.socialviews import open_social_view
from infra.store import outbox_env
from services.access import Credential
from services.accounts.commands import ErasePlayer
from services.accounts.lobby_sweeper import LobbySweeper
from services.accounts.ranked import RankedQueues
from services.accounts.ranked_commands import QueueRankedTicket
from services.accounts.seat_commands import ClaimSeatAsPlayer
from services.bus import Bus
from services.errors import NotFoundError
from services.game import GameService
from services.handlers import build_bus
from services.projections import rebuild
from services.ratings.boards import RatingModels
from services.social.commands import (
    AnswerFriendRequest,
    AnswerInvitation,
    BlockPlayer,
    ChoosePresence,
    InviteFriend,
    RemoveFriend,
    RotateFriendCode,
    SendFriendRequest,
    WithdrawFriendRequest,
)
from services.social.presence import PresenceBoard
from services.social.reads import SocialModels, list_friends, list_players
from services.social.rebuild import SocialRebuild, follower
from services.webhooks.outbox import WebhookOutbox
from tests.commands import create_match, create_player, register_webhook
from tests.conftest import Backend, FakeClock
from tests.services.test_ranked import FakeStandings


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class World:
    service: GameService
    bus: Bus
    models: SocialModels
    ticks: Ticks
    standings: FakeStandings
    queues: RankedQueues

    def player(self, name: str) -> tuple[UUID, Credential]:
        account, token = create_player(self.service, name)
        return account.id, Credential.parse(token)

    def send(self, command: object, who: Credential) -> object:
        return self.bus.handle(command, who).body

    def friends(self, who: Credential) -> list[UUID]:
        player = cast(UUID, who.owner)
        page = list_friends(self.models, player, None, 100)
        return [UUID(i.player_id) for i in page.items]

    def requests(self, who: Credential, kind: str) -> list[UUID]:
        player = cast(UUID, who.owner)
        page = list_players(self.models, player, kind, None, 100)  # type: ignore[arg-type]
        return [UUID(i.player_id) for i in page.items]


@pytest.fixture
def world(backend: Backend, clock: FakeClock) -> Iterator[World]:
    service = backend.service()
    view = open_social_view(service, create=True)
    ticks = Ticks()
    board = PresenceBoard(away_after_s=60, offline_after_s=10, clock=ticks)
    models = SocialModels(service, view, follower(service, view), board)
    standings, queues = FakeStandings(), RankedQueues()
    bus = build_bus(service, social=models, ratings=cast(RatingModels, standings), ranked=queues)
    yield World(service, bus, models, ticks, standings, queues)


def test_request_accept_decline_withdraw_remove(world: World) -> None:
    a_id, a = world.player("A")
    b_id, b = world.player("B")
    c_id, c = world.player("C")
    world.send(SendFriendRequest(player_id=b_id), a)
    assert world.requests(b, "incoming") == [a_id] and world.requests(a, "outgoing") == [b_id]
    world.send(AnswerFriendRequest(a_id, accept=True), b)
    assert world.friends(a) == [b_id] and world.friends(b) == [a_id]
    assert world.requests(b, "incoming") == []
    world.send(SendFriendRequest(player_id=a_id), c)
    world.send(AnswerFriendRequest(c_id, accept=False), a)
    assert world.requests(a, "incoming") == [] and world.friends(a) == [b_id]
    world.send(SendFriendRequest(player_id=b_id), c)
    world.send(WithdrawFriendRequest(b_id), c)
    assert world.requests(b, "incoming") == []
    world.send(RemoveFriend(a_id), b)
    assert world.friends(a) == world.friends(b) == []
    with pytest.raises(NotFoundError):
        world.send(RemoveFriend(a_id), b)


def test_a_rotated_friend_code_stops_working(world: World) -> None:
    a_id, a = world.player("A")
    _, b = world.player("B")
    _, c = world.player("C")
    old = world.send(RotateFriendCode(), a).code  # type: ignore[attr-defined]
    new = world.send(RotateFriendCode(), a).code  # type: ignore[attr-defined]
    assert old != new
    with pytest.raises(NotFoundError) as refused:
        world.send(SendFriendRequest(friend_code=old), b)
    assert world.send(SendFriendRequest(friend_code=new), c).player_id == str(a_id)  # type: ignore[attr-defined]
    with pytest.raises(NotFoundError) as unknown:
        world.send(SendFriendRequest(friend_code="ABCDEFGHJK"), b)
    assert str(refused.value) == str(unknown.value)


def test_a_block_hides_everywhere_without_telling(world: World) -> None:
    a_id, a = world.player("A")
    b_id, b = world.player("B")
    world.send(SendFriendRequest(player_id=b_id), a)
    world.send(AnswerFriendRequest(a_id, accept=True), b)
    world.models.board.opened(b_id)
    assert world.models.board.of(b_id).state == "online"
    match = create_match(world.service, STANDARD)
    world.send(ClaimSeatAsPlayer(match, 0), a)
    world.send(BlockPlayer(a_id), b)  # B blocks A
    assert world.friends(a) == [] and world.friends(b) == []
    assert world.requests(b, "blocked") == [a_id] and world.requests(a, "blocked") == []
    # A's request and invitation are answered as for nobody
    with pytest.raises(NotFoundError) as refused:
        world.send(SendFriendRequest(player_id=b_id), a)
    with pytest.raises(NotFoundError) as unknown:
        world.send(SendFriendRequest(player_id=UUID(int=7)), a)
    assert str(refused.value) == str(unknown.value)
    with pytest.raises(NotFoundError) as no_friend:
        world.send(InviteFriend(match, b_id), a)
    _, stranger = world.player("S")
    world.models.board.opened(cast(UUID, stranger.owner))
    with pytest.raises(NotFoundError) as not_a_friend:
        world.send(InviteFriend(match, cast(UUID, stranger.owner)), a)
    assert str(no_friend.value) == str(not_a_friend.value)
    # B's presence is no longer among A's friends; the ranked queue keeps them apart
    assert b_id not in world.models.friends_of(a_id)
    for who in (a, b):
        world.bus.handle(QueueRankedTicket("standard"), who)
    others = [world.player(n)[1] for n in ("C", "D")]
    for who in others:
        world.bus.handle(QueueRankedTicket("standard"), who)
    LobbySweeper(world.bus, world.queues).sweep()
    tickets = _ticket_states(world)
    assert len(tickets) == 4 and set(tickets.values()) == {"waiting"}  # no four without the pair
    e = world.player("E")[1]
    world.bus.handle(QueueRankedTicket("standard"), e)
    statuses = _ticket_states(world)
    matched = {p for p, s in statuses.items() if s == "matched"}
    assert len(matched) == 4 and not {a_id, b_id} <= matched


def _ticket_states(world: World) -> dict[UUID, str]:
    """Each ranked ticket's player and status."""
    out: dict[UUID, str] = {}
    for n in world.service.recorder.select_notifications(0, 10_000):
        if n.topic.endswith("TicketOpened"):
            ticket: Ticket = world.service.repository.get(UUID(str(n.originator_id)))
            out[ticket.account_id] = ticket.status
    return out


def test_appear_offline_and_invitations(world: World) -> None:
    a_id, a = world.player("A")
    b_id, b = world.player("B")
    world.send(SendFriendRequest(player_id=b_id), a)
    world.send(AnswerFriendRequest(a_id, accept=True), b)
    match = create_match(world.service, STANDARD)
    world.send(ClaimSeatAsPlayer(match, 0), a)
    world.models.board.opened(b_id)
    world.send(ChoosePresence(appear_offline=True, notify_friend_online=False), b)
    assert world.models.board.of(b_id).state == "offline"
    with pytest.raises(NotFoundError):
        world.send(InviteFriend(match, b_id), a)
    world.send(ChoosePresence(appear_offline=False, notify_friend_online=False), b)
    sent = world.send(InviteFriend(match, b_id, 2), a)
    invitation = UUID(sent.invitation_id)  # type: ignore[attr-defined]
    seat = world.send(AnswerInvitation(invitation, accept=True), b)
    assert seat.seat == 2  # type: ignore[attr-defined]
    assert world.service.get_match(match).seats[2] is not None
    with pytest.raises(ShengjiError):
        world.send(AnswerInvitation(invitation, accept=True), b)


def test_erasure_removes_everything_and_rebuild_agrees(world: World) -> None:
    a_id, a = world.player("A")
    b_id, b = world.player("B")
    _, c = world.player("C")
    world.send(SendFriendRequest(player_id=b_id), a)
    world.send(AnswerFriendRequest(a_id, accept=True), b)
    world.send(SendFriendRequest(player_id=a_id), c)
    world.send(BlockPlayer(b_id), world.player("D")[1])
    code = world.send(RotateFriendCode(), a).code  # type: ignore[attr-defined]
    world.send(ErasePlayer(), a)
    assert world.friends(b) == [] and world.requests(c, "outgoing") == []
    with pytest.raises(NotFoundError):
        world.send(SendFriendRequest(friend_code=code), b)
    assert world.models.board.of(a_id).state == "offline"
    view = world.models.fresh()
    assert not [
        r
        for r in view.rows()
        if a_id in (getattr(r, "player_id", None), getattr(r, "other_id", None))
    ]
    before = view.contents()
    projection = SocialRebuild(world.service, view)
    view.reset()
    assert view.contents()["position"] == 0
    projections, _ = rebuild(world.service, [projection])
    for p in projections:
        p.store()  # type: ignore[attr-defined]
    assert view.contents() == before  # shengji rebuild gives the view the log keeps
    assert world.friends(b) == []


def test_webhooks_tell_requests_acceptances_and_invitations(world: World, backend: Backend) -> None:
    kinds = ("friend-request", "friend-accepted", "table-invitation")
    register_webhook(world.service, "https://push.example/hook", "s" * 32, kinds)
    a_id, a = world.player("A")
    b_id, b = world.player("B")
    world.send(SendFriendRequest(player_id=b_id), a)
    world.send(AnswerFriendRequest(a_id, accept=True), b)
    match = create_match(world.service, STANDARD)
    world.send(ClaimSeatAsPlayer(match, 0), a)
    world.models.board.opened(b_id)
    world.send(InviteFriend(match, b_id, 1), a)
    outbox = WebhookOutbox(outbox_env(backend.settings), leader=world.service)
    try:
        outbox.catch_up()
        found = outbox.recorder.select_notifications(0, 1000, topics=[get_topic(Enqueued)])
        events: list[Any] = [outbox.mapper.to_domain_event(n) for n in found]
        bodies = [json.loads(e.body) for e in events]
    finally:
        outbox.close()
    told = [(body["kind"], body["playerId"], body["data"]["playerId"]) for body in bodies]
    assert told == [
        ("friend-request", str(b_id), str(a_id)),
        ("friend-accepted", str(a_id), str(b_id)),
        ("table-invitation", str(b_id), str(a_id)),
    ]
    assert all(body["data"]["text"]["zh-CN"] for body in bodies)
