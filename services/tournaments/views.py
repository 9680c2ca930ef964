"""What anyone may see of a tournament, and its exports (JSON and CSV).

Nothing secret leaves here: the organiser token's hash never, a tournament round's secret
only once the round is completed (R35), a round's table results and the standings they
move only once the round is completed (R36: another table may still be playing the same
deals; :func:`services.embargo.shown_rounds` decides, the organiser's own answers
excepted), and no card at all (the tables' matches have their own redacted views, R33).
CSV cells that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@`` first) are
prefixed with ``'``.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from datetime import datetime, timedelta
from typing import Annotated, Literal, cast

import msgspec
from msgspec import Meta

from domain.tournament.duplicate import seat_teams
from domain.tournament.events import ResultEntry, RoundState, TableEntry
from domain.tournament.standings import Standing
from domain.tournament.tournament import Tournament
from services import field_docs
from services.embargo import Embargo, shown_rounds
from services.tournaments.ranking import DuplicateRanking
from services.view_types import RulesView, rules_view


class _View(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class PlayerView(_View, frozen=True, kw_only=True):
    """A player of a team."""

    name: Annotated[str, Meta(description="The player's display name", examples=["Alice"])]
    kind: Annotated[
        str, Meta(description="`human`, or the bot policy (`random`, `heuristic`, `strong`).")
    ]


class TeamView(_View, frozen=True, kw_only=True):
    """A team of a tournament."""

    team: Annotated[
        int,
        Meta(description="The team's number: its place in the registration (the seeding), from 0."),
    ]
    name: Annotated[str, Meta(description="The team's name", examples=["Alice"])]
    players: Annotated[list[PlayerView], Meta(description="The team's two players")]
    status: Annotated[
        str,
        Meta(
            description=(
                "`registered`, `checked_in` (before the start), "
                "`playing`, `absent` (not checked in at the start) or "
                "`withdrawn`."
            )
        ),
    ] = "playing"
    from_round: Annotated[
        int, Meta(description="The first round it may be paired in (a late entry's is later).")
    ] = 1
    withdrawn_from_round: Annotated[
        int | None,
        Meta(
            description="The round from which the team is no longer paired; null unless withdrawn."
        ),
    ] = None


class TableResultView(_View, frozen=True, kw_only=True):
    """A tournament table's result, from its first team's side."""

    winner: Annotated[int | None, Meta(description="The winning team's number; null for a draw.")]
    levels: Annotated[
        list[int], Meta(description="Levels gained by the first and the second team (R30).")
    ]
    points: Annotated[
        list[int],
        Meta(description="Attackers' points taken by the first and the second team (R29)."),
    ]
    deals: Annotated[int, Meta(description="Deals played at the table")]
    corrected: Annotated[bool, Meta(description="The organiser corrected the result")]
    corrected_by: Annotated[
        str | None, Meta(description="Who corrected it; null when not corrected")
    ]
    reason: Annotated[
        str | None, Meta(description="Why it was corrected or ended early; null otherwise")
    ]
    forfeit: Annotated[
        bool,
        Meta(
            description=(
                "A team withdrew: the winner scores a bye (2 match points, no levels, no points)."
            )
        ),
    ] = False
    entered: Annotated[
        bool, Meta(description="The organiser entered it (a paper result): not played here.")
    ] = False


class TableView(_View, frozen=True, kw_only=True):
    """A tournament table: its match, its teams, its result."""

    table: Annotated[int, Meta(description="1-based.")]
    match_id: Annotated[str, field_docs.MATCH_ID]
    first_team: Annotated[int, Meta(description="The first team's number")]
    second_team: Annotated[int, Meta(description="The second team's number")]
    first_team_seats: Annotated[
        list[int], Meta(description="Seats 0/2 or 1/3 (duplicate seating, R36).")
    ]
    result: Annotated[
        TableResultView | None,
        Meta(
            description=(
                "The table's result; null while it is played, and until its round "
                "completes (`embargo`, R36)."
            )
        ),
    ]
    embargo: Annotated[
        str | None,
        Meta(
            description=(
                "Why the result is withheld: the round is in play, and another table may "
                "still be playing the same deals (R36); null once the round completes."
            )
        ),
    ] = None
    deadline: Annotated[
        str | None,
        Meta(
            description="When this table must be over (the round's deadline plus its extension).",
            examples=["2026-12-01T20:00:35+00:00"],
        ),
    ] = None
    extension_s: Annotated[
        int, Meta(description="Seconds this table was given past the round's deadline.")
    ] = 0
    players: Annotated[
        list[str], Meta(description="Who sits at seats 0..3 (substitutes in place).")
    ] = []


class SubstituteView(_View, frozen=True, kw_only=True):
    """A player replaced for one round."""

    team: Annotated[int, field_docs.TEAM]
    player: Annotated[int, Meta(description="The team's first (0) or second (1) player.")]
    name: Annotated[str, field_docs.NAME]
    kind: Annotated[str, field_docs.KIND]
    reason: Annotated[str, field_docs.REASON]


class RoundView(_View, frozen=True, kw_only=True):
    """A tournament round: its tables, its secret's commitment (R35, R36)."""

    number: Annotated[int, Meta(description="The tournament round's number, from 1")]
    status: Annotated[
        str, Meta(description="`in_play` (a table has no result yet) or `completed`.")
    ]
    commitment: Annotated[
        str,
        Meta(
            description=(
                "sha256 of the round's secret, published when the round is scheduled (R35)."
            ),
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    secret: Annotated[
        str | None,
        Meta(
            description=(
                "The round's secret, revealed once the round is "
                "completed; every deal's seed is HMAC-SHA256(secret, "
                '"shengji-duplicate:{deal}:{dealNo}") (R36).'
            ),
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    bye: Annotated[int | None, Meta(description="The team that sits out this round; null for none")]
    tables: Annotated[list[TableView], Meta(description="The round's tables")]
    awarded_byes: Annotated[
        list[int],
        Meta(
            description="Round robin: teams whose scheduled opponent withdrew (each scores a bye)."
        ),
    ] = []
    override: Annotated[
        str | None, Meta(description="The organiser's reason when the pairing was set by hand.")
    ] = None
    deadline: Annotated[
        str | None,
        Meta(
            description="When the round must be over (its scheduling + `roundDeadlineS`).",
            examples=["2026-12-01T20:00:35+00:00"],
        ),
    ] = None
    flagged_tables: Annotated[
        list[int],
        Meta(description="Tables (1-based) past the deadline: finished by the rule, or flagged."),
    ] = []
    paused: Annotated[
        bool, Meta(description="The round's clock is paused (its deadline waits).")
    ] = False
    deadline_s: Annotated[
        int | None,
        Meta(
            description=(
                "The round's deadline in seconds from its scheduling (its "
                "own, or the tournament's)."
            )
        ),
    ] = None
    requested_byes: Annotated[
        list[int], Meta(description="Teams sitting out at their request.")
    ] = []
    substitutes: Annotated[
        list[SubstituteView], Meta(description="Players replaced for this round.")
    ] = []


class SettingsView(_View, frozen=True, kw_only=True):
    """The organiser's settings of the tournament (docs/tournaments.md)."""

    timers: Annotated[
        dict[str, int] | None,
        Meta(
            description=(
                "The tables' turn limits (ms: declareMs, buryMs, playMs), as a match's timers."
            )
        ),
    ]
    round_deadline_s: Annotated[
        int | None,
        Meta(
            description="Seconds a round may last before its deadline rule applies; null for none."
        ),
    ]
    deadline_rule: Annotated[str, Meta(description="`flag` or `finish` (docs/tournaments.md).")]
    tiebreaks: Annotated[
        list[str], Meta(description="The tie-breaks, in the order they apply after match points.")
    ]
    checkin_required: Annotated[
        bool, Meta(description="Teams must check in before the start, or they are out.")
    ]
    requested_bye_points: Annotated[
        int, Meta(description="Match points of a requested bye: 0, or 1 (half a win).")
    ] = 1
    seeding: Annotated[
        Literal["registration", "rating"],
        Meta(
            description=(
                "Round 1's seeding: the registration order, or the teams' ratings (GET …/seeding)."
            )
        ),
    ] = "registration"


class AdjustmentView(_View, frozen=True, kw_only=True):
    """A score adjustment or penalty made by the organiser."""

    team: Annotated[int, field_docs.TEAM]
    match_points: Annotated[int, Meta(description="Match points added (negative: a penalty).")]
    reason: Annotated[str, field_docs.REASON]
    by: Annotated[str, Meta(description="Who made it.")]
    after_round: Annotated[int, Meta(description="Rounds scheduled when it was made.")]


class ForbiddenView(_View, frozen=True, kw_only=True):
    """Two teams that must not be paired, and why."""

    teams: Annotated[list[int], field_docs.TEAMS]
    reason: Annotated[str, field_docs.REASON]


class CancelledView(_View, frozen=True, kw_only=True):
    """A round cancelled while in play (paired again later)."""

    number: Annotated[int, Meta(description="The round's number.")]
    reason: Annotated[str, field_docs.REASON]
    by: Annotated[str, Meta(description="Who cancelled it.")]


class TournamentView(_View, frozen=True, kw_only=True):
    """A tournament as anyone may see it."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    name: Annotated[str, field_docs.NAME]
    preset: Annotated[str | None, field_docs.PRESET]
    rules: Annotated[RulesView, field_docs.RULES]
    match_length: Annotated[str, field_docs.MATCH_LENGTH]
    format: Annotated[str, field_docs.FORMAT]
    deals: Annotated[
        Literal["seeds", "boards"],
        Meta(
            description=(
                "`seeds`: a round's tables share their deals' seeds "
                "(R36); `boards`: a duplicate event of boards — every "
                "deal's dealer, level and trump are the same at every "
                'table too (docs/tournaments.md, "Boards").'
            )
        ),
    ] = "seeds"
    total_rounds: Annotated[int, field_docs.TOTAL_ROUNDS]
    status: Annotated[
        str,
        Meta(description="`ready` (the next round may be scheduled), `in_play` or `finished`."),
    ]
    version: Annotated[int, Meta(description="The tournament's version (its events)")]
    teams: Annotated[list[TeamView], field_docs.TEAMS]
    rounds: Annotated[list[RoundView], Meta(description="The tournament rounds scheduled so far")]
    settings: Annotated[
        SettingsView | None,
        Meta(description="The organiser's settings; null before any were made."),
    ] = None
    forbidden: Annotated[
        list[ForbiddenView], Meta(description="Pairings the organiser forbade (Swiss).")
    ] = []
    adjustments: Annotated[
        list[AdjustmentView], Meta(description="Score adjustments and penalties, in order.")
    ] = []
    cancelled_rounds: Annotated[
        list[CancelledView],
        Meta(description="Rounds cancelled while in play (each paired again later)."),
    ] = []
    fixed_tables: Annotated[
        dict[str, int], Meta(description="Team number → its fixed table (from 1).")
    ] = {}
    published_round: Annotated[
        int | None,
        Meta(
            description="The round whose pairing is published (GET …/preview shows it to anyone)."
        ),
    ] = None
    pairing_warnings: Annotated[
        list[str],
        Meta(
            description=(
                "What the next round's hand-set or published pairing does "
                "that the computed one avoids: teams forbidden to meet, "
                "rematches."
            )
        ),
    ] = []


class StandingView(_View, frozen=True, kw_only=True):
    """A team's line in the standings."""

    rank: Annotated[int, Meta(description="Place in the standings, from 1")]
    team: Annotated[int, Meta(description="The team's number")]
    name: Annotated[str, Meta(description="The team's name", examples=["Alice"])]
    played: Annotated[int, Meta(description="Matches played")]
    wins: Annotated[int, Meta(description="Matches won")]
    draws: Annotated[int, Meta(description="Matches drawn")]
    losses: Annotated[int, Meta(description="Matches lost")]
    byes: Annotated[int, Meta(description="Rounds sat out")]
    match_points: Annotated[
        int, Meta(description="Match points: 2 for a win or a bye, 1 for a draw")
    ]
    levels_gained: Annotated[int, Meta(description="Levels gained in all its matches (R30)")]
    points_for: Annotated[int, Meta(description="Attackers' points it took (R29)")]
    points_against: Annotated[int, Meta(description="Attackers' points taken against it (R29)")]
    point_differential: Annotated[int, Meta(description="Points for minus points against")]
    head_to_head: Annotated[int, Meta(description="Match points against the teams it ties with")]
    adjustment: Annotated[
        int,
        Meta(description="The organiser's adjustments, in match points (included in matchPoints)."),
    ] = 0
    buchholz: Annotated[
        int, Meta(description="Sum of the match points of the opponents met at a table.")
    ] = 0
    withdrawn: Annotated[
        bool, Meta(description="The team has withdrawn (it still ranks by what it scored).")
    ] = False


class StandingsView(_View, frozen=True, kw_only=True):
    """The tournament's standings, with the tie-breaks used."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    rounds_completed: Annotated[int, Meta(description="Tournament rounds completed")]
    tiebreaks: Annotated[list[str], Meta(description="The tie-breaks, in the order they apply")]
    standings: Annotated[
        list[StandingView],
        Meta(
            description=(
                "The teams, best first, by the results of the completed rounds (a round's "
                "results count once it completes, R36)."
            )
        ),
    ]
    duplicate: Annotated[
        DuplicateRanking | None,
        Meta(
            description=(
                "A boards event's ranking by matchpoints over the completed rounds, with its "
                "tie rule (duplicate scoring, R36); null for an event on seeds."
            )
        ),
    ] = None


class ResultsExport(_View, frozen=True, kw_only=True):
    """Everything needed to check and rank the tournament: rounds, tables, results,
    commitments and revealed secrets, and the standings."""

    tournament: Annotated[TournamentView, Meta(description="The tournament")]
    standings: Annotated[list[StandingView], Meta(description="The standings")]
    adjustments: Annotated[
        list[AdjustmentView],
        Meta(description="Score adjustments and penalties, in order (in the standings already)."),
    ] = []


TIEBREAK_DOC = {
    "buchholz": "buchholz (opponents' match points)",
    "head_to_head": "headToHead (match points among the teams still tied)",
    "levels_gained": "levelsGained (R30)",
    "point_differential": "pointDifferential (attackers' points for minus against, same "
    "deals, R29/R36)",
    "wins": "wins (tables won)",
}


def tiebreak_names(t: Tournament) -> list[str]:
    return [
        "matchPoints (win 2, draw 1, bye 2, adjustments)",
        *(TIEBREAK_DOC[name] for name in t.tiebreaks),
        "team (registration order)",
    ]


def status(t: Tournament) -> str:
    return t.status


def team_status(t: Tournament, team: int) -> str:
    if team in t.absent:
        return "absent"
    if team in t.withdrawn:
        return "withdrawn"
    if t.phase == "registration":
        return "checked_in" if team in t.checked_in else "registered"
    return "playing"


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
        forfeit=entry.forfeit,
        entered=entry.entered,
    )


def table_view(
    t: Tournament, number: int, table: TableEntry, shown: Container[int] | None = None
) -> TableView:
    """Table ``table`` of round ``number``; its result only when the round is in
    ``shown`` (by default :func:`~services.embargo.shown_rounds`: the completed rounds)."""
    shown = shown_rounds(t) if shown is None else shown
    state = t.rounds[number - 1]
    due = _deadline(t, state)
    extension = state.extensions.get(table.table, 0)
    teams = seat_teams(table.table, table.first, table.second)
    players = [t.lineup(number, teams[seat]).players[seat // 2] for seat in range(4)]
    return TableView(
        deadline=None if due is None else (due + timedelta(seconds=extension)).isoformat(),
        extension_s=extension,
        players=players,
        table=table.table + 1,
        match_id=str(table.match_id),
        first_team=table.first,
        second_team=table.second,
        first_team_seats=[table.first_parity, table.first_parity + 2],
        result=_result(t.results.get((number, table.table))) if number in shown else None,
        embargo=None if number in shown else Embargo(t.id, number).reason,
    )


def round_view(t: Tournament, state: RoundState, shown: Container[int] | None = None) -> RoundView:
    """Round ``state`` with its tables (:func:`table_view`: results of ``shown`` rounds)."""
    shown = shown_rounds(t) if shown is None else shown
    return RoundView(
        number=state.number,
        status="completed" if state.revealed else "in_play",
        commitment=state.commitment,
        secret=state.secret if state.revealed else None,  # R35: only after the round
        bye=state.bye,
        tables=[table_view(t, state.number, table, shown) for table in state.tables],
        awarded_byes=[team for n, team, _ in t.awarded_byes if n == state.number],
        override=state.override,
        deadline=None if (due := _deadline(t, state)) is None else due.isoformat(),
        flagged_tables=[table + 1 for table in state.flagged],
        paused=state.paused_at is not None,
        deadline_s=t.round_deadline_s_of(state),
        requested_byes=sorted(team for n, team in t.requested_byes if n == state.number),
        substitutes=[
            SubstituteView(team=team, player=j, name=sub[0], kind=sub[1], reason=sub[2])
            for (n, team, j), sub in sorted(t.substitutes.items())
            if n == state.number
        ],
    )


def _deadline(t: Tournament, state: RoundState) -> datetime | None:
    """Round ``state``'s deadline: scheduling + its seconds + the time it stood paused
    (so far, for a pause still on: the deadline as it would be if resumed now is not
    known, so the one before the pause is shown with ``paused``)."""
    seconds = t.round_deadline_s_of(state)
    if seconds is None or state.scheduled_at is None:
        return None
    return state.scheduled_at + timedelta(seconds=seconds + state.paused_s)


def adjustment_views(t: Tournament) -> list[AdjustmentView]:
    return [
        AdjustmentView(
            team=a.team,
            match_points=a.match_points,
            reason=a.reason,
            by=a.by,
            after_round=a.after_round,
        )
        for a in t.adjustments
    ]


def tournament_view(t: Tournament, *, organiser: bool = False) -> TournamentView:
    """The tournament as anyone sees it — or, ``organiser``, as its organiser's own
    commands answer it: every result recorded so far (R36, :func:`shown_rounds`)."""
    shown = shown_rounds(t, organiser=organiser)
    return TournamentView(
        tournament_id=str(t.id),
        name=t.name,
        preset=t.preset,
        rules=rules_view(t.rules),
        match_length=t.match_length,
        format=t.format,
        deals=cast("Literal['seeds', 'boards']", t.deals),
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
                status=team_status(t, i),
                from_round=t.joined.get(i, 1),
                withdrawn_from_round=t.withdrawn.get(i),
            )
            for i, team in enumerate(t.teams)
        ],
        rounds=[round_view(t, r, shown) for r in t.rounds],
        settings=SettingsView(
            timers=None if t.timers is None else {camel(k): v for k, v in t.timers.items()},
            round_deadline_s=t.round_deadline_s,
            deadline_rule=t.deadline_rule,
            tiebreaks=list(t.tiebreaks),
            checkin_required=t.checkin_required,
            requested_bye_points=t.requested_bye_points,
            seeding="rating" if t.seeding == "rating" else "registration",
        ),
        forbidden=[
            ForbiddenView(teams=sorted(pair), reason=reason) for pair, reason in t.forbidden.items()
        ],
        adjustments=adjustment_views(t),
        cancelled_rounds=[CancelledView(number=n, reason=r, by=b) for n, r, b in t.cancelled],
        fixed_tables={str(team): table for team, table in sorted(t.fixed_tables.items())},
        published_round=next(iter(sorted(t.published)), None),
        pairing_warnings=_next_warnings(t),
    )


def _next_warnings(t: Tournament) -> list[str]:
    following = len(t.rounds) + 1
    chosen = t.overrides.get(following) or t.published.get(following)
    return [] if chosen is None else t.pairing_warnings(chosen.tables)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def standing_views(t: Tournament, lines: Iterable[Standing]) -> list[StandingView]:
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
            adjustment=s.adjustment,
            buchholz=s.buchholz,
            withdrawn=s.team in t.withdrawn,
        )
        for s in lines
    ]


def shown_standings(t: Tournament, *, organiser: bool = False) -> list[Standing]:
    """The standings a reader is shown (R36): the results and byes of the completed
    rounds (:func:`shown_rounds`), the adjustments; every round's to the organiser."""
    return t.standings(shown_rounds(t, organiser=organiser))


def standings_view(
    t: Tournament, *, organiser: bool = False, duplicate: DuplicateRanking | None = None
) -> StandingsView:
    """The standings as shown (:func:`shown_standings`); ``duplicate``: a boards event's
    ranking by matchpoints (:func:`services.tournaments.ranking.duplicate_ranking`)."""
    return StandingsView(
        tournament_id=str(t.id),
        rounds_completed=sum(r.revealed for r in t.rounds),
        tiebreaks=tiebreak_names(t),
        standings=standing_views(t, shown_standings(t, organiser=organiser)),
        duplicate=duplicate,
    )


def results_export(t: Tournament) -> ResultsExport:
    """The export anyone may read: the completed rounds' results (R36)."""
    return ResultsExport(
        tournament=tournament_view(t),
        standings=standing_views(t, shown_standings(t)),
        adjustments=adjustment_views(t),
    )
