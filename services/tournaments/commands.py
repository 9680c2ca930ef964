"""The organiser's commands on a tournament's life (R36; docs/tournaments.md): create it,
schedule the next round with its tables, run a round's bots, record the finished tables'
results, end a table, correct a result — with their handlers (:mod:`services.bus`).

Each is one save (docs/decisions.md D-bus): scheduling saves ``RoundScheduled`` with every
table's match created, seated and dealt (round 1, R16) and the key's record; ending a table
saves the match's end with its result. Tokens a command mints (the organiser token, the
people's seat tokens) are answered once, never kept (:attr:`Outcome.minted`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final
from uuid import UUID, uuid4

import msgspec

from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import RuleSet
from domain.tournament.events import TeamEntry
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament
from services.bus import Caller, Handler, Outcome
from services.dealer import Dealer
from services.embargo import shown_rounds
from services.game import GameService
from services.idempotency import Fact
from services.ratings.boards import RatingModels
from services.sources import ORGANISER_ROLE, new_token, token_hash
from services.tournaments.answers import (
    NewTournament,
    RoundRun,
    ScheduledRound,
    SeatTokenView,
    TableRunView,
)
from services.tournaments.changes import (
    ATTEMPTS,
    TournamentChange,
    as_of,
    organiser,
    sees_all,
)
from services.tournaments.seeding import check_players, seed_first_round
from services.tournaments.tables import (
    end_match,
    record_finished,
    seat_round,
    table_match,
    unseated,
)
from services.tournaments.views import TableView, round_view, table_view, tournament_view
from services.unit_of_work import Reading, UnitOfWork

TOKEN: Final = "token"
SEAT_TOKENS: Final = "seatTokens"
NUMBER: Final = "number"


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateTournament:
    """A new tournament: teams of two (people or bots), its format, match length and rules
    (§10), and the organiser's settings (:meth:`Tournament.create`)."""

    name: str
    rules: RuleSet
    teams: tuple[TeamEntry, ...]
    fmt: str
    match_length: int | str
    preset: str | None = None
    swiss_rounds: int | None = None
    timers: Mapping[str, int] | None = None
    round_deadline_s: int | None = None
    deadline_rule: str = "flag"
    tiebreaks: Sequence[str] | None = None
    registration: bool = False
    checkin_required: bool = False
    deals: str = "seeds"
    tournament_id: UUID | None = None
    """The tournament's id when the caller chooses it (tools, tests); else a new one."""
    seeding: str = "registration"
    """Round 1 seeded by ``registration`` order or by ``rating`` (Swiss)."""
    accounts: tuple[tuple[UUID | None, UUID | None], ...] = ()
    """The teams' players' accounts, team by team, when named (docs/decisions.md D-career)."""


@dataclass(frozen=True, slots=True)
class ScheduleRound:
    """Pair the next round and seat its tables (R36); ``deadline_s`` / ``timers`` (either
    given): the round's own time control, saved with its scheduling (else the tournament's
    applies)."""

    tournament_id: UUID
    deadline_s: int | None = None
    timers: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class RunRoundBots:
    """Wake the bot driver for every unfinished table of round ``number`` (the round in
    play) and record the finished tables' results."""

    tournament_id: UUID
    number: int


@dataclass(frozen=True, slots=True)
class CollectResults:
    """Record the finished tables' results of the round in play (each once)."""

    tournament_id: UUID


@dataclass(frozen=True, slots=True)
class FinishTable:
    """The organiser ends table ``table`` (0-based) of round ``number`` (R32)."""

    tournament_id: UUID
    number: int
    table: int
    reason: str


@dataclass(frozen=True, slots=True)
class CorrectResult:
    """The organiser's recorded correction of a table's (0-based) result."""

    tournament_id: UUID
    number: int
    table: int
    winner: int | None
    levels: tuple[int, int]
    points: tuple[int, int]
    by: str
    reason: str


# -- the handlers --------------------------------------------------------------------------------


class CreateTournamentHandler(Handler[CreateTournament, None, NewTournament]):
    """Anyone may create a tournament (the hourly quota limits how many); the organiser
    token is answered once."""

    def authorise(self, command: CreateTournament, caller: Caller) -> None:
        return None

    def handle(self, uow: UnitOfWork, command: CreateTournament, who: None) -> Outcome:
        tournament_id = command.tournament_id or uuid4()
        token = new_token(tournament_id, ORGANISER_ROLE)
        for linked in command.accounts:
            check_players(uow, linked)
        t = Tournament.create(
            name=command.name,
            rules=command.rules,
            teams=command.teams,
            fmt=command.fmt,
            match_length=command.match_length,
            now=uow.now,
            preset=command.preset,
            swiss_rounds=command.swiss_rounds,
            organiser_token_hash=token_hash(token),
            tournament_id=tournament_id,
            timers=command.timers,
            round_deadline_s=command.round_deadline_s,
            deadline_rule=command.deadline_rule,
            tiebreaks=command.tiebreaks,
            registration=command.registration,
            checkin_required=command.checkin_required,
            deals=command.deals,
            seeding=command.seeding,
            accounts=command.accounts,
        )
        uow.add(t)
        return Outcome(201, t.id, t.version, minted={TOKEN: token})

    def answer(
        self, command: CreateTournament, who: None, outcome: Outcome, state: Reading
    ) -> NewTournament:
        t = as_of(state, outcome)
        return NewTournament(
            tournament_id=str(t.id),
            organiser_token=outcome.minted.get(TOKEN),
            tournament=tournament_view(t),
            token_withheld=state.replay,
        )


class ScheduleRoundHandler(Handler[ScheduleRound, str, ScheduledRound]):
    """Records the finished tables' results, pairs the next round, publishes its seeds'
    commitment (R35, R36) and seats its tables — in one save. A round a store holds
    half-seated (scheduled before this was one save) is seated instead, and answered."""

    attempts = ATTEMPTS

    def __init__(
        self, service: GameService, dealer: Dealer, ratings: RatingModels | None = None
    ) -> None:
        self.service = service
        self.dealer = dealer
        self.ratings = ratings
        """Round 1 of a tournament seeded by rating is seeded from them (None: every player
        at the start, docs/decisions.md D-career)."""

    def authorise(self, command: ScheduleRound, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    def handle(self, uow: UnitOfWork, command: ScheduleRound, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        state = t.current
        if state is None or state.revealed or not unseated(uow, state):
            record_finished(uow, t)
            seed_first_round(self.ratings, t, uow.now)
            number = t.schedule_round(self.service.seeds(), uow.now)
            if command.deadline_s is not None or command.timers is not None:
                t.set_round_time(number, command.deadline_s, command.timers, uow.now)
            state = t.round_state(number)
        _, tokens = seat_round(uow, self.dealer, t, state)
        views = [
            SeatTokenView(
                table=s.table + 1,
                match_id=str(state.tables[s.table].match_id),
                seat=s.seat,
                team=s.team,
                player=s.player,
                token=s.token,
            )
            for s in tokens
        ]
        minted = {SEAT_TOKENS: msgspec.json.encode(views).decode()} if views else {}
        return Outcome(201, t.id, t.version, facts={NUMBER: state.number}, minted=minted)

    def answer(
        self, command: ScheduleRound, who: str, outcome: Outcome, state: Reading
    ) -> ScheduledRound:
        t = as_of(state, outcome)
        number = outcome.facts.get(NUMBER)
        tokens = outcome.minted.get(SEAT_TOKENS, "[]")
        return ScheduledRound(
            round=round_view(
                t,
                t.round_state(int(number or len(t.rounds))),
                shown_rounds(t, organiser=sees_all(who)),
            ),
            seat_tokens=msgspec.json.decode(tokens, type=list[SeatTokenView]),
            token_withheld=state.replay and outcome.withheld,
        )


class RunRoundBotsHandler(Handler[RunRoundBots, str, RoundRun]):
    """Wakes the bot driver (after the save) for the round's unfinished tables — their bots
    move off the request path — and records the finished tables' results: 202, each table
    ``finished`` or ``playing``."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService, wake: Callable[[UUID], None]) -> None:
        self.service = service
        self.wake = wake

    def authorise(self, command: RunRoundBots, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    def handle(self, uow: UnitOfWork, command: RunRoundBots, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        state = t.round_state(command.number)
        if command.number != len(t.rounds):
            raise IllegalMoveError(
                f"round {command.number} is not the current round ({len(t.rounds)}); "
                "only its bots can be run",
                rule="R36",
                code="round-not-current",
            )
        runs = []
        for table in state.tables:
            match = table_match(uow, table)
            finished = match is not None and match.finished
            if match is not None and not finished:
                uow.after(partial(self.wake, table.match_id))
            runs.append(
                TableRunView(
                    table=table.table + 1,
                    match_id=str(table.match_id),
                    status="finished" if finished else "playing",
                )
            )
        record_finished(uow, t)
        facts: dict[str, Fact] = {
            "completed": t.round_state(command.number).revealed,
            "tables": msgspec.json.encode(runs).decode(),
        }
        return Outcome(202, t.id, t.version, facts=facts)

    def answer(self, command: RunRoundBots, who: str, outcome: Outcome, state: Reading) -> RoundRun:
        t = as_of(state, outcome)
        return RoundRun(
            number=command.number,
            completed=bool(outcome.facts.get("completed")),
            tables=msgspec.json.decode(
                str(outcome.facts.get("tables") or "[]"), type=list[TableRunView]
            ),
            round=round_view(
                t, t.round_state(command.number), shown_rounds(t, organiser=sees_all(who))
            ),
        )


class CollectResultsHandler(TournamentChange[CollectResults]):
    def change(self, uow: UnitOfWork, t: Tournament, command: CollectResults, who: str) -> None:
        record_finished(uow, t)


class FinishTableHandler(Handler[FinishTable, str, TableView]):
    """Ends the table's match (R32: a deal in play is abandoned unscored, the team ahead on
    levels wins) and records its result, in one save."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: FinishTable, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    def handle(self, uow: UnitOfWork, command: FinishTable, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        entry = t.table(command.number, command.table)
        if command.number != len(t.rounds):
            raise IllegalMoveError(
                f"round {command.number} is over: only the current round's tables can be ended",
                rule="R36",
                code="round-not-current",
            )
        match = table_match(uow, entry)
        if match is None:
            raise IllegalMoveError(
                f"round {command.number} table {command.table + 1} is not seated yet: "
                "schedule again to seat it",
                rule="R36",
                code="table-not-seated",
            )
        end_match(uow, match, f"tournament organiser: {command.reason}")
        record_finished(uow, t)
        return Outcome(200, t.id, t.version)

    def answer(self, command: FinishTable, who: str, outcome: Outcome, state: Reading) -> TableView:
        return _table(as_of(state, outcome), command.number, command.table, who)


class CorrectResultHandler(Handler[CorrectResult, str, TableView]):
    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: CorrectResult, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    def handle(self, uow: UnitOfWork, command: CorrectResult, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        pairing = t.table(command.number, command.table)
        result = TableResult(
            pairing.first, pairing.second, command.winner, command.levels, command.points
        )
        t.correct_result(
            command.number, command.table, result, by=command.by, reason=command.reason, now=uow.now
        )
        return Outcome(200, t.id, t.version)

    def answer(
        self, command: CorrectResult, who: str, outcome: Outcome, state: Reading
    ) -> TableView:
        return _table(as_of(state, outcome), command.number, command.table, who)


def _table(t: Tournament, number: int, table: int, who: str) -> TableView:
    """The table as the organiser's command answers it (its result, R36: the organiser's)."""
    return table_view(t, number, t.table(number, table), shown_rounds(t, organiser=sees_all(who)))
