"""Settings of the players' features (docs/players.md, docs/webhooks.md), read from an
environment mapping by the entry point's app factory, never at import time:

* ``OPERATOR_TOKEN`` is not here: it is one setting of :class:`infra.settings.Settings`
  (``Settings.operator_token``), for the webhooks' routes as for the events feed;
* ``WEBHOOK_INTERVAL_MS`` — how often the outbox follows the log and sends what is due
  [500; 0 = off];
* ``OIDC_ISSUER`` / ``OIDC_AUDIENCE`` / ``OIDC_JWKS_URL`` — sign-in with the app's own
  identity provider's access tokens (all three, or none: off);
* ``PLAYER_QUOTA_PER_HOUR`` — players a client may create an hour [30; 0 = no quota].

:func:`outbox_env` is the eventsourcing environment of the webhook outbox: the game's
store, its own tables (PostgreSQL: prefixed ``webhookoutbox_``) or its own file beside the
SQLite one (``<file>.outbox``), so its events and tracking records commit together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import psycopg
from psycopg import sql

from infra.keys import PostgresKeys, SQLiteKeys
from infra.settings import Settings, SettingsError, persistence_env
from services.accounts.keys import KeyStore, MemoryKeys


@dataclass(frozen=True, slots=True)
class PlayerSettings:
    webhook_interval_ms: int = 500
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_jwks_url: str | None = None
    player_quota_per_hour: int = 30

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> PlayerSettings:
        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        interval = get("WEBHOOK_INTERVAL_MS") or "500"
        if not interval.isdigit() or int(interval) > 3_600_000:
            raise SettingsError(f"WEBHOOK_INTERVAL_MS must be 0..3600000, got {interval!r}")
        oidc = (get("OIDC_ISSUER"), get("OIDC_AUDIENCE"), get("OIDC_JWKS_URL"))
        if any(oidc) and not all(oidc):
            raise SettingsError("OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL go together")
        quota = get("PLAYER_QUOTA_PER_HOUR") or "30"
        if not quota.isdigit() or int(quota) > 1_000_000:
            raise SettingsError(f"PLAYER_QUOTA_PER_HOUR must be 0..1000000, got {quota!r}")
        return cls(int(interval), *oidc, int(quota))


def outbox_env(settings: Settings) -> dict[str, str]:
    """On PostgreSQL the outbox gets a schema of its own (``<schema>_webhooks``, made if
    missing): the eventsourcing library names its insert function after the id type, not
    the table (``es_insert_events_uuid``), so a second application creating its tables in
    the game's schema would replace the game's function with one inserting into its own
    table (docs/decisions.md)."""
    env = persistence_env(settings)
    env.pop("APPLICATION_RECORDER_TOPIC", None)  # the outbox uses the process recorder
    if settings.backend == "sqlite":
        env["SQLITE_DBNAME"] = f"{settings.sqlite_path}.outbox"
    elif settings.backend == "postgres":
        schema = f"{settings.postgres_schema or 'public'}_webhooks"
        env["POSTGRES_SCHEMA"] = schema
        assert settings.database_url is not None
        with psycopg.connect(settings.database_url, autocommit=True) as db:
            db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    return env


def key_store(settings: Settings) -> KeyStore:
    """The players' keys beside the store (crypto-shredding, :mod:`infra.keys`)."""
    if settings.backend == "sqlite":
        return SQLiteKeys(f"{settings.sqlite_path}.keys")
    if settings.backend == "postgres":
        return PostgresKeys(settings)
    return MemoryKeys()
