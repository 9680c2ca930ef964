"""The round commands: a seat's action (:class:`Act`) and a passed deadline claimed
(:class:`ClaimDeadlines`), with their handlers (:mod:`services.bus`), and the steps every
round command takes (:func:`ready`, :func:`settle`; a turn timeout, :mod:`services.timers`).

An action is one :data:`~domain.game.actions.RoundAction` for the caller's seat: the
credential's (a seat token of the match, or the player token of the account holding the
seat; 401/403 otherwise), or — sent by the service itself (a bot, a record's replay) — the
seat the command names. On one load of the match the handler checks ``If-Match`` (412,
after the caller is authorised), claims a passed deadline (R16, R17, R20), deals a void deal
again (R19) and runs the rules (409 naming the rule). When the action scores the round the
match records it (``RoundRecorded``: levels, next dealer, the match's end) and, unless the
match is over, the next round begins and is dealt — all in the command's one save. The
answer is the match version and the acting seat's view right after it (R33).

The dry run (``?dryRun=true``) is the same handler on copies with nothing saved and a throw
judged by its shape only (R22, R33; :mod:`services.dryrun`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.game.actions import RoundAction, perform
from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.timers import check_timed_out, record_timeout
from domain.rules.errors import IllegalMoveError
from services.access import seat_in
from services.bus import SERVICE, Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.dryrun import DryRun, judgement
from services.embargo import Embargo, view_embargo
from services.errors import PreconditionFailedError
from services.game import GameService
from services.unit_of_work import Reading, UnitOfWork
from services.view_types import SeatView
from services.views import stored_view


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
ACT_ATTEMPTS: Final = 3
"""Runs of an action without ``If-Match`` against moves saved at the same moment."""


class CommandDone(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="done"
):
    """The command was done (``kind`` ``done``; a dry run answers ``dryRun``)."""

    version: Annotated[
        int, Meta(description="The match version the command left (its last event's).")
    ]
    view: Annotated[
        SeatView, Meta(description="The acting seat's view right after the command (R33).")
    ]


# -- the commands ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Act:
    """A seat's action in the match's round in play."""

    match_id: UUID
    action: RoundAction
    expected: Precondition = ANY_VERSION
    """``If-Match``: the match version the caller acted on."""
    seat: int | None = None
    """The acting seat when the service itself sends it (a bot, a record's replay);
    a request's seat is its credential's."""
    timed_out: str | None = None
    """A record's replay of a move made for a seat over its time: who claimed it
    (``TurnTimedOut`` precedes the move; the seat must be the one over its time)."""


@dataclass(frozen=True, slots=True)
class ClaimDeadlines:
    """Let a passed deadline (the end of the drawing, the overcall window) take effect now
    (R16, R17, R20): the bot driver, the sweeper, a record's replay."""

    match_id: UUID


# -- the steps every round command takes -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seated:
    """A command's caller: the seat acting, and the match as authorising loaded it (so a
    command loads its match once) — to read only: the handler's unit copies it when the
    action changes it (docs/decisions.md D-bus2)."""

    seat: int
    match: Match


def ready(
    uow: UnitOfWork,
    dealer: Dealer,
    match: Match,
    expected_version: int | None,
    *,
    dry: bool = False,
) -> tuple[Round, int]:
    """A round command's preconditions on ``match`` (R32, R1, If-Match), then its round with
    a passed deadline claimed (R16, R17, R20) and a void deal dealt again (R19): the round
    and the match version the command found."""
    if match.finished:
        raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
    round_ = uow.current_round(match)
    if round_ is None:
        raise IllegalMoveError(
            "the match has no round in play yet: four seats are needed",
            rule="R1",
            code="no-round",
        )
    current_version = match.sequence(round_.version)
    if expected_version is not None and expected_version != current_version:
        raise PreconditionFailedError(
            f"the match is at version {current_version}, not {expected_version}",
            current=current_version,
        )
    if round_.dealt is not None:
        round_.claim_deadlines(uow.now)
        if round_.phase is RoundPhase.REDEAL:
            dealer.deal(uow, match, round_, uow.now, dry=dry)
    return round_, current_version


def settle(uow: UnitOfWork, dealer: Dealer, match: Match, round_: Round) -> tuple[Match, Round]:
    """After an action: a void deal dealt again (R19); a scored round recorded by the
    match (R29–R32) and the next one begun unless the match is over. The match and its
    round after it (the match a copy when the unit held it to read only and it changed:
    :meth:`UnitOfWork.changing`)."""
    if round_.phase is RoundPhase.REDEAL:
        dealer.deal(uow, match, round_, uow.now)
    elif round_.phase is RoundPhase.SCORED:
        assert round_.result is not None
        match = uow.changing(match)  # its RoundRecorded follows the round's RoundScored
        match.record_round(round_.number, round_.result, uow.now, round_events=round_.version)
        if not match.finished:
            following = dealer.begin_round(uow, match, uow.now)
            uow.add(following)
            return match, following
    return match, round_


def outcome(
    service: GameService,
    match: Match,
    current: Round | None,
    seat: int | None,
    **facts: str | int | bool | None,
) -> Outcome:
    """A round command's outcome: the match version after it, the acting seat, and whether
    its view withholds a scored round (R36; the embargo lifts later, its answer does not)."""
    embargo = view_embargo(service, match, current)
    version = match.sequence(0 if current is None else current.version)
    return Outcome(200, match.id, version, seat, {**facts, "embargoed": embargo is not None})


def seat_answer(state: Reading, outcome: Outcome, seat: int) -> SeatView:
    """The acting seat's view as of the outcome's version (R33)."""
    match, round_, at = state.table(outcome.subject, outcome.version)
    embargo = None
    if outcome.facts.get("embargoed") and match.tournament_id is not None:
        embargo = Embargo(match.tournament_id, match.tournament_round)
    return stored_view(state.service, match, round_, seat, at, embargo=embargo)


def _seat(service: GameService, match: Match, command: Act, caller: Caller) -> int:
    if isinstance(caller, Service):
        if command.seat is None:
            raise IllegalMoveError("the service's action names no seat", rule="R1")
        return command.seat
    return seat_in(service, match, caller)


# -- the handlers ------------------------------------------------------------------------------


class ActHandler(Handler[Act, Seated, CommandDone | DryRun]):
    """An action sent with ``If-Match`` was decided on what the caller saw: a move saved
    first is the caller's to see (409 ``version-conflict``). Without it the action applies
    to the round as it is: a move saved first at the same moment (a bot's pass while the
    person passes, R17) runs it again on the round that won, and the rules judge it there."""

    attempts = ACT_ATTEMPTS
    key_first = False  # its run writes only through the unit's one save (services.bus)

    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def attempts_for(self, command: Act) -> int:
        expected = command.expected
        return 1 if expected.version is not None or expected.malformed else self.attempts

    def authorise(self, command: Act, caller: Caller) -> Seated:
        match = self.service.get_match(command.match_id, read_only=True)
        if command.timed_out is not None and not isinstance(caller, Service):
            raise IllegalMoveError("only the service replays a timed-out seat's move")
        return Seated(_seat(self.service, match, command, caller), match)

    def handle(self, uow: UnitOfWork, command: Act, who: Seated) -> Outcome:
        uow.read(who.match)  # copied only when the action changes it (settle)
        match = who.match
        round_, _ = ready(uow, self.dealer, match, command.expected.required())
        if round_.pending_events:
            uow.kept.append(round_)  # a passed deadline takes effect even if refused
        if command.timed_out is not None:
            clock = check_timed_out(match.timers, round_, uow.now)
            if clock.seat != who.seat:
                raise IllegalMoveError(
                    f"seat {clock.seat} is the seat over its time, not seat {who.seat}",
                    rule="R22",
                    code="not-timed-out",
                )
            record_timeout(round_, clock, uow.now, command.timed_out)
        perform(round_, who.seat, command.action, uow.now)
        match, current = settle(uow, self.dealer, match, round_)
        return outcome(self.service, match, current, who.seat)

    def answer(
        self, command: Act, who: Seated, outcome: Outcome, state: Reading
    ) -> CommandDone | DryRun:
        return CommandDone(version=outcome.version, view=seat_answer(state, outcome, who.seat))

    def dry_run(self, command: Act, who: Seated, uow: UnitOfWork) -> CommandDone | DryRun:
        """The action on copies (docs/decisions.md D-dry-run): a passed deadline claimed, a
        void deal dealt again from a stand-in seed, the action judged by what the seat can
        know — nothing saved. Answers the match version it found."""
        uow.read(who.match)  # a dry run changes no match (nor saves anything)
        round_, version = ready(uow, self.dealer, who.match, command.expected.required(), dry=True)
        round_.collect_events()  # the deadlines' events are not the command's
        perform(round_, who.seat, command.action, uow.now, dry=True)
        return judgement(version, who.seat, command.action.name, round_)


class ClaimDeadlinesHandler(Handler[ClaimDeadlines, None, int]):
    """Answers the match version after the claim (unchanged when nothing was due)."""

    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: ClaimDeadlines, caller: Caller) -> None:
        if caller is not SERVICE:
            raise IllegalMoveError("only the service claims a deadline on its own")

    def handle(self, uow: UnitOfWork, command: ClaimDeadlines, who: None) -> Outcome:
        match = uow.match(command.match_id)
        round_ = uow.current_round(match)
        if not match.finished and round_ is not None and round_.dealt is not None:
            round_.claim_deadlines(uow.now)  # nothing happens after MatchFinished
            if round_.phase is RoundPhase.REDEAL:
                self.dealer.deal(uow, match, round_, uow.now)
        version = match.sequence(0 if round_ is None else round_.version)
        return Outcome(200, match.id, version)

    def answer(self, command: ClaimDeadlines, who: None, outcome: Outcome, state: Reading) -> int:
        return outcome.version
