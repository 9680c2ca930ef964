"""A friend came online: the ``friend-online`` notice saved for webhooks (docs/decisions.md
D-social).

The presence board of the process that saw it (:attr:`PresenceBoard.arrived
<services.social.presence.PresenceBoard.arrived>`: a local fact moved a player from
offline to online or in-match, and they do not appear offline) queues the player here;
never a replica that only heard it relayed. A thread of :class:`OnlineNotices` takes the
queue off the request path: the player's friends as the friends' view has them, and
:class:`NoteFriendOnline` saves, through the bus as the service in one save, one
:class:`~domain.accounts.friend_online.OnlineNotice` naming those of them who asked
(``notifyFriendOnline``), read from their stored settings in the command: not blocked
either way, neither erased, the player not appearing offline. The webhook outbox, which
follows the log, delivers one ``friend-online`` per friend named.

**At most one per player per window** (``FRIEND_ONLINE_WINDOW_S``): the process tells a
player at most once a window after the last time it did (a flapping connection), and the
notice's id is derived from the player and the window of the epoch the save falls in, so
a second process, a retry or a reconnect across processes in that window creates nothing.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from uuid import UUID

import msgspec

from domain.accounts.account import Account
from domain.accounts.friend_online import OnlineNotice, online_notice_id, online_window
from domain.accounts.social import SocialProfile, social_id
from services.bus import Bus, Caller, Handler, Outcome, Service
from services.errors import ForbiddenError
from services.social.blocks import blocked_between
from services.social.reads import SocialModels
from services.unit_of_work import Reading, UnitOfWork

log = logging.getLogger(__name__)

NOTED: Final = "noted"


@dataclass(frozen=True, slots=True)
class NoteFriendOnline:
    """``player_id`` came online; ``friends`` are their friends as the view has them (the
    handler keeps those who asked and may hear it)."""

    player_id: UUID
    friends: tuple[UUID, ...]


class FriendOnlineNoted(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the command did: how many friends the notice names (0: no notice)."""

    noted: int


def _profile(uow: UnitOfWork, player: UUID) -> SocialProfile | None:
    return uow.find(social_id(player), SocialProfile)


def _present(uow: UnitOfWork, player: UUID) -> bool:
    account = uow.find(player, Account)
    return account is not None and not account.erased


class NoteFriendOnlineHandler(Handler[NoteFriendOnline, None, FriendOnlineNoted]):
    """The service's command only (403 for any credential)."""

    def __init__(self, window_s: int) -> None:
        self.window_s = window_s

    def authorise(self, command: NoteFriendOnline, caller: Caller) -> None:
        if not isinstance(caller, Service):
            raise ForbiddenError("the friend-online notice is the service's own")

    def handle(self, uow: UnitOfWork, command: NoteFriendOnline, who: None) -> Outcome:
        player = command.player_id
        window = online_window(uow.now, self.window_s)
        notice_id = online_notice_id(player, window)
        if uow.find(notice_id, OnlineNotice) is not None:  # this window's notice is saved
            return Outcome(200, notice_id, 1, facts={NOTED: 0})
        mine = _profile(uow, player)
        if not _present(uow, player) or (mine is not None and mine.appear_offline):
            return Outcome(200, notice_id, 0, facts={NOTED: 0})
        hear: list[UUID] = []
        for friend in dict.fromkeys(command.friends):
            theirs = _profile(uow, friend)
            if theirs is None or not theirs.notify_online or theirs.erased:
                continue
            if _present(uow, friend) and not blocked_between(uow, player, friend):
                hear.append(friend)
        if not hear:
            return Outcome(200, notice_id, 0, facts={NOTED: 0})
        uow.add(OnlineNotice.note(player, tuple(hear), window, uow.now))
        return Outcome(200, notice_id, 1, facts={NOTED: len(hear)})

    def answer(
        self, command: NoteFriendOnline, who: None, outcome: Outcome, state: Reading
    ) -> FriendOnlineNoted:
        noted = outcome.facts.get(NOTED)
        return FriendOnlineNoted(noted=noted if isinstance(noted, int) else 0)


class OnlineNotices:
    """The board's players who came online, noted off the request path (the module
    docstring): :meth:`arrived` only queues; one thread of its own (started at the first
    arrival) notes them, :meth:`drain` notes what is queued now (the thread's step)."""

    def __init__(
        self,
        bus: Bus,
        models: SocialModels,
        window_s: int,
        *,
        clock: Callable[[], float] | None = None,
        threaded: bool = True,
    ) -> None:
        self.bus = bus
        self.models = models
        self.window_s = window_s
        self.clock = clock or models.board.clock
        self.threaded = threaded
        self._queue: queue.SimpleQueue[UUID] = queue.SimpleQueue()
        self._told: dict[UUID, float] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def arrived(self, player: UUID) -> None:
        """``player`` came online in this process (the board's lock is held: queue only)."""
        now = self.clock()
        with self._lock:
            last = self._told.get(player)
            if last is not None and now - last < self.window_s:
                return  # told this window already: a flapping connection
            self._told[player] = now
            if len(self._told) > 100_000:
                cutoff = now - self.window_s
                self._told = {p: t for p, t in self._told.items() if t >= cutoff}
            self._queue.put(player)
            if self.threaded and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="friend-online", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            player = self._queue.get()
            self._note(player)

    def drain(self) -> int:
        """Note every player queued now; how many friends were told."""
        told = 0
        while True:
            try:
                player = self._queue.get_nowait()
            except queue.Empty:
                return told
            told += self._note(player)

    def _note(self, player: UUID) -> int:
        try:
            friends = tuple(self.models.friends_of(player))
            if not friends:
                return 0
            taken: FriendOnlineNoted = self.bus.execute(NoteFriendOnline(player, friends))
        except Exception:
            log.exception("friend-online: noting %s failed", player)
            return 0
        return taken.noted
