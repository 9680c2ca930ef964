"""Presence: online, in a match, away, offline — derived, pushed, never polled per player
(docs/decisions.md D-social).

A player's presence in a process comes from what the process sees of them, never from a
client's claim: the streams they hold open here (player stream, match streams), the
commands they sent through the bus (``acted``) and the match they are playing (the player
stream's feed knows it):

* **online** (or **in-match**, with the match when it is public) — a command within
  ``away_after_s``, or a stream opened within it;
* **away** — a stream open but no command for ``away_after_s``; or, with no stream open,
  until ``offline_after_s`` after the last one closed (a reconnect does not flap);
* **offline** — none of that.

Each process keeps its own facts and tells the other replicas its view of a player when it
changes (``relay``: the hub's, over PostgreSQL; nothing to tell in one process); a player's
presence is the liveliest any process sees. A change is pushed at once to the watchers of
that player in this process (the player streams of their friends); one :meth:`sweep` a
process moves the idle along (online → away → offline). Nothing runs per idle player.

**Coming online** (docs/decisions.md D-social): when a local fact of this process (not a
relayed view) moves a player's presence from offline to online or in-match, and they do
not appear offline, :attr:`PresenceBoard.arrived` is told (it only queues: the friends'
``friend-online`` notice is saved off the request path, :mod:`services.social.online_notices`).

"Appear offline" is the player's stored choice (:class:`~domain.accounts.social.SocialProfile`):
:meth:`PresenceBoard.hide` is told after its save (and relayed); a hidden player is offline
to everyone. Who may see whom (friends only, nobody blocked) is the reader's to decide.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from msgspec import Meta

log = logging.getLogger(__name__)

State = Literal["online", "in-match", "away", "offline"]
RANK: Final[dict[str, int]] = {"offline": 0, "away": 1, "online": 2, "in-match": 3}


class Presence(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A player's presence as a friend sees it."""

    state: Annotated[
        State,
        Meta(description="`online`, `in-match`, `away` or `offline` (derived, never claimed)."),
    ]
    match_id: Annotated[
        str | None, Meta(description="The match being played, when it is public; else null.")
    ] = None


OFFLINE: Final = Presence(state="offline")


class Relayed(msgspec.Struct, frozen=True):
    """What one process tells the others: its view of a player, or a player's choice."""

    origin: str
    player: str
    state: str
    match_id: str | None = None
    hidden: bool | None = None
    ring: bool = False


Watcher = Callable[[UUID, Presence], None]
Bell = Callable[[], None]


@dataclass(slots=True)
class _Local:
    streams: int = 0
    acted: float = -1e18
    closed: float = -1e18
    match_id: UUID | None = None
    public: bool = False
    shown: Presence = OFFLINE


class PresenceBoard:
    """The presence of players as this process knows it (module docstring)."""

    def __init__(
        self,
        *,
        away_after_s: float = 300.0,
        offline_after_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.away_after_s = away_after_s
        self.offline_after_s = offline_after_s
        self.clock = clock
        self.origin = uuid.uuid4().hex
        self.sweeper: object | None = None
        """What runs :meth:`sweep` in this process (one; the API starts it)."""
        self.relay: Callable[[bytes], None] | None = None
        """Tells the other processes (set by the composition root on PostgreSQL)."""
        self.arrived: Callable[[UUID], None] | None = None
        """Told when a player this process sees came online (the module docstring); it
        must not block (it is called under the board's lock)."""
        self._local: dict[UUID, _Local] = {}
        self._remote: dict[UUID, dict[str, Presence]] = {}
        self._hidden: set[UUID] = set()
        self._effective: dict[UUID, Presence] = {}
        self._watchers: dict[UUID, set[Watcher]] = {}
        self._bells: dict[UUID, set[Bell]] = {}
        self._lock = threading.RLock()

    # -- what this process sees ---------------------------------------------------------------

    def opened(self, player: UUID) -> None:
        """A stream of ``player`` opened here (a stream is an action too)."""
        with self._lock:
            local = self._local.setdefault(player, _Local())
            local.streams += 1
            local.acted = self.clock()
            self._update(player)

    def closed(self, player: UUID) -> None:
        with self._lock:
            local = self._local.get(player)
            if local is None:
                return
            local.streams = max(0, local.streams - 1)
            local.closed = self.clock()
            self._update(player)

    def acted(self, player: UUID) -> None:
        """``player`` sent a command (through the bus)."""
        with self._lock:
            local = self._local.setdefault(player, _Local())
            local.acted = self.clock()
            self._update(player)

    def playing(self, player: UUID, match_id: UUID | None, public: bool) -> None:
        """The match ``player`` plays now (None: none), as their feed follows it."""
        with self._lock:
            local = self._local.get(player)
            if local is None or (local.match_id, local.public) == (match_id, public):
                return
            local.match_id, local.public = match_id, public
            self._update(player)

    def hide(self, player: UUID, hidden: bool, *, relay: bool = True) -> None:
        """``player`` chose to appear offline (or no longer)."""
        with self._lock:
            if hidden == (player in self._hidden):
                return
            if hidden:
                self._hidden.add(player)
            else:
                self._hidden.discard(player)
            self._notify(player)
        if relay:
            self._tell(Relayed(self.origin, str(player), "", hidden=hidden))

    def ring(self, player: UUID, *, relay: bool = True) -> None:
        """News for ``player`` was saved (a friend's request, an invitation, a rating
        notice): their streams read the log now, in every process (relayed)."""
        with self._lock:
            bells = list(self._bells.get(player, ()))
        for bell in bells:
            bell()
        if relay:
            self._tell(Relayed(self.origin, str(player), "", ring=True))

    def listen(self, player: UUID, bell: Bell) -> None:
        """Call ``bell`` whenever :meth:`ring` names ``player`` (from any thread)."""
        with self._lock:
            self._bells.setdefault(player, set()).add(bell)

    def unlisten(self, player: UUID, bell: Bell) -> None:
        with self._lock:
            found = self._bells.get(player)
            if found is not None:
                found.discard(bell)
                if not found:
                    del self._bells[player]

    def forget(self, player: UUID) -> None:
        """An erased player: nothing of them is shown any more."""
        with self._lock:
            self._local.pop(player, None)
            self._remote.pop(player, None)
            self._hidden.add(player)
            self._notify(player)

    def sweep(self) -> int:
        """Move the idle along (the one timer of a process); how many changed."""
        changed = 0
        with self._lock:
            for player in list(self._local):
                if self._update(player):
                    changed += 1
                local = self._local[player]
                if local.streams == 0 and local.shown.state == "offline":
                    del self._local[player]
        return changed

    # -- what the other processes tell -----------------------------------------------------------

    def heard(self, message: bytes) -> None:
        """A relayed message of another process (ours are passed over)."""
        try:
            m = msgspec.json.decode(message, type=Relayed)
            player = UUID(m.player)
        except (msgspec.DecodeError, ValueError):
            log.warning("presence: a relayed message that is none")
            return
        if m.origin == self.origin:
            return
        if m.ring:
            self.ring(player, relay=False)
            return
        if m.hidden is not None:
            self.hide(player, m.hidden, relay=False)
            return
        with self._lock:
            views = self._remote.setdefault(player, {})
            if m.state == "offline":
                views.pop(m.origin, None)
            elif m.state in RANK:
                views[m.origin] = Presence(state=m.state, match_id=m.match_id)  # type: ignore[arg-type]
            self._notify(player)

    # -- reading and watching -------------------------------------------------------------------

    def of(self, player: UUID) -> Presence:
        """``player``'s presence as a friend sees it (offline while hidden)."""
        with self._lock:
            if player in self._hidden:
                return OFFLINE
            return self._merged(player)

    def watch(self, player: UUID, watcher: Watcher) -> None:
        """Call ``watcher`` on each change of ``player``'s presence (from any thread)."""
        with self._lock:
            self._watchers.setdefault(player, set()).add(watcher)

    def unwatch(self, player: UUID, watcher: Watcher) -> None:
        with self._lock:
            found = self._watchers.get(player)
            if found is not None:
                found.discard(watcher)
                if not found:
                    del self._watchers[player]

    # -- inside ------------------------------------------------------------------------------

    def _derived(self, local: _Local) -> Presence:
        now = self.clock()
        if now - local.acted <= self.away_after_s:
            if local.match_id is not None:
                shown = str(local.match_id) if local.public else None
                return Presence(state="in-match", match_id=shown)
            return Presence(state="online")
        if local.streams > 0 or now - local.closed <= self.offline_after_s:
            return Presence(state="away")
        return OFFLINE

    def _update(self, player: UUID) -> bool:
        local = self._local[player]
        shown = self._derived(local)
        if shown == local.shown:
            return False
        local.shown = shown
        self._tell(Relayed(self.origin, str(player), shown.state, shown.match_id))
        before = self._effective.get(player, OFFLINE)
        self._notify(player)
        arrived = self.arrived
        after = self._effective.get(player, OFFLINE)
        if arrived is not None and before == OFFLINE and after.state in ("online", "in-match"):
            try:
                arrived(player)
            except Exception:
                log.exception("presence: telling a player came online failed")
        return True

    def _merged(self, player: UUID) -> Presence:
        local = self._local.get(player)
        views = [*self._remote.get(player, {}).values(), local.shown if local else OFFLINE]
        return max(views, key=lambda p: RANK[p.state])

    def _notify(self, player: UUID) -> None:
        now = self.of(player)
        if self._effective.get(player, OFFLINE) == now:
            return
        if now == OFFLINE:
            self._effective.pop(player, None)
        else:
            self._effective[player] = now
        for watcher in list(self._watchers.get(player, ())):
            try:
                watcher(player, now)
            except Exception:  # a closed stream's watcher: it unwatches itself
                log.exception("presence: a watcher failed")

    def _tell(self, message: Relayed) -> None:
        relay = self.relay
        if relay is not None:
            try:
                relay(msgspec.json.encode(message))
            except Exception:
                log.warning("presence: relaying failed")
