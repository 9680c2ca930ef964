"""Pairing control, adjustments, seat tokens and the pairing sheet over REST
(docs/tournaments.md). Every write is the organiser's (its token), recorded as an event
with the reason given; reads are public and show no card (R33).

* ``POST …/forbidden`` / ``DELETE …/forbidden/{a}/{b}`` — teams never to pair (Swiss);
* ``GET …/seeding`` — the teams with their players' ratings and round 1's seeding;
* ``GET …/preview`` — the next round's pairing as scheduling would make it now;
* ``POST …/rounds/{n}/pairings`` — the organiser's pairing of the next round, before it
  is scheduled (``PairingsOverridden`` with the reason);
* ``POST …/adjustments`` — a score adjustment or penalty in match points;
* ``POST …/rounds/{n}/tables/{t}/tokens`` — new seat tokens for a table's people;
* ``GET …/rounds/{n}/sheet`` — the printable pairing sheet (text, or CSV).
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Response, delete
from litestar.params import FromPath, PathParameter

from api.calls import CHECKED, Reading, Writing, write_route
from api.routes import route
from api.tournaments.dto import (
    CsvOperation,
    Format,
    RoundParam,
    SheetFormat,
    TableParam,
    json_or_csv,
    scheduled_round,
    wants_csv,
)
from api.tournaments.dto_controls import AdjustmentRequest, ForbidRequest, OverrideRequest
from services.access import Credential, tournament_organiser
from services.game import GameService
from services.ratings.boards import RatingModels
from services.tournaments.answers import PairingPreview, ReissuedTokens, preview_answer
from services.tournaments.control_commands import (
    AdjustScore,
    Allow,
    Forbid,
    OverridePairings,
    ReissueTokens,
)
from services.tournaments.exports import adjustments_csv
from services.tournaments.loading import get_tournament
from services.tournaments.seeding import Seeding, preview_seeding, seeding_view
from services.tournaments.sheets import sheet_csv, sheet_text
from services.tournaments.views import TournamentView, adjustment_views

TeamParam = Annotated[int, PathParameter(ge=0, le=63, description="A team's number, from 0")]


class ControlController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route("/{tournament_id:uuid}/forbidden", 200, *CHECKED, body=ForbidRequest)
    async def forbid_pairing(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Forbid a pairing (organiser; Swiss): two teams never to meet

        Swiss pairing never pairs them, rematches or not, unless no pairing at all avoids it (then
        as a last resort). 409 swiss-only for a round robin.
        """
        data = await write.body()
        return await write.send(Forbid(tournament_id, data.teams[0], data.teams[1], data.reason))

    @write_route("/{tournament_id:uuid}/forbidden/{a:int}/{b:int}", 200, *CHECKED, handler=delete)
    async def allow_pairing(
        self, write: Writing, tournament_id: FromPath[UUID], a: TeamParam, b: TeamParam
    ) -> Response[TournamentView]:
        """Lift a forbidden pairing (organiser)

        Lift a forbidden pairing of two teams (organiser token); the next rounds may
        pair them again.
        """
        return await write.send(Allow(tournament_id, a, b))

    @route("/{tournament_id:uuid}/preview", 401, 403, 404, 409)
    async def preview_pairings(
        self, read: Reading, tournament_id: FromPath[UUID]
    ) -> PairingPreview:
        """Preview the next round's pairing (nothing is saved)

        As scheduling would pair it now (the organiser's published pairing, or override, if set),
        with warnings for forbidden pairings and rematches. The organiser's only (its token) until
        published (POST …/publish); then anyone's. During a round in play a Swiss preview uses the
        provisional standings. 409 registration-open, tournament-over.
        """
        ratings = read.runtime.ratings
        return await read.call(
            pairing_preview, read.service, ratings, read.credential, tournament_id
        )

    @route("/{tournament_id:uuid}/seeding", 404)
    async def get_seeding(self, read: Reading, tournament_id: FromPath[UUID]) -> Seeding:
        """The teams with their ratings, and round 1's seeding

        Each registered team's players with the account they named and its all-time rating in
        the family of the tournament's rule set (none: 1500; a bot: its kind's anchor), the
        team's rating (the mean of its players'), and its place by rating. With `seeding:
        rating` (Swiss) round 1 pairs the teams in that order — the top half against the
        bottom half — fixed by round 1's first scheduling or publication (`fixed`).
        """
        return await read.call(
            tournament_seeding, read.service, read.runtime.ratings, tournament_id
        )

    @write_route(
        "/{tournament_id:uuid}/rounds/{number:int}/pairings", 200, *CHECKED, body=OverrideRequest
    )
    async def override_pairings(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam
    ) -> Response[TournamentView]:
        """Set the next round's pairing by hand, before it starts (organiser)

        Recorded as PairingsOverridden with the reason and who; scheduling the round then uses it.
        Every active team once, a bye only for an odd count (409 pairing-invalid); only the next
        round (409 round-started).
        """
        data = await write.body()
        tables = tuple((p.first_team, p.second_team) for p in data.tables)
        return await write.send(
            OverridePairings(tournament_id, number, tables, data.bye, data.reason, data.by)
        )

    @write_route("/{tournament_id:uuid}/adjustments", 200, *CHECKED, body=AdjustmentRequest)
    async def adjust_score(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Adjust a team's score (organiser): match points with the reason

        A penalty is negative. Recorded as ScoreAdjusted; the standings' matchPoints include it
        (column adjustment) and the exports list it.
        """
        data = await write.body()
        return await write.send(
            AdjustScore(tournament_id, data.team, data.match_points, data.reason, data.by)
        )

    @route("/{tournament_id:uuid}/adjustments", 404, operation_class=CsvOperation)
    async def list_adjustments(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        format: Format = None,
    ) -> Response[Any]:
        """The score adjustments and penalties with their reasons (JSON, or CSV)

        `?format=csv` or `Accept: text/csv` for CSV: team, name, match_points, reason, by,
        after_round.
        """
        return await json_or_csv(read, tournament_id, format, adjustment_views, adjustments_csv)

    @write_route(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/tokens", 200, *CHECKED
    )
    async def reissue_table_tokens(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam, table: TableParam
    ) -> Response[ReissuedTokens]:
        """Re-issue a table's seat tokens (organiser): the old ones stop working

        New tokens for the people's seats (bots have none), answered once; the match records
        SeatTokenReissued. Only the round in play (409 round-not-current).
        """
        return await write.send(ReissueTokens(tournament_id, number, table - 1))

    @route(
        "/{tournament_id:uuid}/rounds/{number:int}/sheet",
        404,
        media_type="text/plain; charset=utf-8",
        operation_class=CsvOperation,
    )
    async def get_pairing_sheet(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        number: RoundParam,
        format: SheetFormat = None,
    ) -> Response[str]:
        """A round's printable pairing sheet (text, or CSV)

        One line per table: table, first team and its seats v second team and its seats (R36), then
        the bye(s). `?format=csv` or `Accept: text/csv` for CSV.
        """
        t = await read.call(get_tournament, read.service, tournament_id)
        state = scheduled_round(t, number)
        if wants_csv(read.request, format):
            return Response(sheet_csv(t, state), media_type="text/csv")
        return Response(sheet_text(t, state), media_type="text/plain")


def tournament_seeding(service: GameService, ratings: RatingModels, tournament_id: UUID) -> Seeding:
    """The tournament's teams with their ratings and round 1's seeding (blocking; 404)."""
    return seeding_view(ratings, get_tournament(service, tournament_id))


def pairing_preview(
    service: GameService, ratings: RatingModels, cred: Credential | None, tournament_id: UUID
) -> PairingPreview:
    """The next round's pairing as scheduling would make it now: the organiser's only until
    published (blocking; 401/403/404/409); round 1 of a tournament seeded by rating by the
    ratings as they stand (docs/decisions.md D-career)."""
    t = get_tournament(service, tournament_id)
    if len(t.rounds) + 1 not in t.published:
        tournament_organiser(t, cred)
    return preview_answer(t, preview_seeding(ratings, t))
