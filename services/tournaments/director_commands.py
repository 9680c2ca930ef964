"""The director's tools as commands (docs/tournaments.md, "The director's room"): paper
results, the round clock, requested byes, substitutes, renamed teams, a cancelled round, a
published pairing and fixed tables — with their handlers (:mod:`services.bus`).

Each is one save. A paper result saves ``TableResultEntered`` first, then the table's match
ended with the entered winner (reason ``result entered: …``, R32), so the standings never
show a draw; a cancelled round saves ``RoundCancelled`` with its tables' matches ended.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from uuid import UUID

from domain.game.match import ENTERED_PREFIX, Entered
from domain.tournament.director import entered_winner
from domain.tournament.events import TableEntry
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament
from services.bus import Caller, Handler, Outcome
from services.game import GameService
from services.ratings.boards import RatingModels
from services.tournaments.answers import Published, preview_answer
from services.tournaments.changes import (
    ATTEMPTS,
    TournamentChange,
    as_of,
    in_play,
    organiser,
    sees_all,
)
from services.tournaments.seeding import seed_first_round
from services.tournaments.tables import end_table, record_finished
from services.tournaments.views import tournament_view
from services.unit_of_work import Reading, UnitOfWork


class Keep(enum.Enum):
    """A setting the command leaves as it is (a PATCH's absent field)."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EnterResult:
    """A paper result of table ``table`` (0-based) of the round in play; ``winner`` None:
    the team that gained more levels (:func:`~domain.tournament.director.entered_winner`)."""

    tournament_id: UUID
    number: int
    table: int
    levels: tuple[int, int]
    points: tuple[int, int]
    by: str
    reason: str
    winner: int | None = None


@dataclass(frozen=True, slots=True)
class ChangeTimeControl:
    """The time control of the rounds to come; a setting given :data:`KEEP` keeps its value."""

    tournament_id: UUID
    timers: Mapping[str, int] | Keep | None = KEEP
    round_deadline_s: int | Keep | None = KEEP
    deadline_rule: str | Keep = KEEP
    requested_bye_points: int | Keep = KEEP


@dataclass(frozen=True, slots=True)
class SetRoundClock:
    """The round in play's own deadline and timers."""

    tournament_id: UUID
    number: int
    deadline_s: int | None
    timers: Mapping[str, int] | None


@dataclass(frozen=True, slots=True)
class ExtendTable:
    """One table (0-based) of the round in play gets ``seconds`` past the deadline."""

    tournament_id: UUID
    number: int
    table: int
    seconds: int
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class PauseRound:
    """Stop round ``number``'s clock (the round in play)."""

    tournament_id: UUID
    number: int
    reason: str


@dataclass(frozen=True, slots=True)
class ResumeRound:
    """Start round ``number``'s clock again."""

    tournament_id: UUID
    number: int


@dataclass(frozen=True, slots=True)
class CancelRound:
    """Cancel round ``number`` (the round in play): paired again by the next scheduling."""

    tournament_id: UUID
    number: int
    reason: str
    by: str


@dataclass(frozen=True, slots=True)
class RequestBye:
    """``team`` sits out round ``number`` (not scheduled yet)."""

    tournament_id: UUID
    team: int
    number: int
    reason: str


@dataclass(frozen=True, slots=True)
class Substitute:
    """Player ``player`` (0 or 1) of ``team`` replaced in round ``number``."""

    tournament_id: UUID
    number: int
    team: int
    player: int
    name: str
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class RenameTeam:
    tournament_id: UUID
    team: int
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class FixTable:
    """``team`` keeps table ``table`` (1-based; None: no more) from the next round."""

    tournament_id: UUID
    team: int
    table: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class PublishPairing:
    """Publish the next round's pairing."""

    tournament_id: UUID


# -- steps ---------------------------------------------------------------------------------------


def entered_reason(
    t: Tournament, entry: TableEntry, levels: tuple[int, int], by: str, why: str
) -> str:
    """The end reason of a table whose result was entered (R32)."""
    first, second = t.teams[entry.first].name, t.teams[entry.second].name
    return (
        f"{ENTERED_PREFIX}levels {levels[0]}-{levels[1]} ({first} v {second}), "
        f"by {by.strip()}: {why.strip()}"
    )


def entered_side(entry: TableEntry, winner: int | None) -> Entered:
    """The match team (R2: team 0 sits at seats 0/2) of the entered winner."""
    if winner is None:
        return Entered(None)
    return Entered((0 if winner == entry.first else 1) ^ entry.first_parity)


# -- the handlers --------------------------------------------------------------------------------


class EnterResultHandler(TournamentChange[EnterResult]):
    """The finished tables' results first (a table that finished keeps its played result:
    409 ``result-recorded``), then ``TableResultEntered`` and the table's match ended with
    the same winner."""

    def change(self, uow: UnitOfWork, t: Tournament, command: EnterResult, who: str) -> None:
        record_finished(uow, t)
        entry = t.table(command.number, command.table)
        winner = entered_winner(entry, command.winner, command.levels)
        result = TableResult(entry.first, entry.second, winner, command.levels, command.points)
        t.enter_result(
            command.number, command.table, result, by=command.by, reason=command.reason, now=uow.now
        )
        reason = entered_reason(t, entry, command.levels, command.by, command.reason)
        end_table(uow, entry, reason, entered_side(entry, winner))


class ChangeTimeControlHandler(TournamentChange[ChangeTimeControl]):
    def change(self, uow: UnitOfWork, t: Tournament, command: ChangeTimeControl, who: str) -> None:
        t.change_time_control(
            timers=t.timers if command.timers is KEEP else command.timers,
            round_deadline_s=(
                t.round_deadline_s if command.round_deadline_s is KEEP else command.round_deadline_s
            ),
            deadline_rule=t.deadline_rule
            if command.deadline_rule is KEEP
            else command.deadline_rule,
            requested_bye_points=(
                t.requested_bye_points
                if command.requested_bye_points is KEEP
                else command.requested_bye_points
            ),
            now=uow.now,
        )


class SetRoundClockHandler(TournamentChange[SetRoundClock]):
    def change(self, uow: UnitOfWork, t: Tournament, command: SetRoundClock, who: str) -> None:
        t.set_round_time(command.number, command.deadline_s, command.timers, uow.now)


class ExtendTableHandler(TournamentChange[ExtendTable]):
    def change(self, uow: UnitOfWork, t: Tournament, command: ExtendTable, who: str) -> None:
        t.extend_table(
            command.number,
            command.table,
            command.seconds,
            by=command.by,
            reason=command.reason,
            now=uow.now,
        )


class PauseRoundHandler(TournamentChange[PauseRound]):
    def change(self, uow: UnitOfWork, t: Tournament, command: PauseRound, who: str) -> None:
        in_play(t, command.number)
        t.pause(command.reason, uow.now)


class ResumeRoundHandler(TournamentChange[ResumeRound]):
    def change(self, uow: UnitOfWork, t: Tournament, command: ResumeRound, who: str) -> None:
        in_play(t, command.number)
        t.resume(uow.now)


class CancelRoundHandler(TournamentChange[CancelRound]):
    """``RoundCancelled`` and the round's tables' matches ended (R32), in one save."""

    def change(self, uow: UnitOfWork, t: Tournament, command: CancelRound, who: str) -> None:
        in_play(t, command.number)
        state = t.cancel_round(reason=command.reason, by=command.by, now=uow.now)
        reason = f"tournament: round cancelled: {command.reason.strip()}"
        for table in state.tables:
            end_table(uow, table, reason)


class RequestByeHandler(TournamentChange[RequestBye]):
    def change(self, uow: UnitOfWork, t: Tournament, command: RequestBye, who: str) -> None:
        t.request_bye(command.team, command.number, command.reason, uow.now)


class SubstituteHandler(TournamentChange[Substitute]):
    def change(self, uow: UnitOfWork, t: Tournament, command: Substitute, who: str) -> None:
        t.substitute(
            command.number,
            command.team,
            command.player,
            command.name,
            command.kind,
            command.reason,
            uow.now,
        )


class RenameTeamHandler(TournamentChange[RenameTeam]):
    def change(self, uow: UnitOfWork, t: Tournament, command: RenameTeam, who: str) -> None:
        t.rename(command.team, command.name, command.reason, uow.now)


class FixTableHandler(TournamentChange[FixTable]):
    def change(self, uow: UnitOfWork, t: Tournament, command: FixTable, who: str) -> None:
        t.fix_table(command.team, command.table, command.reason, uow.now)


class PublishPairingHandler(Handler[PublishPairing, str, Published]):
    """Answers the pairing as published with the tournament."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService, ratings: RatingModels | None = None) -> None:
        self.service = service
        self.ratings = ratings
        """Round 1 of a tournament seeded by rating is seeded from them (docs/decisions.md
        D-career)."""

    def authorise(self, command: PublishPairing, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    def handle(self, uow: UnitOfWork, command: PublishPairing, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        seed_first_round(self.ratings, t, uow.now)
        t.publish(uow.now)
        return Outcome(200, t.id, t.version)

    def answer(
        self, command: PublishPairing, who: str, outcome: Outcome, state: Reading
    ) -> Published:
        t = as_of(state, outcome)
        return Published(
            pairing=preview_answer(t), tournament=tournament_view(t, organiser=sees_all(who))
        )
