"""Settings, read from an environment mapping, and the composition root of the service.

Nothing here reads ``os.environ`` by itself: the entry point calls
``Settings.from_env(os.environ)`` once, tests build ``Settings(...)`` directly
(settings are never read at import time).

Variables, with their defaults in brackets:

* ``PERSISTENCE`` — ``popo`` (in memory, tests), ``sqlite`` or ``postgres``
  [``postgres`` when ``DATABASE_URL`` is set, else ``sqlite``]
* ``DATABASE_URL`` — ``postgresql://user:pass@host:port/db`` (user and password
  url-encoded; ``?host=/socket/dir`` for a unix socket) [none]
* ``SQLITE_PATH`` — the SQLite file, its folder made on use [``./var/shengji.sqlite3``];
  ``SQLITE_LOCK_TIMEOUT`` — seconds a writer waits for the lock [5]
* ``POSTGRES_POOL_SIZE`` / ``POSTGRES_MAX_OVERFLOW`` [5 / 10],
  ``POSTGRES_CONNECT_TIMEOUT`` seconds [10], ``POSTGRES_SCHEMA`` [``public``]
* ``HOST`` / ``PORT`` — where the HTTP server listens [``127.0.0.1`` / 8000]
* ``DEAL_INTERVAL_MS`` — ms between two cards drawn, R16 [0: all at once];
  ``DECLARE_MS`` — ms for declaring after the last card, R17 [30000];
  ``WINDOW_MS`` — ms the overcall window stays open, R20 [0: until four passes]
* ``CREATE_TABLES`` — create the event tables if missing [true]
* ``LOG_LEVEL`` — ``DEBUG`` … ``CRITICAL`` [``INFO``]
* ``RATE_LIMIT_PER_MINUTE`` — requests per client per minute [600]; 0 turns off every
  limit on clients (this, the quotas and the stream caps: benchmarks, contract runs)
* ``MATCH_QUOTA_PER_HOUR`` / ``TOURNAMENT_QUOTA_PER_HOUR`` / ``IMPORT_QUOTA_PER_HOUR`` —
  matches and tournaments a client may create, records it may import, an hour
  [60 / 10 / 60]; 0 = no quota (docs/security.md)
* ``SSE_MAX_PER_IDENTITY`` / ``SSE_MAX_PER_ADDRESS`` — live streams open at once per
  verified token and per client address [8 / 32]; 0 = no cap
* ``TRUSTED_PROXIES`` — addresses or networks (CIDR) of the proxies whose
  ``X-Forwarded-For`` names the client, comma-separated [none: forwarding headers are
  ignored]; uvicorn's ``FORWARDED_ALLOW_IPS`` is read when it is not set
* ``SSE_HEARTBEAT_S`` / ``SSE_LIFETIME_S`` / ``SSE_RETRY_MS`` — live streams: ping
  interval, how long a stream lives before the client reconnects, the ``retry:`` hint
  [15 / 600 / 1000]
* ``SWEEP_INTERVAL_MS`` — how often the sweeper claims passed deadlines and turn
  timeouts and runs pending bot moves (``services.sweeper``), 0 = off [1000]
* ``OPERATOR_TOKEN`` — the operator's bearer token, at least 24 characters: it reads the
  events feed unredacted (``/v1/events``, docs/events.md) and manages the webhook
  subscriptions (docs/webhooks.md) [none: nobody does; the webhooks' routes answer 403
  and the outbox does not run]; ``FEED_POLL_MS`` — how often a feed stream that
  has reached the log's end asks the store for more [500]
* ``TIMEOUT_BOT`` — the bot policy that moves for a seat over its time: ``random``,
  ``heuristic`` or ``strong`` (docs/bots.md) [``heuristic``]
* ``BOT_WORKERS`` — bot decisions the bot driver runs at once [2];
  ``BOT_DECISION_MS`` — CPU ms one bot decision may take [1000];
  ``BOTS_ONLY_ROUNDS`` — rounds a bots-only match that never ends by its rules
  (``match_end`` ``wrap``) plays before the driver ends it, 0 = no cap [20]
  (``services.bot_driver``, docs/bots.md)

:func:`persistence_env` turns settings into the eventsourcing library's environment
(docs/event-sourcing.md: POPO in tests, SQLite embedded, PostgreSQL in production);
:func:`build_service` wires the :class:`~services.game.GameService` (infra may import
services; services never import infra).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from domain.game.round_events import Pacing
from domain.players import PLAYERS
from domain.rules.errors import InvalidInputError
from infra.pgstore import RECORDER_TOPIC
from infra.writerlock import claim_writer
from services.bot_driver import BOTS_ONLY_ROUNDS, DECISION_CPU_S, WORKERS
from services.game import Clock, GameService, SeedSource
from services.sources import new_seed, utc_now
from services.timers import TIMEOUT_KIND

Backend = Literal["popo", "sqlite", "postgres"]
BACKENDS: Final[tuple[Backend, ...]] = ("popo", "sqlite", "postgres")
POSTGRES_SCHEMES: Final = frozenset({"postgresql", "postgres", "postgresql+psycopg"})
DEFAULT_SQLITE_PATH: Final = Path("var/shengji.sqlite3")
_TRUE: Final = frozenset({"1", "true", "yes", "y", "on", "t"})
_FALSE: Final = frozenset({"0", "false", "no", "n", "off", "f"})
_LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
OPERATOR_TOKEN_MIN: Final = 24
"""A guessable operator token would open every event and every webhook (docs/security.md)."""
_Getter = Callable[[str], str | None]


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable."""


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    """The parts of a ``DATABASE_URL`` (user name and password url-decoded)."""

    dbname: str
    host: str
    port: int
    user: str
    password: str


def parse_database_url(url: str) -> PostgresTarget:
    """Split ``postgresql://user:pass@host:port/db`` (libpq's ``?host=``/``?port=`` too)."""
    try:
        parts = urlsplit(url)
        port_in_netloc = parts.port
    except ValueError as e:
        raise SettingsError(f"DATABASE_URL is not a URL: {e}") from None
    if parts.scheme not in POSTGRES_SCHEMES:
        raise SettingsError(
            f"DATABASE_URL must start with postgresql://, not {parts.scheme or '(nothing)'}://"
        )
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    unknown = sorted(set(query) - {"host", "port"})
    if unknown:
        raise SettingsError(
            f"DATABASE_URL: unsupported parameter(s) {', '.join(unknown)} (host and port only)"
        )
    host = query.get("host") or unquote(parts.hostname or "")
    if not host:
        raise SettingsError("DATABASE_URL needs a host (…@host:port/db or ?host=/socket/dir)")
    port_text = query.get("port") or (str(port_in_netloc) if port_in_netloc else "5432")
    port = _int("DATABASE_URL port", port_text, 1, 65535)
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname:
        raise SettingsError("DATABASE_URL needs a database name (…/dbname)")
    user = unquote(parts.username or "")
    if not user:
        raise SettingsError("DATABASE_URL needs a user name (postgresql://user@host/db)")
    return PostgresTarget(dbname, host, port, user, unquote(parts.password or ""))


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the process is configured with (see the module docstring's table)."""

    backend: Backend = "sqlite"
    database_url: str | None = None
    sqlite_path: Path = DEFAULT_SQLITE_PATH
    sqlite_lock_timeout: int = 5
    postgres_pool_size: int = 5
    postgres_max_overflow: int = 10
    postgres_connect_timeout: int = 10
    postgres_schema: str = ""
    host: str = "127.0.0.1"
    port: int = 8000
    deal_interval_ms: int = 0
    declare_ms: int = 30_000
    window_ms: int = 0
    create_tables: bool = True
    log_level: str = "INFO"
    rate_limit_per_minute: int = 600
    """Requests a client may make per minute (token bucket); 0 = no limit on clients at
    all (nor the quotas and stream caps below)."""
    match_quota_per_hour: int = 60
    tournament_quota_per_hour: int = 10
    import_quota_per_hour: int = 60
    sse_max_per_identity: int = 8
    sse_max_per_address: int = 32
    trusted_proxies: tuple[str, ...] = ()
    """Proxies (addresses or CIDR networks) whose X-Forwarded-For is believed; () = none."""
    sse_heartbeat_s: int = 15
    sse_lifetime_s: int = 600
    sse_retry_ms: int = 1000
    sweep_interval_ms: int = 1000
    """The sweeper's period (deadlines, turn timeouts); 0 = no sweeper."""
    timeout_bot: str = TIMEOUT_KIND
    """The bot policy that moves for a timed-out seat (``domain.players.PLAYERS``)."""
    bot_workers: int = WORKERS
    """Bot decisions the bot driver runs at once."""
    bot_decision_ms: int = int(DECISION_CPU_S * 1000)
    """CPU ms one bot decision may take."""
    bots_only_rounds: int = BOTS_ONLY_ROUNDS
    """Rounds a bots-only ``wrap`` match plays before the driver ends it; 0 = no cap."""
    operator_token: str | None = field(default=None, repr=False)
    """The operator's token: the events feed unredacted (docs/events.md) and the webhook
    subscriptions (docs/webhooks.md); None: nobody is the operator."""
    feed_poll_ms: int = 500
    """A feed stream at the log's end asks the store for more this often."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise SettingsError(
                f"PERSISTENCE must be one of {', '.join(BACKENDS)}, got {self.backend!r}"
            )
        if self.backend == "postgres":
            if not self.database_url:
                raise SettingsError("PERSISTENCE=postgres needs DATABASE_URL")
            parse_database_url(self.database_url)
        if self.log_level not in _LOG_LEVELS:
            raise SettingsError(
                f"LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, got {self.log_level!r}"
            )
        _int("PORT", self.port, 1, 65535)
        _int("SQLITE_LOCK_TIMEOUT", self.sqlite_lock_timeout, 0, 3600)
        _int("POSTGRES_POOL_SIZE", self.postgres_pool_size, 1, 1000)
        _int("POSTGRES_MAX_OVERFLOW", self.postgres_max_overflow, 0, 1000)
        _int("POSTGRES_CONNECT_TIMEOUT", self.postgres_connect_timeout, 1, 3600)
        _int("RATE_LIMIT_PER_MINUTE", self.rate_limit_per_minute, 0, 1_000_000)
        _int("MATCH_QUOTA_PER_HOUR", self.match_quota_per_hour, 0, 1_000_000)
        _int("TOURNAMENT_QUOTA_PER_HOUR", self.tournament_quota_per_hour, 0, 1_000_000)
        _int("IMPORT_QUOTA_PER_HOUR", self.import_quota_per_hour, 0, 1_000_000)
        _int("SSE_MAX_PER_IDENTITY", self.sse_max_per_identity, 0, 100_000)
        _int("SSE_MAX_PER_ADDRESS", self.sse_max_per_address, 0, 100_000)
        for proxy in self.trusted_proxies:
            _network(proxy)
        _int("SSE_HEARTBEAT_S", self.sse_heartbeat_s, 1, 3600)
        _int("SSE_LIFETIME_S", self.sse_lifetime_s, 1, 86_400)
        _int("SSE_RETRY_MS", self.sse_retry_ms, 0, 3_600_000)
        _int("SWEEP_INTERVAL_MS", self.sweep_interval_ms, 0, 3_600_000)
        _int("FEED_POLL_MS", self.feed_poll_ms, 10, 60_000)
        _int("BOT_WORKERS", self.bot_workers, 1, 64)
        _int("BOT_DECISION_MS", self.bot_decision_ms, 10, 600_000)
        _int("BOTS_ONLY_ROUNDS", self.bots_only_rounds, 0, 1_000_000)
        if self.operator_token is not None and len(self.operator_token) < OPERATOR_TOKEN_MIN:
            raise SettingsError(f"OPERATOR_TOKEN must be at least {OPERATOR_TOKEN_MIN} characters")
        if self.timeout_bot not in PLAYERS:
            raise SettingsError(
                f"TIMEOUT_BOT must be one of {', '.join(PLAYERS)}, got {self.timeout_bot!r}"
            )
        try:
            self.pacing  # noqa: B018 - Pacing validates the three durations
        except InvalidInputError as e:
            raise SettingsError(str(e)) from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Read the settings from ``environ`` (``os.environ`` at the entry point)."""

        def get(name: str) -> str | None:
            value = environ.get(name)
            return value.strip() if value is not None and value.strip() else None

        database_url = get("DATABASE_URL")
        backend = (get("PERSISTENCE") or ("postgres" if database_url else "sqlite")).lower()
        if backend not in BACKENDS:
            raise SettingsError(
                f"PERSISTENCE must be one of {', '.join(BACKENDS)}, got {backend!r}"
            )
        defaults = cls()
        return cls(
            backend=backend,
            database_url=database_url,
            sqlite_path=Path(get("SQLITE_PATH") or defaults.sqlite_path),
            sqlite_lock_timeout=_int_env(get, "SQLITE_LOCK_TIMEOUT", defaults.sqlite_lock_timeout),
            postgres_pool_size=_int_env(get, "POSTGRES_POOL_SIZE", defaults.postgres_pool_size),
            postgres_max_overflow=_int_env(
                get, "POSTGRES_MAX_OVERFLOW", defaults.postgres_max_overflow
            ),
            postgres_connect_timeout=_int_env(
                get, "POSTGRES_CONNECT_TIMEOUT", defaults.postgres_connect_timeout
            ),
            postgres_schema=get("POSTGRES_SCHEMA") or defaults.postgres_schema,
            host=get("HOST") or defaults.host,
            port=_int_env(get, "PORT", defaults.port),
            deal_interval_ms=_int_env(get, "DEAL_INTERVAL_MS", defaults.deal_interval_ms),
            declare_ms=_int_env(get, "DECLARE_MS", defaults.declare_ms),
            window_ms=_int_env(get, "WINDOW_MS", defaults.window_ms),
            create_tables=_bool_env(get, "CREATE_TABLES", defaults.create_tables),
            log_level=(get("LOG_LEVEL") or defaults.log_level).upper(),
            rate_limit_per_minute=_int_env(
                get, "RATE_LIMIT_PER_MINUTE", defaults.rate_limit_per_minute
            ),
            match_quota_per_hour=_int_env(
                get, "MATCH_QUOTA_PER_HOUR", defaults.match_quota_per_hour
            ),
            tournament_quota_per_hour=_int_env(
                get, "TOURNAMENT_QUOTA_PER_HOUR", defaults.tournament_quota_per_hour
            ),
            import_quota_per_hour=_int_env(
                get, "IMPORT_QUOTA_PER_HOUR", defaults.import_quota_per_hour
            ),
            sse_max_per_identity=_int_env(
                get, "SSE_MAX_PER_IDENTITY", defaults.sse_max_per_identity
            ),
            sse_max_per_address=_int_env(get, "SSE_MAX_PER_ADDRESS", defaults.sse_max_per_address),
            trusted_proxies=tuple(
                p.strip()
                for p in (get("TRUSTED_PROXIES") or get("FORWARDED_ALLOW_IPS") or "").split(",")
                if p.strip()
            ),
            sse_heartbeat_s=_int_env(get, "SSE_HEARTBEAT_S", defaults.sse_heartbeat_s),
            sse_lifetime_s=_int_env(get, "SSE_LIFETIME_S", defaults.sse_lifetime_s),
            sse_retry_ms=_int_env(get, "SSE_RETRY_MS", defaults.sse_retry_ms),
            sweep_interval_ms=_int_env(get, "SWEEP_INTERVAL_MS", defaults.sweep_interval_ms),
            timeout_bot=(get("TIMEOUT_BOT") or defaults.timeout_bot).lower(),
            bot_workers=_int_env(get, "BOT_WORKERS", defaults.bot_workers),
            bot_decision_ms=_int_env(get, "BOT_DECISION_MS", defaults.bot_decision_ms),
            bots_only_rounds=_int_env(get, "BOTS_ONLY_ROUNDS", defaults.bots_only_rounds),
            operator_token=get("OPERATOR_TOKEN"),
            feed_poll_ms=_int_env(get, "FEED_POLL_MS", defaults.feed_poll_ms),
        )

    @property
    def pacing(self) -> Pacing:
        """The deal pacing every new deal records (R16, R17, R20)."""
        return Pacing(self.deal_interval_ms, self.declare_ms, self.window_ms)


def persistence_env(settings: Settings) -> dict[str, str]:
    """The eventsourcing library's environment for ``settings``' store.

    Every key the chosen module reads is given explicitly, so a stray variable of the
    process environment (which the library merges in) cannot redirect the store.
    """
    if settings.backend == "popo":
        return {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    create = "y" if settings.create_tables else "n"
    if settings.backend == "sqlite":
        return {
            # The library's own recorder: WAL, synchronous=FULL (a COMMIT is on disk).
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(settings.sqlite_path),
            "SQLITE_LOCK_TIMEOUT": str(settings.sqlite_lock_timeout),
            "CREATE_TABLE": create,
            # The embedded store has one writer, this process: every save refreshes the
            # aggregate cache, so a load need not ask the file for newer events.
            "AGGREGATE_CACHE_FASTFORWARD": "n",
        }
    assert settings.database_url is not None  # Settings checked it
    target = parse_database_url(settings.database_url)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC,  # one round-trip per save, lock kept
        "POSTGRES_ENABLE_DB_FUNCTIONS": "y",
        "POSTGRES_DBNAME": target.dbname,
        "POSTGRES_HOST": target.host,
        "POSTGRES_PORT": str(target.port),
        "POSTGRES_USER": target.user,
        "POSTGRES_PASSWORD": target.password,
        "POSTGRES_POOL_SIZE": str(settings.postgres_pool_size),
        "POSTGRES_MAX_OVERFLOW": str(settings.postgres_max_overflow),
        "POSTGRES_CONNECT_TIMEOUT": str(settings.postgres_connect_timeout),
        "POSTGRES_SCHEMA": settings.postgres_schema,
        "CREATE_TABLE": create,
    }


def build_service(
    settings: Settings, *, clock: Clock | None = None, seeds: SeedSource | None = None
) -> GameService:
    """The composition root: a :class:`GameService` on the configured store.

    ``clock`` and ``seeds`` default to the wall clock and the OS's CSPRNG (R35); tests
    pass fakes. Close the service (``service.close()``) to release its connections.
    """
    release = None
    if settings.backend == "sqlite" and not str(settings.sqlite_path).startswith(":memory:"):
        settings.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
        release = claim_writer(str(settings.sqlite_path))  # one writing process per file
    try:
        service = GameService(
            persistence_env(settings),
            clock=clock or utc_now,
            seeds=seeds or new_seed,
            pacing=settings.pacing,
        )
    except BaseException:
        if release is not None:
            release()
        raise
    if release is not None:
        service.on_close.append(release)
    return service


def _int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise SettingsError(f"{name} must be an integer, got {value!r}") from None
    if type(value) is not int or not low <= value <= high:
        raise SettingsError(f"{name} must be an integer {low}..{high}, got {value!r}")
    return value


def _network(text: str) -> None:
    """A trusted proxy is an IP address or a network in CIDR notation (no names, no ``*``:
    trusting every peer would let any client choose its address)."""
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise SettingsError(
            f"TRUSTED_PROXIES: {text!r} is not an IP address or a network (10.0.0.0/8)"
        ) from None


def _int_env(get: _Getter, name: str, default: int) -> int:
    text = get(name)
    return default if text is None else _int(name, text, -(2**63), 2**63)


def _bool_env(get: _Getter, name: str, default: bool) -> bool:
    text = get(name)
    if text is None:
        return default
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise SettingsError(f"{name} must be true or false, got {text!r}")
