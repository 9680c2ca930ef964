"""Creating players has an hourly quota per client (``PLAYER_QUOTA_PER_HOUR``, 30 by
default; docs/security.md): device accounts cannot be minted without end."""

from __future__ import annotations

import pytest

from tests.api.limits import client_at, limited_app
from tests.api.test_security_limits import refused

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_creating_players_has_its_own_quota() -> None:
    app = limited_app(rate_limit_per_minute=600)
    async with app.lifespan(), client_at(app) as c:
        made = [await c.post("/v1/players", json={"displayName": f"p{i}"}) for i in range(30)]
        assert {r.status_code for r in made} == {201}
        problem = refused(await c.post("/v1/players", json={"displayName": "x"}), "quota-exceeded")
        assert "PLAYER_QUOTA_PER_HOUR" in problem["detail"] or "an hour" in problem["detail"]
        async with client_at(app, "203.0.113.9") as other:  # another address: its own quota
            assert (await other.post("/v1/players", json={"displayName": "y"})).status_code == 201
