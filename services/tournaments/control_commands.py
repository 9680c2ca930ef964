"""The organiser's controls as commands (docs/tournaments.md, "Organisers' controls"):
registration and team tokens, check-in, the start, withdrawals, forbidden pairings, the
organiser's pairing of a round, score adjustments, re-issued seat tokens and the round
deadline the clerk applies — with their handlers (:mod:`services.bus`).

Each is one save: a withdrawal saves the forfeits with the forfeited tables' matches ended
(R32); the deadline rule ``finish`` saves the overdue tables' ends with their results and
``RoundDeadlinePassed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from uuid import UUID

import msgspec

from domain.rules.errors import IllegalMoveError
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import TeamEntry
from domain.tournament.tournament import Tournament
from services.access import TEAM_ROLE, tournament_organiser
from services.bus import Caller, Handler, Outcome, Service
from services.errors import NotFoundError
from services.game import GameService
from services.sources import SEAT_ROLE, new_token, token_hash
from services.tournaments.answers import RegisteredTeam, ReissuedTokens, SeatTokenView
from services.tournaments.changes import (
    ATTEMPTS,
    ORGANISER,
    Facts,
    TournamentChange,
    as_of,
    organiser,
    team_or_organiser_of,
)
from services.tournaments.loading import get_tournament
from services.tournaments.seeding import check_players
from services.tournaments.tables import end_table, record_finished, table_match
from services.tournaments.views import tournament_view
from services.unit_of_work import Reading, UnitOfWork

TOKEN: Final = "token"
TOKENS: Final = "tokens"
DEADLINE_PASSED: Final = "tournament: the round's deadline passed"
HANDLED: Final = "handled"
"""The fact of :class:`ApplyDeadline`'s outcome: how many tables it ended or flagged."""


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegisterTeam:
    """A team enters: by the organiser (its token; also a late entry of a started Swiss
    tournament), or by itself without a token while registration is open (its team token
    answered once)."""

    tournament_id: UUID
    team: TeamEntry
    accounts: tuple[UUID | None, UUID | None] = (None, None)
    """Its players' accounts, when named (docs/decisions.md D-career)."""


@dataclass(frozen=True, slots=True)
class CheckIn:
    """A registered team confirms it is present (its token or the organiser's)."""

    tournament_id: UUID
    team: int


@dataclass(frozen=True, slots=True)
class Withdraw:
    """A team leaves (its token or the organiser's), with the reason."""

    tournament_id: UUID
    team: int
    reason: str


@dataclass(frozen=True, slots=True)
class Start:
    """The organiser closes registration."""

    tournament_id: UUID


@dataclass(frozen=True, slots=True)
class Forbid:
    """Teams ``a`` and ``b`` never to be paired (Swiss)."""

    tournament_id: UUID
    a: int
    b: int
    reason: str


@dataclass(frozen=True, slots=True)
class Allow:
    """Lift the forbidden pairing of ``a`` and ``b``."""

    tournament_id: UUID
    a: int
    b: int


@dataclass(frozen=True, slots=True)
class OverridePairings:
    """The organiser's pairing of round ``number`` (not scheduled yet)."""

    tournament_id: UUID
    number: int
    tables: tuple[tuple[int, int], ...]
    bye: int | None
    reason: str
    by: str


@dataclass(frozen=True, slots=True)
class AdjustScore:
    """Match points added to a team's score (negative: a penalty)."""

    tournament_id: UUID
    team: int
    match_points: int
    reason: str
    by: str


@dataclass(frozen=True, slots=True)
class ReissueTokens:
    """New seat tokens for the people of table ``table`` (0-based) of round ``number``."""

    tournament_id: UUID
    number: int
    table: int


@dataclass(frozen=True, slots=True)
class ApplyDeadline:
    """The round deadline's rule (the clerk's, as the service): the round in play's
    unfinished tables past their deadline are ended (``finish``, R32) or flagged
    (``flag``), recorded in ``RoundDeadlinePassed``."""

    tournament_id: UUID


# -- the handlers --------------------------------------------------------------------------------


class RegisterTeamHandler(Handler[RegisterTeam, bool, RegisteredTeam]):
    """``who``: the organiser adds the team (its token given), else the team itself."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: RegisterTeam, caller: Caller) -> bool:
        if isinstance(caller, Service):
            return True
        if caller is not None:
            tournament_organiser(get_tournament(self.service, command.tournament_id), caller)
        return caller is not None

    def handle(self, uow: UnitOfWork, command: RegisterTeam, who: bool) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        minted = {} if who else {TOKEN: new_token(t.id, TEAM_ROLE)}
        check_players(uow, command.accounts)
        team = t.register_team(
            command.team,
            by=ORGANISER if who else "self",
            token_hash=token_hash(minted[TOKEN]) if minted else "",
            now=uow.now,
            accounts=command.accounts,
        )
        return Outcome(201, t.id, t.version, facts={"team": team}, minted=minted)

    def answer(
        self, command: RegisterTeam, who: bool, outcome: Outcome, state: Reading
    ) -> RegisteredTeam:
        return RegisteredTeam(
            team=int(outcome.facts.get("team") or 0),
            team_token=outcome.minted.get(TOKEN),
            tournament=tournament_view(as_of(state, outcome)),
            token_withheld=state.replay and outcome.withheld,
        )


class CheckInHandler(TournamentChange[CheckIn]):
    def authorise(self, command: CheckIn, caller: Caller) -> str:
        return team_or_organiser_of(self.service, command.tournament_id, command.team, caller)

    def change(self, uow: UnitOfWork, t: Tournament, command: CheckIn, who: str) -> None:
        t.check_in(command.team, uow.now)


class WithdrawHandler(TournamentChange[Withdraw]):
    """The finished tables' results are recorded first (a table that finished keeps its
    result); then the withdrawal, its forfeits and the forfeited tables' matches ended
    (R32) — one save: all of it, or (a move saved first at a table) none of it and again on
    the state that won (docs/decisions.md D-integrity)."""

    def authorise(self, command: Withdraw, caller: Caller) -> str:
        return team_or_organiser_of(self.service, command.tournament_id, command.team, caller)

    def change(self, uow: UnitOfWork, t: Tournament, command: Withdraw, who: str) -> None:
        record_finished(uow, t)
        forfeited = t.withdraw(command.team, reason=command.reason, by=who, now=uow.now)
        current = t.current
        for table in forfeited:
            assert current is not None
            end_table(uow, current.tables[table], f"tournament: team {command.team} withdrew")


class StartHandler(TournamentChange[Start]):
    def change(self, uow: UnitOfWork, t: Tournament, command: Start, who: str) -> None:
        t.start(uow.now)


class ForbidHandler(TournamentChange[Forbid]):
    def change(self, uow: UnitOfWork, t: Tournament, command: Forbid, who: str) -> None:
        t.forbid(command.a, command.b, reason=command.reason, now=uow.now)


class AllowHandler(TournamentChange[Allow]):
    def change(self, uow: UnitOfWork, t: Tournament, command: Allow, who: str) -> None:
        t.allow(command.a, command.b, uow.now)


class OverridePairingsHandler(TournamentChange[OverridePairings]):
    def change(self, uow: UnitOfWork, t: Tournament, command: OverridePairings, who: str) -> None:
        t.override_pairings(
            command.number,
            command.tables,
            command.bye,
            reason=command.reason,
            by=command.by,
            now=uow.now,
        )


class AdjustScoreHandler(TournamentChange[AdjustScore]):
    def change(self, uow: UnitOfWork, t: Tournament, command: AdjustScore, who: str) -> None:
        t.adjust(
            command.team, command.match_points, reason=command.reason, by=command.by, now=uow.now
        )


class ReissueTokensHandler(Handler[ReissueTokens, str, ReissuedTokens]):
    """New tokens for the people's seats of a table of the round in play (the old ones stop
    working, ``SeatTokenReissued``); bots have none. Answered once."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: ReissueTokens, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    def handle(self, uow: UnitOfWork, command: ReissueTokens, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        number, table = command.number, command.table
        entry = t.table(number, table)
        if number != len(t.rounds) or not t.in_play:
            raise IllegalMoveError(
                f"round {number} is not in play: only its tables' tokens can be re-issued",
                rule="R36",
                code="round-not-current",
            )
        match = table_match(uow, entry)
        if match is None:
            raise NotFoundError(f"round {number} table {table + 1} is not seated yet")
        teams = seat_teams(entry.table, entry.first, entry.second)
        views = []
        for seat, info in enumerate(match.seats):
            if info is None or info.kind != "human":
                continue
            token = new_token(match.id, SEAT_ROLE)
            match.reissue_token(seat, token_hash(token), uow.now)
            views.append(
                SeatTokenView(
                    table=table + 1,
                    match_id=str(match.id),
                    seat=seat,
                    team=teams[seat],
                    player=info.name,
                    token=token,
                )
            )
        minted = {TOKENS: msgspec.json.encode(views).decode()} if views else {}
        return Outcome(200, t.id, t.version, minted=minted)

    def answer(
        self, command: ReissueTokens, who: str, outcome: Outcome, state: Reading
    ) -> ReissuedTokens:
        tokens = outcome.minted.get(TOKENS, "[]")
        return ReissuedTokens(
            seat_tokens=msgspec.json.decode(tokens, type=list[SeatTokenView]),
            token_withheld=state.replay and outcome.withheld,
        )


class ApplyDeadlineHandler(TournamentChange[ApplyDeadline]):
    """Past the round in play's deadline (the finished tables' results recorded first):
    rule ``finish`` ends the overdue tables' matches (R32) and records their results; both
    rules record ``RoundDeadlinePassed`` with the tables. Nothing before the deadline."""

    def change(self, uow: UnitOfWork, t: Tournament, command: ApplyDeadline, who: str) -> Facts:
        record_finished(uow, t)
        overdue = t.overdue_tables(uow.now)
        current = t.current
        if not overdue or current is None:
            return {HANDLED: 0}
        if current.deadline_rule == "finish":  # the round's own rule (D-hidden)
            for table in overdue:
                end_table(uow, current.tables[table], DEADLINE_PASSED)
        t.mark_deadline(overdue, uow.now)
        record_finished(uow, t)
        return {HANDLED: len(overdue)}
