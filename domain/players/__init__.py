"""Bot policies (ARCHITECTURE: domain): players see only a redacted view (RULES R33)."""

from __future__ import annotations

from domain.players.base import BURY_SIZE, Player
from domain.players.heuristic import HeuristicPlayer
from domain.players.random_player import RandomPlayer
from domain.players.view import BidView, PlayViews, SeatView, seat_view

PLAYERS: dict[str, type[HeuristicPlayer] | type[RandomPlayer]] = {
    "heuristic": HeuristicPlayer,
    "random": RandomPlayer,
}
"""Player policies by name (the simulator's ``--players``)."""


def make_player(name: str) -> Player:
    """A fresh player of the named policy; ValueError listing the known names otherwise."""
    cls = PLAYERS.get(name)
    if cls is None:
        raise ValueError(f"unknown player {name!r}; known: {', '.join(sorted(PLAYERS))}")
    return cls()


__all__ = [
    "BURY_SIZE",
    "PLAYERS",
    "BidView",
    "HeuristicPlayer",
    "PlayViews",
    "Player",
    "RandomPlayer",
    "SeatView",
    "make_player",
    "seat_view",
]
