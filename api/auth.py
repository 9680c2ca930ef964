"""Bearer tokens: seat tokens authorise one seat's commands and private view; the
organiser token of a match authorises its admin actions (seating bots, running bots,
ending the match).

A token is ``<role>.<match id hex>.<secret>`` (:func:`services.game.new_token`; role
``s`` seat, ``o`` organiser), shown once and stored only as its sha256. So the API tells
apart (RFC 9110 / RFC 6750):

* **401** ``unauthorized`` — no token where one is needed, not ``Bearer``, malformed, or
  not a token of this match's seats (or of its organiser): unknown, forged, revoked;
* **403** ``forbidden`` — a well-formed token of *another* match, or of the wrong role
  (an organiser token on a seat's command, a seat token on an admin action).

Reads that take an optional token (history, state) treat no token as a spectator, and
refuse a bad one rather than silently showing the public view.
"""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Request

from domain.game.match import Match
from domain.rules.errors import ShengjiError
from services.accounts.players import Signed, is_player_token, seat_for, verify_player
from services.game import GameService
from services.sources import ORGANISER_ROLE, SEAT_ROLE, token_hash

ANONYMOUS = "anonymous"
MAX_TOKEN = 200


class UnauthorizedError(ShengjiError):
    """401: a token is needed, or this one is not valid here."""

    code = "unauthorized"
    status: ClassVar[int] = 401


class ForbiddenError(ShengjiError):
    """403: a valid-looking token of another match or of the wrong role."""

    code = "forbidden"
    status: ClassVar[int] = 403


def bearer(request: Request[Any, Any, Any]) -> str | None:
    """The bearer token of the request, None without an Authorization header."""
    return bearer_token(request.headers.get("authorization"))


def bearer_token(header: str | None) -> str | None:
    """The bearer token of an ``Authorization`` header's value (None: no header)."""
    if header is None:
        return None
    scheme, _, credentials = header.strip().partition(" ")
    token = credentials.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN or " " in token:
        raise UnauthorizedError("use Authorization: Bearer <token>")
    return token


def scope_of(token: str | None, client: str | None = None) -> str:
    """Who is calling, for idempotency keys: the token's hash; without a token, the
    client's address. A replay answers a token only to the caller that got it (R33:
    another client guessing the key and body of a seat claim gets nothing of it)."""
    if token is not None:
        return token_hash(token)
    return ANONYMOUS if client is None else f"{ANONYMOUS}:{client}"


def _check_shape(token: str, match_id: UUID, role: str, what: str) -> None:
    parts = token.split(".")
    if len(parts) != 3 or parts[0] not in (SEAT_ROLE, ORGANISER_ROLE) or len(parts[1]) != 32:
        raise UnauthorizedError(f"this is not a {what} token")
    if parts[1] != match_id.hex:
        raise ForbiddenError(f"this token belongs to another match, not {match_id}")
    if parts[0] != role:
        other = "an organiser" if parts[0] == ORGANISER_ROLE else "a seat"
        raise ForbiddenError(f"{other} token cannot be used here: a {what} token is needed")


def seat_of(service: GameService, match: Match, token: str | None) -> int:
    """The seat ``token`` authorises in ``match`` (R1): a seat token of the match, or the
    player token of the account that claimed the seat (docs/players.md)."""
    if token is None:
        raise UnauthorizedError("a seat token is needed: Authorization: Bearer <seat token>")
    if is_player_token(token):
        seat = seat_for(player_of(service, token).account, match.id)
        if seat is None:
            raise ForbiddenError(f"this player holds no seat in match {match.id}")
        return seat
    _check_shape(token, match.id, SEAT_ROLE, "seat")
    seat = service.seat_of_token(match, token)
    if seat is None:
        raise UnauthorizedError("the token is not a seat token of this match")
    return seat


def require_organiser(service: GameService, match: Match, token: str | None) -> None:
    """``token`` must be the organiser token of ``match``."""
    if token is None:
        raise UnauthorizedError(
            "the organiser token is needed: Authorization: Bearer <organiser token>"
        )
    _check_shape(token, match.id, ORGANISER_ROLE, "organiser")
    if not service.is_organiser(match, token):
        raise UnauthorizedError("the token is not the organiser token of this match")


def viewer_of(service: GameService, match: Match, token: str | None) -> int | None:
    """Whose eyes a read uses (R33): a seat for its seat token, a spectator (None) without
    a token or with the organiser's."""
    if token is None:
        return None
    if token.startswith(ORGANISER_ROLE + "."):
        require_organiser(service, match, token)
        return None
    return seat_of(service, match, token)


def player_of(service: GameService, token: str | None) -> Signed:
    """The account and session a player token signs in (docs/players.md)."""
    if token is None:
        raise UnauthorizedError("a player token is needed: Authorization: Bearer <player token>")
    if not is_player_token(token):
        parts = token.split(".")
        if len(parts) == 3 and parts[0] in (SEAT_ROLE, ORGANISER_ROLE) and len(parts[1]) == 32:
            raise ForbiddenError("a seat or organiser token cannot be used here: a player token is")
        raise UnauthorizedError("this is not a player token")
    signed = verify_player(service, token)
    if signed is None:
        raise UnauthorizedError("the player token is not valid (unknown, rotated or revoked)")
    return signed
