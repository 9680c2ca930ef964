"""The events of a :class:`~domain.game.round.Round`, past tense, each with its ``apply``.

``apply`` only assigns state; it never validates and never reads a clock (the event's
``timestamp`` is the ``now`` the command was given). Projections read these events
without re-running rules: each says what happened in full (who, which cards, what it
decided). Fields hidden from some viewers (RULES R33) are listed in ``SECRET_FIELDS``;
the only path from an event to a viewer goes through the redaction in services.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.rules.bidding import Bidding, Phase
from domain.rules.board import Board
from domain.rules.cards import Card
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from domain.rules.shows import Show, Strength
from domain.rules.shuffle import Deal, deal, seed_from_hex, shuffle_deck
from domain.values import Value

if TYPE_CHECKING:
    from domain.game.round import Round


class Pacing(Value):
    """Deal pacing (recorded in ``Dealt``): ms between cards, ms for declaring after the
    last card, ms the overcall window stays open (0 = until every seat has passed)."""

    __slots__ = ("declare_ms", "interval_ms", "window_ms")

    def __init__(self, interval_ms: int = 0, declare_ms: int = 0, window_ms: int = 0) -> None:
        for name, value in (
            ("interval_ms", interval_ms),
            ("declare_ms", declare_ms),
            ("window_ms", window_ms),
        ):
            if type(value) is not int or not 0 <= value <= 3_600_000:
                raise InvalidInputError(f"{name} must be 0..3600000 ms, got {value!r}")
        self.interval_ms = interval_ms
        self.declare_ms = declare_ms
        self.window_ms = window_ms


@lru_cache(maxsize=256)
def deal_for(seed_hex: str, first_seat: int) -> Deal:
    """R16/R35: the deal is a pure function of the seed (replay never re-shuffles at random)."""
    return deal(shuffle_deck(seed_from_hex(seed_hex)), first_seat)


class RoundEvent(Aggregate.Event):
    """Base of the round's events."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, round_: Round) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class RoundStarted(Aggregate.Created):
    """A round of a match begins (dealer None in round 1: 抢报 chooses it, R18). Version 2
    names the round's board in a duplicate event of boards (R36: dealer, level and trump
    fixed); version 1 events are read with none (:meth:`upcast_v1_v2`)."""

    class_version: ClassVar[int] = 2
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()
    match_id: UUID
    number: int
    rules: dict[str, bool | int | str | None]
    levels: tuple[int, int]
    dealer: int | None
    board: Board | None = None
    """The board this round plays (R36, docs/decisions.md D-boards); None: the round's
    dealer, level and trump come from the match and its bidding (R18–R20, R31)."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A round started before boards: none."""
        state["board"] = None

    def apply(self, aggregate: Any) -> None:
        r: Round = aggregate
        rules = RuleSet.from_mapping(self.rules)
        r.match_id = self.match_id
        r.number = self.number
        r.rules = rules
        r.levels = (self.levels[0], self.levels[1])
        r.dealer = self.dealer
        r.board = self.board
        r.bidding = _fresh_bidding(rules, self.dealer, r.levels, self.board)
        r.deal_no = 0
        r.seed_hex = ""
        r.commitment = ""
        r.started_at = self.timestamp
        r.pacing = Pacing()
        r.dealt = None
        r.hands = []
        r.bottom = ()
        r.buried_by = None
        r.deal_passes = frozenset()
        r.window_opened_at = None
        r.play = None
        r.penalties = []
        r.result = None
        r.abandoned = None


def _fresh_bidding(
    rules: RuleSet, dealer: int | None, levels: tuple[int, int], board: Board | None
) -> Bidding:
    if board is not None:
        return Bidding.for_board(rules, board)
    if dealer is None:
        return Bidding.round_one(rules, levels[0])
    return Bidding.later_round(rules, dealer, levels)


class Dealt(RoundEvent):
    """R16/R35: the deck order is fixed by a seed; the commitment is public from now on.

    ``seed`` is stored so the round can be replayed, and is secret until ``RoundScored``
    reveals it; hands derive from it, cards reach the seats one per ``interval_ms``.
    Version 2 repeats the round's board (R36: its dealer, level and trump, the same at every
    table of a duplicate event); version 1 events are read with none (:meth:`upcast_v1_v2`).
    """

    class_version: ClassVar[int] = 2
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("seed",)
    deal_no: int
    rules: dict[str, bool | int | str | None]
    level: int
    levels: tuple[int, int]
    dealer: int | None
    first_seat: int
    commitment: str
    seed: str
    interval_ms: int
    declare_ms: int
    window_ms: int
    board: Board | None = None
    """The round's board (R36, docs/decisions.md D-boards), or None."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A deal made before boards: none."""
        state["board"] = None

    def apply_to(self, round_: Round) -> None:
        r = round_
        if r.deal_no:  # a redeal starts the bidding afresh (R19, 暴动)
            r.bidding = _fresh_bidding(r.rules, r.dealer, r.levels, r.board)
        r.deal_no = self.deal_no
        r.seed_hex = self.seed
        r.commitment = self.commitment
        r.started_at = self.timestamp
        r.pacing = Pacing(self.interval_ms, self.declare_ms, self.window_ms)
        r.dealt = deal_for(self.seed, self.first_seat)
        r.hands = []
        r.bottom = r.dealt.bottom
        r.buried_by = None
        r.deal_passes = frozenset()
        r.window_opened_at = None
        r.play = None
        r.penalties = []


class _ShowEvent(RoundEvent):
    seat: int
    cards: tuple[Card, ...]
    trump: int | None
    strength: int

    def show(self) -> Show:
        return Show(self.seat, tuple(self.cards), self.trump, Strength(self.strength))


def show_fields(show: Show) -> dict[str, object]:
    """The fields of the event that records ``show`` (:class:`TrumpDeclared`,
    :class:`Overcalled`)."""
    return {
        "seat": show.seat,
        "cards": show.cards,
        "trump": show.trump,
        "strength": int(show.strength),
    }


class TrumpDeclared(_ShowEvent):
    """R17/R18: a seat showed level card(s); its suit is trump (round 1: it deals)."""

    def apply_to(self, round_: Round) -> None:
        round_.bidding = round_.bidding.apply_declare(self.show())
        round_.after_bidding(self.timestamp)


class Overcalled(_ShowEvent):
    """R20: a strictly stronger show (round 1: the overcaller deals; later: 炒底)."""

    def apply_to(self, round_: Round) -> None:
        round_.bidding = round_.bidding.apply_overcall(self.show())
        round_.after_bidding(self.timestamp)


class Passed(RoundEvent):
    """A seat passed: after the last card (ending the drawing early once all four have),
    in the overcall window (R20) or in the late declaring turn (R18)."""

    seat: int

    def apply_to(self, round_: Round) -> None:
        if round_.bidding.phase is Phase.DEALING:
            round_.deal_passes = round_.deal_passes | {self.seat}
            return
        was_open = round_.bidding.phase is Phase.OVERCALL
        round_.bidding = round_.bidding.apply_pass(self.seat)
        round_.after_bidding(self.timestamp, restart_window=not was_open)


class DrawingEnded(RoundEvent):
    """R16: every card is drawn and declaring has closed. ``next_phase`` says what follows;
    ``fallback_card`` is the bottom's 3rd card when R19 chose trump from it (shown to all)."""

    next_phase: str
    fallback_card: int | None

    def apply_to(self, round_: Round) -> None:
        dealt = round_.dealt
        assert dealt is not None
        round_.hands = [list(h) for h in dealt.hands]
        round_.bidding = round_.bidding.apply_end_deal(dealt.bottom, dealt.hands)
        round_.after_bidding(self.timestamp)


class WindowClosed(RoundEvent):
    """R20: the overcall window's deadline passed; the remaining seats are taken to pass."""

    def apply_to(self, round_: Round) -> None:
        bidding = round_.bidding
        while bidding.phase is Phase.OVERCALL and bidding.to_speak is not None:
            bidding = bidding.apply_pass(bidding.to_speak)
        round_.bidding = bidding
        round_.after_bidding(self.timestamp)


class BottomBuried(RoundEvent):
    """R21: the burier took the 8 bottom cards into hand and buried these 8 (secret)."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("cards",)
    seat: int
    cards: tuple[Card, ...]

    def apply_to(self, round_: Round) -> None:
        hand = [*round_.hands[self.seat], *round_.bottom]
        for c in self.cards:
            hand.remove(c)
        round_.hands[self.seat] = hand
        round_.bottom = tuple(self.cards)
        round_.buried_by = self.seat
        round_.bidding = round_.bidding.apply_bury(self.seat)
        round_.after_bidding(self.timestamp)


BOARD_WEAK_HAND = "board_weak_hand"
"""``Redealt.reason`` of a board dealt with a weak hand (R36, §10): redealt at every table."""


class Redealt(RoundEvent):
    """§10 暴动: a weak hand asked for a redeal (``weak_hand``), or a board was dealt with
    one (``board_weak_hand``: ``seat`` holds it, every table redeals alike, R36); the
    service deals again with a new seed."""

    reason: str
    seat: int | None

    def apply_to(self, round_: Round) -> None:
        round_.bidding = round_.bidding.apply_weak_hand_redeal(self.seat or 0)


class ThrowFailed(RoundEvent):
    """R22: a throw could be beaten; ``forced`` is played instead (§10 penalty recorded)."""

    seat: int
    attempted: tuple[Card, ...]
    forced: tuple[Card, ...]
    penalty: int

    def apply_to(self, round_: Round) -> None:
        assert round_.play is not None
        round_.play.failed_throws.append((self.seat, tuple(self.attempted)))
        round_.penalties.append(self.penalty)


class CardPlayed(RoundEvent):
    """R22/R23: a seat led or followed with these cards."""

    seat: int
    cards: tuple[Card, ...]

    def apply_to(self, round_: Round) -> None:
        assert round_.play is not None
        round_.play.apply_cards(self.seat, self.cards)


class TrickWon(RoundEvent):
    """R24/R27: the trick's winner, who leads next, and the points in it."""

    trick: int
    winner: int
    points: int

    def apply_to(self, round_: Round) -> None:
        assert round_.play is not None
        round_.play.apply_trick_won(self.winner, self.points)


class RoundScored(RoundEvent):
    """R26–R31: the round's result; the bottom and the seed are revealed (R33, R35)."""

    trick_points: int
    bottom_cards: tuple[Card, ...]
    bottom_points: int
    multiplier: int
    bottom_bonus: int
    penalties: tuple[int, ...]
    attackers_total: int
    outcome: str
    levels_gained: int
    band: str
    defenders_keep: bool
    dealer: int
    next_dealer: int
    seed: str
    commitment: str

    def apply_to(self, round_: Round) -> None:
        round_.result = self


class RoundAbandoned(RoundEvent):
    """R32: the organiser ended the match while this round was played; it is not scored
    and what it hid stays hidden."""

    reason: str

    def apply_to(self, round_: Round) -> None:
        round_.abandoned = self


class TurnTimedOut(RoundEvent):
    """Turn timers (docs/timers.md): ``seat`` was over its ``timer`` limit (``declare``, ``bury``,
    ``play``; ``limit_ms`` from ``turn_began``); the move that follows in the same save is
    the heuristic bot's, made for that seat (``domain.game.timers``). Changes no state."""

    seat: int
    timer: str
    limit_ms: int
    turn_began: datetime
    claimed_by: str
    """``seat N``, ``organiser`` or ``sweeper``."""

    def apply_to(self, round_: Round) -> None:
        return


ROUND_EVENTS: tuple[type[RoundEvent], ...] = (
    Dealt,
    TrumpDeclared,
    Overcalled,
    Passed,
    DrawingEnded,
    WindowClosed,
    BottomBuried,
    Redealt,
    ThrowFailed,
    CardPlayed,
    TrickWon,
    RoundScored,
    RoundAbandoned,
    TurnTimedOut,
)
