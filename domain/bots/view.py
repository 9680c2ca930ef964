"""What one seat may see (RULES R33): the only path from a round's state to a player.

A player never touches the round itself. During the play phase it gets a
:class:`BotView` — its own hand, every card once played, the trick so far, the points
and, only if this seat buried it (R21), the bottom (底牌). While the cards are drawn and
the trump is being declared it gets a :class:`BidView` — its hand so far and the
standing declaration (R17–R20). Both are immutable, so a player is a pure function of a
view plus the injected ``random.Random``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from domain.rules.cards import Card
from domain.rules.context import TrumpContext
from domain.rules.play import TrickPlay
from domain.rules.ruleset import RuleSet
from domain.rules.shapes import Shape
from domain.rules.shows import Show


class BotView(NamedTuple):
    """One seat's view of a round once the trump is known (R33)."""

    seat: int
    ctx: TrumpContext
    """Level rank and trump of the round (R5–R11)."""
    hand: tuple[Card, ...]
    """This seat's own cards (33 while burying, R21)."""
    dealer: int
    """The dealer (庄家); the dealer's team defends (R6)."""
    attackers: int
    """Parity of the attacking seats (R2: {0, 2} → 0, {1, 3} → 1)."""
    trick: tuple[tuple[int, tuple[Card, ...]], ...]
    """The trick in progress, (seat, cards) in play order, leader first; () when leading."""
    lead_shape: Shape | None
    """Shape of the lead of the trick in progress (R12–R15), None when leading."""
    played: tuple[Card, ...]
    """Every card played in the earlier, completed tricks (R33: seen by all)."""
    attacker_points: int
    """Points the attackers have taken in tricks so far (R27)."""
    bottom: tuple[Card, ...] | None
    """The buried cards, only for the seat that buried them (R21, R33); else None."""
    rules: RuleSet
    tricks: tuple[tuple[int, tuple[tuple[Card, ...], ...]], ...] = ()
    """The completed tricks, (leader, plays in play order), oldest first (R33: who played
    what is seen by all; the search bot infers voids from it)."""
    shows: tuple[Show, ...] = ()
    """The declarations and overcalls of the round, in order (R17, R20: shown to all)."""

    @property
    def partner(self) -> int:
        """The seat opposite (R2)."""
        return (self.seat + 2) % 4

    @property
    def attacking(self) -> bool:
        """True when this seat's team are the attackers (捡分方, R6)."""
        return self.seat % 2 == self.attackers


class BidView(NamedTuple):
    """One seat's view while cards are drawn and trump is declared (R16–R20, R33)."""

    seat: int
    level: int
    """Level rank index of the round (0 = '2' … 12 = 'A', R5)."""
    hand: tuple[Card, ...]
    """The cards this seat has drawn so far."""
    dealer: int | None
    """The dealer fixed before the deal (R18, R31); None in round 1 (抢报)."""
    standing: Show | None
    """The declaration or overcall standing now, if any (R17, R20)."""
    to_draw: int
    """Cards this seat has still to draw (R16); 0 on its last card and after the deal."""
    rules: RuleSet


def seat_view(
    play: TrickPlay,
    seat: int,
    *,
    dealer: int,
    rules: RuleSet,
    bottom: Sequence[Card] | None = None,
    shows: Sequence[Show] = (),
) -> BotView:
    """Redact the play-phase state to what ``seat`` may see (R33).

    ``bottom`` is passed only when ``seat`` is the one who buried it (R21); the caller
    decides, the view never looks further.
    """
    views = PlayViews(play, dealer=dealer, rules=rules, burier=seat, bottom=bottom, shows=shows)
    return views.view(seat)


_PLAY_ORDER = tuple(tuple((leader + i) % 4 for i in range(4)) for leader in range(4))
"""_PLAY_ORDER[leader]: the seats of a trick in play order (R1)."""


class PlayViews:
    """Redaction of one round's play phase, for every seat in turn (R33).

    Caches what all seats see alike — the cards of the completed tricks, refreshed once
    per trick — so building a view per play stays cheap in bulk simulations.
    """

    __slots__ = (
        "_bottom",
        "_burier",
        "_dealer",
        "_history",
        "_played",
        "_rules",
        "_shows",
        "_tricks",
        "play",
    )

    def __init__(
        self,
        play: TrickPlay,
        *,
        dealer: int,
        rules: RuleSet,
        burier: int,
        bottom: Sequence[Card] | None,
        shows: Sequence[Show] = (),
    ) -> None:
        """``burier`` is the seat that buried ``bottom`` (R21): only it sees the bottom;
        ``shows`` are the round's declarations and overcalls (R17, R20), public."""
        self.play = play
        self._dealer = dealer
        self._rules = rules
        self._burier = burier
        self._bottom = None if bottom is None else tuple(bottom)
        self._shows = tuple(shows)
        self._tricks = -1
        self._played: tuple[Card, ...] = ()
        self._history: tuple[tuple[int, tuple[tuple[Card, ...], ...]], ...] = ()

    def view(self, seat: int) -> BotView:
        """What ``seat`` may see now."""
        play = self.play
        current = play.trick
        if play.tricks_done != self._tricks:
            self._tricks = play.tricks_done
            played = play.played
            if current:
                played = played[: len(played) - sum(len(p) for p in current)]
            self._played = tuple(played)
            self._history = tuple((leader, plays) for leader, plays, _ in play.tricks)
        # tuple.__new__ skips NamedTuple's Python-level __new__: this runs once per play.
        return tuple.__new__(
            BotView,
            (
                seat,
                play.ctx,
                tuple(play.hands[seat]),
                self._dealer,
                play.attackers,
                tuple(zip(_PLAY_ORDER[play.leader], current, strict=False)) if current else (),
                play.lead_shape,
                self._played,
                play.attacker_points,
                self._bottom if seat == self._burier else None,
                self._rules,
                self._history,
                self._shows,
            ),
        )
