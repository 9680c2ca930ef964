"""Sign-in with the app's own identity provider (OpenID Connect access tokens, JWT).

:class:`OidcVerifier` checks a token's signature against the provider's JWKS (PyJWT's
``PyJWKClient``: keys cached, fetched again for an unknown ``kid`` and after
``lifespan_s``), its issuer, audience, expiry and subject. :func:`sign_in` exchanges a
verified token for a session of the player's account — one account per (issuer,
subject), made at the first sign-in — so every other route takes the player token as
usual (docs/players.md).
"""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

NS = uuid5(NAMESPACE_URL, "shengji:oidc")
ALGORITHMS = ("RS256", "ES256")
"""The signing algorithms accepted by default (``OIDC_ALGORITHMS``)."""
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
"""Every asymmetric algorithm ``OIDC_ALGORITHMS`` may name (never HS*, never none)."""


class OidcError(Exception):
    """The token does not verify (signature, issuer, audience, expiry, subject)."""


class OidcVerifier:
    """Verifies the provider's tokens. A token is checked with the one algorithm of the key
    its ``kid`` names — the JWK's ``alg``, else its key type's (RS256 for RSA, ES256 for a
    P-256 key) — and only when that algorithm is one of ``algorithms``: a token whose
    header names another (PS256 or RS512 against an RS256 key, RS256 against an EC key) is
    refused, as is anything else the verifier refuses (docs/security.md)."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        jwks_url: str,
        *,
        algorithms: tuple[str, ...] = ALGORITHMS,
        lifespan_s: float = 300.0,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.algorithms = algorithms
        import jwt  # noqa: PLC0415 - when OIDC is configured (not in every process's start)

        self.jwks = jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=lifespan_s, timeout=5)

    def verify(self, token: str) -> dict[str, Any]:
        import jwt  # noqa: PLC0415 - as in __init__

        try:
            key = self.jwks.get_signing_key_from_jwt(token)
            if key.algorithm_name not in self.algorithms:
                raise OidcError(
                    f"the identity token's key is for {key.algorithm_name}, which this "
                    f"service does not accept (OIDC_ALGORITHMS: {', '.join(self.algorithms)})"
                )
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[key.algorithm_name],
                audience=self.audience,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud", "sub"]},
                leeway=30,
            )
        except jwt.PyJWTError as e:
            raise OidcError(f"the identity token does not verify: {e}") from None
        except (TypeError, ValueError) as e:  # a key the header's algorithm cannot use
            raise OidcError(f"the identity token does not verify with its key: {e}") from None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject.strip():
            raise OidcError(
                "the identity token names no subject (`sub` is empty): it cannot be one person"
            )
        return claims


def account_id_of(issuer: str, subject: str) -> UUID:
    return uuid5(NS, f"{issuer}\n{subject}")
