"""The players' keys on PostgreSQL (crypto-shredding, docs/players.md) wherever the
settings put the event tables — also with ``DATABASE_URL`` alone, the README's way to
switch to PostgreSQL, where ``POSTGRES_SCHEMA`` is unset: the server failed to start
there (``CREATE TABLE "".shengji_player_keys``, a zero-length identifier)."""

from __future__ import annotations

import os
from uuid import uuid4

import psycopg
import pytest
from psycopg import sql

from infra.keys import PostgresKeys
from infra.settings import Settings
from infra.store import key_store


@pytest.mark.postgres
@pytest.mark.parametrize("schema", ["", "keys_{}"], ids=["unset", "named"])
def test_keys_live_beside_the_events(pg_url: str, schema: str) -> None:
    environ = {"DATABASE_URL": pg_url}
    if schema:
        schema = schema.format(uuid4().hex[:12])
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        environ["POSTGRES_SCHEMA"] = schema
    settings = Settings.from_env(environ)
    keys = key_store(settings)  # creates its table
    account, key = uuid4(), os.urandom(32)
    keys.create(account, key)
    assert keys.get(account) == key
    keys.erase(account)
    assert keys.get(account) is None
    assert isinstance(keys, PostgresKeys)
    keys.close()  # its kept connection
    assert keys.get(account) is None  # opened again when asked
    keys.close()
    where = schema or "public"  # the search_path's first schema, as the event tables'
    with psycopg.connect(pg_url) as db:
        found = db.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema = %s AND table_name = 'shengji_player_keys'",
            (where,),
        ).fetchone()
    assert found == (1,)
