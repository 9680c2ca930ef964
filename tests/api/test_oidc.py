"""Sign-in with the app's identity provider (docs/players.md): access tokens signed by
keys of a local JWKS (generated here, served over HTTP) open sessions of one account per
subject; tokens of another issuer, audience, key, or expired are refused (401); without
OIDC settings the route is off (403)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
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
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwks = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]})
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


@pytest.fixture
def c(provider: Provider) -> Iterator[TestClient[Litestar]]:
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


@pytest.mark.parametrize(
    "claims",
    [
        {"iss": "https://evil.example/"},
        {"aud": "another-app"},
        {"exp": int(time.time()) - 3600},
        {"sign_with_stranger": True},
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
