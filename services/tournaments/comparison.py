"""The per-deal comparison of a tournament round's tables (R36, docs/tournaments.md,
"Comparing a deal across tables"): each table's scored deals read off its match, grouped
into fields and matchpointed by :mod:`domain.tournament.comparison`.

Only for a completed round: until then its tables are closed to spectators (R36), and a
deal's points at one table would tell another table about the same cards."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from domain.rules.errors import IllegalMoveError
from domain.tournament.comparison import DealField, DealPlay, compare, team_matchpoints
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import RoundState
from domain.tournament.tournament import Tournament
from services.errors import NotFoundError
from services.game import GameService
from services.view_types import BoardView, board_view


class _View(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class FieldScoreView(_View, frozen=True, kw_only=True):
    """A table's play of the deal, against its field."""

    table: Annotated[int, Meta(description="From 1.")]
    attackers: Annotated[
        int, Meta(description="The attacking team's number (the dealer's opponents, R6).")
    ]
    defenders: Annotated[int, Meta(description="The defending team's number.")]
    points: Annotated[int, Meta(description="The attackers' points (R29).")]
    vs_average: Annotated[
        float, Meta(description="Points above the field's average (negative: below).")
    ]
    vs_median: Annotated[
        float, Meta(description="Points above the field's median (negative: below).")
    ]
    matchpoints: Annotated[
        int,
        Meta(
            description="The attackers' matchpoints: 2 per table of the field they beat, 1 per tie."
        ),
    ]
    top: Annotated[
        int, Meta(description="The most a side could score in this field: 2 × (tables − 1).")
    ]


class DealFieldView(_View, frozen=True, kw_only=True):
    """The tables whose attackers held the same cards in one dealing."""

    deal: Annotated[int, Meta(description="The match round (1, 2, …).")]
    deal_no: Annotated[int, Meta(description="The dealing: 1, then 2, … after a redeal (R19).")]
    attacking_seats: Annotated[
        int,
        Meta(
            description=(
                "The attackers' seats (0: 0/2, 1: 1/3): every deal of a "
                "tournament table is drawn from seat 0, so the seats tell "
                "which hands they held."
            )
        ),
    ]
    average: Annotated[float, Meta(description="The field's average attackers' points.")]
    median: Annotated[float, Meta(description="The field's median attackers' points.")]
    scores: Annotated[list[FieldScoreView], Meta(description="Each table of the field.")]
    board: Annotated[
        BoardView | None,
        Meta(
            description=(
                "The board every table of the field played (R36, a "
                "duplicate event of boards): its dealer, level rank and "
                "trump; null when the tables share only the seeds."
            )
        ),
    ] = None


class TeamMatchpoints(_View, frozen=True, kw_only=True):
    """A team's matchpoints over the round's deals."""

    team: Annotated[int, Meta(description="The team's number.")]
    name: Annotated[str, Meta(description="The team's name.", examples=["Alice"])]
    matchpoints: Annotated[int, Meta(description="Earned, attacking and defending.")]
    top: Annotated[int, Meta(description="The most it could have earned.")]
    percent: Annotated[
        float | None,
        Meta(
            description="matchpoints / top, in percent; null when every field was a single table."
        ),
    ]


class ComparisonView(_View, frozen=True, kw_only=True):
    """A completed round's deals compared across its tables (duplicate scoring, R36)."""

    number: Annotated[int, Meta(description="The round's number.")]
    fields: Annotated[list[DealFieldView], Meta(description="In deal order.")]
    teams: Annotated[list[TeamMatchpoints], Meta(description="Best first.")]


def deal_plays(game: GameService, state: RoundState) -> list[DealPlay]:
    """Each scored deal of each table of round ``state`` (R29), read off the matches."""
    plays = []
    for table in state.tables:
        try:
            match = game.get_match(table.match_id)
        except NotFoundError:
            continue
        teams = seat_teams(table.table, table.first, table.second)
        for recorded in match.results:
            parity = (recorded.dealer + 1) % 2  # R6: the dealer's opponents attack
            dealt = game.get_round(recorded.round_id)
            plays.append(
                DealPlay(
                    table=table.table,
                    deal=recorded.number,
                    deal_no=dealt.deal_no,
                    attacking_seats=parity,
                    attackers=teams[parity],
                    defenders=teams[1 - parity],
                    points=recorded.attackers_total,
                    board=dealt.board,
                )
            )
    return plays


def _field(f: DealField) -> DealFieldView:
    return DealFieldView(
        deal=f.deal,
        deal_no=f.deal_no,
        attacking_seats=f.attacking_seats,
        board=board_view(f.board),
        average=f.average,
        median=f.median,
        scores=[
            FieldScoreView(
                table=s.table + 1,
                attackers=s.attackers,
                defenders=s.defenders,
                points=s.points,
                vs_average=s.vs_average,
                vs_median=s.vs_median,
                matchpoints=s.matchpoints,
                top=s.top,
            )
            for s in f.scores
        ],
    )


def comparison_view(game: GameService, t: Tournament, number: int) -> ComparisonView:
    """Round ``number``'s comparison; 409 ``round-in-play`` before it completes (R36)."""
    state = t.round_state(number)
    if not state.revealed:
        raise IllegalMoveError(
            f"round {number} is in play: its deals are compared once every table is done",
            rule="R36",
            code="round-in-play",
        )
    fields = compare(deal_plays(game, state))
    totals = team_matchpoints(fields)
    teams = [
        TeamMatchpoints(
            team=team,
            name=t.teams[team].name,
            matchpoints=got,
            top=top,
            percent=None if top == 0 else round(100 * got / top, 2),
        )
        for team, (got, top) in totals.items()
    ]
    teams.sort(key=lambda m: (-(m.percent or 0.0), m.team))
    return ComparisonView(number=number, fields=[_field(f) for f in fields], teams=teams)
