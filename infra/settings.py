"""The process's settings: every environment variable the service reads, declared once.

:class:`Settings` is the one declaration. Each field is one variable: its name is the
field's, upper-cased (``Meta(extra={"env": ...})`` names another, ``"also"`` a second name
read when the first is unset), its type, its default, its bounds (``Meta(ge=..., le=...)``,
``min_length``, a ``Literal`` or ``extra={"choices": ...}``) and its meaning
(``Meta(description=...)``). From that declaration alone:

* :meth:`Settings.from_env` reads an environment mapping (a value is stripped; an empty
  value is unset);
* ``Settings.__post_init__`` checks every value, for ``Settings(...)`` built in code as for
  the environment's (a :class:`SettingsError` names the variable);
* :func:`markdown_table` writes the table of docs/configuration.md
  (``scripts/gen_configuration.py``; ``tests/infra/test_settings.py`` fails when they drift).

Adding a variable is one field here. Nothing reads ``os.environ`` at import time: the entry
points (``infra.serve``, ``infra.cli``) call ``Settings.from_env(os.environ)`` once and hand
the object to the composition root, ``infra.bootstrap`` (docs/decisions.md F17).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec
from msgspec import Meta

from api.streamcap import parse_caps
from api.streams import KINDS
from domain.bots import PLAYERS
from domain.game.round_events import Pacing
from domain.game.timers import Timers
from domain.rules.errors import InvalidInputError
from domain.talk.table_talk import Limits
from services.accounts.oidc import ALGORITHMS, SIGNING_ALGORITHMS
from services.bot_driver import BOT_QUOTA_MS, BOTS_ONLY_ROUNDS, DECISION_CPU_S, WORKERS
from services.game import TablePolicy
from services.ratings.seasons import Schedule
from services.timers import TIMEOUT_KIND

Backend = Literal["popo", "sqlite", "postgres"]
Role = Literal["all", "api", "worker"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
POSTGRES_SCHEMES: Final = frozenset({"postgresql", "postgres", "postgresql+psycopg"})
DEFAULT_SQLITE_PATH: Final = Path("var/shengji.sqlite3")
OPERATOR_TOKEN_MIN: Final = 24
"""A guessable operator token would open every event and every webhook (docs/security.md)."""
_TRUE: Final = frozenset({"1", "true", "yes", "y", "on", "t"})
_FALSE: Final = frozenset({"0", "false", "no", "n", "off", "f"})

_MS: Final = 3_600_000
"""An hour in milliseconds: the upper bound of every period."""
_MANY: Final = 1_000_000
"""The upper bound of every per-minute or per-hour allowance."""


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the process is configured with (docs/configuration.md, generated)."""

    # -- the store ------------------------------------------------------------------------
    backend: Annotated[
        Backend,
        Meta(
            description="The event store: `popo` (in memory), `sqlite` (the embedded file) or "
            "`postgres`. Unset: `postgres` when `DATABASE_URL` is set, else `sqlite`.",
            extra={"env": "PERSISTENCE"},
        ),
    ] = "sqlite"
    database_url: Annotated[
        str | None,
        Meta(
            description="PostgreSQL's address, `postgresql://user:pass@host:port/db` (user and "
            "password url-encoded; `?host=/socket/dir` for a unix socket).",
            extra={"secret": True},
        ),
    ] = None
    process_role: Annotated[
        Role,
        Meta(
            description="What this process runs: `all` (HTTP, streams and the background work: "
            "the one process of the embedded store); on PostgreSQL `api` (HTTP and streams "
            "only) or `worker` (`shengji worker`: the sweeper and timers, the bot driver, the "
            "tournament clerk, the lobby sweeper and the webhook outbox, with health probes "
            "and metrics only). docs/scaling.md says how many of each."
        ),
    ] = "all"
    sqlite_path: Annotated[
        Path,
        Meta(
            description="The embedded store's file (its folder is made on use). One process "
            "writes it; a second server on the file is refused at start-up, so replicas run on "
            "PostgreSQL."
        ),
    ] = DEFAULT_SQLITE_PATH
    sqlite_lock_timeout: Annotated[
        int, Meta(ge=0, le=3600, description="Seconds a SQLite writer waits for the lock.")
    ] = 5
    postgres_pool_size: Annotated[
        int, Meta(ge=1, le=1000, description="PostgreSQL connections kept open per process.")
    ] = 5
    postgres_max_overflow: Annotated[
        int,
        Meta(
            ge=0,
            le=1000,
            description="PostgreSQL connections opened beyond the pool under load; pool size + "
            "overflow is how many store calls run at once.",
        ),
    ] = 10
    postgres_connect_timeout: Annotated[
        int,
        Meta(
            ge=1,
            le=3600,
            description="Seconds a PostgreSQL connection attempt waits (the library tries a "
            "failed call again, each attempt waiting up to this).",
        ),
    ] = 10
    postgres_schema: Annotated[
        str, Meta(description="The PostgreSQL schema of the tables; empty: `public`.")
    ] = ""
    create_tables: Annotated[
        bool,
        Meta(
            description="Create the store's tables if missing; `false` on replicas whose "
            "schema `shengji migrate` creates."
        ),
    ] = True
    aggregate_cache_maxsize: Annotated[
        int,
        Meta(
            ge=1,
            le=10_000_000,
            description="Aggregates a process keeps in its cache (the eventsourcing library's "
            "LRU): a match in play holds its match, its round and its talk, so at least 3 per "
            "match a process serves at once, plus room for its players and tournaments "
            "(docs/scaling.md).",
        ),
    ] = 5000
    aggregate_cache_fastforward: Annotated[
        bool,
        Meta(
            description="On PostgreSQL: `true` asks the store for newer events on every load "
            "of a cached aggregate; `false` serves the cache without a query, kept by the "
            "live hub (loads read the store while it is away) and a save's stale retry "
            "(docs/decisions.md D-owner). The embedded store (one writer) never asks."
        ),
    ] = False
    rating_seasons: Annotated[
        Schedule,
        Meta(
            description="How long a season of the rating boards lasts (docs/decisions.md "
            "D-ratings): `weekly` (ISO weeks) or `monthly`; each season's board starts "
            "empty and stays readable. A change rates the whole log again."
        ),
    ] = "monthly"
    # -- the server -----------------------------------------------------------------------
    host: Annotated[str, Meta(description="The address the HTTP server listens on.")] = "127.0.0.1"
    port: Annotated[int, Meta(ge=1, le=65535, description="The HTTP server's port.")] = 8000
    shutdown_timeout: Annotated[
        int,
        Meta(
            ge=0,
            le=3600,
            description="Seconds a graceful shutdown (SIGTERM) waits for open requests and "
            "streams before closing them.",
        ),
    ] = 10
    keep_alive_timeout: Annotated[
        int,
        Meta(
            ge=1,
            le=3600,
            description="Seconds an idle keep-alive HTTP connection is kept open (above a "
            "proxy's idle timeout in front of it: ingress-nginx keeps upstream connections 60 "
            "s; a player's phone sends its next move after the others').",
        ),
    ] = 75
    schema_wait_timeout: Annotated[
        int,
        Meta(
            ge=0,
            le=3600,
            description="With `CREATE_TABLES=false`, seconds the server waits for the schema "
            "(`shengji migrate`) before it gives up (exit 1).",
        ),
    ] = 120
    trusted_proxies: Annotated[
        tuple[str, ...],
        Meta(
            description="Comma-separated addresses or CIDR networks of the proxies whose "
            "`X-Forwarded-For` names the client; none: forwarding headers are ignored. "
            "uvicorn's `FORWARDED_ALLOW_IPS` is read when this is unset.",
            extra={"also": "FORWARDED_ALLOW_IPS"},
        ),
    ] = ()
    log_level: Annotated[LogLevel, Meta(description="The JSON logs' level.")] = "INFO"
    # -- the game -------------------------------------------------------------------------
    deal_interval_ms: Annotated[
        int,
        Meta(ge=0, le=_MS, description="Ms between two cards of a paced deal (R16); 0: at once."),
    ] = 0
    declare_ms: Annotated[
        int, Meta(ge=0, le=_MS, description="Ms for declaring after the last card (R17).")
    ] = 30_000
    window_ms: Annotated[
        int,
        Meta(
            ge=0,
            le=_MS,
            description="Ms the overcall window stays open (R20); 0: until four passes.",
        ),
    ] = 0
    timeout_bot: Annotated[
        str,
        Meta(
            description="The bot that moves for a seat over its turn limit (docs/bots.md).",
            extra={"choices": tuple(PLAYERS)},
        ),
    ] = TIMEOUT_KIND
    bot_workers: Annotated[
        int, Meta(ge=1, le=64, description="Bot decisions the bot driver runs at once.")
    ] = WORKERS
    bot_decision_ms: Annotated[
        int,
        Meta(
            ge=10,
            le=600_000,
            description="CPU ms one bot decision may take (docs/decisions.md D-bot-driver).",
        ),
    ] = int(DECISION_CPU_S * 1000)
    bots_only_rounds: Annotated[
        int,
        Meta(
            ge=0,
            le=1_000_000,
            description="Rounds a bots-only match that never ends by its rules (match end "
            "`wrap`) plays before the bot driver ends it (docs/bots.md); 0: no cap.",
        ),
    ] = BOTS_ONLY_ROUNDS
    bot_quota_ms_per_hour: Annotated[
        int,
        Meta(
            ge=0,
            le=_MS,
            description="CPU ms the bots of one owner (a tournament's tables together, else "
            "one match) may take an hour; an owner whose time is spent waits for it to come "
            "back while the others' bots play on (docs/decisions.md D-bounded); 0: no quota.",
        ),
    ] = BOT_QUOTA_MS
    # -- tables and players (docs/players.md) ---------------------------------------------
    session_idle_s: Annotated[
        int,
        Meta(
            ge=60,
            le=31_536_000,
            description="Seconds a player session may go unused (not refreshed, its token not "
            "rotated) before it stops signing in (docs/players.md).",
        ),
    ] = 30 * 86_400
    talk_text_max: Annotated[
        int,
        Meta(
            ge=1,
            le=2000,
            description="The longest free text a seat may write at a table that allows it "
            "(characters, R37).",
        ),
    ] = 200
    talk_per_minute: Annotated[
        int,
        Meta(
            ge=1,
            le=600,
            description="Messages (quick chat and free text) one seat or spectator may send "
            "at a table in a minute; beyond, 429 `talk-rate-limited` (R37).",
        ),
    ] = 10
    talk_reports_per_table: Annotated[
        int,
        Meta(
            ge=1,
            le=100,
            description="Messages one person may report at one table; beyond, 429 "
            "`reports-exceeded` (R37).",
        ),
    ] = 5
    quick_play_rounds: Annotated[
        int,
        Meta(
            ge=1,
            le=100,
            description="Quick play's match length (`rounds:N`) for a rule set that would "
            "never end by itself (match end `wrap`); stated on the ticket.",
        ),
    ] = 4
    quick_play_turn_ms: Annotated[
        int,
        Meta(
            ge=1_000,
            le=_MS,
            description="Quick play's turn limit for declaring and playing (burying gets "
            "twice it): a seat over its time is played by the timeout bot (docs/timers.md).",
        ),
    ] = 30_000
    # -- limits on clients (docs/security.md) ---------------------------------------------
    rate_limit_per_minute: Annotated[
        int,
        Meta(
            ge=0,
            le=_MANY,
            description="Requests a client (a verified token, else its address) may make a "
            "minute (429 with `Retry-After`); 0 turns off every limit on clients: this, the "
            "quotas and the stream caps.",
        ),
    ] = 600
    match_quota_per_hour: Annotated[
        int,
        Meta(
            ge=0,
            le=_MANY,
            description="Matches a client may make an hour, by any route, counted as many "
            "as a command makes: a match, a rematch, a stored record, a quick-play ticket "
            "(one each), a tournament round (one a table; docs/decisions.md D-bounded); 0: "
            "no quota.",
        ),
    ] = 60
    tournament_quota_per_hour: Annotated[
        int,
        Meta(ge=0, le=_MANY, description="Tournaments a client may create an hour; 0: no quota."),
    ] = 10
    import_quota_per_hour: Annotated[
        int,
        Meta(ge=0, le=_MANY, description="Records a client may import an hour; 0: no quota."),
    ] = 60
    player_quota_per_hour: Annotated[
        int,
        Meta(ge=0, le=_MANY, description="Players a client may create an hour; 0: no quota."),
    ] = 30
    friend_request_quota_per_hour: Annotated[
        int,
        Meta(
            ge=0,
            le=_MANY,
            description="Friend requests a player (and an address) may send an hour; 0: no quota.",
        ),
    ] = 30
    table_invitation_ttl_s: Annotated[
        int,
        Meta(ge=60, le=86400, description="How long a friend's table invitation lasts, seconds."),
    ] = 600
    friend_online_window_s: Annotated[
        int,
        Meta(
            ge=60,
            le=86400,
            description="At most one `friend-online` notice (webhooks) of a player in a window "
            "this long, seconds: a flapping connection tells friends once.",
        ),
    ] = 600
    presence_away_after_s: Annotated[
        int,
        Meta(
            ge=1,
            le=86400,
            description="A player with no command for this long is shown away, seconds.",
        ),
    ] = 300
    presence_offline_after_s: Annotated[
        int,
        Meta(
            ge=1,
            le=86400,
            description="A player whose last stream closed this long ago is shown offline, "
            "seconds.",
        ),
    ] = 30
    session_quota_per_hour: Annotated[
        int,
        Meta(
            ge=0,
            le=_MANY,
            description="Player tokens a client may mint an hour: token rotations, new "
            "sessions and identity-provider sign-ins; 0: no quota.",
        ),
    ] = 30
    export_quota_per_hour: Annotated[
        int,
        Meta(
            ge=0,
            le=_MANY,
            description="Export files a client may have built an hour (`GET /v1/exports`, "
            "`GET /v1/records`); a settled day's partition served from the cache, or its "
            "304, is free (docs/decisions.md D-bounded); 0: no quota.",
        ),
    ] = 30
    sse_max_per_identity: Annotated[
        int,
        Meta(
            ge=0,
            le=100_000,
            description="Live streams of one kind open at once per verified identity (the "
            "account, seat or organiser a token stands for, whatever token it presents; 429 "
            "`too-many-streams`); the cap of every kind `SSE_STREAM_CAPS` does not name; 0: no "
            "cap.",
        ),
    ] = 8
    sse_stream_caps: Annotated[
        tuple[str, ...],
        Meta(
            description="Per-kind caps on the live streams a verified identity holds open at "
            "once, comma-separated `kind=cap` (kinds: "
            f"{', '.join(f'`{kind}`' for kind in KINDS)}; e.g. `player=2,feed=4`); a kind not "
            "named has `SSE_MAX_PER_IDENTITY`; 0: no cap for that kind.",
        ),
    ] = ()
    sse_max_per_address: Annotated[
        int,
        Meta(ge=0, le=100_000, description="Live streams open at once per address; 0: no cap."),
    ] = 32
    # -- exports (docs/analysis.md) -------------------------------------------------------
    export_concurrency: Annotated[
        int,
        Meta(
            ge=0,
            le=64,
            description="Exports built at once by this process (a table's file, a day's "
            "partition not in the cache, the bulk records); one more is 503 `exports-busy` "
            "with `Retry-After` (docs/decisions.md D-bounded); 0: no cap.",
        ),
    ] = 2
    export_cache_mb: Annotated[
        int,
        Meta(
            ge=0,
            le=65_536,
            description="MB of settled days' partitions kept built, served again with their "
            "`ETag` and `Last-Modified` while nothing that could change them happened "
            "(docs/analysis.md); 0: none kept.",
        ),
    ] = 64
    # -- live streams ---------------------------------------------------------------------
    sse_heartbeat_s: Annotated[
        int, Meta(ge=1, le=3600, description="Seconds between a live stream's pings.")
    ] = 15
    sse_lifetime_s: Annotated[
        int,
        Meta(
            ge=1,
            le=86_400,
            description="Seconds a live stream lives before the client reconnects "
            "(`Last-Event-ID` resumes it).",
        ),
    ] = 600
    sse_retry_ms: Annotated[
        int,
        Meta(
            ge=0,
            le=_MS,
            description="The `retry:` hint every live stream sends, in ms.",
        ),
    ] = 1000
    feed_poll_ms: Annotated[
        int,
        Meta(
            ge=10,
            le=60_000,
            description="How often an events feed stream at the log's end asks the store for "
            "more (docs/events.md).",
        ),
    ] = 500
    # -- background work ------------------------------------------------------------------
    sweep_interval_ms: Annotated[
        int,
        Meta(
            ge=0,
            le=_MS,
            description="How often the sweeper claims passed deadlines and turn timeouts and "
            "moves pending bots, the tournament clerk runs and the lobby gives bots to "
            "tickets whose wait is over (docs/timers.md); 0: none of them runs.",
        ),
    ] = 1000
    webhook_interval_ms: Annotated[
        int,
        Meta(
            ge=0,
            le=_MS,
            description="How often the webhook outbox follows the log and sends what is due "
            "(docs/webhooks.md); 0: off.",
        ),
    ] = 500
    worker_pace_ms: Annotated[
        int,
        Meta(
            ge=0,
            le=10_000,
            description="A worker process's hub reads the new rows, and its read models' "
            "pass follows the log, at most this often: the saves meanwhile are read and "
            "written together, a save after a quiet spell at once (docs/scaling.md); 0: "
            "every save at once.",
        ),
    ] = 50
    webhook_allow_http: Annotated[
        bool,
        Meta(
            description="Webhooks may be posted over plain `http` too (default: `https` "
            "only, docs/webhooks.md)."
        ),
    ] = False
    webhook_private_targets: Annotated[
        tuple[str, ...],
        Meta(
            description="Comma-separated networks (CIDR) or host names webhooks may reach "
            "although they are internal (loopback, private, link-local); none: public "
            "addresses only, checked at registration and at every delivery.",
        ),
    ] = ()
    # -- the operator and sign-in ---------------------------------------------------------
    operator_token: Annotated[
        Annotated[str, Meta(min_length=OPERATOR_TOKEN_MIN)] | None,
        Meta(
            description="The operator's bearer token, at least 24 characters: it reads the "
            "events feed unredacted (docs/events.md) and manages webhook subscriptions "
            "(docs/webhooks.md). None: nobody is the operator (the webhooks' routes answer "
            "403, the outbox does not run).",
            extra={"secret": True},
        ),
    ] = None
    oidc_issuer: Annotated[
        str | None,
        Meta(
            description="Sign-in with the app's identity provider (docs/players.md): its "
            "issuer. `OIDC_ISSUER`, `OIDC_AUDIENCE` and `OIDC_JWKS_URL` go together "
            "(all three, or none: off)."
        ),
    ] = None
    oidc_audience: Annotated[
        str | None, Meta(description="The audience the provider's access tokens name.")
    ] = None
    oidc_jwks_url: Annotated[
        str | None, Meta(description="Where the provider publishes its signing keys (JWKS).")
    ] = None
    oidc_algorithms: Annotated[
        tuple[str, ...],
        Meta(
            description="The signing algorithms accepted from the identity provider, "
            "comma-separated; a token is checked only with its key's own algorithm (the "
            "JWK's `alg`, else its key type's), which must be one of these.",
        ),
    ] = ALGORITHMS

    def __post_init__(self) -> None:
        for item in declared():
            _check(item, getattr(self, item.name))
        if self.backend == "postgres":
            if not self.database_url:
                raise SettingsError("PERSISTENCE=postgres needs DATABASE_URL")
            parse_database_url(self.database_url)
        if self.process_role != "all" and self.backend != "postgres":
            raise SettingsError(
                f"PROCESS_ROLE={self.process_role} needs PostgreSQL: the embedded store has "
                "one process, which runs everything (PROCESS_ROLE=all)"
            )
        for proxy in self.trusted_proxies:
            _network(proxy)
        try:
            self.stream_caps  # noqa: B018 - checks every kind=cap item
        except ValueError as e:
            raise SettingsError(f"SSE_STREAM_CAPS: {e}") from None
        oidc = (self.oidc_issuer, self.oidc_audience, self.oidc_jwks_url)
        if any(oidc) and not all(oidc):
            raise SettingsError("OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL go together")
        unknown = sorted(set(self.oidc_algorithms) - set(SIGNING_ALGORITHMS))
        if unknown or not self.oidc_algorithms:
            raise SettingsError(
                f"OIDC_ALGORITHMS: one or more of {', '.join(SIGNING_ALGORITHMS)}"
                + (f", not {', '.join(unknown)}" if unknown else "")
            )
        try:
            self.pacing  # noqa: B018 - Pacing validates the three durations together
        except InvalidInputError as e:
            raise SettingsError(str(e)) from None

    def __repr__(self) -> str:
        shown = (
            f"{d.name}={'***' if d.secret and getattr(self, d.name) else getattr(self, d.name)!r}"
            for d in declared()
        )
        return f"Settings({', '.join(shown)})"

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Read the settings from ``environ`` (``os.environ`` at the entry point)."""
        values: dict[str, Any] = {}
        for item in declared():
            text = _get(environ, item.env)
            if text is None and item.also:
                text = _get(environ, item.also)
            if text is not None:
                values[item.name] = item.parse(text)
        if "backend" not in values and values.get("database_url"):
            values["backend"] = "postgres"
        return cls(**values)

    @property
    def pacing(self) -> Pacing:
        """The deal pacing every new deal records (R16, R17, R20)."""
        return Pacing(self.deal_interval_ms, self.declare_ms, self.window_ms)

    @property
    def stream_caps(self) -> dict[str, int]:
        """The cap of each kind of live stream per verified identity (``SSE_STREAM_CAPS``
        over ``SSE_MAX_PER_IDENTITY``)."""
        return parse_caps(self.sse_stream_caps, self.sse_max_per_identity)

    @property
    def table(self) -> TablePolicy:
        """Sessions' idle limit, quick play's length and turn limits, the bot that takes a
        seat left (docs/decisions.md D-table-life)."""
        turn = self.quick_play_turn_ms
        return TablePolicy(
            session_idle=timedelta(seconds=self.session_idle_s),
            quick_play_rounds=self.quick_play_rounds,
            quick_play_timers=Timers(declare_ms=turn, bury_ms=min(2 * turn, _MS), play_ms=turn),
            substitute=self.timeout_bot,
            talk=Limits(self.talk_text_max, self.talk_per_minute, self.talk_reports_per_table),
        )

    @property
    def oidc(self) -> tuple[str, str, str] | None:
        """The identity provider's issuer, audience and key set URL, when sign-in is on."""
        if self.oidc_issuer and self.oidc_audience and self.oidc_jwks_url:
            return (self.oidc_issuer, self.oidc_audience, self.oidc_jwks_url)
        return None


# -- the declaration, read -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Declared:
    """One variable as :class:`Settings` declares it."""

    name: str
    """The field's name (``port``)."""
    env: str
    """The variable's name (``PORT``)."""
    also: str | None
    kind: type
    """The value's type: ``int``, ``bool``, ``str``, ``Path`` or ``tuple`` (of ``str``)."""
    optional: bool
    choices: tuple[str, ...]
    low: int | None
    high: int | None
    min_length: int | None
    description: str
    secret: bool
    default: object

    def parse(self, text: str) -> object:
        """The value of ``text`` (a variable's stripped, non-empty value)."""
        if self.choices:
            for choice in self.choices:
                if choice.lower() == text.lower():
                    return choice
            raise SettingsError(
                f"{self.env} must be one of {', '.join(self.choices)}, got {text!r}"
            )
        if self.kind is bool:
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            raise SettingsError(f"{self.env} must be true or false, got {text!r}")
        if self.kind is int:
            try:
                return int(text)
            except ValueError:
                raise SettingsError(f"{self.env} must be an integer, got {text!r}") from None
        if self.kind is Path:
            return Path(text)
        if self.kind is tuple:
            return tuple(p.strip() for p in text.split(",") if p.strip())
        return text

    def shown_default(self) -> str:
        """The default as docs/configuration.md shows it."""
        value = self.default
        if value is None or value == ():
            return "none"
        if value == "":
            return "empty"
        if isinstance(value, bool):
            return str(value).lower()
        return f"`{value}`"


@cache
def declared() -> tuple[Declared, ...]:
    """Every field of :class:`Settings`, read once from its annotations."""
    return tuple(_declare(f) for f in msgspec.structs.fields(Settings))


def _declare(field: msgspec.structs.FieldInfo) -> Declared:
    kind, metas = _unwrap(field.type)
    optional = False
    if get_origin(kind) in (Union, _UnionType) and type(None) in get_args(kind):
        optional = True
        (inner,) = (a for a in get_args(kind) if a is not type(None))
        kind, more = _unwrap(inner)
        metas += more
    choices: tuple[str, ...] = ()
    if get_origin(kind) is Literal:
        choices = tuple(str(a) for a in get_args(kind))
        kind = str
    if get_origin(kind) is tuple:
        kind = tuple
    extra: dict[str, Any] = {}
    for meta in metas:
        extra.update(meta.extra or {})
    choices = tuple(extra.get("choices", choices))
    description = " ".join(m.description for m in metas if m.description)
    return Declared(
        name=field.name,
        env=extra.get("env", field.name.upper()),
        also=extra.get("also"),
        kind=kind,
        optional=optional,
        choices=choices,
        low=next((int(m.ge) for m in metas if m.ge is not None), None),
        high=next((int(m.le) for m in metas if m.le is not None), None),
        min_length=next((m.min_length for m in metas if m.min_length is not None), None),
        description=description,
        secret=bool(extra.get("secret")),
        default=field.default,
    )


_UnionType = type(int | None)


def _unwrap(annotation: Any) -> tuple[Any, list[Meta]]:
    if get_origin(annotation) is Annotated:
        base, *metas = get_args(annotation)
        return base, [m for m in metas if isinstance(m, Meta)]
    return annotation, []


def _check(item: Declared, value: object) -> None:
    if value is None and item.optional:
        return
    if item.choices and value not in item.choices:
        raise SettingsError(f"{item.env} must be one of {', '.join(item.choices)}, got {value!r}")
    if item.kind is int and (
        type(value) is not int
        or (item.low is not None and value < item.low)
        or (item.high is not None and value > item.high)
    ):
        raise SettingsError(f"{item.env} must be an integer {item.low}..{item.high}, got {value!r}")
    if item.min_length is not None and (not isinstance(value, str) or len(value) < item.min_length):
        raise SettingsError(f"{item.env} must be at least {item.min_length} characters")


def _get(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    return value.strip() if value is not None and value.strip() else None


def markdown_table() -> str:
    """The table of every variable (docs/configuration.md), from the declaration."""
    lines = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for item in declared():
        meaning = item.description
        if item.choices and item.kind is str and "`" + item.choices[0] + "`" not in meaning:
            meaning += " One of " + ", ".join(f"`{c}`" for c in item.choices) + "."
        if item.low is not None and item.high is not None:
            meaning += f" {item.low}..{item.high}."
        name = f"`{item.env}`" + (f" (or `{item.also}`)" if item.also else "")
        lines.append(f"| {name} | {item.shown_default()} | {meaning} |")
    return "\n".join(lines) + "\n"


# -- DATABASE_URL --------------------------------------------------------------------------


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
    try:
        port = int(port_text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise SettingsError(f"DATABASE_URL port must be an integer 1..65535, got {port_text!r}")
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname:
        raise SettingsError("DATABASE_URL needs a database name (…/dbname)")
    user = unquote(parts.username or "")
    if not user:
        raise SettingsError("DATABASE_URL needs a user name (postgresql://user@host/db)")
    return PostgresTarget(dbname, host, port, user, unquote(parts.password or ""))


def _network(text: str) -> None:
    """A trusted proxy is an IP address or a network in CIDR notation (no names, no ``*``:
    trusting every peer would let any client choose its address)."""
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise SettingsError(
            f"TRUSTED_PROXIES: {text!r} is not an IP address or a network (10.0.0.0/8)"
        ) from None
