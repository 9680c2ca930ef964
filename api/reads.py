"""Reads: the per-seat and public views (R33), the history by version (R34), the state
as of a version, the rounds, and deal verification (R35).

``/view`` (a seat token) and ``/public`` carry ``ETag: "<version>"`` (the match version,
see :mod:`api.etag`) and answer ``If-None-Match`` with 304 and no body. ``/history`` and
``/state`` see with the eyes of the optional bearer token's seat, else a spectator's.
A tournament table in play is closed to spectators (R36, :mod:`api.spectating`).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Controller, Request, Response, post
from litestar.openapi.spec import Example
from litestar.params import FromPath, PathParameter, QueryParameter

from api.calls import BEARER, OPTIONAL_BEARER, Read, Reading
from api.commands import parse_field
from api.dto import DealVerified, RoundVerified, VerifyRequest, problems
from api.etag import IfNoneMatch, etag, not_modified, not_modified_response, tagged
from api.logging import bind_seat
from api.records.bulk import reject_repeated
from api.routes import STATELESS, route
from api.runtime import snapshot
from api.spectating import admit, closed, reader_of, spectator_problems
from api.strict import json_body, read_body
from domain.game.match import Match
from domain.game.round import Round, round_id
from domain.rules.errors import InvalidInputError
from services import field_docs
from services.access import SEAT_TOKEN_NEEDED, Credential, check_visible, presented, seat_in
from services.embargo import embargo_marker, embargo_of, view_embargo
from services.errors import NotFoundError, VerificationError
from services.game import GameService
from services.history import (
    MAX_LIMIT,
    HistoryPage,
    StateAt,
    match_history,
    state_at,
    version_at,
)
from services.summaries import RoundSummary, round_summaries
from services.verify import recompute_deal, verify_round
from services.verify import verify_deal as check_deal
from services.views import PublicView, SeatView, clock_marker, match_version, table_view

RoundNumber = Annotated[int, PathParameter(ge=1, le=100_000, description="Round number, from 1")]


def stable(round_: Round | None, now: datetime) -> bool:
    """The view can change only with a new version: no deadline will ever pass for it."""
    return clock_marker(round_, now + timedelta(days=3650)) == ""


class RoundList(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A match's rounds, in order."""

    items: Annotated[list[RoundSummary], field_docs.ITEMS]


def _round(service: GameService, match_id: UUID, number: int) -> tuple[Match, Round]:
    match = service.get_match(match_id)
    if number > match.round_number:
        raise NotFoundError(f"match {match_id} has rounds 1..{match.round_number}, not {number}")
    return match, service.get_round(round_id(match_id, number))


def seat_view(
    read: Read, match_id: UUID, if_none_match: str | None
) -> tuple[int, str, SeatView | None]:
    """The caller's seat, the view's ETag and the seat's view (None: ``if_none_match``
    matches it), remembered in the view tags when no clock can change it (blocking)."""
    service, cred, tags = read.service, read.credential, read.runtime.tags
    presented(cred, SEAT_TOKEN_NEEDED)  # 401 before the match is looked at: tells nothing
    generation = tags.generation(match_id)
    match, round_ = snapshot(service, match_id)
    check_visible(service, match, cred)  # a private table: 404 to anyone not of it
    seat = seat_in(service, match, cred)
    assert cred is not None
    tags.remember_seat(match_id, cred, seat)
    now = service.clock()
    embargo = view_embargo(service, match, round_)  # R36: "-e" is never remembered
    marker = clock_marker(round_, now) + embargo_marker(round_, embargo)
    tag = etag(match_version(match, round_), marker)
    if stable(round_, now) and closed(service, match) is None and not match.private:
        tags.remember(match_id, generation, tag)  # R36, D-hidden: /public answers from it
    if not_modified(if_none_match, tag):
        return seat, tag, None
    return seat, tag, table_view(match, round_, seat, now, embargo=embargo)


def public_view(
    read: Read, match_id: UUID, if_none_match: str | None
) -> tuple[str, PublicView | None]:
    """The public view's ETag and the view (None: ``if_none_match`` matches it), as
    :func:`seat_view` (blocking)."""
    service, tags = read.service, read.runtime.tags
    generation = tags.generation(match_id)
    match, round_ = snapshot(service, match_id)
    shut = admit(service, match, read.request)  # R36: a tournament table in play is closed
    now = service.clock()
    embargo = view_embargo(service, match, round_)  # R36: "-e" is never remembered
    marker = clock_marker(round_, now) + embargo_marker(round_, embargo)
    tag = etag(match_version(match, round_), marker)
    if stable(round_, now) and shut is None and not match.private:  # R36, D-hidden
        tags.remember(match_id, generation, tag)  # no 304 for a closed or private table
    if not_modified(if_none_match, tag):
        return tag, None
    return tag, table_view(match, round_, None, now, embargo=embargo)


def history_for(
    service: GameService, cred: Credential | None, match_id: UUID, after: int, limit: int
) -> HistoryPage:
    """A page of the match's history as ``cred``'s viewer sees it (blocking)."""
    viewer = reader_of(service, service.get_match(match_id), cred)
    return match_history(service, match_id, viewer, after=after, limit=limit)


def state_for(
    service: GameService,
    cred: Credential | None,
    match_id: UUID,
    version: int | None,
    at: datetime | None,
) -> StateAt:
    """The table at ``version`` or at the moment ``at`` as ``cred``'s viewer saw it."""
    viewer = reader_of(service, service.get_match(match_id), cred)
    wanted = version if at is None else version_at(service, match_id, at)
    assert wanted is not None
    return state_at(service, match_id, wanted, viewer)


def round_view(read: Read, match_id: UUID, number: int) -> PublicView:
    """Round ``number`` as a spectator sees it now (blocking)."""
    service = read.service
    match, round_ = _round(service, match_id, number)
    admit(service, match, read.request)  # R36: a tournament table in play is closed
    embargo = view_embargo(service, match, round_)  # R36
    return table_view(match, round_, None, service.clock(), embargo=embargo)


def rounds_of(service: GameService, cred: Credential | None, match_id: UUID) -> RoundList:
    """The match's rounds (blocking), under its tournament embargo (R36); a private
    table's to the people of the table only (404)."""
    match, current = snapshot(service, match_id)
    check_visible(service, match, cred)
    return RoundList(items=round_summaries(match, current, embargo=embargo_of(service, match)))


def round_verified(
    service: GameService, cred: Credential | None, match_id: UUID, number: int
) -> RoundVerified:
    """Round ``number`` checked against its commitment and events (R35; blocking); a
    private table's to the people of the table only (404)."""
    check_visible(service, service.get_match(match_id), cred)
    match, round_ = _round(service, match_id, number)
    c = verify_round(service, round_.id)
    return RoundVerified(
        seeds_from="server" if match.imported is None else "record", ok=True, **asdict(c)
    )


class ReadController(Controller):
    path = "/v1/matches"
    tags = ["views"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{match_id:uuid}/view", 401, 403, 404, tagged=True, security=BEARER)
    async def get_seat_view(
        self, read: Reading, match_id: FromPath[UUID], if_none_match: IfNoneMatch = None
    ) -> Response[SeatView]:
        """The table as the token's seat sees it (R33)

        Own hand, the cards it may see, whose turn and what action is expected, legal-action hints,
        the current and last trick, the points so far.
        """
        cred = read.credential
        tags = read.runtime.tags
        known, seat_known = tags.tag(match_id), tags.seat(match_id, cred)
        if known is not None and seat_known is not None and not_modified(if_none_match, known):
            bind_seat(read.request, seat_known)
            return not_modified_response(known)  # nothing saved since: no store read
        seat, tag, view = await read.call(seat_view, read, match_id, if_none_match)
        bind_seat(read.request, seat)
        return not_modified_response(tag) if view is None else tagged(view, tag)

    @route(
        "/{match_id:uuid}/public",
        responses=spectator_problems(404),
        tagged=True,
        security=OPTIONAL_BEARER,
    )
    async def get_public_view(
        self, read: Reading, match_id: FromPath[UUID], if_none_match: IfNoneMatch = None
    ) -> Response[PublicView]:
        """The table as a spectator sees it (R33: no hand, no bottom before the end)

        A tournament table is closed to spectators until its tournament round completes: 403
        `table-closed` without a seat token of that table or the organiser's token (R36).
        """
        known = read.runtime.tags.tag(match_id)
        if known is not None and not_modified(if_none_match, known):
            return not_modified_response(known)  # nothing saved since: no store read
        tag, view = await read.call(public_view, read, match_id, if_none_match)
        return not_modified_response(tag) if view is None else tagged(view, tag)

    @route("/{match_id:uuid}/history", responses=spectator_problems(404), security=OPTIONAL_BEARER)
    async def get_history(
        self,
        read: Reading,
        match_id: FromPath[UUID],
        after: Annotated[int, QueryParameter(ge=0, description="a match version")] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)] = 100,
    ) -> HistoryPage:
        """The match's events after a version, redacted for the viewer (R33, R34)

        Items are numbered by match version (1, 2, …, gap-free); pass `next` as `after` for the next
        page: nothing is lost or repeated. A tournament table in play: a seat token of that table or
        the organiser's token (403 `table-closed`, R36).
        """
        return await read.call(history_for, read.service, read.credential, match_id, after, limit)

    @route("/{match_id:uuid}/state", responses=spectator_problems(404), security=OPTIONAL_BEARER)
    async def get_state_at(
        self,
        read: Reading,
        match_id: FromPath[UUID],
        version: Annotated[
            int | None, QueryParameter(ge=1, le=10**9, description="a match version")
        ] = None,
        at: Annotated[
            datetime | None,
            QueryParameter(
                description="A moment (ISO 8601 with a time zone), instead of `version`: the "
                "state after the last event at or before it (R34)",
                examples=[Example(value="2026-01-01T12:30:00Z")],
            ),
        ] = None,
    ) -> StateAt:
        """The table as the viewer saw it at a match version or a moment (R34)

        `?version=` or `?at=<ISO time>` (the last version at or before it; 404 before the match
        existed). During a round only what the viewer could see then (R33); once that round is
        scored, `revealed` adds every hand and the bottom as they were — on a tournament table only
        once its tournament round completes (`embargo` says so until then, R36). A tournament table
        in play: a seat token of that table or the organiser's token (403 `table-closed`, R36).
        """
        reject_repeated(read.request, "version", moments=("at",))
        if (version is None) == (at is None):
            raise InvalidInputError("give either version (a match version) or at (a moment)")
        return await read.call(state_for, read.service, read.credential, match_id, version, at)

    @route("/{match_id:uuid}/rounds", 404, security=OPTIONAL_BEARER)
    async def list_rounds(self, read: Reading, match_id: FromPath[UUID]) -> RoundList:
        """The match's rounds and results

        The match's rounds in order: playing, scored (with the recorded result,
        R29-R32) or abandoned. A tournament table's dealers and results wait for its
        tournament round to complete (R36).
        """
        return await read.call(rounds_of, read.service, read.credential, match_id)

    @route(
        "/{match_id:uuid}/rounds/{number:int}",
        responses=spectator_problems(404),
        security=OPTIONAL_BEARER,
    )
    async def get_round(
        self, read: Reading, match_id: FromPath[UUID], number: RoundNumber
    ) -> PublicView:
        """A round as a spectator sees it now (everything once scored, R33)

        A tournament table is closed to spectators until its tournament round completes: 403
        `table-closed` without a seat token of that table or the organiser's token (R36).
        """
        return await read.call(round_view, read, match_id, number)

    @route("/{match_id:uuid}/rounds/{number:int}/verify", 404, 409, security=OPTIONAL_BEARER)
    async def verify_round(
        self, read: Reading, match_id: FromPath[UUID], number: RoundNumber
    ) -> RoundVerified:
        """Check a scored round against its commitment and events (R35)

        409 `round-not-scored` before the round is scored; 409 `deal-embargoed` for a tournament
        table until its tournament round completes (R36).
        """
        return await read.call(round_verified, read.service, read.credential, match_id, number)


@post(
    "/v1/verify",
    status_code=200,
    tags=["verification"],
    summary="Check a revealed seed against its commitment and recompute the deal (R35)",
    description="Optionally compares the recorded hands and bottom. The check's outcome is "
    "the answer: `ok` true, or false with `mismatch` naming what differs (the commitment, "
    "or the first card) — the deal recomputed from the seed either way.",
    responses=problems(body=True),
    opt={STATELESS: True, **json_body(VerifyRequest)},
)
async def verify_deal(request: Request[Any, Any, Any]) -> DealVerified:
    data = await read_body(request)
    hands = None
    if data.hands is not None:
        hands = [list(parse_field(h, f"hands[{i}]")) for i, h in enumerate(data.hands)]
    bottom = None if data.bottom is None else list(parse_field(data.bottom, "bottom"))
    mismatch = None
    try:
        check = check_deal(data.seed, data.commitment, data.first_seat, hands, bottom)
    except VerificationError as e:  # R35: a failed check is the answer, not a refusal
        mismatch = e.detail
        check = recompute_deal(data.seed, data.commitment, data.first_seat)
    return DealVerified(ok=mismatch is None, mismatch=mismatch, **asdict(check))
