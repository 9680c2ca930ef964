"""The body size limit (413) and rate limiting (429 with Retry-After; a bucket per verified
token or address).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from litestar.types import Scope

from api.identity import Identities, address_key, bearer_of
from services.limits import RateLimiter
from tests.api.ops.small_app import MATCH, MAX_BODY, FakeClock, is_problem, small_app


def test_a_body_over_the_limit_is_a_413_problem(client: TestClient[Litestar]) -> None:
    r = client.post(f"/v1/matches/{MATCH}/play", content=b"{" + b" " * MAX_BODY + b"}")
    is_problem(r, "payload-too-large", 413)


def test_a_chunked_body_over_the_limit_is_a_413_problem(client: TestClient[Litestar]) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(8):
            yield b" " * 256

    r = client.post(f"/v1/matches/{MATCH}/play", content=chunks())
    is_problem(r, "payload-too-large", 413)


def test_over_the_rate_is_a_429_problem_with_retry_after() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, clock=clock)
    with TestClient(small_app(limiter=limiter)) as c:
        path = f"/v1/matches/{MATCH}/seats/0/view"
        assert [c.get(path).status_code for _ in range(2)] == [200, 200]
        r = c.get(path, headers={"X-Request-ID": "too-many"})
        body = is_problem(r, "rate-limited", 429)
        assert r.headers["retry-after"] == "30"  # 2 a minute: one token every 30 s
        assert r.headers["x-request-id"] == "too-many"
        assert body["title"] == "Too many requests"
        assert limiter.rejections == 1
        clock.now += 29
        assert c.get(path).status_code == 429
        assert c.get(path).headers["retry-after"] == "1"
        clock.now += 1
        assert c.get(path).status_code == 200
        assert limiter.rejections == 3


def test_health_and_the_stream_are_not_rate_limited() -> None:
    limiter = RateLimiter(1, clock=FakeClock())
    with TestClient(small_app(limiter=limiter)) as c:
        for path in ("/healthz", "/readyz", f"/v1/matches/{MATCH}/stream"):
            assert [c.get(path).status_code for _ in range(5)] == [200] * 5
        assert limiter.rejections == 0


def test_each_verified_token_has_its_own_bucket() -> None:
    """A token that verifies has its own bucket; any other is counted under the address."""
    limiter = RateLimiter(1, clock=FakeClock())
    identities = Identities(lambda t: f"player:{t}" if t in ("one", "two", "three") else None)
    path = f"/v1/matches/{MATCH}/seats/0/view"
    with TestClient(small_app(limiter=limiter, identities=identities)) as c:
        for token in ("one", "two", "three"):
            headers = {"Authorization": f"Bearer {token}"}
            assert c.get(path, headers=headers).status_code == 200
            assert c.get(path, headers=headers).status_code == 429
        assert c.get(path, headers={"Authorization": "Bearer made-up"}).status_code == 200
        assert c.get(path).status_code == 429  # the made-up token took the address's
        assert c.get(path, headers={"Authorization": "Bearer other"}).status_code == 429


@pytest.mark.parametrize(
    ("headers", "query", "client", "token", "key"),
    [
        ([(b"authorization", b"Bearer abc")], b"", ("10.0.0.1", 5), "abc", "addr:10.0.0.1"),
        ([(b"Authorization", b"bearer abc")], b"token=x", None, "abc", "addr:unknown"),
        ([(b"authorization", b"Basic abc")], b"token=x", ("10.0.0.1", 5), None, "addr:10.0.0.1"),
        ([(b"authorization", b"Bearer ")], b"", ("10.0.0.1", 5), None, "addr:10.0.0.1"),
        ([], b"a=1&token=s.x.y", ("10.0.0.2", 5), "s.x.y", "addr:10.0.0.2"),
        ([], b"", None, None, "addr:unknown"),
    ],
)
def test_the_token_and_the_address_of_a_request(
    headers: list[tuple[bytes, bytes]], query: bytes, client: Any, token: str | None, key: str
) -> None:
    scope = cast(
        "Scope", {"type": "http", "headers": headers, "client": client, "query_string": query}
    )
    assert (bearer_of(scope), address_key(scope)) == (token, key)


def test_the_limiter_off_never_rejects() -> None:
    limiter = RateLimiter(0)
    assert not limiter.enabled
    assert all(limiter.acquire("k") is None for _ in range(10_000))
    assert limiter.rejections == 0


def test_the_limiter_forgets_the_least_recent_clients() -> None:
    limiter = RateLimiter(1, max_clients=2, clock=FakeClock())
    assert limiter.acquire("a") is None and limiter.acquire("a") is not None
    assert limiter.acquire("b") is None and limiter.acquire("c") is None  # "a" forgotten
    assert limiter.acquire("a") is None


@pytest.mark.parametrize(("per_minute", "burst"), [(-1, None), (60, 0)])
def test_the_limiter_refuses_impossible_settings(per_minute: int, burst: int | None) -> None:
    with pytest.raises(ValueError):
        RateLimiter(per_minute, burst=burst)
