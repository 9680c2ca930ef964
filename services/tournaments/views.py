"""What anyone may see of a tournament, and its exports (JSON and CSV).

Nothing secret leaves here: the organiser token's hash never, a tournament round's secret
only once the round is completed (R35), and no card at all (the tables' matches have
their own redacted views, R33). CSV cells that a spreadsheet would read as a formula
(``=``, ``+``, ``-``, ``@`` first) are prefixed with ``'``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

import msgspec

from domain.tournament.events import ResultEntry, RoundState, TableEntry
from domain.tournament.standings import Standing
from domain.tournament.tournament import Tournament
from services.view_types import RulesView, rules_view


class _View(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class PlayerView(_View, frozen=True, kw_only=True):
    name: str
    kind: str
    """``human``, or the bot policy (``random``, ``heuristic``, ``strong``)."""


class TeamView(_View, frozen=True, kw_only=True):
    team: int
    """The team's number: its place in the registration (the seeding), from 0."""
    name: str
    players: list[PlayerView]


class TableResultView(_View, frozen=True, kw_only=True):
    winner: int | None
    """The winning team's number; null for a draw."""
    levels: list[int]
    """Levels gained by the first and the second team (R30)."""
    points: list[int]
    """Attackers' points taken by the first and the second team (R29)."""
    deals: int
    corrected: bool
    corrected_by: str | None
    reason: str | None


class TableView(_View, frozen=True, kw_only=True):
    table: int
    """1-based."""
    match_id: str
    first_team: int
    second_team: int
    first_team_seats: list[int]
    """Seats 0/2 or 1/3 (duplicate seating, R36)."""
    result: TableResultView | None


class RoundView(_View, frozen=True, kw_only=True):
    number: int
    status: str
    """``in_play`` (a table has no result yet) or ``completed``."""
    commitment: str
    """sha256 of the round's secret, published when the round is scheduled (R35)."""
    secret: str | None
    """The round's secret, revealed once the round is completed; every deal's seed is
    HMAC-SHA256(secret, "shengji-duplicate:{deal}:{dealNo}") (R36)."""
    bye: int | None
    tables: list[TableView]


class TournamentView(_View, frozen=True, kw_only=True):
    tournament_id: str
    name: str
    preset: str | None
    rules: RulesView
    match_length: str
    format: str
    total_rounds: int
    status: str
    """``ready`` (the next round may be scheduled), ``in_play`` or ``finished``."""
    version: int
    teams: list[TeamView]
    rounds: list[RoundView]


class StandingView(_View, frozen=True, kw_only=True):
    rank: int
    team: int
    name: str
    played: int
    wins: int
    draws: int
    losses: int
    byes: int
    match_points: int
    levels_gained: int
    points_for: int
    points_against: int
    point_differential: int
    head_to_head: int


class StandingsView(_View, frozen=True, kw_only=True):
    tournament_id: str
    rounds_completed: int
    tiebreaks: list[str]
    standings: list[StandingView]


class ResultsExport(_View, frozen=True, kw_only=True):
    """Everything needed to check and rank the tournament: rounds, tables, results,
    commitments and revealed secrets, and the standings."""

    tournament: TournamentView
    standings: list[StandingView]


TIEBREAKS = [
    "matchPoints (win 2, draw 1, bye 2)",
    "levelsGained (R30)",
    "pointDifferential (attackers' points for minus against, same deals, R29/R36)",
    "headToHead (match points among the teams still tied)",
    "team (registration order)",
]


def status(t: Tournament) -> str:
    if t.finished:
        return "finished"
    return "in_play" if t.in_play else "ready"


def _result(entry: ResultEntry | None) -> TableResultView | None:
    if entry is None:
        return None
    return TableResultView(
        winner=entry.winner,
        levels=list(entry.levels),
        points=list(entry.points),
        deals=entry.deals,
        corrected=entry.corrected_by is not None,
        corrected_by=entry.corrected_by,
        reason=entry.reason,
    )


def table_view(t: Tournament, number: int, table: TableEntry) -> TableView:
    return TableView(
        table=table.table + 1,
        match_id=str(table.match_id),
        first_team=table.first,
        second_team=table.second,
        first_team_seats=[table.first_parity, table.first_parity + 2],
        result=_result(t.results.get((number, table.table))),
    )


def round_view(t: Tournament, state: RoundState) -> RoundView:
    return RoundView(
        number=state.number,
        status="completed" if state.revealed else "in_play",
        commitment=state.commitment,
        secret=state.secret if state.revealed else None,  # R35: only after the round
        bye=state.bye,
        tables=[table_view(t, state.number, table) for table in state.tables],
    )


def tournament_view(t: Tournament) -> TournamentView:
    return TournamentView(
        tournament_id=str(t.id),
        name=t.name,
        preset=t.preset,
        rules=rules_view(t.rules),
        match_length=t.match_length,
        format=t.format,
        total_rounds=t.total_rounds,
        status=status(t),
        version=t.version,
        teams=[
            TeamView(
                team=i,
                name=team.name,
                players=[
                    PlayerView(name=p, kind=k)
                    for p, k in zip(team.players, team.kinds, strict=True)
                ],
            )
            for i, team in enumerate(t.teams)
        ],
        rounds=[round_view(t, r) for r in t.rounds],
    )


def standing_views(t: Tournament, lines: Iterable[Standing] | None = None) -> list[StandingView]:
    return [
        StandingView(
            rank=s.rank,
            team=s.team,
            name=t.teams[s.team].name,
            played=s.played,
            wins=s.wins,
            draws=s.draws,
            losses=s.losses,
            byes=s.byes,
            match_points=s.match_points,
            levels_gained=s.levels_gained,
            points_for=s.points_for,
            points_against=s.points_against,
            point_differential=s.point_differential,
            head_to_head=s.head_to_head,
        )
        for s in (t.standings() if lines is None else lines)
    ]


def standings_view(t: Tournament) -> StandingsView:
    return StandingsView(
        tournament_id=str(t.id),
        rounds_completed=sum(r.revealed for r in t.rounds),
        tiebreaks=TIEBREAKS,
        standings=standing_views(t),
    )


def results_export(t: Tournament) -> ResultsExport:
    return ResultsExport(tournament=tournament_view(t), standings=standing_views(t))


# -- CSV ---------------------------------------------------------------------------------------

STANDINGS_COLUMNS = [
    "rank", "team", "name", "played", "wins", "draws", "losses", "byes", "match_points",
    "levels_gained", "points_for", "points_against", "point_differential", "head_to_head",
]  # fmt: skip
RESULTS_COLUMNS = [
    "round", "table", "match_id", "first_team", "first_name", "second_team", "second_name",
    "first_team_seats", "winner", "first_levels", "second_levels", "first_points",
    "second_points", "deals", "corrected_by", "reason", "commitment", "secret",
]  # fmt: skip


def _cell(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        return str(value)
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value


def _csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()


def standings_csv(t: Tournament) -> str:
    return _csv(
        STANDINGS_COLUMNS,
        ([getattr(s, column) for column in STANDINGS_COLUMNS] for s in standing_views(t)),
    )


def results_csv(t: Tournament) -> str:
    rows = []
    for state in t.rounds:
        for table in state.tables:
            entry = t.results.get((state.number, table.table))
            rows.append(
                [
                    state.number,
                    table.table + 1,
                    table.match_id,
                    table.first,
                    t.teams[table.first].name,
                    table.second,
                    t.teams[table.second].name,
                    f"{table.first_parity}/{table.first_parity + 2}",
                    None if entry is None else ("draw" if entry.winner is None else entry.winner),
                    *(("",) * 5 if entry is None else (*entry.levels, *entry.points, entry.deals)),
                    None if entry is None else entry.corrected_by,
                    None if entry is None else entry.reason,
                    state.commitment,
                    state.secret if state.revealed else None,
                ]
            )
    return _csv(RESULTS_COLUMNS, rows)
