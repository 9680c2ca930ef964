"""Request ids: generated, propagated when valid, replaced when not, echoed on errors too."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.logging import request_id_from
from tests.api.ops.small_app import HEX32, MATCH, MAX_BODY, small_app


def test_a_request_id_is_generated(client: TestClient[Litestar]) -> None:
    first = client.get("/healthz").headers["x-request-id"]
    second = client.get("/healthz").headers["x-request-id"]
    assert HEX32.fullmatch(first) and HEX32.fullmatch(second) and first != second


@pytest.mark.parametrize("given", ["abc", "req-1.2_3", "A" * 128, "0" * 32])
def test_a_valid_request_id_is_propagated(client: TestClient[Litestar], given: str) -> None:
    assert client.get("/healthz", headers={"X-Request-ID": given}).headers["x-request-id"] == given


@pytest.mark.parametrize("given", ["", " ", "has space", "a/b", "x" * 129, "id;drop", "ünï"])
def test_an_invalid_request_id_is_replaced(client: TestClient[Litestar], given: str) -> None:
    echoed = client.get("/healthz", headers={b"X-Request-ID": given.encode()}).headers[
        "x-request-id"
    ]
    assert HEX32.fullmatch(echoed)


@pytest.mark.parametrize(
    ("raw", "kept"),
    [(b"abc", True), (b"a" * 128, True), (b"a" * 129, False), (b"\xff", False), (None, False)],
)
def test_request_id_from(raw: bytes | None, kept: bool) -> None:
    rid = request_id_from(raw)
    assert (rid == (raw or b"").decode("latin-1")) is kept
    if not kept:
        assert HEX32.fullmatch(rid)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/nowhere", 404),
        ("DELETE", "/healthz", 405),
        ("POST", f"/v1/matches/{MATCH}/play", 409),
        ("POST", f"/v1/matches/{MATCH}/play", 413),
        ("GET", "/boom", 500),
    ],
)
def test_the_request_id_is_echoed_on_errors_too(method: str, path: str, status: int) -> None:
    body = b'{"cards": ["5C"]}' if status != 413 else b"x" * (MAX_BODY + 1)
    with TestClient(small_app()) as c:
        r = c.request(method, path, content=body, headers={"X-Request-ID": "trace-1"})
    assert r.status_code == status
    assert r.headers["x-request-id"] == "trace-1"
