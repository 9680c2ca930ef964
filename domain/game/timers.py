"""Turn timers (docs/timers.md): optional per-match time limits for declaring, burying and playing.

A match may be created with :class:`Timers` (recorded in ``MatchCreated``; none by
default). When the seat to act is over its time, anyone at the table (or the service's
sweeper) may claim the timeout: :func:`check_timed_out` says whether it may be claimed,
and :func:`record_timeout` records ``TurnTimedOut`` just before the move the service makes
for that seat. Time is never read here: ``now`` is the command's (docs/decisions.md F5).

**When a turn starts.** A seat's turn starts at the timestamp of the event that made it
that seat's turn, which is always the round's latest event (every round event changes
whose turn it is, or what the seat to act must decide, so the seat gets its whole limit
again): ``Round.modified_on``. So replay needs no clock: the events hold every instant.

**Which limit.** ``declare_ms`` for the turns where one seat is to speak — the late
declaring turn (R18) and the overcall window taken seat by seat (R20); ``bury_ms`` for the
burier (R21, also 炒底 re-burying, R20); ``play_ms`` for the seat to lead or follow
(R22, R23). The paced deal (R16, R17) has no seat to act — anyone may declare while cards
are drawn — and keeps its own deadline, ``Pacing.declare_ms`` after the last card
(``Round.claim_deadlines``); an overcall window with ``window_ms`` closes by itself too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from domain.game import round_events as ev
from domain.game.round import Round, RoundPhase
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.values import Value

MIN_LIMIT_MS: Final = 1_000
MAX_LIMIT_MS: Final = 86_400_000
"""A limit is 0 (none) or 1 s .. 24 h."""

TIMER_NAMES: Final = ("declare", "bury", "play")

_TIMER_OF_PHASE: Final = {
    RoundPhase.DECLARING: "declare",  # R18: the late declaring turn
    RoundPhase.OVERCALLING: "declare",  # R20: the window, seat by seat
    RoundPhase.BURYING: "bury",  # R21 (and 炒底, R20)
    RoundPhase.PLAYING: "play",  # R22, R23
}


@dataclass(frozen=True, slots=True)
class Timers(Value):
    """Per-match time limits in ms (0 = no limit), fixed when the match is created."""

    declare_ms: int = 0
    bury_ms: int = 0
    play_ms: int = 0

    def __post_init__(self) -> None:
        for name in TIMER_NAMES:
            value = getattr(self, f"{name}_ms")
            if type(value) is not int or not (value == 0 or MIN_LIMIT_MS <= value <= MAX_LIMIT_MS):
                raise InvalidInputError(
                    f"timers.{name}Ms must be 0 (no limit) or {MIN_LIMIT_MS}..{MAX_LIMIT_MS} "
                    f"ms, got {value!r}"
                )

    @property
    def any(self) -> bool:
        return bool(self.declare_ms or self.bury_ms or self.play_ms)

    def limit(self, timer: str) -> int:
        """The limit of ``timer`` (``declare``, ``bury``, ``play``) in ms, 0 = none."""
        value: int = getattr(self, f"{timer}_ms")
        return value

    def to_mapping(self) -> dict[str, int]:
        """As ``MatchCreated.timers`` stores it."""
        return {f"{name}_ms": self.limit(name) for name in TIMER_NAMES}

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, int] | None) -> Timers:
        """From ``MatchCreated.timers``; None (matches created before timers) = none."""
        if not mapping:
            return NO_TIMERS
        return cls(**{f"{n}_ms": int(mapping.get(f"{n}_ms", 0)) for n in TIMER_NAMES})


NO_TIMERS: Final = Timers()


@dataclass(frozen=True, slots=True)
class TurnClock:
    """The running clock of the seat to act."""

    seat: int
    timer: str
    """``declare``, ``bury`` or ``play``."""
    limit_ms: int
    began: datetime
    """The timestamp of the event that made it this seat's turn."""

    @property
    def deadline(self) -> datetime:
        return self.began + timedelta(milliseconds=self.limit_ms)


def turn_clock(timers: Timers, round_: Round) -> TurnClock | None:
    """The clock of the seat to act in ``round_``; None when no limit runs."""
    timer = _TIMER_OF_PHASE.get(round_.phase)
    if timer is None:
        return None
    seat = round_.to_act()
    limit = timers.limit(timer)
    if seat is None or not limit:
        return None
    return TurnClock(seat, timer, limit, round_.modified_on)


def check_timed_out(timers: Timers, round_: Round, now: datetime) -> TurnClock:
    """The clock of the seat to act if it is over its time at ``now``; else an
    ``IllegalMoveError`` saying why not (``no-turn-timer``) or how long is left
    (``not-timed-out``)."""
    phase = round_.phase
    timer = _TIMER_OF_PHASE.get(phase)
    if timer is None:
        what = {
            RoundPhase.DEALING: "cards are being drawn and any seat may declare; the drawing "
            "ends by its own deadline (R16, R17)",
        }.get(phase, f"no seat is to act (phase {phase})")
        raise IllegalMoveError(f"nothing to time out: {what}", code="no-turn-timer")
    clock = turn_clock(timers, round_)
    if clock is None:
        raise IllegalMoveError(
            f"this match has no time limit for the {phase} phase (timers.{timer}Ms)",
            code="no-turn-timer",
        )
    if now <= clock.deadline:
        left = (clock.deadline - now) / timedelta(seconds=1)
        raise IllegalMoveError(
            f"seat {clock.seat} still has {left:.3f} s to {timer} (timers.{timer}Ms = "
            f"{clock.limit_ms}, its turn began at {clock.began.isoformat()}); the timeout may "
            f"be claimed after {clock.deadline.isoformat()}",
            code="not-timed-out",
        )
    return clock


def record_timeout(round_: Round, clock: TurnClock, now: datetime, claimed_by: str) -> None:
    """Record ``TurnTimedOut`` (the move made for the seat follows it in the same save)."""
    if not 1 <= len(claimed_by) <= 40:
        raise InvalidInputError("claimed_by names who claimed the timeout (1..40 characters)")
    round_.trigger_event(
        ev.TurnTimedOut,
        timestamp=now,
        seat=clock.seat,
        timer=clock.timer,
        limit_ms=clock.limit_ms,
        turn_began=clock.began,
        claimed_by=claimed_by,
    )
