"""Bots in tests: the bot driver of the product (:mod:`services.bot_driver`) run until it is
idle — every bot has moved as far as it can without a person or the clock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest

from domain.game.match import Match
from domain.game.round import Round
from services import bot_driver, bots
from services.bot_driver import BotDriver
from services.bots import BotMove, Stop
from services.game import GameService
from services.tournaments.answers import RoundRun
from services.tournaments.commands import RunRoundBots
from tests.commands import bus_of
from tests.tournaments import Tournaments


@contextmanager
def driving(service: GameService, **kwargs: Any) -> Iterator[BotDriver]:
    """A started bot driver on ``service`` (stopped after the block)."""
    driver = BotDriver(bus_of(service), **kwargs)
    driver.start()
    try:
        yield driver
    finally:
        driver.stop()


def play_round(ts: Tournaments, tournament_id: UUID) -> RoundRun:
    """The round in play's bots played by the driver until idle, then the organiser's "run
    the bots" (:class:`RunRoundBots`): the tables' statuses, the finished tables' results
    recorded."""
    state = ts.get(tournament_id).current
    assert state is not None, "no round is scheduled"
    with driving(ts.game) as driver:
        for table in state.tables:
            driver.wake(table.match_id)
        assert driver.idle(300), "the bot driver did not go idle"
    run: RoundRun = ts.bus.execute(RunRoundBots(tournament_id, state.number))
    return run


class Decisions(list[str]):
    """The name of the thread each bot decision ran on; :attr:`first` is set by the first,
    and :attr:`most` is the most that ran at once."""

    def __init__(self) -> None:
        super().__init__()
        self.first = threading.Event()
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()


def record_decisions(monkeypatch: pytest.MonkeyPatch) -> Decisions:
    """Record every bot decision the driver asks for (``services.bots.next_move``) from now
    on."""
    made = Decisions()
    decide = bots.next_move

    def recorded(
        match: Match,
        round_: Round,
        now: datetime,
        kinds: dict[int, str] | None = None,
        *,
        stop: Stop | None = None,
    ) -> BotMove | None:
        with made.lock:
            made.append(threading.current_thread().name)
            made.running += 1
            made.most = max(made.most, made.running)
        made.first.set()
        try:
            return decide(match, round_, now, kinds, stop=stop)
        finally:
            with made.lock:
                made.running -= 1

    monkeypatch.setattr(bot_driver, "next_move", recorded)
    return made
