"""Quick play under races on real processes (docs/players.md): two ``infra.serve``
replicas on one throwaway PostgreSQL schema, many tickets sent at once to both (singles,
partners naming each other, some asking for bots after a second, so both replicas'
sweepers race too; the leftover tickets then get bots). Every player ends in exactly one
match, every ticket in exactly one seat, partners opposite (R2), and no seat of any match
is given twice."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.resilience.harness import TLS, Replica, drop_schema, fresh_schema
from tests.resilience.zygote import Zygote

pytestmark = pytest.mark.postgres
Json = dict[str, Any]


@pytest.fixture
def replicas(pg_url: str, zygote: Zygote) -> Iterator[list[Replica]]:
    schema = fresh_schema(pg_url)
    log_dir = Path(tempfile.mkdtemp(prefix="shengji-lobby-"))
    started = [Replica(pg_url, schema, log_dir).forked_from(zygote) for _ in range(2)]
    try:
        started[0].start()
        asyncio.run(started[0].ready())
        started[1].start()
        asyncio.run(started[1].ready())
        yield started
    finally:
        for r in started:
            r.stop()
        drop_schema(pg_url, schema)
        drop_schema(pg_url, f"{schema}_webhooks")  # the webhook outbox's (infra.players)
        shutil.rmtree(log_dir, ignore_errors=True)


async def race(bases: list[str]) -> tuple[list[Json], list[Json], dict[str, Json]]:
    async with httpx.AsyncClient(timeout=30.0, verify=TLS) as http:

        async def post(i: int, path: str, body: Json, token: str | None = None) -> Json:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            r = await http.post(bases[i % 2] + path, json=body, headers=headers)
            assert r.status_code == 201, r.text
            answer: Json = r.json()
            return answer

        players = await asyncio.gather(
            *(post(i, "/v1/players", {"displayName": f"player {i}"}) for i in range(26))
        )
        bodies: list[Json] = []
        for i in range(26):  # four pairs: 0-1, 2-3, 4-5, 6-7; then singles
            body: Json = {"partner": players[i ^ 1]["playerId"]} if i < 8 else {}
            # bots after 1 or 3 seconds: whoever is left over in the end gets them
            body["botsAfterSeconds"] = 1 if i % 3 == 0 else 3
            bodies.append(body)
        tickets = await asyncio.gather(
            *(post(i, "/v1/lobby/tickets", bodies[i], players[i]["token"]) for i in range(26))
        )
        for _ in range(100):  # the sweepers give bots after the wait
            seen = [
                (
                    await http.get(
                        bases[i % 2] + f"/v1/lobby/tickets/{tickets[i]['ticketId']}",
                        headers={"Authorization": f"Bearer {players[i]['token']}"},
                    )
                ).json()
                for i in range(26)
            ]
            if all(t["status"] == "matched" for t in seen):
                break
            await asyncio.sleep(0.2)
        matches = {
            t["matchId"]: (await http.get(bases[0] + f"/v1/matches/{t['matchId']}")).json()
            for t in seen
        }
        mine = [
            (
                await http.get(
                    bases[1 - i % 2] + "/v1/players/me/matches",
                    headers={"Authorization": f"Bearer {p['token']}"},
                )
            ).json()
            for i, p in enumerate(players)
        ]
        return seen, mine, matches


def test_racing_tickets_on_two_replicas_seat_every_player_exactly_once(
    replicas: list[Replica],
) -> None:
    seen, mine, matches = asyncio.run(race([r.base for r in replicas]))
    assert [t["status"] for t in seen] == ["matched"] * 26
    assert [len(m["current"]) for m in mine] == [1] * 26  # nobody in two matches
    assert [m["current"][0]["matchId"] for m in mine] == [t["matchId"] for t in seen]
    humans = Counter(
        s["name"] for m in matches.values() for s in m["seats"] if s["kind"] == "human"
    )
    assert sorted(humans) == sorted(f"player {i}" for i in range(26))
    assert set(humans.values()) == {1}  # no seat given twice
    for m in matches.values():
        assert all(s is not None for s in m["seats"]) and m["roundNumber"] == 1
    for a in range(0, 8, 2):  # partners opposite (R2)
        assert seen[a]["matchId"] == seen[a + 1]["matchId"]
        assert abs(seen[a]["seat"] - seen[a + 1]["seat"]) == 2
    print(f"lobby race: 26 tickets on 2 replicas -> {len(matches)} matches, none twice")
