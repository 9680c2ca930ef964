"""The tournament application: create, schedule rounds and their tables, pull the tables'
results, correct a result, run a round's bots (R36).

Tournaments live in the same event store as the matches (the ``GameService``
application saves and loads them), so a table's match and its tournament are one store.

**Scheduling.** :meth:`TournamentService.schedule_next` draws the round's 32-byte secret
(the service's seed source, R35), and saves ``RoundScheduled`` — pairing, seating and the
secret's commitment — first. The tables are then *materialised* from that event: each
table's match (a deterministic id, :func:`~domain.tournament.tournament.table_match_id`,
created with its tournament link) and its four seats: bots as their kind, people with a
fresh seat token answered once to the organiser, who hands them out. The fourth seat deals
deal 1 from the tournament's seed (``services.tournaments.seeds``). Materialising is
idempotent: if the process stops half-way, the next schedule call creates what is missing
(and answers the people's seat tokens then) instead of scheduling another round.

**Results are pulled**, not pushed: a finished table's result enters the tournament
(``TableResultRecorded``) when the organiser collects, runs the round's bots or asks for
the next round. That keeps the match commands (the hot path) free of a second aggregate
and makes collecting idempotent; the last result completes the round and reveals its
secret in the same save (``RoundCompleted``).

**Bots.** A table's bots move off the request path, by the bot driver
(:mod:`services.bot_driver`), as soon as they are to act: seating a table wakes it.
:meth:`TournamentService.wake_round` wakes the current round's unfinished tables and
collects the finished ones (the organiser's "run the bots"). Four-bot tables deal unpaced
(``services.tournaments.seeds.table_pacing``), so a bots-only round plays to its end by
itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID, uuid4

from eventsourcing.persistence import IntegrityError

from domain.bots import PLAYERS
from domain.game.match import Entered, Match
from domain.game.timers import Timers
from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import RuleSet
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import RoundState, TableEntry, TeamEntry
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament
from services.dealer import Dealer, FreshDeals
from services.errors import NotFoundError, VersionConflictError
from services.game import GameService
from services.loading import load
from services.match_commands import CreateMatch, create, ending, take_seat
from services.sources import SEAT_ROLE, new_token
from services.tournaments.seeds import TableDeals
from services.unit_of_work import UnitOfWork

TableStatus = Literal["finished", "playing"]
Timing = tuple[int | None, Mapping[str, int] | None]
"""A round's own time control: its deadline in seconds, its tables' turn timers."""


END_ATTEMPTS = 5
"""Runs an end of a table's match makes against moves saved first."""
COLLECT_ATTEMPTS = 5
"""Reads of the tournament a collection tries before its conflict is the caller's."""


@dataclass(frozen=True, slots=True)
class SeatToken:
    """A person's seat at a table, with its token (shown once, to the organiser)."""

    table: int
    seat: int
    team: int
    player: str
    token: str


@dataclass(frozen=True, slots=True)
class Scheduled:
    number: int
    seat_tokens: tuple[SeatToken, ...]


@dataclass(frozen=True, slots=True)
class TableRun:
    table: int
    match_id: UUID
    status: TableStatus


@dataclass(frozen=True, slots=True)
class RoundRun:
    number: int
    tables: tuple[TableRun, ...]
    completed: bool
    """Every table has its result: the round's secret is revealed."""


def table_result(table: TableEntry, match: Match) -> TableResult:
    """A finished table's result, from its pairing's first team (R29, R30, R32)."""
    first = table.first_parity  # the match team (R2: 0 = seats 0/2) of the first team
    levels, points = [0, 0], [0, 0]
    for r in match.results:
        levels[r.team_up] += r.levels_gained
        points[(r.dealer + 1) % 2] += r.attackers_total  # R6: the dealer's opponents attack
    winner = None
    if match.winner is not None:
        winner = table.first if match.winner == first else table.second
    return TableResult(
        table.first,
        table.second,
        winner,
        (levels[first], levels[1 - first]),
        (points[first], points[1 - first]),
        len(match.results),
    )


class TournamentService:
    """Tournament commands over a :class:`GameService` (its store, clock and seeds)."""

    def __init__(self, game: GameService) -> None:
        self.game = game

    # -- loading ---------------------------------------------------------------------------

    def get(self, tournament_id: UUID, version: int | None = None) -> Tournament:
        """The tournament (as of ``version``)."""
        return load(self.game, tournament_id, Tournament, "tournament", version)

    # -- commands --------------------------------------------------------------------------

    def create(
        self,
        *,
        name: str,
        rules: RuleSet,
        teams: Sequence[TeamEntry],
        fmt: str,
        match_length: int | str,
        preset: str | None = None,
        swiss_rounds: int | None = None,
        organiser_token_hash: str = "",
        tournament_id: UUID | None = None,
        attach: Callable[[Tournament], Sequence[Any]] | None = None,
        **controls: Any,
    ) -> Tournament:
        """A new tournament; ``attach`` builds more aggregates to save with it in one save
        (an idempotency record with the answer); ``controls``: the organiser's settings
        (:meth:`Tournament.create`: timers, round deadline, tiebreaks, registration)."""
        tournament = Tournament.create(
            name=name,
            rules=rules,
            teams=teams,
            fmt=fmt,
            match_length=match_length,
            now=self.game.clock(),
            preset=preset,
            swiss_rounds=swiss_rounds,
            organiser_token_hash=organiser_token_hash,
            tournament_id=tournament_id or uuid4(),
            **controls,
        )
        self.save(tournament, *(attach(tournament) if attach else ()))
        return tournament

    def schedule_next(self, tournament_id: UUID, timing: Timing | None = None) -> Scheduled:
        """Collect the current round's results, then schedule and seat the next round;
        ``timing`` (deadline seconds, turn timers): the round's own time control, saved
        with its scheduling.

        A scheduling that stopped half-way (tables or seats missing) is finished first
        and answered for the current round. IllegalMoveError ``round-in-play`` (a table
        has no result yet) or ``tournament-over``."""
        current = self.get(tournament_id)
        state = current.current
        if state is not None and not state.revealed:
            created, tokens = self.materialise(current, state)
            if created:
                return Scheduled(state.number, tokens)
        self.collect(tournament_id)
        tournament = self.get(tournament_id)  # a copy: the saved object is the cache's
        number = tournament.schedule_round(self.game.seeds(), self.game.clock())
        if timing is not None:
            tournament.set_round_time(number, timing[0], timing[1], self.game.clock())
        self.save(tournament)
        _, tokens = self.materialise(tournament, tournament.round_state(number))
        return Scheduled(number, tokens)

    def materialise(
        self, tournament: Tournament, state: RoundState
    ) -> tuple[int, tuple[SeatToken, ...]]:
        """Create the round's matches and seats that do not exist yet (idempotent): how
        many seats were taken now, and the people's seat tokens among them."""
        tokens: list[SeatToken] = []
        seated = 0
        timers = tournament.round_timers(state)
        dealer = Dealer(TableDeals(FreshDeals(self.game.seeds, self.game.pacing)))
        for table in state.tables:
            uow = UnitOfWork(self.game)
            match = uow.find(table.match_id, Match)
            if match is None:
                command = CreateMatch(
                    tournament.rules,
                    name=f"{tournament.name}: round {state.number}, table {table.table + 1}",
                    preset=tournament.preset,
                    tournament=(tournament.id, state.number),
                    timers=Timers.from_mapping(timers) if timers else None,
                )
                match = create(uow, command, table.match_id, "")
                uow.commit()
            teams = seat_teams(table.table, table.first, table.second)
            for seat in range(4):
                if match.seats[seat] is not None:
                    continue
                team = tournament.lineup(state.number, teams[seat])
                player, kind = team.players[seat // 2], team.kinds[seat // 2]
                token = new_token(table.match_id, SEAT_ROLE)
                uow = UnitOfWork(self.game)
                match = uow.match(table.match_id)
                take_seat(uow, dealer, match, seat, player, kind, token)
                uow.commit()
                seated += 1
                if kind not in PLAYERS:
                    tokens.append(SeatToken(table.table, seat, teams[seat], player, token))
        return seated, tuple(tokens)

    def collect(self, tournament_id: UUID) -> Tournament:
        """Pull the finished tables' results of the current round into the tournament.
        Idempotent, so a conflict with another collector (the clerk of any replica, or
        the organiser's call beside it) reads the tournament again instead of refusing."""
        for _ in range(COLLECT_ATTEMPTS - 1):
            try:
                return self._collect(tournament_id)
            except VersionConflictError:
                continue  # save() dropped our stale copy: the next read is the store's
        return self._collect(tournament_id)

    def _collect(self, tournament_id: UUID) -> Tournament:
        tournament = self.get(tournament_id)
        state = tournament.current
        if state is None or state.revealed:
            return tournament
        now = self.game.clock()
        for table in state.tables:
            if (state.number, table.table) in tournament.results:
                continue
            match = self._table_match(table)
            if match is not None and match.finished:
                tournament.record_result(state.number, table.table, table_result(table, match), now)
        if tournament.pending_events:
            self.save(tournament)
        return tournament

    def wake_round(self, tournament_id: UUID, wake: Callable[[UUID], None]) -> RoundRun:
        """The organiser's "run the bots": ``wake`` (the bot driver's) each unfinished table
        of the current round — its bots move off the request path — then collect the
        finished tables' results."""
        tournament = self.get(tournament_id)
        state = tournament.current
        if state is None:
            raise IllegalMoveError(
                "no round has been scheduled yet", rule="R36", code="round-not-scheduled"
            )
        runs = []
        for table in state.tables:
            match = self._table_match(table)
            finished = match is not None and match.finished
            if match is not None and not finished:
                wake(table.match_id)
            runs.append(
                TableRun(table.table, table.match_id, "finished" if finished else "playing")
            )
        collected = self.collect(tournament_id)
        return RoundRun(state.number, tuple(runs), collected.round_state(state.number).revealed)

    def finish_table(self, tournament_id: UUID, number: int, table: int, reason: str) -> Tournament:
        """The organiser ends a table's match (R32: a deal in play is abandoned unscored,
        the team ahead on levels wins) so the round can complete; its result is collected."""
        tournament = self.get(tournament_id)
        entry = tournament.table(number, table)
        if number != len(tournament.rounds):
            raise IllegalMoveError(
                f"round {number} is over: only the current round's tables can be ended",
                rule="R36",
                code="round-not-current",
            )
        if self._table_match(entry) is None:
            raise IllegalMoveError(
                f"round {number} table {table + 1} is not seated yet: schedule again to finish it",
                rule="R36",
                code="table-not-seated",
            )
        finish_table_match(self.game, entry.match_id, f"tournament organiser: {reason}")
        return self.collect(tournament_id)

    def correct(
        self,
        tournament_id: UUID,
        number: int,
        table: int,
        *,
        winner: int | None,
        levels: tuple[int, int],
        points: tuple[int, int],
        by: str,
        reason: str,
        attach: Callable[[Tournament], Sequence[Any]] | None = None,
    ) -> Tournament:
        """The organiser's recorded correction of a table's result (who and why);
        ``attach`` as for :meth:`create` (the Idempotency-Key record, in the same save)."""
        tournament = self.get(tournament_id)
        pairing = tournament.table(number, table)
        result = TableResult(pairing.first, pairing.second, winner, levels, points)
        tournament.correct_result(
            number, table, result, by=by, reason=reason, now=self.game.clock()
        )
        self.save(tournament, *(attach(tournament) if attach else ()))
        return tournament

    def _table_match(self, table: TableEntry) -> Match | None:
        """The table's match; None while an interrupted scheduling has not created it
        (``schedule_next`` finishes it)."""
        try:
            return self.game.get_match(table.match_id)
        except NotFoundError:
            return None

    def save(self, *aggregates: Any) -> None:
        """Save; a concurrent writer's conflict is a 409 ``version-conflict``, and our
        copies leave the aggregate cache (the next load reads the store)."""
        try:
            self.game.save(*aggregates)
        except IntegrityError as e:
            cache = self.game.repository.cache
            if cache is not None:
                for aggregate in aggregates:
                    with contextlib.suppress(KeyError):
                        cache.get(aggregate.id, evict=True)
            raise VersionConflictError(
                "another request changed this tournament first; reload and try again"
            ) from e


def finish_table_match(
    game: GameService, match_id: UUID, reason: str, entered: Entered | None = None
) -> None:
    """End a table's match (R32), on the state as it is (bots move on: a conflict is run
    again on the state that won)."""
    for attempt in range(1, END_ATTEMPTS + 1):
        uow = UnitOfWork(game)
        ending(uow, uow.match(match_id), reason, entered)
        try:
            uow.commit()
            return
        except VersionConflictError:
            if attempt == END_ATTEMPTS:
                raise
