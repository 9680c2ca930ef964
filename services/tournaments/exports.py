"""A tournament's CSV exports (RFC 4180, a header row): standings, results and
adjustments.

The results CSV is the whole record in one file: a ``table`` row per table (``entered``:
a paper result; ``deadline_flagged``: the table was past the round's deadline, ended or
flagged by the rule), then a row per bye (``row``: ``bye`` — the pairing's, ``awarded``
— a round robin's opponent withdrew, ``requested`` — at the team's request), then a row
per score adjustment (``row``: ``adjustment``, ``round``: rounds scheduled when made);
``match_points`` is what a bye or an adjustment scored. A round's table results are
written once the round completes (R36, :func:`services.embargo.shown_rounds`): until then
its tables' result cells are empty (the standings count the completed rounds only).
Text cells that a spreadsheet
would read as a formula (``=``, ``+``, ``-``, ``@`` first) are prefixed with ``'``."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from uuid import UUID

from domain.tournament.standings import BYE_POINTS
from domain.tournament.tournament import Tournament
from services.embargo import shown_rounds
from services.game import GameService
from services.tournaments.loading import get_tournament
from services.tournaments.ranking import DuplicateRanking, duplicate_ranking, rank_text
from services.tournaments.views import (
    StandingsView,
    shown_standings,
    standing_views,
    standings_view,
)

# -- CSV ---------------------------------------------------------------------------------------

STANDINGS_COLUMNS = [
    "rank", "team", "name", "played", "wins", "draws", "losses", "byes", "match_points",
    "levels_gained", "points_for", "points_against", "point_differential", "head_to_head",
    "adjustment", "buchholz", "withdrawn", "duplicate_rank", "matchpoints", "top", "percent",
]  # fmt: skip
"""The last four: a boards event's duplicate ranking (:mod:`services.tournaments.ranking`;
``duplicate_rank`` ``3=`` when shared), empty on seeds."""
RESULTS_COLUMNS = [
    "round", "table", "match_id", "first_team", "first_name", "second_team", "second_name",
    "first_team_seats", "winner", "first_levels", "second_levels", "first_points",
    "second_points", "deals", "corrected_by", "reason", "commitment", "secret", "forfeit",
    "entered", "deadline_flagged", "row", "match_points",
]  # fmt: skip


def _cell(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        return str(value)
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()


def standings_csv(t: Tournament, duplicate: DuplicateRanking | None = None) -> str:
    ranked = {} if duplicate is None else {line.team: line for line in duplicate.lines}
    rows = []
    for s in standing_views(t, shown_standings(t)):
        row: list[object] = [getattr(s, column) for column in STANDINGS_COLUMNS[:-4]]
        line = ranked.get(s.team)
        if line is None:
            row += ["", "", "", ""]
        else:
            row += [rank_text(line), line.matchpoints, line.top, line.percent]
        rows.append(row)
    return csv_text(STANDINGS_COLUMNS, rows)


def standings_answer(game: GameService, tournament_id: UUID, as_csv: bool) -> str | StandingsView:
    """The standings route's answer (blocking, 404): JSON or CSV, with a boards event's
    duplicate ranking (its tables' matches are read)."""
    t = get_tournament(game, tournament_id)
    duplicate = duplicate_ranking(game, t)
    return standings_csv(t, duplicate) if as_csv else standings_view(t, duplicate=duplicate)


def results_csv(t: Tournament) -> str:
    rows = []
    shown = shown_rounds(t)
    for state in t.rounds:
        for table in state.tables:
            entry = t.results.get((state.number, table.table)) if state.number in shown else None
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
                    None if entry is None else entry.forfeit,
                    None if entry is None else entry.entered,
                    table.table in state.flagged,
                    "table",
                    None,
                ]
            )
    for state in t.rounds:
        byes = [("bye", state.bye, BYE_POINTS)] if state.bye is not None else []
        byes += [
            ("awarded", team, BYE_POINTS) for n, team, _ in t.awarded_byes if n == state.number
        ]
        byes += sorted(
            ("requested", team, points)
            for (n, team), points in t.requested_byes.items()
            if n == state.number
        )
        for kind, team, points in byes:
            rows.append(_other_row(t, state.number, team, kind, points))
    for a in t.adjustments:
        row = _other_row(t, a.after_round, a.team, "adjustment", a.match_points)
        row[RESULTS_COLUMNS.index("corrected_by")] = a.by
        row[RESULTS_COLUMNS.index("reason")] = a.reason
        rows.append(row)
    return csv_text(RESULTS_COLUMNS, rows)


def _other_row(t: Tournament, number: int, team: int, kind: str, points: int) -> list[object]:
    """A bye's or an adjustment's row: its round, the team, the kind and match points."""
    row: list[object] = [None] * len(RESULTS_COLUMNS)
    row[RESULTS_COLUMNS.index("round")] = number
    row[RESULTS_COLUMNS.index("first_team")] = team
    row[RESULTS_COLUMNS.index("first_name")] = t.teams[team].name
    row[RESULTS_COLUMNS.index("row")] = kind
    row[RESULTS_COLUMNS.index("match_points")] = points
    return row


ADJUSTMENTS_COLUMNS = ["team", "name", "match_points", "reason", "by", "after_round"]


def adjustments_csv(t: Tournament) -> str:
    return csv_text(
        ADJUSTMENTS_COLUMNS,
        (
            [a.team, t.teams[a.team].name, a.match_points, a.reason, a.by, a.after_round]
            for a in t.adjustments
        ),
    )
