"""Friend requests have an hourly quota per player (and per address):
``FRIEND_REQUEST_QUOTA_PER_HOUR`` (docs/decisions.md D-social), a 429 problem with
``Retry-After`` beyond it, nothing saved."""

from __future__ import annotations

import pytest

from tests.api.limits import client_at, limited_app
from tests.api.test_security_limits import refused

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_friend_requests_have_their_own_quota() -> None:
    app = limited_app(rate_limit_per_minute=600, friend_request_quota_per_hour=3)
    async with app.lifespan(), client_at(app) as c:
        made = [
            (await c.post("/v1/players", json={"displayName": f"p{i}"})).json() for i in range(5)
        ]
        me = {"Authorization": f"Bearer {made[0]['token']}"}
        for other in made[1:4]:
            r = await c.post(
                "/v1/players/me/friend-requests", json={"playerId": other["playerId"]}, headers=me
            )
            assert r.status_code == 201, r.text
        r = await c.post(
            "/v1/players/me/friend-requests", json={"playerId": made[4]["playerId"]}, headers=me
        )
        problem = refused(r, "quota-exceeded")
        assert "an hour" in problem["detail"] or "FRIEND_REQUEST" in problem["detail"]
        out = await c.get("/v1/players/me/friend-requests?direction=out", headers=me)
        assert len(out.json()["items"]) == 3  # nothing saved for the refused one
