"""``POST /v1/players/oidc``: sign in with the app's identity provider (docs/players.md).

The app sends the provider's access token (a JWT) as ``Authorization: Bearer``; a token
that verifies against the provider's JWKS (issuer, audience, expiry) opens a session of
the subject's account and answers a player token. 403 when the service has no OIDC
settings (``OIDC_ISSUER``, ``OIDC_AUDIENCE``, ``OIDC_JWKS_URL``); 401 for a token that
does not verify.
"""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, post
from litestar.di import NamedDependency

from api.calls import BEARER
from api.dto import problems
from api.players.dto import NewPlayer, OpenSessionRequest
from api.runtime import Runtime
from api.strict import json_body, read_body
from services.access import bearer_text
from services.accounts.oidc import OidcError, OidcVerifier, sign_in
from services.errors import ForbiddenError, UnauthorizedError

log = logging.getLogger(__name__)
MAX_JWT = 8192


def provider_token(header: str | None) -> str:
    """The JWT of ``Authorization: Bearer`` (longer than this service's own tokens)."""
    token = bearer_text(header, MAX_JWT)
    if token is None:
        raise UnauthorizedError("the identity provider's token is needed: Authorization: Bearer")
    return token


class Oidc:
    """The ``oidc`` dependency: the verifier, or None when sign-in is off."""

    def __init__(self, verifier: OidcVerifier | None) -> None:
        self.verifier = verifier

    def provide(self) -> Oidc:
        return self


@post(
    "/v1/players/oidc",
    status_code=201,
    tags=["players"],
    summary="Sign in with the app's identity provider (OIDC/JWT); answers a player token",
    description="The provider's access token in `Authorization: Bearer`; verified against its "
    "JWKS (issuer, audience, expiry). The first sign-in of a subject makes its account "
    "(display name from `name` or `preferred_username`); each sign-in opens a session. "
    "The subject of an erased player is refused (409 `player-erased`): erasure is final.",
    responses=problems(401, 403, 409, body=True),
    security=BEARER,
    opt=json_body(OpenSessionRequest | None),
)
async def sign_in_with_oidc(
    request: Request[Any, Any, Any], runtime: NamedDependency[Runtime], oidc: NamedDependency[Oidc]
) -> NewPlayer:
    data = await read_body(request) or OpenSessionRequest()
    token = provider_token(request.headers.get("authorization"))  # 401 first
    verifier = oidc.verifier
    if verifier is None:
        raise ForbiddenError("sign-in with an identity provider is off on this service")

    def work() -> NewPlayer:
        try:
            account, session_id, player = sign_in(runtime.service, verifier, token, data.label)
        except OidcError as e:
            log.info("oidc sign-in refused: %s", e)  # one line, no traceback: a 401
            raise UnauthorizedError(str(e)) from None
        return NewPlayer(
            player_id=str(account.id),
            session_id=str(session_id),
            token=player,
            display_name=account.display_name,
            locale=account.locale,
        )

    return await runtime.call(work)
