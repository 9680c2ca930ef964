"""Sign-in with the app's identity provider (docs/players.md): access tokens signed by
keys of a local JWKS (generated here, served over HTTP) open sessions of one account per
subject; tokens of another issuer, audience, key, or expired are refused (401); without
OIDC settings the route is off (403)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import auth, client

ISSUER = "https://id.example/"
AUDIENCE = "shengji-app"


class Provider:
    """A JWKS endpoint with one RSA key, and a token minter."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec.public_key()))
        jwks = json.dumps(
            {
                "keys": [
                    {**jwk, "kid": "k1", "use": "sig", "alg": "RS256"},
                    {**ec_jwk, "kid": "k2", "use": "sig"},  # no alg: its key type's (ES256)
                ]
            }
        )
        self.fetches = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                provider.fetches += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(jwks.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token(self, sub: str = "user-1", key: Any = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600}
        body |= {"name": "Mei Lin"} | claims
        return jwt.encode(body, key or self.key, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    p = Provider()
    yield p
    p.server.shutdown()
    p.server.server_close()


@pytest.fixture(scope="module")
def c(provider: Provider) -> Iterator[TestClient[Litestar]]:
    """One app on the provider: each test signs in its own subject (only the first test
    signs ``user-1`` in; the others' tokens for it are refused)."""
    with client(oidc_issuer=ISSUER, oidc_audience=AUDIENCE, oidc_jwks_url=provider.url) as c:
        yield c


def test_a_provider_token_signs_in_to_one_account_per_subject(
    c: TestClient[Litestar], provider: Provider
) -> None:
    first = c.post("/v1/players/oidc", headers=auth(provider.token()))
    assert first.status_code == 201, first.text
    assert first.json()["displayName"] == "Mei Lin"
    again = c.post("/v1/players/oidc", json={"label": "tablet"}, headers=auth(provider.token()))
    assert again.json()["playerId"] == first.json()["playerId"]
    assert again.json()["sessionId"] != first.json()["sessionId"]
    me = c.get("/v1/players/me/sessions", headers=auth(again.json()["token"])).json()
    assert len(me["items"]) == 2
    other = c.post("/v1/players/oidc", headers=auth(provider.token("user-2")))
    assert other.json()["playerId"] != first.json()["playerId"]
    assert provider.fetches >= 1


def test_an_erased_subject_never_comes_back_as_the_same_player(
    c: TestClient[Litestar], provider: Provider
) -> None:
    """Erasure is final (docs/players.md): the subject's next sign-in is refused as
    ``player-erased``; it never reopens the erased player, its seats or its name."""
    first = c.post("/v1/players/oidc", headers=auth(provider.token("user-9")))
    assert first.status_code == 201, first.text
    assert c.delete("/v1/players/me", headers=auth(first.json()["token"])).status_code == 204
    again = c.post("/v1/players/oidc", headers=auth(provider.token("user-9")))
    assert again.status_code == 409 and again.json()["code"] == "player-erased", again.text


@pytest.mark.parametrize(
    "claims",
    [
        {"iss": "https://evil.example/"},
        {"aud": "another-app"},
        {"exp": int(time.time()) - 3600},
        {"sign_with_stranger": True},
        {"sub": ""},  # no subject: every such token would be one account
        {"sub": "   "},
        {"sub": "\t\n"},
    ],
)
def test_tokens_that_do_not_verify_are_401(
    c: TestClient[Litestar], provider: Provider, claims: dict[str, Any]
) -> None:
    key = provider.stranger if claims.pop("sign_with_stranger", False) else None
    r = c.post("/v1/players/oidc", headers=auth(provider.token(key=key, **claims)))
    assert (r.status_code, r.json()["code"]) == (401, "unauthorized")


def test_without_settings_oidc_is_off() -> None:
    with client() as c:
        r = c.post("/v1/players/oidc", headers=auth("eyJ.x.y"))
        assert (r.status_code, r.json()["code"]) == (403, "forbidden")


def test_an_ec_key_signs_in_with_its_own_algorithm(
    c: TestClient[Litestar], provider: Provider
) -> None:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "ec-user", "exp": now + 600}
    token = jwt.encode(body, provider.ec, algorithm="ES256", headers={"kid": "k2"})
    assert c.post("/v1/players/oidc", headers=auth(token)).status_code == 201


def malformed(provider: Provider) -> dict[str, str]:
    """Tokens an attacker would try: keys of another type, algorithms other than the key's,
    none, HMAC over the public key, junk."""
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "exp": now + 600}
    public_pem = provider.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )

    def signed(key: Any, alg: str, kid: str | None) -> str:
        headers = {} if kid is None else {"kid": kid}
        return jwt.encode(body, key, algorithm=alg, headers=headers)

    unsigned = jwt.encode(body, "", algorithm="none", headers={"kid": "k1"})
    return {
        "ES256 against the RSA key": signed(provider.ec, "ES256", "k1"),
        "RS256 against the EC key": signed(provider.key, "RS256", "k2"),
        "PS256 with the RS256 key": signed(provider.key, "PS256", "k1"),
        "RS512 with the RS256 key": signed(provider.key, "RS512", "k1"),
        "RS384 with the RS256 key": signed(provider.key, "RS384", "k1"),
        "HS256 over the public key": jwt.encode(
            body, public_pem.decode()[:32], algorithm="HS256", headers={"kid": "k1"}
        ),
        "alg none": unsigned,
        "no kid": signed(provider.key, "RS256", None),
        "an unknown kid": signed(provider.key, "RS256", "k9"),
        "junk": "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln",
        "three dots": "a.b.c",
    }


def test_every_malformed_token_is_a_401_logged_without_a_traceback(
    c: TestClient[Litestar], provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    """The finding: a token whose kid names a key of another type answered 500 with a
    traceback at ERROR; PS256 and RS512 were accepted with an RS256 key."""
    answers = {}
    with caplog.at_level(logging.INFO):
        for name, token in malformed(provider).items():
            r = c.post("/v1/players/oidc", headers=auth(token))
            answers[name] = (r.status_code, r.json()["code"])
    assert answers == {name: (401, "unauthorized") for name in answers}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert sum("oidc sign-in refused" in r.getMessage() for r in caplog.records) == len(answers)
