"""The round command pipeline: one call with plain arguments (docs/decisions.md D-pipeline).

A :class:`Command` is who is calling (a parsed :class:`~services.access.Credential`), the
match, the action, the cards, the expected version (``If-Match``), the Idempotency-Key and
whether it is a dry run. :func:`run_command` then, on one load of the match:

1. authorises: the credential's seat in this match (401/403, :mod:`services.access`) —
   before anything about the key or the version is told;
2. (a real command) looks the key up (:class:`~services.idempotency.Keys`): a recorded
   request is answered again from the match as of its version, a key in flight or used
   for another request is a 409;
3. checks ``If-Match`` (412) and runs the rules (409 naming the rule), claiming a passed
   deadline first (R16, R17, R20);
4. saves the command's events and the key's record in one save, and answers the match
   version and the seat's view right after it (R33).

A dry run (``dry=True``) is the same call: steps 1 and 3 on the copies, nothing saved, no
key used (:mod:`services.dryrun`). Nothing here knows HTTP, and nothing calls back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast
from uuid import UUID

import msgspec

from domain.rules.cards import Card
from services.access import Credential, seat_in
from services.dryrun import DryRun, judgement
from services.errors import PreconditionFailedError
from services.game import GameService
from services.history import state_at
from services.idempotency import Keys, Receipt, Replayable, RequestKey, Stamp
from services.view_types import SeatView
from services.views import table_view


@dataclass(frozen=True, slots=True)
class Precondition:
    """``If-Match`` as sent: the match version required (None: any), or why the header
    cannot be read — refused (412) only after the caller is authorised."""

    version: int | None = None
    malformed: str | None = None

    def required(self) -> int | None:
        """The version required; 412 for a header that is not one."""
        if self.malformed is not None:
            raise PreconditionFailedError(self.malformed)
        return self.version


ANY_VERSION = Precondition()


@dataclass(frozen=True, slots=True)
class Command:
    """One round command, as a caller sends it."""

    caller: Credential | None
    match_id: UUID
    action: str
    cards: tuple[Card, ...] = ()
    expected: Precondition = ANY_VERSION
    key: RequestKey | None = None
    dry: bool = False


class CommandDone(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="done"
):
    """The command was done (``kind`` ``done``; a dry run answers ``dryRun``)."""

    version: int
    """The match version the command left (its last event's)."""
    view: SeatView
    """The acting seat's view right after the command (R33)."""


@dataclass(frozen=True, slots=True)
class Answered:
    """What :func:`run_command` answers: the acting seat and the answer (replayed or not)."""

    seat: int
    answer: Replayable[CommandDone | DryRun]


def run_command(service: GameService, keys: Keys, command: Command) -> Answered:
    """The pipeline above: blocking (call it in a worker thread)."""
    match = service.get_match(command.match_id)
    seat = seat_in(service, match, command.caller)
    if command.dry:
        expected = command.expected.required()
        version, round_ = service.try_command(
            match, seat, command.action, command.cards, expected_version=expected
        )
        return Answered(seat, Replayable(200, judgement(version, seat, command.action, round_)))

    def work(stamp: Stamp) -> tuple[int, CommandDone | DryRun]:
        done = service.act(
            match.id,
            seat,
            command.action,
            command.cards,
            match=match,
            expected_version=command.expected.required(),
            attach=stamp.attach(lambda p: Receipt(200, match.id, p.result.version, seat)),
        )
        assert done.match is not None
        view = table_view(done.match, done.current, seat, service.clock())
        return 200, CommandDone(version=done.version, view=view)

    def replay(outcome: Receipt) -> CommandDone | DryRun:
        state = state_at(service, match.id, outcome.version, seat)
        return CommandDone(version=outcome.version, view=cast("SeatView", state.view))

    return Answered(seat, keys.once(command.key, work, replay))
