"""The director's room as HTML (docs/tournaments.md, "The director's room"): pages rendered
on the server with Jinja2 templates (``api/tournaments/templates``), no build step.

* ``GET /tournaments/{id}`` — the live display page for a projector or a phone: the
  standings with their tiebreak columns, the round's tables with their progress (deal,
  trick, attackers' points), the next pairing once published and the clock to the
  round's deadline. It updates itself from ``GET /v1/tournaments/{id}/display/stream``
  (a few lines of JavaScript: each ``display`` frame carries the live part rendered);
* ``GET /tournaments/{id}/rounds/{n}/pairings`` — the printable pairing sheet;
* ``GET /tournaments/{id}/rounds/{n}/scoresheets`` — one printable score sheet per table;
* ``GET /tournaments/{id}/crosstable`` — the crosstable.

Print CSS makes each sheet an A4 page (the browser's print gives the PDF). Words in
English or Chinese: ``?lang=zh-CN`` or ``Accept-Language`` (:mod:`api.tournaments.page_words`).
Nothing secret is shown (R33): no card, the next pairing only once published, a round's
results once it completes (R36). What is not a plain result is marked, in the page's
language: a corrected result (with the corrected figures), a forfeit, a withdrawn team,
and each kind of bye — the pairing's, awarded, requested (docs/decisions.md D-hidden).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal
from uuid import UUID

import msgspec
from jinja2 import Environment, FileSystemLoader, select_autoescape
from litestar import Controller, MediaType
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, QueryParameter
from litestar.response import Stream

from api.calls import Reading
from api.dto import problems
from api.polled_stream import HubWakes, Polled, Timing, event_stream, polled, sse_frame
from api.routes import route
from api.runtime import Runtime
from api.sse import LiveStreams, MatchHub
from api.streams import DISPLAY, stream_route
from api.tournaments.dto import RoundParam, scheduled_round
from api.tournaments.page_words import BYE_WORDS, OUTCOME_WORDS, SUIT_SIGNS, WORDS, language
from domain.tournament.duplicate import seat_teams
from domain.tournament.tournament import Tournament
from services.game import GameService
from services.tournaments.comparison import ComparisonView, comparison_view
from services.tournaments.display import (
    NEAR_DEADLINE_S,
    ByeLine,
    Crosstable,
    DisplayFrame,
    DisplayView,
    bye_kinds,
    crosstable,
    display_view,
    players_of,
    result_text,
    round_deadline,
    score_sheet_deals,
    shown_result,
)
from services.tournaments.loading import get_tournament
from services.tournaments.ranking import duplicate_ranking, rank_text

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).with_name("templates")),
    autoescape=select_autoescape(["html", "j2"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
ROTATE_S = 12
"""The display shows each page of its rotation this long when everything does not fit."""


POLL_S = 15.0
"""The display stream reads again this often without a wake-up (a safety net: the hub wakes it)."""
MIN_GAP_S = 0.5
"""A display stream reads again at most twice a second, however many tables move."""
LIFETIME_S = 600.0
HEARTBEAT_S = 15.0
TIEBREAK_COLUMNS = {
    "buchholz": "buchholz",
    "head_to_head": "head_to_head",
    "levels_gained": "levels_gained",
    "point_differential": "point_differential",
    "wins": "wins",
}
Lang = Annotated[
    Literal["en", "zh-CN"] | None,
    QueryParameter(description="The page's language (else Accept-Language; English)"),
]
AcceptLanguage = Annotated[
    str | None, HeaderParameter(name="Accept-Language", description="en, zh-CN, …")
]


def _common(t: Tournament, lang: str, printed: datetime | None = None) -> dict[str, Any]:
    return {
        "lang": lang,
        "w": WORDS[lang],
        "bye_words": BYE_WORDS,
        "name": t.name,
        "tournament_id": str(t.id),
        "round": None if t.current is None else t.current.number,
        "total_rounds": t.total_rounds,
        "printed": "" if printed is None else _minute(printed),
        "tiebreak_columns": [TIEBREAK_COLUMNS[n] for n in t.tiebreaks],
        "rank_text": rank_text,
        "outcomes": OUTCOME_WORDS[lang],
        "suits": SUIT_SIGNS,
    }


def render(t: Tournament, template: str, lang: str, printed: datetime, **values: Any) -> str:
    """A printable page of ``t``: its words, the time printed (the sheets' headers)."""
    return TEMPLATES.get_template(template).render(**_common(t, lang, printed), **values)


def live_html(t: Tournament, d: DisplayView, lang: str) -> str:
    """The live part of the display page (sent again in each ``display`` frame)."""
    return TEMPLATES.get_template("_live.html.j2").render(
        **_common(t, lang), d=d, near_s=NEAR_DEADLINE_S
    )


def display_html(game: GameService, t: Tournament, lang: str) -> str:
    d = display_view(game, t)
    return TEMPLATES.get_template("display.html.j2").render(
        **_common(t, lang),
        d=d,
        near_s=NEAR_DEADLINE_S,
        rotate_s=ROTATE_S,
        stream_url=f"/v1/tournaments/{t.id}/display/stream?lang={lang}",
    )


def _sheet_tables(t: Tournament, number: int) -> list[dict[str, Any]]:
    state = t.round_state(number)
    rows = []
    due = round_deadline(t, state)
    for table in state.tables:
        players = players_of(t, number, table)
        teams = seat_teams(table.table, table.first, table.second)
        first = table.first_parity
        entry = shown_result(t, number, table)  # R36: once the round completes
        extension = state.extensions.get(table.table, 0)
        rows.append(
            {
                "table": table.table + 1,
                "first_name": t.teams[table.first].name,
                "second_name": t.teams[table.second].name,
                "first_seats": f"{first}/{first + 2}",
                "second_seats": f"{1 - first}/{3 - first}",
                "seat_players": [
                    (seat, players[seat], t.teams[teams[seat]].name) for seat in range(4)
                ],
                "first_players": f"{players[first]} · {players[first + 2]}",
                "second_players": f"{players[1 - first]} · {players[3 - first]}",
                "levels_first": "" if entry is None else entry.levels[0],
                "levels_second": "" if entry is None else entry.levels[1],
                "winner": "" if entry is None else result_text(t, entry).split(" ", 1)[1],
                "corrected": entry is not None and entry.corrected_by is not None,
                "forfeit": entry is not None and entry.forfeit,
                "first_withdrawn": table.first in t.withdrawn,
                "second_withdrawn": table.second in t.withdrawn,
                "deadline": None if due is None else _minute(due, extension),
            }
        )
    return rows


def _minute(at: datetime, extension_s: int = 0) -> str:
    return (at + timedelta(seconds=extension_s)).strftime("%Y-%m-%d %H:%M UTC")


def sheet_html(t: Tournament, number: int, template: str, lang: str, printed: datetime) -> str:
    state = scheduled_round(t, number)
    due = round_deadline(t, state)
    return render(
        t,
        template,
        lang,
        printed,
        number=number,
        started_at="" if state.scheduled_at is None else _minute(state.scheduled_at),
        deadline=None if due is None else _minute(due),
        tables=_sheet_tables(t, number),
        byes=[ByeLine(team=b, name=t.teams[b].name, kind=k) for b, k in bye_kinds(t, state)],
        deals=range(1, score_sheet_deals(t) + 1),
    )


def crosstable_html(t: Tournament, x: Crosstable, lang: str, printed: datetime) -> str:
    ranks = {line.team: line.rank for line in x.lines}
    duplicate = {} if x.duplicate is None else {line.team: line for line in x.duplicate.lines}
    return render(t, "crosstable.html.j2", lang, printed, x=x, ranks=ranks, duplicate=duplicate)


async def display_frames(
    runtime: Runtime, hub: MatchHub, tournament_id: UUID, lang: str
) -> AsyncIterator[bytes]:
    """A ``display`` frame whenever the tournament or a table of its round changes: its
    ``data`` is ``{"version", "html"}`` — the live part rendered (:func:`live_html`). The
    hub wakes it (a save of the tournament or of a table's match); it reads nothing between."""
    wakes = HubWakes(hub)
    wakes.follow((tournament_id,))  # before the first read: no change falls between
    display = Display(runtime, wakes, tournament_id, lang)
    timing = Timing(POLL_S, HEARTBEAT_S, LIFETIME_S, runtime.retry_ms, MIN_GAP_S)
    try:
        async for frame in polled(display.poll, timing, wake=wakes.event):
            yield frame
    finally:
        wakes.close()


class Display:
    """One display stream's reads: a frame per display version after the last sent, and
    the hub's wake-ups following the tournament and its round's tables."""

    def __init__(self, runtime: Runtime, wakes: HubWakes, tournament_id: UUID, lang: str) -> None:
        self.runtime = runtime
        self.wakes = wakes
        self.tournament_id = tournament_id
        self.lang = lang
        self.sent = -1

    async def poll(self) -> Polled:
        version, data, tables = await self.runtime.call(self.build)
        self.wakes.follow((self.tournament_id, *tables))
        if data is None:
            return Polled()
        self.sent = version
        return Polled([sse_frame("display", data, version)])

    def build(self) -> tuple[int, bytes | None, list[UUID]]:
        """The display's version, its frame (None: sent already) and the round's tables
        (blocking)."""
        game = self.runtime.service
        t = get_tournament(game, self.tournament_id)
        d = display_view(game, t)
        tables = [] if t.current is None else [table.match_id for table in t.current.tables]
        if d.version == self.sent:
            return d.version, None, tables
        frame = DisplayFrame(version=d.version, html=live_html(t, d, self.lang))
        return d.version, msgspec.json.encode(frame), tables


def display_page(game: GameService, tournament_id: UUID, lang: str) -> str:
    """The tournament's display page (HTML; blocking, 404)."""
    return display_html(game, get_tournament(game, tournament_id), lang)


def sheet_page(
    game: GameService, tournament_id: UUID, number: int, template: str, lang: str
) -> str:
    """A round's printable sheet of ``template`` in language ``lang`` (blocking, 404)."""
    return sheet_html(get_tournament(game, tournament_id), number, template, lang, game.clock())


def crosstable_of(game: GameService, tournament_id: UUID) -> Crosstable:
    """The crosstable, with a boards event's duplicate ranking (blocking, 404)."""
    t = get_tournament(game, tournament_id)
    return crosstable(t, duplicate_ranking(game, t))


def crosstable_page(game: GameService, tournament_id: UUID, lang: str) -> str:
    """The crosstable page (HTML; blocking, 404)."""
    t = get_tournament(game, tournament_id)
    return crosstable_html(t, crosstable(t, duplicate_ranking(game, t)), lang, game.clock())


def display_of(game: GameService, tournament_id: UUID) -> DisplayView:
    """The display page's data (blocking, 404)."""
    return display_view(game, get_tournament(game, tournament_id))


def comparison_of(game: GameService, tournament_id: UUID, number: int) -> ComparisonView:
    """Round ``number``'s deals compared across its tables (blocking, 404, 409)."""
    return comparison_view(game, get_tournament(game, tournament_id), number)


class PageController(Controller):
    path = "/tournaments"
    tags = ["tournament pages"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{tournament_id:uuid}", 404, media_type=MediaType.HTML)
    async def display_page(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> str:
        """The live display page (HTML): standings, tables in play, clock, next pairing

        For a projector or a phone; it updates itself from the display stream. English or Chinese
        (`?lang=zh-CN` or Accept-Language).
        """
        chosen = language(lang, accept_language)
        return await read.call(display_page, read.service, tournament_id, chosen)

    @route("/{tournament_id:uuid}/rounds/{number:int}/pairings", 404, media_type=MediaType.HTML)
    async def pairing_sheet_page(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        number: RoundParam,
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> str:
        """A round's printable pairing sheet (HTML, A4 print CSS)

        Table numbers, teams with their seats (R36) and players (substitutes in place), the start
        time and the deadline, and result boxes (filled once the round completes, R36).
        """
        chosen = language(lang, accept_language)
        template = "pairings.html.j2"
        return await read.call(sheet_page, read.service, tournament_id, number, template, chosen)

    @route("/{tournament_id:uuid}/rounds/{number:int}/scoresheets", 404, media_type=MediaType.HTML)
    async def score_sheets_page(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        number: RoundParam,
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> str:
        """A round's printable score sheets, one page per table (HTML, A4 print CSS)

        Teams, seats and players, the start time and the table's deadline, one row per deal (dealer,
        trump, attackers' points, team up, levels gained), the totals and the signatures.
        """
        chosen = language(lang, accept_language)
        template = "scoresheets.html.j2"
        return await read.call(sheet_page, read.service, tournament_id, number, template, chosen)

    @route("/{tournament_id:uuid}/crosstable", 404, media_type=MediaType.HTML)
    async def crosstable_page(
        self,
        read: Reading,
        tournament_id: FromPath[UUID],
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> str:
        """The crosstable (HTML): each team's opponent, outcome and levels, round by round

        W, D, L, B (a bye or a forfeit win), R (a requested bye), - (no result yet); the
        opponent by its rank; lines in standings order. Printable.
        """
        chosen = language(lang, accept_language)
        return await read.call(crosstable_page, read.service, tournament_id, chosen)


class DisplayController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{tournament_id:uuid}/display", 404)
    async def get_display(self, read: Reading, tournament_id: FromPath[UUID]) -> DisplayView:
        """The display page's data: standings, the round's tables with progress, clock

        Each table's deal, trick and attackers' points so far (public, R26/R33), its status and
        result; the round's deadline and whether it is paused; the next pairing once published.
        """
        return await read.call(display_of, read.service, tournament_id)

    @route("/{tournament_id:uuid}/rounds/{number:int}/comparison", 404, 409)
    async def compare_deals(
        self, read: Reading, tournament_id: FromPath[UUID], number: RoundParam
    ) -> ComparisonView:
        """A completed round's deals compared across its tables (duplicate scoring)

        Tables whose attackers held the same cards in the same dealing form a field (R36): each
        table's attackers' points (R29) against the field's average and median, its matchpoints
        (2 per table beaten, 1 per tie), and each team's matchpoints over the round
        (docs/tournaments.md). 409 round-in-play until every table is done.
        """
        return await read.call(comparison_of, read.service, tournament_id, number)

    @route("/{tournament_id:uuid}/crosstable", 404)
    async def get_crosstable(self, read: Reading, tournament_id: FromPath[UUID]) -> Crosstable:
        """The crosstable: each team's opponent, outcome and levels, round by round

        Outcomes: W, D, L, B (a bye: the pairing's, awarded or a forfeit win), R (a requested bye),
        - (no result yet); lines in standings order.
        """
        return await read.call(crosstable_of, read.service, tournament_id)

    @stream_route(
        DISPLAY,
        path,
        summary="The display page's live part (Server-Sent Events)",
        description="`event: display` frames whose `id` is the display's version (the "
        "tournament's plus its round's tables') and whose `data` is "
        '`{"version", "html"}`: the live part of the display page rendered. A frame at '
        "once, then whenever the tournament or a table of its round changes — a result, "
        "a correction after the event, a pause. It ends after its lifetime with a "
        "`retry:` hint (the browser reconnects).",
        responses=problems(404),
    )
    async def stream_display(
        self,
        runtime: NamedDependency[Runtime],
        live: NamedDependency[LiveStreams],
        tournament_id: FromPath[UUID],
        lang: Lang = None,
        accept_language: AcceptLanguage = None,
    ) -> Stream:
        await runtime.call(get_tournament, runtime.service, tournament_id)  # 404
        chosen = language(lang, accept_language)
        return event_stream(display_frames(runtime, live.hub, tournament_id, chosen))
