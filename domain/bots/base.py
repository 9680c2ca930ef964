"""The decisions a seat makes in a round (RULES R17–R23), as a protocol bots implement.

Every decision is a pure function of a redacted view (:mod:`domain.bots.view`, R33)
and an injected ``random.Random``: a player holds no state between calls, so the same
view and the same rng state give the same choice.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from domain.bots.view import BidView, BotView
from domain.rules.cards import Card
from domain.rules.shows import Show

BURY_SIZE = 8
"""R21: the dealer buries 8 of 33 cards."""


class Player(Protocol):
    """A bot policy: the five decisions of a round."""

    name: str

    def declare(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R17: declare with one of ``options`` (shows legal now) as cards arrive, or None."""
        ...

    def overcall(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R20: overcall the standing show with one of ``options`` (all legal), or pass."""
        ...

    def request_redeal(self, view: BidView, rng: random.Random) -> bool:
        """§10 ``weak_hand_redeal`` (暴动): ask for a redeal (only offered to weak hands)."""
        ...

    def bury(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R21: the 8 cards to bury from the 33 in ``view.hand``."""
        ...

    def play(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R22/R23: the cards to lead (``view.trick`` empty) or to follow with."""
        ...
