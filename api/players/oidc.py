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

from litestar import Request, Response, post
from litestar.di import NamedDependency

from api.calls import BEARER, respond
from api.dto import problems
from api.players.dto import OpenSessionRequest
from api.routes import WRITE
from api.runtime import Runtime
from api.strict import json_body, read_body
from services.access import bearer_text
from services.accounts.commands import NewPlayer, SignInWithOidc
from services.errors import UnauthorizedError

log = logging.getLogger(__name__)
MAX_JWT = 8192


def provider_token(header: str | None) -> str:
    """The JWT of ``Authorization: Bearer`` (longer than this service's own tokens)."""
    token = bearer_text(header, MAX_JWT)
    if token is None:
        raise UnauthorizedError("the identity provider's token is needed: Authorization: Bearer")
    return token


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
    opt={WRITE: True, **json_body(OpenSessionRequest | None)},
)
async def sign_in_with_oidc(
    request: Request[Any, Any, Any], runtime: NamedDependency[Runtime]
) -> Response[NewPlayer]:
    data = await read_body(request) or OpenSessionRequest()
    token = provider_token(request.headers.get("authorization"))  # 401 first
    # The provider's token is no credential of this service: it is the command's to verify
    # (and no Idempotency-Key is scoped by it).
    done = await runtime.call(runtime.bus.handle, SignInWithOidc(token, data.label), None)
    return respond(done)
