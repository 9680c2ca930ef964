"""Ratings and leaderboards over REST (docs/decisions.md D-ratings): read from the
ratings' read model, public, each answer tagged with the view's position in the log
(``ETag``; ``If-None-Match`` answers 304 while no event moved the view)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from litestar import Controller, Response
from litestar.params import PathParameter, QueryParameter

from api.calls import OPTIONAL_BEARER, Read, Reading
from api.dto import Limit
from api.etag import IfNoneMatch, etag, not_modified, not_modified_response, tagged
from api.routes import route
from domain.rules.errors import InvalidInputError
from services.access import Credential, signed_player
from services.errors import UnauthorizedError
from services.game import GameService
from services.ratings.boards import (
    Leaderboard,
    PlayerRatings,
    SeasonList,
    leaderboard,
    player_ratings,
    seasons,
)

Family = Annotated[
    Literal["standard", "tuolaji", "duijia"],
    PathParameter(description="The rule-set family rated: standard, tuolaji or duijia"),
]
PlayerParam = Annotated[UUID, PathParameter(description="A player's account id")]
SeasonParam = Annotated[
    str | None,
    QueryParameter(description="A season's id (`2026-W49`, `2026-12`); none: all-time"),
]
ProvisionalParam = Annotated[
    bool, QueryParameter(description="The board of provisional players (too few matches yet)")
]
AfterCursor = Annotated[
    str | None,
    QueryParameter(max_length=200, description="`next` of the previous page (a keyset cursor)"),
]
AroundParam = Annotated[
    str | None,
    QueryParameter(
        max_length=40,
        description="`me` (with a player token) or a player's id: the entries around them",
    ),
]
AtParam = Annotated[
    datetime | None, QueryParameter(description="An RFC 3339 time: the ratings as they were then")
]


def _me(service: GameService, cred: Credential | None) -> UUID | None:
    return None if cred is None else signed_player(service, cred).account.id


def _around(text: str | None, me: UUID | None) -> UUID | None:
    if text is None:
        return None
    if text == "me":
        if me is None:
            raise UnauthorizedError(
                "around=me needs the player's token: Authorization: Bearer <player token>"
            )
        return me
    try:
        return UUID(text)
    except ValueError as e:
        raise InvalidInputError(f"around is me or a player's id, got {text[:40]!r}") from e


def board_of(
    read: Read,
    family: str,
    season: str | None,
    provisional: bool,
    limit: int,
    after: str | None,
    around: str | None,
) -> tuple[Leaderboard, str]:
    """The page and its ETag (the view's position as it was read)."""
    ratings = read.runtime.ratings
    me = _me(read.service, read.credential)
    answer = leaderboard(
        ratings,
        family,
        season=season,
        provisional=provisional,
        limit=limit,
        after=after,
        around=_around(around, me),
        me=me,
    )
    return answer, etag(ratings.view.position(), "r")


class RatingsController(Controller):
    path = "/v1"
    tags = ["ratings"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/leaderboards/{family:str}", 400, 401, 403, 404, tagged=True, security=OPTIONAL_BEARER)
    async def get_leaderboard(
        self,
        read: Reading,
        family: Family,
        season: SeasonParam = None,
        provisional: ProvisionalParam = False,
        limit: Limit = 50,
        after: AfterCursor = None,
        around: AroundParam = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response[Leaderboard]:
        """A family's leaderboard: all-time or a season, top first, paged

        Players ranked by the conservative rating (rating less two deviations); `after` = the
        previous page's `next`; `around=me` (player token) or `around=<playerId>`: the entries
        around that player; `provisional=true`: the players with too few rated matches yet. With
        a player token, `me` is the caller's own entry and rank. ETag: the ratings' position.
        """
        answer, tag = await read.call(
            board_of, read, family, season, provisional, limit, after, around
        )
        if not_modified(if_none_match, tag):
            return not_modified_response(tag)
        return tagged(answer, tag)

    @route("/leaderboards/{family:str}/seasons", 404)
    async def list_seasons(self, read: Reading, family: Family) -> SeasonList:
        """A family's seasons, oldest first

        The seasons with rated matches (weekly or monthly, the `RATING_SEASONS` setting): each
        one's id, start, end, and whether it is the one in play.
        """
        ratings, now = read.runtime.ratings, read.service.clock()
        return await read.call(lambda: seasons(ratings, family, now))

    @route("/players/{player_id:uuid}/ratings", 400, 404)
    async def get_player_ratings(
        self, read: Reading, player_id: PlayerParam, at: AtParam = None
    ) -> PlayerRatings:
        """A player's ratings per family, now or at a time

        Each family's all-time rating (shown rating, deviation, conservative, rated matches,
        provisional); `at`: as they stood then — after the last rated match finished at or
        before it, as a replay of the log stopped there gives.
        """
        ratings = read.runtime.ratings
        return await read.call(lambda: player_ratings(ratings, player_id, at))
