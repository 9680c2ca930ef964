"""A tournament's tables as steps of a command's unit of work (R32, R36): seat a round's
tables, read a finished table's result, record the finished tables' results, end a table's
match. Nothing is saved here: the command's one save (:mod:`services.bus`) holds the
tournament, every match and round these steps create or change, and the key's record.

**Seating** (:func:`seat_round`). A scheduled round's tables are created from its
``RoundScheduled`` — each table's match (a deterministic id,
:func:`~domain.tournament.tournament.table_match_id`, created with its tournament link) and
its four seats: bots as their kind, people with a fresh seat token answered once to the
organiser, who hands them out. The fourth seat deals deal 1 from the round's secret
(:mod:`services.tournaments.seeds`, reading the tournament the command holds). It creates
only what is missing, so a round a store holds half-seated (saved before scheduling was one
save) is completed by the next scheduling command.

**Results** (:func:`record_finished`). A finished table's result enters the tournament by
the results policy (:mod:`services.tournaments.results_policy`), which follows the log. A
command that decides on the round's results — scheduling the next round, a withdrawal, a
paper result, the deadline, the organiser's "run the bots" — records the finished tables'
results first, in its own save, so it never decides on a table the policy has not reached
yet (a table that finished keeps its played result); the policy then finds them recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.bots import PLAYERS
from domain.game.match import Entered, Match
from domain.game.timers import Timers
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import RoundState, TableEntry
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament
from services.dealer import Dealer
from services.match_commands import CreateMatch, create, ending, take_seat
from services.sources import SEAT_ROLE, new_token
from services.unit_of_work import UnitOfWork


@dataclass(frozen=True, slots=True)
class SeatToken:
    """A person's seat at a table, with its token (shown once, to the organiser)."""

    table: int
    seat: int
    team: int
    player: str
    token: str


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


def table_match(uow: UnitOfWork, table: TableEntry) -> Match | None:
    """The table's match; None while the round is not seated (a half-seated store's)."""
    return uow.find(table.match_id, Match)


def seat_round(
    uow: UnitOfWork, dealer: Dealer, tournament: Tournament, state: RoundState
) -> tuple[int, tuple[SeatToken, ...]]:
    """Create the round's matches and take their seats that do not exist yet: how many
    seats were taken, and the people's seat tokens among them (the module docstring)."""
    tokens: list[SeatToken] = []
    seated = 0
    timers = tournament.round_timers(state)
    for table in state.tables:
        match = table_match(uow, table)
        if match is None:
            command = CreateMatch(
                tournament.rules,
                name=f"{tournament.name}: round {state.number}, table {table.table + 1}",
                preset=tournament.preset,
                tournament=(tournament.id, state.number),
                timers=Timers.from_mapping(timers) if timers else None,
            )
            match = create(uow, command, table.match_id, "")
        teams = seat_teams(table.table, table.first, table.second)
        for seat in range(4):
            if match.seats[seat] is not None:
                continue
            team = tournament.lineup(state.number, teams[seat])
            player, kind = team.players[seat // 2], team.kinds[seat // 2]
            token = new_token(table.match_id, SEAT_ROLE)
            take_seat(uow, dealer, match, seat, player, kind, token)
            seated += 1
            if kind not in PLAYERS:
                tokens.append(SeatToken(table.table, seat, teams[seat], player, token))
    return seated, tuple(tokens)


def unseated(uow: UnitOfWork, state: RoundState) -> bool:
    """A table of the round has no match or a free seat (a half-seated store's round)."""
    for table in state.tables:
        match = table_match(uow, table)
        if match is None or not match.seated:
            return True
    return False


def record_finished(uow: UnitOfWork, tournament: Tournament) -> list[int]:
    """Record the result of every finished table of the round in play that has none yet
    (the last completes the round and reveals its secret, R35): the tables recorded."""
    state = tournament.current
    if state is None or state.revealed:
        return []
    recorded = []
    for table in state.tables:
        if (state.number, table.table) in tournament.results:
            continue
        match = table_match(uow, table)
        if match is not None and match.finished:
            result = table_result(table, match)
            tournament.record_result(state.number, table.table, result, uow.now)
            recorded.append(table.table)
    if recorded:
        uow.add(tournament)  # saved after the matches whose ends it records
    return recorded


def end_match(uow: UnitOfWork, match: Match, reason: str, entered: Entered | None = None) -> None:
    """End a table's match (R32: a deal in play is abandoned unscored; 409 ``match-finished``
    when it is over), saved after what ended it."""
    ending(uow, match, reason, entered)
    uow.add(match, uow.current_round(match))


def end_table(
    uow: UnitOfWork, table: TableEntry, reason: str, entered: Entered | None = None
) -> bool:
    """End the table's match (:func:`end_match`) unless it is over or not created; whether
    it was ended."""
    match = table_match(uow, table)
    if match is None or match.finished:
        return False
    end_match(uow, match, reason, entered)
    return True
