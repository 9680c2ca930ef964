"""Quick play: ``/v1/lobby/tickets`` and ranked quick play: ``/v1/lobby/ranked``
(docs/players.md).

A player (player token) opens a ticket for a rule set (a preset, §10 fields over it),
optionally naming a partner (who sits opposite, R2, once their ticket names this player
too) and a wait after which bots fill the free seats; or a ranked ticket for a family
(four players of close rating, balanced teams). Either ticket can be read, streamed (SSE:
one ``ticket`` frame per version, resumable with ``Last-Event-ID``; a ranked ticket's
``widened`` frames as its rating window widens) and cancelled while it waits. The lobby
sweeper (:mod:`services.accounts.lobby_sweeper`) gives bots to tickets whose wait has
passed and tries the ranked queues whose windows widened.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Controller, Response, delete
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, HeaderParameter
from litestar.response import Stream

from api.calls import BEARER, Read, Reading, Writing, write_route
from api.dto import LOCATION_HEADER
from api.players.dto import RankedTicketRequestBody, TicketRequestBody
from api.polled_stream import Polled, Timing, event_stream, polled, retry_hint, sse_frame
from api.revocation import REVOKED
from api.routes import RouteDecorator, route
from api.runtime import Runtime
from api.sse import LiveStreams
from api.stream import LastEventIdAheadError
from api.streams import TICKET, stream_route
from domain.accounts.ticket import Ticket
from domain.rules.ruleset import STANDARD, RuleSet, preset
from services.access import Credential, signed_player
from services.accounts import lobby
from services.accounts.lobby_commands import (
    CancelTicket,
    MakeDueMatch,
    QueueTicket,
    TicketView,
)
from services.accounts.ranked_commands import QueueRankedTicket, current_view
from services.errors import UnauthorizedError

POLL_S = 0.5
STREAM_LIFETIME_S = 300.0
HEARTBEAT_S = 15.0


def rules_of(body: TicketRequestBody) -> RuleSet:
    base = preset(body.preset) if body.preset is not None else STANDARD
    if body.rules is None:
        return base
    return RuleSet.from_mapping({**base.to_mapping(), **body.rules.fields()})


def read_ticket(runtime: Runtime, cred: Credential | None, ticket_id: UUID) -> Ticket:
    """The caller's ticket, after giving its lobby the match that is due (bots)."""
    service = runtime.service
    account = signed_player(service, cred).account
    ticket = lobby.owned_ticket(service, account.id, ticket_id)
    if ticket.status == "waiting" and runtime.bus.execute(MakeDueMatch(ticket.lobby_id)):
        ticket = lobby.owned_ticket(service, account.id, ticket_id)
    return ticket


def view_now(runtime: Runtime, ticket: Ticket) -> TicketView:
    """The ticket as its player sees it now (a ranked one: its window now, the expected
    wait)."""
    return current_view(runtime.service, ticket, runtime.ranked_queues)


def queue_route(body: Any) -> RouteDecorator:
    """A route that queues a ticket (casual or ranked): 201 a new one, 200 the same one
    asked for again."""
    return write_route(
        "/",
        201,
        401,
        403,
        409,
        headers=(LOCATION_HEADER,),
        body=body,
        also={
            200: ResponseSpec(
                data_container=TicketView,
                description="The same ticket asked for again: the player's ticket, as it is",
            )
        },
    )


class LobbyController(Controller):
    path = "/v1/lobby/tickets"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @queue_route(TicketRequestBody | None)
    async def queue_for_match(self, write: Writing) -> Response[TicketView]:
        """Queue for quick play (a player); four compatible tickets make a match

        Tickets with the same preset and rules are matched first come, first seated; partners who
        name each other sit opposite (R2). With `botsAfterSeconds`, bots fill the free seats once
        the ticket has waited that long. One quick play at a time: while the player's ticket
        waits, or its match goes on with the player seated, the same ticket asked for again (a
        double tap) answers that ticket with 200; another one is 409 `already-queued`.
        """
        body = await write.body() or TicketRequestBody()
        wait = body.bots_after_seconds
        command = QueueTicket(
            rules_of(body),
            body.preset,
            body.partner,
            None if wait is None else wait * 1000,
            body.bot_kind,
        )
        return await write.send(command, location=lambda t: f"/v1/lobby/tickets/{t.ticket_id}")

    @route("/{ticket_id:uuid}", 401, 403, 404, security=BEARER)
    async def get_ticket(self, read: Reading, ticket_id: FromPath[UUID]) -> TicketView:
        """The player's ticket: waiting, matched (the match and seat) or cancelled

        The player's lobby ticket: waiting, matched (with the match and seat) or
        cancelled (player token).
        """
        ticket = await read.call(read_ticket, read.runtime, read.credential, ticket_id)
        return await read.call(view_now, read.runtime, ticket)

    @write_route("/{ticket_id:uuid}", 200, 401, 403, 404, 409, handler=delete)
    async def cancel_ticket(
        self, write: Writing, ticket_id: FromPath[UUID]
    ) -> Response[TicketView]:
        """Cancel a waiting ticket

        409 `ticket-closed` once it is matched or cancelled.
        """
        return await write.send(CancelTicket(ticket_id))

    @stream_route(TICKET, path, 401, 403, 404, 422, security=BEARER)
    async def stream_ticket(
        self,
        read: Reading,
        ticket_id: FromPath[UUID],
        live: NamedDependency[LiveStreams],
        last_event_id: Annotated[
            int | None,
            HeaderParameter(name="Last-Event-ID", ge=0, le=10**9, description="A version"),
        ] = None,
    ) -> Stream:
        """The ticket's changes (Server-Sent Events)

        `event: ticket` frames, `id` the ticket's version, `data` the ticket (JSON): the current one
        at once (unless `Last-Event-ID` is it already), then each change (`: ping` comments while it
        waits); the stream ends once the ticket is matched or cancelled, or with `event: revoked`
        once the player token is rotated, its session ended or the player erased. A `Last-Event-ID`
        beyond the ticket's version is a 422 `last-event-id-ahead` (R34).
        """
        first = await read.call(read_ticket, read.runtime, read.credential, ticket_id)  # 401/404
        if last_event_id is not None and last_event_id > first.version:
            raise LastEventIdAheadError(last_event_id, first.version, "the ticket's version")
        stream = TicketStream(read, ticket_id, first, seen=last_event_id or 0)
        return event_stream(live.revocations.guard(read.credential, stream.frames()))


class RankedController(Controller):
    path = "/v1/lobby/ranked"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @queue_route(RankedTicketRequestBody | None)
    async def queue_for_ranked_match(self, write: Writing) -> Response[TicketView]:
        """Queue for ranked quick play (a player with an account); four of close rating make a match

        Accounts only: a guest (a seat, team or organiser token) is refused with 403
        `account-required`, no token at all with 401. The
        ticket queues with the player's shown rating in the family (1500 and provisional before
        a rated match there) and a rating window around it that widens with the wait: ±50
        points (±150 provisional), 25 more every 10 s, at most ±400. Four players each within
        the others' windows make a match of the family's preset, rated, with the partnerships
        whose rating sums differ least (R2). The ticket shows its window, when it widens next
        and the expected wait (the median wait of the family's recent ranked matches in its
        rating band); it is read, streamed and cancelled at `/v1/lobby/tickets/{id}`. One quick
        play at a time, ranked or casual: the same ranked ticket asked for again (a double tap)
        answers that ticket with 200; another one is 409 `already-queued`. A new ticket counts
        one match against the player's match quota.
        """
        body = await write.body() or RankedTicketRequestBody()
        command = QueueRankedTicket(body.family)
        return await write.send(command, location=lambda t: f"/v1/lobby/tickets/{t.ticket_id}")


class TicketStream:
    """One ticket's stream: read every :data:`POLL_S`, a frame per new version, until the
    ticket is matched or cancelled."""

    def __init__(self, read: Read, ticket_id: UUID, first: Ticket, *, seen: int) -> None:
        self.read = read
        self.ticket_id = ticket_id
        self.ticket: Ticket | None = first
        """The ticket as read last and not yet sent (None: read it again)."""
        self.seen = seen
        """The last version sent (or known to the client)."""
        self.width: int | None = None
        """A ranked ticket's window as last sent (its half-width; None: none sent)."""

    async def frames(self) -> AsyncIterator[bytes]:
        retry_ms = self.read.runtime.retry_ms
        yield retry_hint(retry_ms)  # first: a wait for bots may last an hour
        async for frame in polled(
            self.poll, Timing(POLL_S, HEARTBEAT_S, STREAM_LIFETIME_S, retry_ms)
        ):
            yield frame

    async def poll(self) -> Polled:
        read = self.read
        ticket = self.ticket
        if ticket is None:
            try:
                ticket = await read.call(read_ticket, read.runtime, read.credential, self.ticket_id)
            except UnauthorizedError:  # the token was revoked meanwhile
                return Polled([REVOKED], done=True)
        frames = []
        if ticket.version > self.seen or ticket.family is not None:
            view = await read.call(view_now, read.runtime, ticket)
            width = (
                None
                if view.ranked is None or view.ranked.window is None
                else view.ranked.window.width
            )
            if ticket.version > self.seen:
                self.seen = ticket.version
                frames.append(sse_frame("ticket", msgspec.json.encode(view), self.seen))
            elif width != self.width:
                frames.append(sse_frame("widened", msgspec.json.encode(view)))
            self.width = width
        self.ticket = None
        return Polled(frames, done=ticket.status != "waiting")
