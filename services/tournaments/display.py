"""What the director's room shows (docs/tournaments.md, "The director's room"): the data of
the live display page, the printable pairing and score sheets and the crosstable.

Nothing secret (R33), and nothing a table still playing could learn a deal from (R36:
every table of a round plays the same deals, so its tables are closed to spectators
until it completes): while the round is in play a table shows how far it has got — the
deal (match round), the trick, whether it has finished — and nothing of how it went: its
result, the attackers' points and the levels, and the standings they move, appear once
the round completes (:func:`shown_result`, :func:`services.embargo.results_released`).
The next round's pairing only once published.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from domain.game.round import RoundPhase
from domain.rules.cards import RANKS
from domain.rules.ruleset import MatchEndKind
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import ResultEntry, RoundState, TableEntry
from domain.tournament.tournament import Tournament
from services import field_docs
from services.embargo import results_released
from services.errors import NotFoundError
from services.game import GameService
from services.tournaments.ranking import DuplicateRanking, duplicate_ranking
from services.tournaments.views import (
    StandingView,
    camel,
    shown_standings,
    standing_views,
    tiebreak_names,
)

NEAR_DEADLINE_S = 300
"""A table whose deadline is this near (seconds) stands out on the display."""
SCORE_SHEET_DEALS = 12
"""Rows of a score sheet when the match length is not a number of deals (finish_at_A)."""


class _View(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class TableProgress(_View, frozen=True, kw_only=True):
    """A table of the round: teams, players by seat, and how far it has got."""

    table: Annotated[int, Meta(description="From 1.")]
    first_team: Annotated[int, Meta(description="The first team's number.")]
    first_name: Annotated[str, Meta(description="The first team's name.")]
    second_team: Annotated[int, Meta(description="The second team's number.")]
    second_name: Annotated[str, Meta(description="The second team's name.")]
    first_team_seats: Annotated[
        list[int], Meta(description="Seats 0/2 or 1/3 (duplicate seating, R36).")
    ]
    players: Annotated[list[str], Meta(description="Seats 0..3 (substitutes in place).")]
    status: Annotated[
        str,
        Meta(
            description="`waiting` (not seated yet), `playing`, `finished` (result in), `flagged`."
        ),
    ]
    deal: Annotated[
        int, Meta(description="The deal (match round) being played, from 1; 0 before the first.")
    ]
    trick: Annotated[
        int, Meta(description="The trick being played in that deal (0 outside the play phase).")
    ]
    attacker_points: Annotated[
        int | None,
        Meta(
            description=(
                "Points the attackers have taken in that deal so far "
                "(R26); null while the round is in play (R36)."
            )
        ),
    ]
    levels: Annotated[
        list[str] | None,
        Meta(
            description=(
                "The two teams' levels now (first team, second team; R5); "
                "null while the round is in play (R36)."
            )
        ),
    ]
    result: Annotated[
        str | None,
        Meta(
            description=(
                "The result once in: the levels gained (`2-1`) and the "
                "winner's name, or `=` for a draw."
            )
        ),
    ]
    entered: Annotated[
        bool, Meta(description="The result was entered by the organiser (a paper result).")
    ] = False
    corrected: Annotated[
        bool,
        Meta(
            description=(
                "The organiser corrected the result: `resultLevels` and `resultPoints` are "
                "the corrected figures, and the played ones (`attackerPoints`, `levels`) "
                "are null."
            )
        ),
    ] = False
    forfeit: Annotated[
        bool, Meta(description="A team withdrew: the other won by forfeit (scored as a bye).")
    ] = False
    result_levels: Annotated[
        list[int] | None,
        Meta(
            description=(
                "The result's levels gained by the first and the second team (R30; "
                "corrected, when corrected); null until the result is shown."
            )
        ),
    ] = None
    result_points: Annotated[
        list[int] | None,
        Meta(
            description=(
                "The result's attackers' points taken by the first and the second team "
                "(R29; corrected, when corrected); null until the result is shown."
            )
        ),
    ] = None
    deadline: Annotated[
        str | None,
        Meta(
            description="This table's deadline (the round's plus its extension).",
            examples=["2026-12-01T20:00:35+00:00"],
        ),
    ] = None


ByeKind = Literal["pairing", "awarded", "requested"]


class ByeLine(_View, frozen=True, kw_only=True):
    """A team sitting out the round, and why."""

    team: Annotated[int, field_docs.TEAM]
    name: Annotated[str, field_docs.NAME]
    kind: Annotated[
        ByeKind,
        Meta(
            description=(
                "`pairing` (the pairing's bye: an odd number of teams), `awarded` (its "
                "round-robin opponent withdrew) or `requested` (the team asked to sit out)."
            )
        ),
    ]


class PairingLine(_View, frozen=True, kw_only=True):
    """A table of the published next pairing."""

    table: Annotated[int, Meta(description="From 1.")]
    first_name: Annotated[str, Meta(description="The first team's name.")]
    second_name: Annotated[str, Meta(description="The second team's name.")]


class DisplayView(_View, frozen=True, kw_only=True):
    """The live display page's data (``GET /v1/tournaments/{id}/display``)."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    name: Annotated[str, field_docs.NAME]
    version: Annotated[
        int,
        Meta(
            description=(
                "The tournament's version plus its current tables' (a change of any moves it)."
            )
        ),
    ]
    status: Annotated[str, Meta(description="`registration`, `ready`, `in_play` or `finished`.")]
    total_rounds: Annotated[int, field_docs.TOTAL_ROUNDS]
    round: Annotated[
        int | None, Meta(description="The round shown: the one in play, else the last scheduled.")
    ]
    started_at: Annotated[
        str | None,
        Meta(description="When the round shown was scheduled.", examples=[field_docs.EXAMPLE_TIME]),
    ]
    deadline: Annotated[
        str | None,
        Meta(
            description="The round's deadline (paused time included); null without one.",
            examples=["2026-12-01T20:00:35+00:00"],
        ),
    ]
    paused: Annotated[bool, Meta(description="The round's clock is paused.")]
    tiebreaks: Annotated[
        list[str], Meta(description="The standings' order: match points, then the tiebreaks.")
    ]
    standings: Annotated[list[StandingView], Meta(description="As GET …/standings.")]
    tables: Annotated[
        list[TableProgress], Meta(description="The round's tables with their progress.")
    ]
    byes: Annotated[
        list[str],
        Meta(description="Names of the teams sitting out the round (a bye of any kind)."),
    ]
    next_round: Annotated[
        int | None, Meta(description="The round whose pairing is published; null before.")
    ] = None
    next_pairing: Annotated[
        list[PairingLine],
        Meta(description="The next round's pairing once published (empty before)."),
    ] = []
    next_bye: Annotated[
        str | None, Meta(description="The team sitting out the next round (published pairing).")
    ] = None
    next_requested_byes: Annotated[
        list[str],
        Meta(description="The teams that asked to sit out the next round (published pairing)."),
    ] = []
    bye_lines: Annotated[
        list[ByeLine],
        Meta(description="The teams sitting out the round, each with why (`byes`, told apart)."),
    ] = []
    withdrawn: Annotated[
        list[int], Meta(description="The teams that have withdrawn (their numbers).")
    ] = []
    duplicate: Annotated[
        DuplicateRanking | None,
        Meta(description="A boards event's ranking by matchpoints (as the standings'); null else."),
    ] = None


class DisplayFrame(_View, frozen=True, kw_only=True):
    """A frame of the display stream (``event: display``)."""

    version: Annotated[
        int,
        Meta(
            description="The display's version (as `DisplayView.version`; also the frame's `id`)."
        ),
    ]
    html: Annotated[
        str,
        Meta(
            description=(
                "The live part of the display page, rendered (standings, "
                "tables, clock, next pairing): the page puts it in place "
                "as it is."
            )
        ),
    ]


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def round_deadline(t: Tournament, state: RoundState) -> datetime | None:
    seconds = t.round_deadline_s_of(state)
    if seconds is None or state.scheduled_at is None:
        return None
    return state.scheduled_at + timedelta(seconds=seconds + state.paused_s)


def players_of(t: Tournament, number: int, table: TableEntry) -> list[str]:
    teams = seat_teams(table.table, table.first, table.second)
    return [t.lineup(number, teams[seat]).players[seat // 2] for seat in range(4)]


def bye_kinds(t: Tournament, state: RoundState) -> list[tuple[int, ByeKind]]:
    """Every team sitting out round ``state`` and why: the pairing's bye, those awarded
    (a round robin's opponent withdrew), those requested — in that order."""
    found: list[tuple[int, ByeKind]] = [] if state.bye is None else [(state.bye, "pairing")]
    found += [(team, "awarded") for n, team, _ in t.awarded_byes if n == state.number]
    found += [(team, "requested") for team in requested_byes(t, state.number)]
    return found


def requested_byes(t: Tournament, number: int) -> list[int]:
    """The teams that asked to sit out round ``number``."""
    return sorted(team for n, team in t.requested_byes if n == number)


def byes_of(t: Tournament, state: RoundState) -> list[int]:
    """Every team sitting out round ``state`` (:func:`bye_kinds`, without why)."""
    return [team for team, _ in bye_kinds(t, state)]


def shown_result(t: Tournament, number: int, table: TableEntry) -> ResultEntry | None:
    """Table ``table``'s result as the director's pages show it: once its round has
    completed (R36: another table may still be playing the same deals), else None."""
    if not results_released(t, number):
        return None
    return t.results.get((number, table.table))


def result_text(t: Tournament, entry: ResultEntry) -> str:
    """A result as the pages write it: the levels gained (`2-1`) and the winner's name,
    or `=` for a draw."""
    who = "=" if entry.winner is None else t.teams[entry.winner].name
    return f"{entry.levels[0]}-{entry.levels[1]} {who}"


def table_progress(
    game: GameService, t: Tournament, state: RoundState, table: TableEntry
) -> tuple[TableProgress, int]:
    """A table's progress, and its match's version (0 before it exists)."""
    deal = trick = points = version = 0
    levels: list[str] = []
    status = "waiting"
    try:
        match = game.get_match(table.match_id)
    except NotFoundError:
        match = None
    if match is not None:
        current = game.current_round(match)
        version = match.sequence(0 if current is None else current.version)
        status = "playing"
        deal = match.round_number
        if current is not None and current.phase is RoundPhase.PLAYING and current.play:
            trick = current.play.tricks_done + 1
            points = current.play.attacker_points
        elif match.results:  # between deals, or over: the last deal's attackers' total
            points = match.results[-1].attackers_total
        mine = table.first_parity
        levels = [RANKS[match.levels[mine]], RANKS[match.levels[1 - mine]]]
    entry = shown_result(t, state.number, table)
    corrected = entry is not None and entry.corrected_by is not None
    if (state.number, table.table) in t.results:  # finished, however it went (R36)
        status = "finished"
    elif table.table in state.flagged:
        status = "flagged"
    due = round_deadline(t, state)
    extension = state.extensions.get(table.table, 0)
    return (
        TableProgress(
            table=table.table + 1,
            first_team=table.first,
            first_name=t.teams[table.first].name,
            second_team=table.second,
            second_name=t.teams[table.second].name,
            first_team_seats=[table.first_parity, table.first_parity + 2],
            players=players_of(t, state.number, table),
            status=status,
            deal=deal,
            trick=trick,
            # the played figures, once the round completes — not when they were corrected
            attacker_points=points if state.revealed and not corrected else None,
            levels=levels if state.revealed and not corrected else None,
            result=None if entry is None else result_text(t, entry),
            entered=entry is not None and entry.entered,
            corrected=corrected,
            forfeit=entry is not None and entry.forfeit,
            result_levels=None if entry is None else list(entry.levels),
            result_points=None if entry is None else list(entry.points),
            deadline=None if due is None else _iso(due + timedelta(seconds=extension)),
        ),
        version,
    )


def display_view(game: GameService, t: Tournament) -> DisplayView:
    """The display page's data now (the current round's matches are read)."""
    state = t.current
    tables: list[TableProgress] = []
    version = t.version
    if state is not None:
        for table in state.tables:
            progress, seen = table_progress(game, t, state, table)
            tables.append(progress)
            version += seen
    following = len(t.rounds) + 1
    published = t.published.get(following)
    return DisplayView(
        tournament_id=str(t.id),
        name=t.name,
        version=version,
        status=t.status,
        total_rounds=t.total_rounds,
        round=None if state is None else state.number,
        started_at=None if state is None else _iso(state.scheduled_at),
        deadline=None if state is None or state.revealed else _iso(round_deadline(t, state)),
        paused=state is not None and state.paused_at is not None,
        tiebreaks=tiebreak_names(t),
        standings=standing_views(t, shown_standings(t)),
        tables=tables,
        byes=[] if state is None else [t.teams[b].name for b in byes_of(t, state)],
        bye_lines=[]
        if state is None
        else [ByeLine(team=b, name=t.teams[b].name, kind=k) for b, k in bye_kinds(t, state)],
        withdrawn=sorted(t.withdrawn),
        next_round=following if published is not None else None,
        next_pairing=[]
        if published is None
        else [
            PairingLine(table=i + 1, first_name=t.teams[a].name, second_name=t.teams[b].name)
            for i, (a, b) in enumerate(published.tables)
        ],
        next_bye=None
        if published is None or published.bye is None
        else t.teams[published.bye].name,
        next_requested_byes=[]
        if published is None
        else [t.teams[b].name for b in requested_byes(t, following)],
        duplicate=duplicate_ranking(game, t),
    )


# -- the crosstable ------------------------------------------------------------------------------


class CrossCell(_View, frozen=True, kw_only=True):
    """A team's round in the crosstable."""

    round: Annotated[int, Meta(description="The round's number.")]
    opponent: Annotated[int | None, Meta(description="The opponent's number; null for a bye.")]
    outcome: Annotated[
        str,
        Meta(
            description=(
                "`W`, `D`, `L`, `B` (a bye: pairing, awarded or forfeit "
                "win), `R` (a requested bye), `-` (no result yet, or its round is "
                "still in play: R36)."
            )
        ),
    ]
    levels: Annotated[
        list[int],
        Meta(
            description=(
                "Levels gained by the team and by its opponent (R30): the corrected ones "
                "when `corrected`."
            )
        ),
    ]
    corrected: Annotated[
        bool, Meta(description="The organiser corrected the result (`levels` are corrected).")
    ] = False
    forfeit: Annotated[
        bool,
        Meta(description="Won (`B`) or lost (`L`) by forfeit: a team withdrew from the table."),
    ] = False


class CrossLine(_View, frozen=True, kw_only=True):
    """A team's line of the crosstable."""

    rank: Annotated[int, Meta(description="Its rank in the standings.")]
    team: Annotated[int, field_docs.TEAM]
    name: Annotated[str, field_docs.NAME]
    match_points: Annotated[int, Meta(description="Its match points (as the standings).")]
    rounds: Annotated[
        list[CrossCell | None],
        Meta(description="One cell per scheduled round; null when the team did not take part."),
    ]
    withdrawn: Annotated[bool, Meta(description="The team has withdrawn.")] = False
    tiebreak_values: Annotated[
        list[int],
        Meta(description="Its tie-break values, in the order of the crosstable's `tiebreaks`."),
    ] = []


class Crosstable(_View, frozen=True, kw_only=True):
    """Each team's opponents and outcomes, round by round (``GET …/crosstable``)."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    name: Annotated[str, field_docs.NAME]
    rounds: Annotated[int, Meta(description="Rounds scheduled.")]
    lines: Annotated[list[CrossLine], Meta(description="In standings order.")]
    tiebreaks: Annotated[
        list[str],
        Meta(description="The standings' tie-breaks, in order (each line's `tiebreakValues`)."),
    ] = []
    duplicate: Annotated[
        DuplicateRanking | None,
        Meta(description="A boards event's ranking by matchpoints (as the standings'); null else."),
    ] = None


def crosstable(t: Tournament, duplicate: DuplicateRanking | None = None) -> Crosstable:
    """Each team's round-by-round opponents and outcomes, in standings order."""
    cells: dict[int, dict[int, CrossCell]] = {team: {} for team in range(len(t.teams))}
    for state in t.rounds:
        n = state.number
        for table in state.tables:
            entry = shown_result(t, n, table)
            for me, other, i in ((table.first, table.second, 0), (table.second, table.first, 1)):
                if entry is None:
                    outcome, levels = "-", [0, 0]
                elif entry.forfeit:
                    outcome, levels = ("B" if entry.winner == me else "L"), [0, 0]
                else:
                    outcome = "D" if entry.winner is None else "W" if entry.winner == me else "L"
                    levels = [entry.levels[i], entry.levels[1 - i]]
                cells[me][n] = CrossCell(
                    round=n,
                    opponent=other,
                    outcome=outcome,
                    levels=levels,
                    corrected=entry is not None and entry.corrected_by is not None,
                    forfeit=entry is not None and entry.forfeit,
                )
        for team in byes_of(t, state):
            kind = "R" if (n, team) in t.requested_byes else "B"
            cells[team][n] = CrossCell(round=n, opponent=None, outcome=kind, levels=[0, 0])
    numbers = [s.number for s in t.rounds]
    return Crosstable(
        tournament_id=str(t.id),
        name=t.name,
        rounds=len(numbers),
        lines=[
            CrossLine(
                rank=s.rank,
                team=s.team,
                name=t.teams[s.team].name,
                match_points=s.match_points,
                rounds=[cells[s.team].get(n) for n in numbers],
                withdrawn=s.team in t.withdrawn,
                tiebreak_values=[int(getattr(s, name)) for name in t.tiebreaks],
            )
            for s in shown_standings(t)
        ],
        tiebreaks=[camel(name) for name in t.tiebreaks],
        duplicate=duplicate,
    )


def score_sheet_deals(t: Tournament) -> int:
    """Rows of a score sheet: the match length in deals, else :data:`SCORE_SHEET_DEALS`."""
    end = t.rules.match_end
    if end.kind is MatchEndKind.ROUNDS and end.rounds:
        return end.rounds
    return SCORE_SHEET_DEALS
