"""The player's career over REST (docs/decisions.md D-career; docs/players.md "The
career"): read from the career's read model (and the ratings'), never from the log."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from litestar import Controller
from litestar.params import PathParameter, QueryParameter

from api.calls import BEARER, OPTIONAL_BEARER, Read, Reading
from api.routes import route
from services.access import signed_player
from services.career.reads import (
    PastMatches,
    PublicProfile,
    Statistics,
    history,
    profile,
    statistics,
)

PlayerParam = Annotated[UUID, PathParameter(description="A player's account id")]
FamilyParam = Annotated[
    Literal["standard", "tuolaji", "duijia", "custom"] | None,
    QueryParameter(description="One family only (custom: rule sets near no preset, unrated)"),
]
HistoryLimit = Annotated[int, QueryParameter(ge=1, le=100, description="Matches per page")]
AfterCursor = Annotated[
    str | None,
    QueryParameter(max_length=200, description="`next` of the previous page (a keyset cursor)"),
]


def _history(read: Read, player: UUID, limit: int, after: str | None) -> PastMatches:
    cred = read.credential
    own = cred is not None and signed_player(read.service, cred).account.id == player
    runtime = read.runtime
    return history(runtime.career, runtime.ratings, player, own=own, limit=limit, after=after)


def _statistics(read: Read, family: str | None) -> Statistics:
    account = signed_player(read.service, read.credential).account
    return statistics(read.runtime.career, account, family)


class CareerController(Controller):
    path = "/v1/players"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{player_id:uuid}/profile", 404)
    async def get_player_profile(self, read: Reading, player_id: PlayerParam) -> PublicProfile:
        """A player's public profile

        What anyone may see of a player: the display name, the all-time rating per family
        (shown rating, deviation, provisional, the rank on the family's board once
        established), finished matches, wins and the current streak. 404 for an id that
        is no player (a guest has none) or an erased player.
        """
        runtime = read.runtime
        return await read.call(profile, runtime.career, runtime.ratings, player_id)

    @route("/me/statistics", 401, 403, security=BEARER)
    async def get_my_statistics(self, read: Reading, family: FamilyParam = None) -> Statistics:
        """The player's own statistics, per family

        Private to the player (docs/decisions.md D-career): per family, the outcomes, rounds
        as attackers and as defenders, the attackers' average total in each role (R29),
        levels gained a round (R30), failed throws (R22), bottoms won and their points
        (R28), and the five partners with the most matches together, with the share won.
        """
        return await read.call(_statistics, read, family)

    @route("/{player_id:uuid}/matches", 400, 401, 403, 404, security=OPTIONAL_BEARER)
    async def get_player_history(
        self,
        read: Reading,
        player_id: PlayerParam,
        limit: HistoryLimit = 20,
        after: AfterCursor = None,
    ) -> PastMatches:
        """A player's finished matches, newest first, paged

        Each with its family, the player's seat, partner and opponents, the outcome and,
        when rated, the rating before and after. Anyone sees the public tables; the player
        (their own player token) sees their private tables too. A tournament table is
        listed once its tournament round is complete (R36). `after` = the previous page's
        `next`. 404 for no player or an erased one.
        """
        return await read.call(_history, read, player_id, limit, after)
