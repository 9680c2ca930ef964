"""docs/security.md, finding 3: an idempotent replay never hands one caller's secret to another.

Two callers behind one address (a proxy, a NAT) are one scope for anonymous keys; whoever
sends the same key and body cannot be told apart from the first caller. So no token is
ever kept in a key's record: the replay rebuilds the answer from the state and withholds
every token the first request minted (``tokenWithheld: true``). The first caller keeps
what it was shown; the second gets nothing it could act with."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import Json, auth
from tests.api.test_rest_tournaments import teams

TOKEN = re.compile(r"[so]\.[0-9a-f]{32}\.[A-Za-z0-9_-]{20,}")


def tokens_in(text: str) -> set[str]:
    return set(TOKEN.findall(text))


def mint_match(c: Any, key: dict[str, str]) -> tuple[Any, Any]:
    body: Json = {"name": "mine"}
    return c.post("/v1/matches", json=body, headers=key), c.post(
        "/v1/matches", json=body, headers=key
    )


def mint_seat(c: Any, key: dict[str, str]) -> tuple[Any, Any]:
    match = c.post("/v1/matches", json={}).json()["matchId"]
    url, body = f"/v1/matches/{match}/seats/2", {"name": "Ann"}
    return c.post(url, json=body, headers=key), c.post(url, json=body, headers=key)


def mint_tournament(c: Any, key: dict[str, str]) -> tuple[Any, Any]:
    body = {"name": "cup", "teams": teams(4), "format": "round_robin", "matchLength": 1}
    return c.post("/v1/tournaments", json=body, headers=key), c.post(
        "/v1/tournaments", json=body, headers=key
    )


def mint_round(c: Any, key: dict[str, str]) -> tuple[Any, Any]:
    body = {
        "name": "cup",
        "teams": teams(2, ("human", "human")),
        "format": "round_robin",
        "matchLength": 1,
    }
    made = c.post("/v1/tournaments", json=body).json()
    url = f"/v1/tournaments/{made['tournamentId']}/rounds"
    headers = {**auth(made["organiserToken"]), **key}
    return c.post(url, headers=headers), c.post(url, headers=headers)


@pytest.mark.parametrize("mint", [mint_match, mint_seat, mint_tournament, mint_round])
@pytest.mark.parametrize("spoofed", [False, True])
def test_a_second_caller_with_the_same_key_never_gets_the_first_callers_token(
    c: TestClient[Litestar], mint: Any, spoofed: bool
) -> None:
    # the key both callers share; each case its own, as all the cases share one app
    key = {"Idempotency-Key": f"shared-key-{mint.__name__}-{spoofed}"}
    if spoofed:  # a forwarding header changes nothing (not a trusted proxy)
        key["X-Forwarded-For"] = "10.9.0.7"
    first, second = mint(c, key)
    assert first.status_code == second.status_code and first.status_code in (200, 201)
    minted = tokens_in(first.text)
    assert minted, first.text  # the first caller was shown its token(s)
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json()["tokenWithheld"] is True
    assert not tokens_in(second.text), second.text  # nothing to act with
    assert not any(token in second.text for token in minted)
