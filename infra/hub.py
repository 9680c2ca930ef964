"""The live hub: wakes a process's SSE subscribers when a match changes
(docs/decisions.md F3).

A hub says *which match changed*, and the PostgreSQL hub hands over the new events it
read for the matches this process watches (decoded by the service's mapper), so the live
feeds apply them without reading them again; it never carries views. Subscribers build
their viewers' frames themselves (:mod:`services.live`, RULES R33). A signal may be
spurious or coalesced (several changes between two waits are one wake-up); one without
events (a save in this process, a reconnect, an undecodable row) means "read the store".

* :class:`InProcessHub` — one process on SQLite or POPO: the service's ``saves.changed`` calls
  :meth:`~InProcessHub.publish_many` after each save (from whatever thread saved).
* :class:`PostgresHub` — one asyncpg connection per process LISTENs on the channel the
  eventsourcing PostgreSQL recorder NOTIFYs inside every insert transaction (the events
  table's name, no payload; delivered on commit). On each notification it reads the new
  rows (``notification_id > last``) and maps their originators to matches: a match's
  events are its own; a round's id maps to its match through the round's
  ``RoundStarted`` (cached). So a command handled by any replica wakes the subscribers
  of every replica. The recorder locks the table while inserting, so rows become
  visible in notification-id order; ids lost to rolled-back transactions are gaps that
  are never filled, and reading ``> last`` simply passes over them. A dropped
  connection is re-opened with backoff; after each (re)connect every subscribed match
  is woken once, since notifications sent while the connection was down are lost.

The PostgreSQL hub also tells every row it reads to :attr:`PostgresHub.on_stored`: the
game service keeps its aggregate cache by them, bringing a cached aggregate up to another
process's save (docs/decisions.md D-owner). It tells :attr:`PostgresHub.on_lost` when its
connection is gone and :attr:`PostgresHub.on_caught_up` once the first read after a
(re)connect has told every row since it was last connected: in between, saves may go
unheard, and the service's loads read the store. The hub tells the service's
:class:`services.settling.Settling` where it has read to: a load asks the store where its
log ends and waits until the hub has read that far, so it sees every save acknowledged
before it began, whether or not this process has heard that save's notification yet
(docs/decisions.md D-settle).

Both implement the structural protocol :class:`api.sse.MatchHub` (``subscribe``) plus
``start``/``stop``/``publish``; :func:`build_hub` picks one for the settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final
from uuid import UUID

import asyncpg  # type: ignore[import-untyped]
import msgspec
from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import get_topic

from domain.accounts.account import AccountCreated
from domain.game.match_events import MatchCreated
from domain.game.round_events import RoundStarted
from domain.talk.table_talk import TalkOpened
from domain.tournament.events import TournamentCreated
from infra.localhub import InProcessHub, LocalHub
from infra.settings import Settings, parse_database_url
from services.game import GameService
from services.settling import Settling

log = logging.getLogger(__name__)

MATCH_CREATED: Final = get_topic(MatchCreated)
ACCOUNT_CREATED: Final = get_topic(AccountCreated)
ROUND_STARTED: Final = get_topic(RoundStarted)
TOURNAMENT_CREATED: Final = get_topic(TournamentCreated)
RELAY_CHANNEL: Final = "shengji_presence"
"""What the replicas tell each other beside the store's news (presence, D-social)."""
TALK_OPENED: Final = get_topic(TalkOpened)


class _Created(msgspec.Struct):
    """The one field of a ``RoundStarted`` (or a ``TalkOpened``) the hub reads."""

    match_id: UUID


Connect = Callable[..., Awaitable[Any]]


class PostgresHub(LocalHub):
    """LISTEN/NOTIFY on the eventsourcing recorder's channel (see the module docstring).

    ``poll_s``: with no notification for that long, the hub reads ``> last`` anyway —
    a liveness check of its connection (and a safety net) at one indexed query.
    ``backoff_s``: the first and the longest wait between reconnection attempts.
    ``query_timeout_s``: a read that takes longer means a dead connection (reconnect).
    ``pace_s``: a read at most this often — a notification after a quiet spell is read at
    once, those during the pace that follows by one read at its end (a worker's hub,
    ``WORKER_PACE_MS``, docs/decisions.md D-pace; an API process's reads at once).
    The channel is not schema-qualified (the recorder names it after the table), so
    stores in other schemas of the database wake the hub too: a spurious wake costs one
    read that finds nothing new.
    """

    def __init__(
        self,
        connect_kwargs: dict[str, Any],
        *,
        schema: str,
        table: str,
        channel: str,
        poll_s: float = 5.0,
        backoff_s: tuple[float, float] = (0.05, 5.0),
        batch: int = 1000,
        cache_size: int = 100_000,
        query_timeout_s: float = 10.0,
        connect: Connect = asyncpg.connect,
        mapper: Mapper[UUID] | None = None,
        settling: Settling | None = None,
        pace_s: float = 0.0,
    ) -> None:
        super().__init__()
        self._pace_s = pace_s
        self._settling = settling
        """Told where the hub has read the log to (every row up to there told to
        :attr:`on_stored`): a request's read waits for it to reach the log's end (D-settle)."""
        self._mapper = mapper
        """Decodes the rows of watched matches into events handed to subscribers."""
        self._connect_kwargs = connect_kwargs
        self._connect = connect
        self.channel = channel
        events = f"{_quote(schema)}.{_quote(table)}"
        self._max_sql = f"SELECT coalesce(max(notification_id), 0) FROM {events}"
        self._rows_sql = (
            "SELECT notification_id, originator_id, originator_version, topic, state "
            f"FROM {events} WHERE notification_id > $1 ORDER BY notification_id LIMIT $2"
        )
        self._first_sql = (
            f"SELECT topic, state FROM {events} WHERE originator_id = $1 AND originator_version = 1"
        )
        self._poll_s = poll_s
        self._backoff_s = backoff_s
        self._batch = batch
        self._cache_size = cache_size
        self._timeout = query_timeout_s
        self._match_of: OrderedDict[UUID, UUID | None] = OrderedDict()
        self._last = 0
        self._poke = asyncio.Event()
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._conn: Any = None
        self._relays: set[asyncio.Future[Any]] = set()
        self._one_at_a_time = asyncio.Lock()
        """The connection runs one operation at a time (asyncpg): the reads of what
        changed and the relays' NOTIFYs take turns."""
        self.connections = 0
        """How many times a LISTEN connection was opened (tests, metrics)."""
        self.on_stored: list[Callable[[Sequence[StoredEvent]], None]] = []
        """Told every row the hub reads, as stored, in notification order (the game
        service keeps its aggregate cache by them: docs/decisions.md D-owner). With a
        listener here the hub reads every row, and after a reconnect it reads on from
        where it was, so no save is missed."""
        self.on_caught_up: list[Callable[[], None]] = []
        """Told once the first read after each (re)connect has told :attr:`on_stored` every
        row up to the store's end: no save since the hub was last connected is unheard."""
        self.on_lost: list[Callable[[], None]] = []
        """Told when the connection is gone: saves may go unheard until
        :attr:`on_caught_up`."""
        self._caught_up = False

    @classmethod
    def for_service(cls, settings: Settings, service: GameService, **kwargs: Any) -> PostgresHub:
        """The hub for ``service``'s PostgreSQL store (its schema, table and channel),
        keeping the service's aggregate cache when it trusts it (D-owner)."""
        recorder = service.recorder
        if not isinstance(recorder, PostgresApplicationRecorder) or not settings.database_url:
            raise TypeError("PostgresHub needs a GameService on PostgreSQL")
        target = parse_database_url(settings.database_url)
        connect_kwargs = {
            "host": target.host,
            "port": target.port,
            "user": target.user,
            "password": target.password or None,
            "database": target.dbname,
            "timeout": settings.postgres_connect_timeout,
            "server_settings": {"application_name": "shengji-hub"},
        }
        trusted = service.trusts_cache  # its cache is kept by every save heard (D-owner)
        hub = cls(
            connect_kwargs,
            schema=recorder.datastore.schema,
            table=recorder.events_table_name,
            channel=recorder.channel_name,
            mapper=service.mapper,
            settling=service.settling if trusted else None,
            **kwargs,
        )
        if trusted:
            # loads read the store until the hub has connected and read on (D-owner)
            service.hub_lost()
            service.settling.follow()  # loads wait for the rows up to the log's end
            hub.on_stored.append(service.heard)
            hub.on_caught_up.append(service.hub_caught_up)
            hub.on_lost.append(service.hub_lost)
        return hub

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def position(self) -> int:
        """The last notification id read (every row up to it has woken its matches)."""
        return self._last

    async def start(self, timeout: float = 10.0) -> None:
        """Start listening; waits (at most ``timeout`` s) for the first LISTEN to be in
        place, then keeps (re)connecting in the background if it is not."""
        await super().start()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="postgres-hub")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._connected.wait()
        if not self.connected:
            log.warning("live hub: no LISTEN connection yet; retrying in the background")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await super().stop()

    # -- the connection loop ----------------------------------------------------------------

    async def _run(self) -> None:
        low, high = self._backoff_s
        delay = low
        while True:
            try:
                conn = await self._open()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("live hub: cannot connect (%s); retrying in %.2fs", e, delay)
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                delay = min(high, delay * 2)
                continue
            delay = low
            try:
                await self._listen(conn)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("live hub: connection lost (%s); reconnecting", e)
            finally:
                self._connected.clear()
                self._caught_up = False
                self._tell(self.on_lost)  # saves may go unheard: loads read the store
                if self._settling is not None:
                    self._settling.release()  # no news while away: loads read the store
                self._conn = None
                with contextlib.suppress(Exception):
                    await asyncio.shield(conn.close(timeout=1))

    async def _open(self) -> Any:
        conn = await self._connect(**self._connect_kwargs)
        try:
            conn.add_termination_listener(self._on_terminated)
            await conn.add_listener(self.channel, self._on_notify)
            await conn.add_listener(RELAY_CHANNEL, self._on_relayed)
            # LISTEN first, then read where the store is: nothing committed after this
            # point can be missed, and whatever happened while we were away is covered
            # by waking every subscribed match once. A cache kept by the rows reads on
            # from where it was instead (the rows missed are read, in order).
            if not (self.on_stored and self._last):
                self._last = await conn.fetchval(self._max_sql, timeout=self._timeout)
        except BaseException:
            await asyncio.shield(conn.close(timeout=1))
            raise
        self._conn = conn
        self.connections += 1
        self._connected.set()
        self._poke.set()  # read what was missed now, not at the next notification
        self._wake(self.subscribed())
        return conn

    def relay(self, message: bytes) -> None:
        """NOTIFY ``message`` on the presence channel (:data:`RELAY_CHANNEL`) from the
        hub's connection; lost while it is down (presence is ephemeral: the next change
        tells it again). Thread-safe."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._send_relay, message.decode())

    def _send_relay(self, payload: str) -> None:
        conn = self._conn
        if conn is not None and not conn.is_closed():
            task = asyncio.ensure_future(self._notify_relay(conn, payload))
            self._relays.add(task)
            task.add_done_callback(self._relays.discard)

    async def _notify_relay(self, conn: Any, payload: str) -> None:
        async with self._one_at_a_time:
            if not conn.is_closed():
                await conn.execute("SELECT pg_notify($1, $2)", RELAY_CHANNEL, payload)

    def _on_relayed(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        for listener in self.on_relayed:
            listener(payload.encode())

    async def _listen(self, conn: Any) -> None:
        began = 0.0
        while not conn.is_closed():
            rest = self._pace_s - (asyncio.get_running_loop().time() - began)
            if rest > 0:
                await asyncio.sleep(rest)  # paced: what comes meanwhile is read together
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._poll_s):
                    await self._poke.wait()
            self._poke.clear()
            began = asyncio.get_running_loop().time()
            async with self._one_at_a_time:
                await self._read(conn)
            if self._settling is not None:
                self._settling.told(self._last)  # loads waiting for rows up to it go on
            if not self._caught_up and not conn.is_closed():
                self._caught_up = True  # every row since the hub was last connected is told
                self._tell(self.on_caught_up)

    @staticmethod
    def _tell(listeners: Sequence[Callable[[], None]]) -> None:
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("live hub: a listener of its connection failed")

    def _on_notify(self, *_: object) -> None:
        self._poke.set()

    def _on_terminated(self, *_: object) -> None:
        self._poke.set()  # _listen sees the closed connection and returns

    # -- reading what changed ---------------------------------------------------------------

    async def _read(self, conn: Any) -> None:
        """Wake the matches of every row after ``last``; advance ``last`` (gaps left by
        rolled-back transactions are skipped: they are never filled in)."""
        if conn.is_closed():
            return
        listening = self.listening
        if not (listening or self.on_stored):  # nobody to wake: just keep up with the store
            last = await conn.fetchval(self._max_sql, timeout=self._timeout)
            self._last = max(self._last, last)
            return
        while True:
            rows = await conn.fetch(self._rows_sql, self._last, self._batch, timeout=self._timeout)
            if not rows:
                return
            self._tell_stored(rows)
            if not listening:
                self._last = rows[-1]["notification_id"]
                if len(rows) < self._batch:
                    return
                continue
            changed: set[UUID] = set()
            events: dict[UUID, list[Any]] = {}
            unread: set[UUID] = set()
            for row in rows:
                match_id = await self._match_of_row(conn, row)
                if match_id is not None:
                    changed.add(match_id)
                    if match_id in self._subscribers and match_id not in unread:
                        event = self._decode(match_id, row)
                        if event is None:
                            unread.add(match_id)  # its subscribers read the store instead
                        else:
                            events.setdefault(match_id, []).append(event)
            self._last = rows[-1]["notification_id"]
            self._wake(changed, {m: e for m, e in events.items() if m not in unread})
            if len(rows) < self._batch:
                return

    def _tell_stored(self, rows: Sequence[Any]) -> None:
        """Tell :attr:`on_stored` the rows as stored (a listener's error is logged)."""
        if not self.on_stored:
            return
        stored = [
            StoredEvent(
                originator_id=UUID(bytes=row["originator_id"].bytes),
                originator_version=row["originator_version"],
                topic=row["topic"],
                state=bytes(row["state"]),
            )
            for row in rows
        ]
        for listener in self.on_stored:
            try:
                listener(stored)
            except Exception:
                log.exception("live hub: a listener of the rows read failed")

    async def _match_of_row(self, conn: Any, row: Any) -> UUID | None:
        originator = UUID(bytes=row["originator_id"].bytes)
        if originator in self._match_of:
            self._match_of.move_to_end(originator)
            return self._match_of[originator]
        if row["originator_version"] == 1:
            topic, state = row["topic"], row["state"]
        else:
            first = await conn.fetchrow(
                self._first_sql, row["originator_id"], timeout=self._timeout
            )
            topic, state = (None, None) if first is None else (first["topic"], first["state"])
        match_id = match_of_created(originator, topic, state)
        self._match_of[originator] = match_id
        if len(self._match_of) > self._cache_size:
            self._match_of.popitem(last=False)
        return match_id

    def _decode(self, match_id: UUID, row: Any) -> Any:
        """``row`` as the event it stores, for the match's subscribers; None when there
        is no mapper or it cannot be decoded (then they read the store)."""
        if self._mapper is None:
            return None
        try:
            stored = StoredEvent(
                originator_id=UUID(bytes=row["originator_id"].bytes),
                originator_version=row["originator_version"],
                topic=row["topic"],
                state=bytes(row["state"]),
            )
            return self._mapper.to_domain_event(stored)
        except Exception as e:  # an event this process cannot read: the store decides
            log.warning("live hub: cannot decode an event of match %s: %s", match_id, e)
            return None


def match_of_created(originator: UUID, topic: str | None, state: bytes | None) -> UUID | None:
    """What an aggregate's changes wake, from its first event: a match is its own; a
    round names its match in ``RoundStarted``, a table's talk in ``TalkOpened`` (R37:
    its messages go on the match's stream); an account is its own (a player's streams
    follow it to end when its token is revoked: docs/decisions.md D-fair); a tournament is
    its own (its standings and display streams, D-streams); anything else wakes nothing."""
    if topic in (MATCH_CREATED, ACCOUNT_CREATED, TOURNAMENT_CREATED):
        return originator
    if topic in (ROUND_STARTED, TALK_OPENED) and state is not None:
        try:
            return msgspec.json.decode(state, type=_Created).match_id
        except msgspec.DecodeError:
            log.warning("live hub: undecodable RoundStarted of %s", originator)
    return None


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def build_hub(
    settings: Settings, service: GameService, *, pace_s: float = 0.0
) -> InProcessHub | PostgresHub:
    """The composition root's hub: LISTEN on PostgreSQL (reading at most every ``pace_s``
    seconds), in-process otherwise."""
    if settings.backend == "postgres":
        return PostgresHub.for_service(settings, service, pace_s=pace_s)
    hub = InProcessHub()
    hub.attach(service)
    return hub
