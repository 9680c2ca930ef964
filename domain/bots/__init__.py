"""Bot policies (docs/decisions.md F12): players see only a redacted view (RULES R33)."""

from __future__ import annotations

from collections.abc import Callable

from domain.bots.base import BURY_SIZE, Player
from domain.bots.heuristic import HeuristicPlayer
from domain.bots.random_player import RandomPlayer
from domain.bots.strong import StrongPlayer
from domain.bots.view import BidView, BotView, PlayViews, seat_view

PLAYERS: dict[str, Callable[[], Player]] = {
    "random": RandomPlayer,
    "heuristic": HeuristicPlayer,
    "strong": StrongPlayer,
}
"""Player policies by name, weakest first (the simulator's ``--players``, a seat's bot kind):
``random`` (random legal moves), ``heuristic`` (rules of thumb), ``strong`` (search)."""


def make_player(name: str) -> Player:
    """A fresh player of the named policy; ValueError listing the known names otherwise."""
    factory = PLAYERS.get(name)
    if factory is None:
        raise ValueError(f"unknown player {name!r}; known: {', '.join(sorted(PLAYERS))}")
    return factory()


__all__ = [
    "BURY_SIZE",
    "PLAYERS",
    "BidView",
    "BotView",
    "HeuristicPlayer",
    "PlayViews",
    "Player",
    "RandomPlayer",
    "StrongPlayer",
    "make_player",
    "seat_view",
]
