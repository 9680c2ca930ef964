"""The game's commands and their handlers: a table's life and its rounds
(:mod:`services.match_commands`, :mod:`services.round_commands`, :mod:`services.timers`).

:func:`game_handlers` is the part of every bus that plays matches: the service's own bus
(:mod:`services.handlers` adds the players', the tournaments' and the archive's commands to
it) and a record's replay, which plays a record's match through these very handlers on its
own in-memory store (:mod:`services.records.replay`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from services.bus import Handler
from services.dealer import Dealer
from services.game import GameService
from services.match_commands import (
    AskRematch,
    AskRematchHandler,
    ClaimSeat,
    ClaimSeatHandler,
    CreateMatch,
    CreateMatchHandler,
    FinishMatch,
    FinishMatchHandler,
    Resign,
    ResignHandler,
    SeatBot,
    SeatBotHandler,
    WakeBots,
    WakeBotsHandler,
)
from services.round_commands import Act, ActHandler, ClaimDeadlines, ClaimDeadlinesHandler
from services.timers import TIMEOUT_KIND, ClaimTimeout, ClaimTimeoutHandler

DECISION_CPU_S: Final = 0.5
"""A bot decision's CPU budget by default (``BOT_DECISION_MS``)."""

Handlers = dict[type[Any], Handler[Any, Any, Any]]


@dataclass(frozen=True, slots=True)
class TimeoutBot:
    """The bot that moves for a timed-out seat (``TIMEOUT_BOT``) and its decision's CPU
    budget (``BOT_DECISION_MS``)."""

    kind: str = TIMEOUT_KIND
    decision_cpu_s: float = DECISION_CPU_S


DEFAULT_TIMEOUT_BOT: Final = TimeoutBot()


def nobody(_: UUID) -> None:
    """No bot driver to wake (a tool, a record's replay)."""


def game_handlers(
    service: GameService,
    dealer: Dealer,
    *,
    wake: Callable[[UUID], None] = nobody,
    timeout_bot: TimeoutBot = DEFAULT_TIMEOUT_BOT,
) -> Handlers:
    """The game's commands with their handlers, on ``service`` dealing with ``dealer``;
    ``wake``: the bot driver's doorbell."""
    return {
        Act: ActHandler(service, dealer),
        ClaimDeadlines: ClaimDeadlinesHandler(service, dealer),
        ClaimTimeout: ClaimTimeoutHandler(
            service, dealer, timeout_bot.kind, timeout_bot.decision_cpu_s
        ),
        CreateMatch: CreateMatchHandler(),
        ClaimSeat: ClaimSeatHandler(service, dealer),
        SeatBot: SeatBotHandler(service, dealer),
        WakeBots: WakeBotsHandler(service, wake),
        FinishMatch: FinishMatchHandler(service),
        Resign: ResignHandler(service),
        AskRematch: AskRematchHandler(service, dealer),
    }
