"""Travellers and a round's board index, as JSON and as printable pages (docs/tournaments.md,
"Travellers"; :mod:`services.tournaments.travellers`): hidden until the round completes
(R36, 409 ``round-in-play`` before — to everyone, the round's own seats too).

* ``GET /v1/tournaments/{id}/rounds/{n}/boards`` and ``…/boards/{b}`` (JSON);
* ``GET /tournaments/{id}/rounds/{n}/boards`` and ``…/boards/{b}`` (HTML, A4 print CSS).
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, MediaType
from litestar.params import FromPath, PathParameter

from api.calls import Reading
from api.routes import route
from api.tournaments.dto import RoundParam
from api.tournaments.page_words import language
from api.tournaments.pages import AcceptLanguage, Lang, render
from services.game import GameService
from services.tournaments.loading import get_tournament
from services.tournaments.travellers import BoardIndex, Traveller, board_index, traveller

BoardParam = Annotated[
    int, PathParameter(ge=1, le=10_000, description="The board: the deal (match round), from 1")
]


def traveller_of(game: GameService, tournament_id: UUID, number: int, board: int) -> Traveller:
    """Board ``board``'s traveller (blocking; 404, 409 before the round completes)."""
    return traveller(game, get_tournament(game, tournament_id), number, board)


def index_of(game: GameService, tournament_id: UUID, number: int) -> BoardIndex:
    """Round ``number``'s boards (blocking; 404, 409 before the round completes)."""
    return board_index(game, get_tournament(game, tournament_id), number)


def traveller_page(
    game: GameService, tournament_id: UUID, number: int, board: int, lang: str
) -> str:
    t = get_tournament(game, tournament_id)
    v = traveller(game, t, number, board)
    return render(t, "traveller.html.j2", lang, game.clock(), v=v, number=number)


def index_page(game: GameService, tournament_id: UUID, number: int, lang: str) -> str:
    t = get_tournament(game, tournament_id)
    x = board_index(game, t, number)
    return render(t, "boards.html.j2", lang, game.clock(), x=x, number=number)


class TravellerController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{tournament_id:uuid}/rounds/{number:int}/boards", 404, 409)
    async def list_boards(
        self, read: Reading, tournament_id: FromPath[UUID], number: RoundParam
    ) -> BoardIndex:
        """A completed round's boards: each board's tables and attackers' average

        The index of the round's travellers (R36: 409 round-in-play until every table of the
        round is done, to every reader).
        """
        return await read.call(index_of, read.service, tournament_id, number)

    @route("/{tournament_id:uuid}/rounds/{number:int}/boards/{board:int}", 404, 409)
    async def get_traveller(
        self, read: Reading, tournament_id: FromPath[UUID], number: RoundParam, board: BoardParam
    ) -> Traveller:
        """A board's traveller: every table that played it, with matchpoints

        Per table: the attackers and defenders with their seats and players, the dealer, level
        and trump, the attackers' points (R29), the outcome and levels gained (R30), and each
        side's matchpoints and percentage in the board's field. 409 round-in-play until the
        round completes (R36), to every reader; 404 for a board no table played.
        """
        return await read.call(traveller_of, read.service, tournament_id, number, board)


class TravellerPageController(Controller):
    path = "/tournaments"
    tags = ["tournament pages"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{tournament_id:uuid}/rounds/{number:int}/boards", 404, 409, media_type=MediaType.HTML)
    async def boards_page(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        number: RoundParam,
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> str:
        """A completed round's board index (HTML, printable): a link to each traveller

        409 round-in-play until the round completes (R36).
        """
        chosen = language(lang, accept_language)
        return await read.call(index_page, read.service, tournament_id, number, chosen)

    @route(
        "/{tournament_id:uuid}/rounds/{number:int}/boards/{board:int}",
        404,
        409,
        media_type=MediaType.HTML,
    )
    async def traveller_page(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        number: RoundParam,
        board: BoardParam,
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> str:
        """A board's traveller (HTML, A4 print CSS): every table, its points and matchpoints

        409 round-in-play until the round completes (R36), to every reader.
        """
        chosen = language(lang, accept_language)
        return await read.call(traveller_page, read.service, tournament_id, number, board, chosen)
