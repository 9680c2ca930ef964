"""Every command and its one handler, in one table: the bus of a service
(docs/decisions.md D-bus).

:func:`build_bus` injects each handler's dependencies once — the service (store, loads,
clock), the dealer and its deal sources (R35, R36), the bot driver's doorbell, the timeout
bot's settings — as cosmicpython's ``bootstrap`` does. The composition root
(``infra.bootstrap``) calls it for the served app; tools, a record's replay and tests call it
for a service of their own. The table is also what everything else derives from: the
metrics' command labels (:data:`COMMAND_NAMES`), the test that every write route goes
through the bus.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from services.accounts.seat_commands import (
    ClaimSeatAsPlayer,
    ClaimSeatAsPlayerHandler,
    CreateInvite,
    CreateInviteHandler,
    JoinByInvite,
    JoinByInviteHandler,
    LeaveMatch,
    LeaveMatchHandler,
)
from services.bus import Bus, Handler
from services.dealer import Dealer, DealSource, FreshDeals
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
from services.tournaments.seeds import TableDeals

DECISION_CPU_S: Final = 0.5
"""A bot decision's CPU budget by default (``BOT_DECISION_MS``)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What the handlers take from the service's settings."""

    timeout_kind: str = TIMEOUT_KIND
    decision_cpu_s: float = DECISION_CPU_S


def _nobody(_: UUID) -> None:
    """No bot driver to wake (a tool, a record's replay)."""


def table_deals(service: GameService) -> DealSource:
    """The deals of every match of ``service``: fresh (R35), a tournament table's from its
    tournament round (R36)."""
    return TableDeals(FreshDeals(service.seeds, service.pacing))


def build_bus(
    service: GameService,
    *,
    deals: DealSource | None = None,
    wake: Callable[[UUID], None] = _nobody,
    settings: Settings = Settings(),
) -> Bus:
    """The bus of ``service``: every command with its handler. ``deals``: where deals come
    from (a record's replay gives its own); ``wake``: the bot driver's doorbell."""
    dealer = Dealer(deals or table_deals(service))
    handlers: dict[type[Any], Handler[Any, Any, Any]] = {
        Act: ActHandler(service, dealer),
        ClaimDeadlines: ClaimDeadlinesHandler(service, dealer),
        ClaimTimeout: ClaimTimeoutHandler(
            service, dealer, settings.timeout_kind, settings.decision_cpu_s
        ),
        CreateMatch: CreateMatchHandler(),
        ClaimSeat: ClaimSeatHandler(service, dealer),
        SeatBot: SeatBotHandler(service, dealer),
        WakeBots: WakeBotsHandler(service, wake),
        FinishMatch: FinishMatchHandler(service),
        Resign: ResignHandler(service),
        AskRematch: AskRematchHandler(service, dealer),
        ClaimSeatAsPlayer: ClaimSeatAsPlayerHandler(service, dealer),
        LeaveMatch: LeaveMatchHandler(service),
        CreateInvite: CreateInviteHandler(service),
        JoinByInvite: JoinByInviteHandler(service, dealer),
    }
    return Bus(service, handlers)
