"""Quick play: the ``Lobby`` of one rule set and the pure matchmaking it runs.

A lobby is an aggregate per rule set (its id comes from the rule set, :func:`lobby_id`),
holding the tickets that wait, oldest first. Every change — a ticket queued, a ticket
that leaves, a match made — is a lobby event, so the store's optimistic concurrency on the
lobby's version (docs/decisions.md F1) lets exactly one of two racing changes through:
two replicas can never both seat the same ticket. The match made is saved in the same
transaction as the lobby's ``MatchMade``, the tickets' and the accounts' events.

Parties: a ticket alone is a party of one; two tickets that name each other as partner
are a party of two, who sit opposite (R2: seats 0 and 2, or 1 and 3). :func:`plan` fills
a table first come, first seated; when the oldest party has waited as long as its ticket
asked, the free seats are given to bots.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.accounts.matchmaking import never_apart
from domain.game.base import GameAggregate

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:lobby")
Seating = tuple[tuple[int, UUID | None, UUID | None, str], ...]
"""(seat, ticket id, account id, kind) per seat: a person's ticket, or a bot (no ids)."""


def rules_key(rules: Mapping[str, Any], preset: str | None) -> str:
    """Tickets are compatible when their rule sets (§10) and presets are the same."""
    return json.dumps({"preset": preset, "rules": dict(rules)}, sort_keys=True)


def lobby_id(key: str) -> UUID:
    return uuid5(NAMESPACE, key)


@dataclass(frozen=True, slots=True)
class Waiting:
    ticket_id: UUID
    account_id: UUID
    partner_id: UUID | None
    queued_at: datetime
    bots_after_ms: int | None
    bot_kind: str


class LobbyOpened(Aggregate.Created):
    class_version: ClassVar[int] = 1
    key: str
    preset: str | None
    rules: dict[str, bool | int | str | None]

    def apply(self, aggregate: Any) -> None:
        lobby: Lobby = aggregate
        lobby.key = self.key
        lobby.preset = self.preset
        lobby.rules = dict(self.rules)
        lobby.waiting = []


class LobbyEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, lobby: Lobby) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class TicketQueued(LobbyEvent):
    ticket_id: UUID
    account_id: UUID
    partner_id: UUID | None
    bots_after_ms: int | None
    bot_kind: str

    def apply_to(self, lobby: Lobby) -> None:
        lobby.waiting.append(
            Waiting(
                self.ticket_id,
                self.account_id,
                self.partner_id,
                self.timestamp,
                self.bots_after_ms,
                self.bot_kind,
            )
        )


class TicketLeft(LobbyEvent):
    ticket_id: UUID

    def apply_to(self, lobby: Lobby) -> None:
        lobby.waiting = [w for w in lobby.waiting if w.ticket_id != self.ticket_id]


class MatchMade(LobbyEvent):
    """Four seats filled from the waiting tickets (and bots): ``match_id`` is created and
    seated in the same transaction."""

    match_id: UUID
    seating: Seating

    def apply_to(self, lobby: Lobby) -> None:
        gone = {ticket for _, ticket, _, _ in self.seating if ticket is not None}
        lobby.waiting = [w for w in lobby.waiting if w.ticket_id not in gone]


class Lobby(GameAggregate):
    if TYPE_CHECKING:
        key: str
        preset: str | None
        rules: dict[str, bool | int | str | None]
        waiting: list[Waiting]

    @classmethod
    def open(cls, key: str, preset: str | None, rules: Mapping[str, Any], now: datetime) -> Lobby:
        return cls._create(
            LobbyOpened, id=lobby_id(key), key=key, preset=preset, rules=dict(rules), timestamp=now
        )

    def queue(self, waiting: Waiting, now: datetime) -> None:
        self._emit(
            TicketQueued,
            now,
            ticket_id=waiting.ticket_id,
            account_id=waiting.account_id,
            partner_id=waiting.partner_id,
            bots_after_ms=waiting.bots_after_ms,
            bot_kind=waiting.bot_kind,
        )

    def leave(self, ticket_id: UUID, now: datetime) -> None:
        if any(w.ticket_id == ticket_id for w in self.waiting):
            self._emit(TicketLeft, now, ticket_id=ticket_id)

    def make_match(self, match_id: UUID, seating: Seating, now: datetime) -> None:
        self._emit(MatchMade, now, match_id=match_id, seating=seating)

    def next_bots_at(self) -> datetime | None:
        """When the oldest party asking for bots may be given them (the sweeper's time)."""
        times = [
            w.queued_at + timedelta(milliseconds=w.bots_after_ms)
            for w in self.waiting
            if w.bots_after_ms is not None
        ]
        return min(times, default=None)


def parties(waiting: list[Waiting]) -> list[tuple[Waiting, ...]]:
    """Parties oldest first: singles, and pairs of tickets naming each other (the pair
    counts from its older ticket); a ticket whose partner is not waiting is no party yet."""
    by_account = {w.account_id: w for w in waiting}
    out: list[tuple[Waiting, ...]] = []
    paired: set[UUID] = set()
    for w in waiting:
        if w.ticket_id in paired:
            continue
        if w.partner_id is None:
            out.append((w,))
            continue
        other = by_account.get(w.partner_id)
        if other is not None and other.partner_id == w.account_id:
            out.append((w, other))
            paired.add(other.ticket_id)
    return out


def plan(
    waiting: list[Waiting], now: datetime, apart: Callable[[UUID, UUID], bool] = never_apart
) -> Seating | None:
    """The seating of the next match, or None: four seats of waiting parties, first come
    first seated; else, once a party's bot wait has passed (the oldest such party), that
    party and those that fit after it in order, with bots (of its ticket's kind) in the
    free seats. ``apart``: two players who may never sit together (one blocks the other,
    docs/decisions.md D-social)."""
    groups = parties(waiting)
    chosen = fill(groups, apart)
    if sum(len(g) for g in chosen) == 4:
        return seat(chosen, chosen[0][0].bot_kind)
    due = next((g for g in groups if _due(g, now)), None)
    if due is None:
        return None
    return seat(fill([due, *(g for g in groups if g is not due)], apart), due[0].bot_kind)


def fill(
    groups: list[tuple[Waiting, ...]], apart: Callable[[UUID, UUID], bool]
) -> list[tuple[Waiting, ...]]:
    """Parties in order, each taken if it fits in the seats still free and none of its
    players is kept ``apart`` from one already taken."""
    chosen: list[tuple[Waiting, ...]] = []
    free = 4
    for group in groups:
        if len(group) <= free and not any(
            apart(w.account_id, t.account_id) for w in group for g in chosen for t in g
        ):
            chosen.append(group)
            free -= len(group)
        if free == 0:
            break
    return chosen


def _due(group: tuple[Waiting, ...], now: datetime) -> bool:
    waits = [
        w.queued_at + timedelta(milliseconds=w.bots_after_ms)
        for w in group
        if w.bots_after_ms is not None
    ]
    return bool(waits) and now >= min(waits)


def seat(chosen: list[tuple[Waiting, ...]], bot_kind: str) -> Seating:
    """Pairs opposite (R2): the first pair at 0 and 2, a second at 1 and 3; singles fill
    the free seats in order, then bots."""
    seats: list[tuple[int, UUID | None, UUID | None, str] | None] = [None] * 4
    pair_seats = [(0, 2), (1, 3)]
    for group in (g for g in chosen if len(g) == 2):
        a, b = pair_seats.pop(0)
        seats[a] = (a, group[0].ticket_id, group[0].account_id, "human")
        seats[b] = (b, group[1].ticket_id, group[1].account_id, "human")
    singles = [g[0] for g in chosen if len(g) == 1]
    for i in range(4):
        if seats[i] is None:
            w = singles.pop(0) if singles else None
            seats[i] = (i, w.ticket_id, w.account_id, "human") if w else (i, None, None, bot_kind)
    return tuple(s for s in seats if s is not None)
