"""Work a process does beside its requests (docs/decisions.md D-rooms).

A :class:`Loop` is a plain blocking step and what wakes it: its period (the step runs at
least that often) and its :class:`Doorbell` (rung from any thread — a save, the hub's news
of another process's save — the step runs again at once). What a loop does lives beside
what it works on: the sweeper (:mod:`services.sweeper`), the tournament clerk
(:mod:`services.tournaments.clerk`), the lobby's bots (:mod:`services.accounts.lobby_sweeper`),
the webhook outbox (:mod:`services.webhooks.delivery`) and the lists' follower
(:mod:`services.readmodels.runner`). A :class:`Crew` keeps threads of its own (the bot
driver's pool of deciders) and is only started and stopped.

They know nothing of threads, event loops or processes: one runner (``infra.workers``)
starts them, on threads of its own, in the processes whose role says so, and stops them
cleanly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


class Doorbell:
    """Wakes a loop before its period is up (thread-safe; rings pile up into one)."""

    def __init__(self) -> None:
        self._rung = threading.Event()

    def ring(self, *_: object) -> None:
        """Step again at once (any arguments are ignored: a save listener may ring it)."""
        self._rung.set()

    def wait(self, timeout: float) -> bool:
        """Until rung or ``timeout`` seconds pass; true when rung (the ring is taken)."""
        rung = self._rung.wait(timeout)
        self._rung.clear()
        return rung


BACKOFF_CAP_S = 30.0
"""The longest wait between two tries of a step that keeps failing."""


def backoff(period_s: float, failures: int, cap_s: float = BACKOFF_CAP_S) -> float:
    """The wait after a loop's ``failures``-th failure in a row (1, 2, …): its period, then
    twice the last wait, at most ``cap_s`` (a period longer than that stays the period).
    The runner's for a failing step, the read models' pass for a failing view."""
    doubled = period_s * 2.0 ** min(failures - 1, 64)
    return max(period_s, min(doubled, cap_s))


def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True)
class Loop:
    """One kind of background work: its step and what wakes it (the module docstring)."""

    name: str
    """The thread's name and the logs' (``sweeper``, ``tournament-clerk`` …)."""
    step: Callable[[], object]
    """One pass (blocking); an error is logged and the step runs again after its period,
    then after ever longer waits while it keeps failing (the runner's backoff)."""
    period_s: float
    """The step runs again this long after the last one ended, at the latest."""
    doorbell: Doorbell = field(default_factory=Doorbell)
    """Rung: the step runs again at once."""
    begin: Callable[[], None] = _nothing
    """Before the first step (to start listening to saves, say)."""
    halt: Callable[[], None] = _nothing
    """Asked when the loop stops: a step in progress ends soon (the sweeper's, after the
    match it is on); then nothing is heard any more."""
    pace_s: float = 0.0
    """A ring runs the step at once when the last step began at least this long ago, else
    when this long has passed since it began (the rings meanwhile pile up into one step):
    one step per ``pace_s`` at most, however often it is rung. 0: every ring at once."""


class Crew(Protocol):
    """Background work with threads of its own (the bot driver's deciders)."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 10.0) -> None: ...
