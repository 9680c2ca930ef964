"""Bots in tests: the bot driver of the product (:mod:`services.bot_driver`) run until it is
idle — every bot has moved as far as it can without a person or the clock."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from services.bot_driver import BotDriver
from services.game import GameService
from services.tournaments.service import RoundRun, TournamentService


@contextmanager
def driving(service: GameService, **kwargs: int) -> Iterator[BotDriver]:
    """A started bot driver on ``service`` (stopped after the block)."""
    driver = BotDriver(service, **kwargs)
    driver.start()
    try:
        yield driver
    finally:
        driver.stop()


def play_round(ts: TournamentService, tournament_id: UUID) -> RoundRun:
    """The organiser's "run the bots" on the round in play, its bots played by the driver
    until idle, then the tables' statuses with the finished tables' results collected."""
    with driving(ts.game) as driver:
        ts.wake_round(tournament_id, driver.wake)
        assert driver.idle(300), "the bot driver did not go idle"
    return ts.wake_round(tournament_id, lambda _: None)
