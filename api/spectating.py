"""Closed tournament tables: who may read a table while its tournament round is in play
(RULES R33, R36; docs/tournaments.md, "Spectators").

Every table of a tournament round plays the same deals, seat for seat (R36), and a
table's plays are public (R33): anyone watching another table's ``/public`` view, history,
state, rounds or stream would see, seat by seat, the hands of a deal they are about to
play. So, as a duplicate bridge room does, **a tournament table is closed to spectators
until its tournament round completes** (the predicate is the embargo's,
:func:`services.embargo.embargo_of`). While it is closed, a read of that table is let
through only for

* a seat token of *this* table — the seat reads as its seat (R33), or the public view;
* the organiser token of the tournament (``o.<tournament id hex>.…``) or of the match —
  a spectator with full access;

and refused otherwise — no token, another table's seat token, any other match's or
tournament's token — with 403 ``table-closed`` (:class:`TableClosedError`). A token that
claims this table or tournament but does not match stays a 401 ``unauthorized`` (as
:mod:`services.access`). Once the tournament round completes the table reads as any match, and
the tournament's organiser token still reads as a spectator.

**Cost.** A match outside tournaments pays one ``None`` check (:func:`reader_of` then is
:func:`services.access.viewer_in`; :func:`admit` returns at once). A tournament table asks its
tournament until the round completes; completion is remembered per service
(:mod:`services.embargo`).

**Private tables** exist only for the people of the table: every read of one answers 404,
as for a match that does not exist, to anyone else (:func:`services.access.check_visible`,
docs/decisions.md D-hidden).

Match summaries (``GET /v1/matches``, ``GET /v1/matches/{id}``, ``/rounds``) stay open
but show no result of a tournament table in play — no levels, dealers, results or winner
(R36, docs/decisions.md D-hidden). Deal verification and records answer 409
``deal-embargoed`` to everyone until the round completes (:mod:`services.embargo`).
"""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from litestar import Request
from litestar.openapi.datastructures import ResponseSpec

from api.auth import credential
from api.dto import problems
from domain.game.match import Match
from domain.rules.errors import ShengjiError
from domain.tournament.tournament import Tournament
from services.access import Credential, check_visible, tournament_organiser, viewer_in
from services.embargo import Embargo, embargo_of
from services.errors import ForbiddenError, UnauthorizedError
from services.game import GameService
from services.sources import ORGANISER_ROLE

__all__ = ["TableClosedError", "admit", "closed", "reader_of", "spectator_problems"]

CLOSED_DOC = (
    "A token of another match, or of the wrong role; or a tournament table in play read "
    "without its seat's or the organiser's token (R36 `table-closed`)"
)


class TableClosedError(ShengjiError):
    """403: a tournament table is closed to spectators until its tournament round
    completes (R36)."""

    code = "table-closed"
    rule = "R36"
    status: ClassVar[int] = 403

    def __init__(self, embargo: Embargo) -> None:
        super().__init__(
            "tournament table: spectators may watch once tournament round "
            f"{embargo.round} completes (R36: every table of the round plays the same deals; "
            "a seat token of this table or the organiser's token reads it now)"
        )


def closed(service: GameService, match: Match) -> Embargo | None:
    """Why ``match`` is closed to spectators now (None: open, as any match)."""
    return embargo_of(service, match)


def _tournament_organiser(service: GameService, tournament_id: UUID, cred: Credential) -> bool:
    """True for the organiser token of ``tournament_id``; False for a token of anything
    else; 401 for one that claims that tournament but is not its organiser's."""
    if cred.role != ORGANISER_ROLE or cred.owner != tournament_id:
        return False
    try:
        found: object = service.repository.get(tournament_id, deepcopy_from_cache=False)
    except AggregateNotFoundError:
        found = None
    if not isinstance(found, Tournament):
        raise UnauthorizedError("the token is not the organiser token of this tournament")
    tournament_organiser(found, cred)
    return True


def _read(
    service: GameService, match: Match, cred: Credential | None, shut: Embargo | None
) -> int | None:
    if cred is None:
        if shut is not None:
            raise TableClosedError(shut)
        return None
    try:
        return viewer_in(service, match, cred)
    except ForbiddenError:
        if shut is not None:  # another table's seat, another match or tournament
            raise TableClosedError(shut) from None
        raise


def reader_of(service: GameService, match: Match, cred: Credential | None) -> int | None:
    """Whose eyes a read of ``match`` uses (R33): :func:`services.access.viewer_in` — a seat for
    its seat token, a spectator (None) without a token or with an organiser's — and, for a
    tournament table in play, 403 ``table-closed`` unless the token is a seat token of this
    table or the organiser's (R36); a private table, 404 to anyone not of the table
    (:func:`services.access.check_visible`)."""
    check_visible(service, match, cred)
    tournament_id = match.tournament_id
    if tournament_id is None:
        return viewer_in(service, match, cred)  # R36 costs an ordinary match this check
    if cred is not None and _tournament_organiser(service, tournament_id, cred):
        return None
    return _read(service, match, cred, closed(service, match))


def admit(service: GameService, match: Match, request: Request[Any, Any, Any]) -> Embargo | None:
    """For the reads that show only the public view and take no token (``/public``,
    ``/rounds/{n}``): nothing for an ordinary match or an open table; for a tournament
    table in play, the bearer token must be a seat token of this table or the
    organiser's (else 403 ``table-closed``, R36). Answers why the table is closed (None:
    open), so the caller does not remember its ETag for everyone. A private table is 404
    to anyone not of the table (:func:`services.access.check_visible`)."""
    if match.private:
        check_visible(service, match, credential(request))
    tournament_id = match.tournament_id
    if tournament_id is None:
        return None
    shut = closed(service, match)
    if shut is None:
        return None  # open as any match: the token is not looked at
    cred = credential(request)
    if cred is None or not _tournament_organiser(service, tournament_id, cred):
        _read(service, match, cred, shut)
    return shut


def spectator_problems(*statuses: int) -> dict[int, ResponseSpec]:
    """:func:`api.dto.problems` of a spectator read: 401 and 403 (``table-closed``, R36)
    documented, with ``statuses``."""
    found = problems(401, 403, *statuses)
    spec = found[403]
    found[403] = ResponseSpec(
        data_container=spec.data_container,
        media_type=spec.media_type,
        description=CLOSED_DOC,
        generate_examples=False,
    )
    return found
