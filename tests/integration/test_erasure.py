"""Crypto-shredding (docs/players.md): a player's display name (and what they wrote at a
table, R37) is stored only sealed
under their key (AES-GCM); ``DELETE /v1/players/me`` destroys the key. Afterwards the
match, its history, its state at any version and its record still read — with the player
shown as erased — and no byte of the name (nor of the key) is left anywhere in the store:
the SQLite files (events, WAL, keys, outbox) or the PostgreSQL tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg import sql

from infra.bootstrap import build_app
from infra.settings import Settings
from services.accounts.keys import ERASED
from tests.api.rest import Table, auth
from tests.resilience.harness import drop_schema, fresh_schema

NAME = "Zyxwvut Qwertyuiop"
WORDS = "Plokmijn Uhbygvtf"
"""What the player wrote at the table (R37): shredded with the name."""


def play_then_erase(c: TestClient[Litestar]) -> tuple[bytes, str, str]:
    """A player in a match with three guests, some moves and words at the table, then
    erased: (the key, the match, a guest's seat token)."""
    r = c.post("/v1/players", json={"displayName": NAME})
    player, player_id = r.json()["token"], r.json()["playerId"]
    created = c.post("/v1/matches", json={"name": "erasure", "talk": {"freeText": True}}).json()
    match_id = created["matchId"]
    body = {"matchId": match_id, "seat": 0}
    assert c.post("/v1/players/me/seats", json=body, headers=auth(player)).status_code == 201
    tokens = [player]
    for seat in (1, 2, 3):
        tokens.append(
            c.post(f"/v1/matches/{match_id}/seats/{seat}", json={"name": f"g{seat}"}).json()[
                "token"
            ]
        )
    table = Table(c, match_id, created["organiserToken"], tokens)
    for _ in range(10):
        table.step()
    said = c.post(f"/v1/matches/{match_id}/talk", json={"text": WORDS}, headers=auth(player))
    assert said.status_code == 201, said.text
    finished = c.post(f"/v1/matches/{match_id}/finish", headers=auth(created["organiserToken"]))
    assert finished.status_code == 200  # a finished match has a record
    assert c.get(f"/v1/matches/{match_id}").json()["seats"][0]["name"] == NAME
    app: Litestar = c.app
    sealer = app.state.runtime.service.sealer
    key = sealer.keys.get(UUID(player_id))
    assert key is not None
    assert c.delete("/v1/players/me", headers=auth(player)).status_code == 204
    assert c.get("/v1/players/me", headers=auth(player)).status_code == 401  # sessions ended
    assert sealer.keys.get(UUID(player_id)) is None
    return key, match_id, tokens[1]


def reads_show_erased(c: TestClient[Litestar], match_id: str, guest: str) -> None:
    url = f"/v1/matches/{match_id}"
    summary = c.get(url).json()
    assert summary["seats"][0]["name"] == ERASED and summary["seats"][1]["name"] == "g1"
    history = c.get(f"{url}/history?limit=1000").json()["items"]
    seat_taken = [i for i in history if i["type"] == "SeatTaken"]
    assert seat_taken[0]["data"]["player"] == ERASED
    for version in (1, 2, 5, summary["version"]):
        assert c.get(f"{url}/state?version={version}").status_code == 200
    record = c.get(f"{url}/record")
    assert record.status_code == 200 and ERASED in record.text and NAME not in record.text
    (said,) = c.get(f"{url}/talk", headers=auth(guest)).json()["messages"]
    assert (said["text"], said["erased"]) == (None, True)


@pytest.fixture
def sqlite_client(tmp_path: Path) -> Iterator[TestClient[Litestar]]:
    settings = Settings(backend="sqlite", sqlite_path=tmp_path / "events.sqlite3")
    with TestClient(build_app(settings)) as c:
        yield c


def test_an_erased_name_is_nowhere_in_the_sqlite_files(
    sqlite_client: TestClient[Litestar], tmp_path: Path
) -> None:
    key, match_id, guest = play_then_erase(sqlite_client)
    reads_show_erased(sqlite_client, match_id, guest)
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    names = {p.name for p in files}
    assert {"events.sqlite3", "events.sqlite3.keys"} <= names
    for path in files:
        data = path.read_bytes()
        assert NAME.encode() not in data, path
        assert WORDS.encode() not in data, path
        assert key not in data, path


@pytest.mark.postgres
def test_an_erased_name_is_nowhere_in_the_postgres_tables(pg_url: str) -> None:
    schema = fresh_schema(pg_url)
    try:
        settings = Settings(backend="postgres", database_url=pg_url, postgres_schema=schema)
        with TestClient(build_app(settings)) as c:
            key, match_id, guest = play_then_erase(c)
            reads_show_erased(c, match_id, guest)
        with psycopg.connect(pg_url) as db:
            tables = db.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema IN (%s, %s)",
                (schema, f"{schema}_webhooks"),
            ).fetchall()
            names = {t for _, t in tables}
            assert {"shengji_events", "shengji_player_keys", "webhookoutbox_events"} <= names
            for table in tables:
                rows = db.execute(
                    sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(*table))
                ).fetchall()
                text = "\n".join(r[0] for r in rows)
                assert NAME not in text, table  # as text (text columns)
                assert WORDS not in text, table
                assert WORDS.encode().hex() not in text, table
                assert NAME.encode().hex() not in text, table  # in a bytea (shown as hex)
                assert key.hex() not in text, table
    finally:
        drop_schema(pg_url, schema)
        drop_schema(pg_url, f"{schema}_webhooks")
