"""The play phase of a round: tricks until the hands are empty (RULES R22–R27).

:class:`TrickPlay` is a small, pure state machine. ``check`` validates a seat's play and
returns a :class:`PlayOutcome` without changing anything; ``apply`` assigns the outcome.
An event-sourced aggregate calls ``check`` in its command and ``apply`` when the event is
applied (docs/decisions.md F6); the simulator calls both in turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Self

from domain.rules.cards import NUM_KINDS, POINTS, Card, contains, format_cards
from domain.rules.context import TrumpContext
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.follow import follow_violation, obligation
from domain.rules.shapes import Shape, ShapeKind, decompose
from domain.rules.throws import check_throw
from domain.rules.trick import trick_winner


class PlayOutcome(NamedTuple):
    seat: int
    cards: tuple[Card, ...]
    """The cards actually played (the forced component when a throw failed)."""
    attempted: tuple[Card, ...] | None
    """The throw the leader attempted when it failed (R22), else None."""
    trick_complete: bool
    winner: int | None
    """Seat that won the trick, when this play completes it."""
    points: int
    """Points in the completed trick (R26), 0 otherwise."""


class TrickPlay:
    """Hands, the trick in progress and the points of the attackers during play."""

    __slots__ = (
        "attacker_points",
        "attackers",
        "ctx",
        "failed_throws",
        "hands",
        "last_lead",
        "last_trick",
        "lead_shape",
        "leader",
        "played",
        "trick",
        "tricks",
        "tricks_done",
        "turn",
    )

    def __init__(
        self, ctx: TrumpContext, hands: Sequence[Sequence[Card]], leader: int, attackers: int
    ) -> None:
        """``attackers`` is the parity of the attacking team's seats (R2: {0,2} → 0, {1,3} → 1)."""
        self.ctx = ctx
        self.hands: list[list[Card]] = [list(h) for h in hands]
        self.leader = leader
        self.turn = leader
        self.attackers = attackers
        self.trick: list[tuple[Card, ...]] = []
        self.lead_shape: Shape | None = None
        self.tricks_done = 0
        self.attacker_points = 0
        self.played: list[Card] = []
        self.last_trick: tuple[int, tuple[tuple[Card, ...], ...], int] | None = None
        """(leader, plays in order, winner) of the last completed trick."""
        self.last_lead: Shape | None = None
        """The lead shape of the most recent completed trick (R28 uses the final one)."""
        self.failed_throws: list[tuple[int, tuple[Card, ...]]] = []
        self.tricks: list[tuple[int, tuple[tuple[Card, ...], ...], int]] = []
        """Every completed trick, (leader, plays in order, winner): public once played (R33)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """A copy that owns its lists and shares what never changes: cards are ints, a
        play or a trick is a tuple of them, a shape a named tuple, the context a value
        (domain/values.py). A loaded aggregate is deep-copied on every load; this is the
        part of that copy that matters (docs/decisions.md D-edge)."""
        copy = type(self).__new__(type(self))
        memo[id(self)] = copy
        copy.ctx = self.ctx
        copy.hands = [h.copy() for h in self.hands]
        copy.leader = self.leader
        copy.turn = self.turn
        copy.attackers = self.attackers
        copy.trick = self.trick.copy()
        copy.lead_shape = self.lead_shape
        copy.tricks_done = self.tricks_done
        copy.attacker_points = self.attacker_points
        copy.played = self.played.copy()
        copy.last_trick = self.last_trick
        copy.last_lead = self.last_lead
        copy.failed_throws = self.failed_throws.copy()
        copy.tricks = self.tricks.copy()
        return copy

    @property
    def finished(self) -> bool:
        return not self.trick and not self.hands[self.turn]

    @property
    def collecting(self) -> bool:
        """Every seat has played to the trick: it is being won (``TrickWon``, R24) and
        nobody plays until it is (R22)."""
        return len(self.trick) == 4

    @property
    def to_play(self) -> int | None:
        """The seat to play now (R22); None while a trick is being collected or once every
        card is played (the round is being scored, R26)."""
        return None if self.collecting or self.finished else self.turn

    def check(self, seat: int, cards: Sequence[Card], *, test_throw: bool = True) -> PlayOutcome:
        """Validate ``seat`` playing ``cards``; raise IllegalMoveError naming the rule.
        ``test_throw`` False: a throw is judged by its shape alone, as the thrower can
        judge it (R22: the other hands test it only when it is played, R33)."""
        if self.finished:
            raise IllegalMoveError("every card has been played", rule="R22", code="round-over")
        if self.collecting:
            raise IllegalMoveError(
                "the trick is complete: it is being won (R24) before anyone plays again",
                rule="R22",
                code="not-your-turn",
            )
        if seat != self.turn:
            raise IllegalMoveError(
                f"it is seat {self.turn}'s turn to play, not seat {seat}'s",
                rule="R22",
                code="not-your-turn",
            )
        hand = self.hands[seat]
        for c in cards:
            if type(c) is not int or not 0 <= c < NUM_KINDS:
                raise InvalidInputError(f"{c!r} is not a card kind (0..53, R3)")
        if not cards:
            raise IllegalMoveError("a play needs at least one card", rule="R22", code="empty-play")
        if not contains(hand, cards):
            raise IllegalMoveError(
                f"{format_cards(cards)}: not all of these cards are in seat {seat}'s hand",
                rule="R3",
                code="cards-not-in-hand",
            )
        ctx = self.ctx
        if not self.trick:
            return self._check_lead(seat, tuple(cards), test_throw)
        lead = self.lead_shape
        assert lead is not None
        if len(cards) != lead.size:
            raise IllegalMoveError(
                f"{format_cards(cards)}: R23: must play exactly {lead.size} cards, as the lead did",
                rule="R23",
                code="illegal-follow",
            )
        why = follow_violation(ctx, obligation(ctx, lead, hand), cards, lead.size)
        if why is not None:
            raise IllegalMoveError(
                f"{format_cards(cards)}: {why}", rule="R23", code="illegal-follow"
            )
        played = tuple(cards)
        if len(self.trick) < 3:
            return PlayOutcome(seat, played, None, False, None, 0)
        plays = [*self.trick, played]
        offset = trick_winner(ctx, plays, lead)
        points = sum(POINTS[c] for p in plays for c in p)
        return PlayOutcome(seat, played, None, True, (self.leader + offset) % 4, points)

    def _check_lead(self, seat: int, cards: tuple[Card, ...], test_throw: bool) -> PlayOutcome:
        shape = decompose(self.ctx, cards)
        if shape.kind is ShapeKind.MIXED:
            raise IllegalMoveError(
                f"{format_cards(cards)}: a lead must be of one suit category (R15, R22)",
                rule="R22",
                code="mixed-lead",
            )
        if shape.kind is ShapeKind.THROW and test_throw:
            others = [self.hands[s] for s in range(4) if s != seat]
            verdict = check_throw(self.ctx, shape, others)
            if not verdict.valid:
                assert verdict.forced is not None
                return PlayOutcome(seat, verdict.forced, cards, False, None, 0)
        return PlayOutcome(seat, cards, None, False, None, 0)

    def apply(self, outcome: PlayOutcome) -> None:
        """Assign a checked outcome (no validation: this runs on every replay)."""
        self.apply_cards(outcome.seat, outcome.cards, outcome.attempted)
        if outcome.trick_complete:
            assert outcome.winner is not None
            self.apply_trick_won(outcome.winner, outcome.points)

    def apply_cards(
        self, seat: int, cards: Sequence[Card], attempted: Sequence[Card] | None = None
    ) -> None:
        """Cards leave ``seat``'s hand into the trick (the event ``CardPlayed``)."""
        hand = self.hands[seat]
        played = tuple(cards)
        for c in played:
            hand.remove(c)
        self.played.extend(played)
        if not self.trick:
            self.lead_shape = decompose(self.ctx, played)
            if attempted is not None:
                self.failed_throws.append((seat, tuple(attempted)))
        self.trick.append(played)
        self.turn = (seat + 1) % 4

    def apply_trick_won(self, winner: int, points: int) -> None:
        """The trick is complete: ``winner`` collects it and leads next (the event ``TrickWon``)."""
        self.last_trick = (self.leader, tuple(self.trick), winner)
        self.tricks.append(self.last_trick)
        self.last_lead = self.lead_shape
        if winner % 2 == self.attackers:
            self.attacker_points += points
        self.tricks_done += 1
        self.trick = []
        self.lead_shape = None
        self.leader = self.turn = winner

    def play(self, seat: int, cards: Sequence[Card]) -> PlayOutcome:
        """Check then apply; returns the outcome."""
        outcome = self.check(seat, cards)
        self.apply(outcome)
        return outcome
