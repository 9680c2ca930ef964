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
  table's name; delivered on commit). On each notification of a commit it did not make it
  reads the new rows (``notification_id > last``) and maps their originators to matches: a match's
  events are its own; a round's id maps to its match through the round's
  ``RoundStarted`` (cached). So a command handled by any replica wakes the subscribers
  of every replica. The recorder locks the table while inserting, so rows become
  visible in notification-id order; ids lost to rolled-back transactions are gaps that
  are never filled, and reading ``> last`` simply passes over them. A dropped
  connection is re-opened with backoff; after each (re)connect every subscribed match
  is woken once, since notifications sent while the connection was down are lost.

A commit of this process is not read back (docs/decisions.md D-path5). The insert function
names each commit's first and last notification ids in its notification's payload
(:func:`infra.pgstore.notified_ids`), and every save of this process hands its rows over,
each with its event, as it ends (:meth:`PostgresHub.recorded`, told by the service's
``saves.recorded`` on the saving thread). The hub reaches the commits notified in commit
order: one whose rows were all handed over wakes its matches with those events, no read,
no decoding; any other — another process's, a notification naming no rows — is read
``> last`` as before (a row handed over is taken as handed, not decoded). A notification may
come before its save has handed its rows over, so a commit not handed over waits while a
save of this process begun before its notification is still under way, at most
:data:`HANDOVER_S`.

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
import threading
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final
from uuid import UUID

import asyncpg  # type: ignore[import-untyped]
import msgspec
from eventsourcing.persistence import Mapper, Notification, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import get_topic

from domain.accounts.account import AccountCreated
from domain.game.match_events import MatchCreated
from domain.game.round_events import RoundStarted
from domain.talk.table_talk import TalkOpened
from domain.tournament.events import TournamentCreated
from infra.localhub import InProcessHub, LocalHub
from infra.pgstore import notified_ids
from infra.settings import Settings, parse_database_url
from services.game import GameService
from services.saves import Recorded, Saves
from services.settling import Settling

log = logging.getLogger(__name__)

MATCH_CREATED: Final = get_topic(MatchCreated)
ACCOUNT_CREATED: Final = get_topic(AccountCreated)
ROUND_STARTED: Final = get_topic(RoundStarted)
TOURNAMENT_CREATED: Final = get_topic(TournamentCreated)
RELAY_CHANNEL: Final = "shengji_presence"
"""What the replicas tell each other beside the store's news (presence, D-social)."""
TALK_OPENED: Final = get_topic(TalkOpened)
HANDOVER_S: Final = 0.5
"""The longest a notified commit waits for a save of this process begun before its
notification to hand its rows over; then the log is read (docs/decisions.md D-path5)."""
OWN_MAX: Final = 100_000
"""Rows of this process's saves kept for commits not yet notified, at most."""


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
        saves: Saves | None = None,
        pace_s: float = 0.0,
    ) -> None:
        super().__init__()
        self._pace_s = pace_s
        self._schema = schema
        self._saves = saves
        """This process's saves: their rows are taken as they are saved, not read back
        (:meth:`recorded`; docs/decisions.md D-path5)."""
        self._own: dict[int, tuple[Notification, Any]] = {}
        """Rows of this process's saves after :attr:`position`, by notification id, each
        with its event: the hub takes them in the log's order once their commit's
        notification is reached."""
        self._notified: deque[tuple[int, int, int, float]] = deque()
        """The commits notified and not yet reached, in commit order: their first and last
        notification ids, the saves begun in this process when the notification came
        (:attr:`Saves.issued`: one of those may be the commit's own) and when it came (the
        event loop's time)."""
        self._ended: set[int] = set()
        self._ended_below = 0
        """Every save of this process with a ticket below it has told :meth:`recorded`
        (what it told is in :attr:`_own`); :attr:`_ended` holds those above it."""
        self._loop_thread = 0
        """The event loop's thread (a save told there is taken at once)."""
        self._read_due = True
        """The log is read at the next wake-up: a notification that named no rows, a poll,
        a (re)connect, a commit no save of this process told."""
        self.reads = 0
        """Reads of the log (tests, benches): a commit of this process is not read back."""
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
        """Told every row the hub reads, as stored, in notification order — not this
        process's own, whose save told the cache (D-path5) — (the game
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
        if saves is not None:
            saves.recorded.add(self.recorded)

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
            **{"saves": service.saves, **kwargs},  # saves=None: every commit read back
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
        self._loop_thread = threading.get_ident()
        if self._saves is not None:  # saves begun before the loop was known told nothing
            self._saves_ended(self._saves.issued)
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
        self._notified.clear()  # the first read after LISTEN covers every commit before it
        self._read_due = True
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
        loop = asyncio.get_running_loop()
        began = 0.0
        while not conn.is_closed():
            rest = self._pace_s - (loop.time() - began)
            if rest > 0:
                await asyncio.sleep(rest)  # paced: what comes meanwhile is reached together
            wait = self._poll_s
            if self._notified:  # a commit waits for a save of this process to hand it over
                wait = max(0.0, self._notified[0][3] + HANDOVER_S - loop.time())
            try:
                async with asyncio.timeout(wait):
                    await self._poke.wait()
            except TimeoutError:
                if not self._notified:
                    self._read_due = True  # the poll: a liveness check, a safety net
            self._poke.clear()
            began = loop.time()
            async with self._one_at_a_time:
                await self._catch_up(conn)
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

    def _on_notify(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        notified = notified_ids(payload)
        if notified is None:
            self._read_due = True  # no rows named: read the log
        else:
            schema, first, last = notified
            if schema != self._schema:
                return  # another schema's store (the channel is named after the table)
            issued = 0 if self._saves is None else self._saves.issued
            self._notified.append((first, last, issued, asyncio.get_running_loop().time()))
        self._poke.set()

    # -- this process's own saves (docs/decisions.md D-path5) ------------------------------

    def recorded(self, news: Recorded) -> None:
        """A save of this process ended (told on its thread): its rows, each with its
        event, are taken on the event loop; the hub wakes their matches once it reaches
        their commit's notification, in the log's order, without reading them back."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        rows = [(r.notification, r.domain_event) for r in news.recordings]
        if threading.get_ident() == self._loop_thread:  # a save on the loop (no worker thread)
            self._take(news.ticket, rows)
        else:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._take, news.ticket, rows)

    def _take(self, ticket: int, rows: list[tuple[Notification, Any]]) -> None:
        if ticket >= self._ended_below:
            self._ended.add(ticket)
            self._pass_ended()
        if self.connected:  # while away, the read after reconnecting reads them
            for row in rows:
                if row[0].id > self._last:
                    self._own[row[0].id] = row
            if len(self._own) > OWN_MAX:  # never reached: read the log instead
                self._own.clear()
                self._read_due = True
        if self._notified:
            self._poke.set()  # the commit waiting may be this one

    def _saves_ended(self, below: int) -> None:
        """Every save with a ticket below ``below`` counts as ended: its commit, if it
        comes, is read like another process's."""
        if below > self._ended_below:
            self._ended_below = below
            self._ended = {t for t in self._ended if t >= below}
            self._pass_ended()

    def _pass_ended(self) -> None:
        """Move :attr:`_ended_below` past the tickets above it that have ended."""
        while self._ended_below in self._ended:
            self._ended.remove(self._ended_below)
            self._ended_below += 1

    def _own_rows(self, first: int, last: int) -> list[tuple[Notification, Any]] | None:
        """The rows ``first`` … ``last`` of one commit when this process saved them all
        (taken out of :attr:`_own`), else None."""
        own = self._own
        if any(i not in own for i in range(first, last + 1)):
            return None
        return [own.pop(i) for i in range(first, last + 1)]

    def _on_terminated(self, *_: object) -> None:
        self._poke.set()  # _listen sees the closed connection and returns

    # -- reading what changed ---------------------------------------------------------------

    async def _catch_up(self, conn: Any) -> None:
        """Reach every commit notified so far, in commit order: one this process saved
        from the rows its save handed over, others by reading the log (``> last``: every
        commit up to the log's end). A commit a save of this process may still hand over
        waits for it, at most :data:`HANDOVER_S`."""
        notified = self._notified
        while notified and not self._read_due:
            first, last, issued, at = notified[0]
            if last <= self._last:
                notified.popleft()
                continue
            rows = self._own_rows(first, last)
            if rows is not None:
                notified.popleft()
                if self.listening:
                    await self._wake_rows(conn, rows)
                # Notified in commit order and ids in commit order (the table lock): the
                # ids between the last reached and ``first`` were rolled back, never filled.
                self._last = last
                continue
            if self._ended_below < issued:
                if asyncio.get_running_loop().time() - at < HANDOVER_S:
                    return  # a save begun before the notification may be this commit
                self._saves_ended(issued)  # too long: read it (the save's rows may follow)
            self._read_due = True
        if self._read_due:
            self._read_due = False
            await self._read(conn)
            while notified and notified[0][1] <= self._last:
                notified.popleft()
            for i in [i for i in self._own if i <= self._last]:
                del self._own[i]

    async def _read(self, conn: Any) -> None:
        """Wake the matches of every row after ``last``; advance ``last`` (gaps left by
        rolled-back transactions are skipped: they are never filled in). A row this
        process saved is taken as its save handed it over (not decoded, not told to
        :attr:`on_stored`: its save told the cache)."""
        if conn.is_closed():
            return
        self.reads += 1
        listening = self.listening
        if not (listening or self.on_stored):  # nobody to wake: just keep up with the store
            last = await conn.fetchval(self._max_sql, timeout=self._timeout)
            self._last = max(self._last, last)
            return
        own = self._own
        while True:
            records = await conn.fetch(
                self._rows_sql, self._last, self._batch, timeout=self._timeout
            )
            if not records:
                return
            rows: list[tuple[Notification, Any]] = []
            stored: list[Notification] = []
            for record in records:
                row = own.pop(record["notification_id"], None)
                if row is None:
                    row = (_notification(record), None)
                    stored.append(row[0])
                rows.append(row)
            self._tell_stored(stored)
            if listening:
                await self._wake_rows(conn, rows)
            self._last = records[-1]["notification_id"]
            if len(records) < self._batch:
                return

    async def _wake_rows(self, conn: Any, rows: Sequence[tuple[Notification, Any]]) -> None:
        """Wake the matches of ``rows`` (in the log's order), handing their events to the
        matches' subscribers: each row's own when its save handed it over, else decoded."""
        changed: set[UUID] = set()
        events: dict[UUID, list[Any]] = {}
        unread: set[UUID] = set()
        match_of = self._match_of
        for row, handed in rows:
            originator = _uuid(row.originator_id)
            if originator in match_of:  # kept (nearly every row): no query, no coroutine
                match_of.move_to_end(originator)
                match_id = match_of[originator]
            else:
                match_id = await self._match_of_row(conn, row)
            if match_id is not None:
                changed.add(match_id)
                if match_id in self._subscribers and match_id not in unread:
                    event = self._decode(match_id, row) if handed is None else handed
                    if event is None:
                        unread.add(match_id)  # its subscribers read the store instead
                    else:
                        events.setdefault(match_id, []).append(event)
        self._wake(changed, {m: e for m, e in events.items() if m not in unread})

    def _tell_stored(self, stored: Sequence[StoredEvent]) -> None:
        """Tell :attr:`on_stored` the rows as stored (a listener's error is logged)."""
        if not (self.on_stored and stored):
            return
        for listener in self.on_stored:
            try:
                listener(stored)
            except Exception:
                log.exception("live hub: a listener of the rows read failed")

    async def _match_of_row(self, conn: Any, row: StoredEvent) -> UUID | None:
        """The match ``row``'s aggregate wakes, from its first event (read when ``row``
        is not it), kept for the next rows of that aggregate (:meth:`_wake_rows` takes
        those kept without calling this: no coroutine a row)."""
        originator = _uuid(row.originator_id)
        topic: str | None
        state: bytes | None
        if row.originator_version == 1:
            topic, state = row.topic, row.state
        else:
            first = await conn.fetchrow(self._first_sql, originator, timeout=self._timeout)
            topic, state = (None, None) if first is None else (first["topic"], first["state"])
        match_id = match_of_created(originator, topic, state)
        self._match_of[originator] = match_id
        if len(self._match_of) > self._cache_size:
            self._match_of.popitem(last=False)
        return match_id

    def _decode(self, match_id: UUID, row: StoredEvent) -> Any:
        """``row`` as the event it stores, for the match's subscribers; None when there
        is no mapper or it cannot be decoded (then they read the store)."""
        if self._mapper is None:
            return None
        try:
            return self._mapper.to_domain_event(row)
        except Exception as e:  # an event this process cannot read: the store decides
            log.warning("live hub: cannot decode an event of match %s: %s", match_id, e)
            return None


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(originator_id)


def _notification(record: Any) -> Notification:
    """A row read by the hub as the library's notification (its id, the stored event)."""
    return Notification(
        id=record["notification_id"],
        originator_id=UUID(bytes=record["originator_id"].bytes),
        originator_version=record["originator_version"],
        topic=record["topic"],
        state=bytes(record["state"]),
    )


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
