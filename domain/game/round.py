"""The ``Round`` aggregate: one deal from the first card drawn to ``RoundScored``.

Commands (public methods) validate with the rules engine and trigger events; the
events' ``apply`` only assigns state (docs/decisions.md F6), so replaying the stream
rebuilds exactly the live state. Time is never read: every command takes ``now`` from
the service, and deadlines (the end of the paced deal, the overcall window) are claimed
by the first command that arrives after them (``claim_deadlines``).

Phases: ``dealing`` (R16–R17, the paced draw with declarations) → ``declaring`` /
``overcalling`` / ``burying`` (R18–R21, driven by :class:`~domain.rules.bidding.Bidding`)
→ ``playing`` (R22–R27, :class:`~domain.rules.play.TrickPlay`) → ``scored`` (R28–R31);
or ``redeal`` (R19, 暴动) until the service deals again with a new seed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.game import round_events as ev
from domain.game.base import GameAggregate
from domain.game.round_events import Pacing
from domain.game.round_score import round_score
from domain.rules.bidding import Bidding, Phase
from domain.rules.board import MAX_DEALINGS, Board, weak_seat
from domain.rules.cards import Card, contains, format_cards
from domain.rules.context import trump_context
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.play import TrickPlay
from domain.rules.ruleset import RuleSet
from domain.rules.scoring import throw_penalty
from domain.rules.shuffle import Deal, commitment, seed_to_hex

DRAWS = 100
BOTTOM = 8


class RoundPhase(StrEnum):
    DEALING = "dealing"  # R16/R17: cards are drawn, declaring is open
    DECLARING = "declaring"  # R18 declare_with_joker: the other team may declare
    OVERCALLING = "overcalling"  # R20: the window
    BURYING = "burying"  # R21 (and 炒底 re-burying, R20)
    PLAYING = "playing"  # R22–R27
    SCORED = "scored"  # R28–R31: RoundScored recorded
    ABANDONED = "abandoned"  # R32: the organiser ended the match during this round
    REDEAL = "redeal"  # R19 / 暴动: waiting for a new deal


_BIDDING_PHASES = {
    Phase.DEALING: RoundPhase.DEALING,
    Phase.LATE_DECLARING: RoundPhase.DECLARING,
    Phase.OVERCALL: RoundPhase.OVERCALLING,
    Phase.BURY: RoundPhase.BURYING,
    Phase.REDEAL: RoundPhase.REDEAL,
}


@lru_cache(maxsize=4096)
def round_id(match_id: UUID, number: int) -> UUID:
    """The id of round ``number`` of a match: deterministic, so the match can find it
    (a SHA-1 each time, asked on every load of a match's round: the live ones cached)."""
    return uuid5(NAMESPACE_URL, f"shengji:match:{match_id}:round:{number}")


class Round(GameAggregate):
    """One deal of a match (RULES §4–§7). Build with :meth:`start`, then :meth:`deal`."""

    # State, assigned only by the events' apply (domain/game/round_events.py). Declared
    # for the type checker only: the eventsourcing metaclass would turn class-level
    # annotations into constructor fields.
    if TYPE_CHECKING:
        match_id: UUID
        number: int
        rules: RuleSet
        levels: tuple[int, int]
        dealer: int | None
        board: Board | None
        bidding: Bidding
        deal_no: int
        seed_hex: str
        commitment: str
        started_at: datetime
        pacing: Pacing
        dealt: Deal | None
        hands: list[list[Card]]
        bottom: tuple[Card, ...]
        buried_by: int | None
        deal_passes: frozenset[int]
        window_opened_at: datetime | None
        play: TrickPlay | None
        penalties: list[int]
        result: ev.RoundScored | None
        abandoned: ev.RoundAbandoned | None

    @classmethod
    def start(
        cls,
        match_id: UUID,
        number: int,
        rules: RuleSet,
        levels: tuple[int, int],
        dealer: int | None,
        now: datetime,
        *,
        board: Board | None = None,
    ) -> Round:
        """A new round; ``dealer`` is None in round 1, where declaring chooses it (R18).
        ``board`` (R36): the round plays this board — its dealer, level and trump."""
        if dealer is not None and dealer not in range(4):
            raise InvalidInputError(f"dealer must be a seat 0..3, got {dealer!r}")
        if board is not None and (board.number != number or board.dealer != dealer):
            raise InvalidInputError(
                f"round {number} dealt by seat {dealer!r} cannot play board {board}", rule="R36"
            )
        return cls._create(
            ev.RoundStarted,
            id=round_id(match_id, number),
            match_id=match_id,
            number=number,
            rules=rules.to_mapping(),
            levels=tuple(levels),
            dealer=dealer,
            board=board,
            timestamp=now,
        )

    # -- queries ---------------------------------------------------------------------------

    @property
    def phase(self) -> RoundPhase:
        if self.result is not None:
            return RoundPhase.SCORED
        if self.abandoned is not None:
            return RoundPhase.ABANDONED
        if self.play is not None:
            return RoundPhase.PLAYING
        return _BIDDING_PHASES[self.bidding.phase]

    @property
    def level(self) -> int:
        return self.bidding.level

    @property
    def attackers(self) -> int:
        """Parity of the attacking seats (R2, R6): the dealer's opponents."""
        return ((self.bidding.dealer or 0) + 1) % 2

    def drawn_at(self, now: datetime) -> int:
        """Cards drawn by ``now`` (R16 paced deal: one per interval, the first at start)."""
        if self.dealt is None:
            return 0
        if self.phase is not RoundPhase.DEALING or self.pacing.interval_ms == 0:
            return DRAWS
        elapsed = (now - self.started_at) / timedelta(milliseconds=1)
        if elapsed < 0:
            return 0
        return min(DRAWS, int(elapsed // self.pacing.interval_ms) + 1)

    def hand_at(self, seat: int, now: datetime) -> tuple[Card, ...]:
        """What ``seat`` holds at ``now``: during the deal, the cards drawn so far (R17)."""
        if self.dealt is not None and self.phase is RoundPhase.DEALING:
            return self.dealt.hand_after(seat, self.drawn_at(now))
        if self.play is not None:
            return tuple(self.play.hands[seat])
        return tuple(self.hands[seat]) if self.hands else ()

    def drawing_deadline(self) -> datetime:
        p = self.pacing
        return self.started_at + timedelta(milliseconds=p.interval_ms * (DRAWS - 1) + p.declare_ms)

    def to_act(self) -> int | None:
        """The seat whose action the round waits for, None while anyone may act or none."""
        phase = self.phase
        if phase is RoundPhase.PLAYING:
            assert self.play is not None
            return self.play.to_play  # none between a trick's fourth card and TrickWon
        if phase in (RoundPhase.OVERCALLING, RoundPhase.DECLARING):
            return self.bidding.to_speak
        if phase is RoundPhase.BURYING:
            return self.bidding.burier
        return None

    # -- commands --------------------------------------------------------------------------

    def deal(
        self,
        seed: bytes,
        now: datetime,
        pacing: Pacing | None = None,
        *,
        first_seat: int | None = None,
    ) -> None:
        """Deal from ``seed`` (drawn by the service, R35); only the commitment is public.

        The draw starts at the dealer (R16; round 1 at seat 0) unless ``first_seat`` is
        given: duplicate deals (R36) always draw from seat 0, so a seed gives every
        table the same hand seat for seat. A board (R36) is drawn from its dealer, and a
        board dealt with a weak hand (§10 ``weak_hand_redeal``) is redealt at once
        (``Redealt``, phase ``redeal``: the service deals it again) — at most
        :data:`~domain.rules.board.MAX_DEALINGS` dealings, the last stands."""
        if self.dealt is not None and self.phase is not RoundPhase.REDEAL:
            raise IllegalMoveError(
                "the round has been dealt already", rule="R16", code="already-dealt"
            )
        digest = commitment(seed)  # validates the 32 bytes
        pacing = pacing or (self.pacing if self.dealt is not None else Pacing())
        if first_seat is None:
            first_seat = 0 if self.dealer is None else self.dealer  # R16: round 1 from seat 0
        self._emit(
            ev.Dealt,
            now,
            deal_no=self.deal_no + 1,
            rules=self.rules.to_mapping(),
            level=self.bidding.level,
            levels=self.levels,
            dealer=self.dealer,
            first_seat=first_seat,
            commitment=digest,
            seed=seed_to_hex(seed),
            interval_ms=pacing.interval_ms,
            declare_ms=pacing.declare_ms,
            window_ms=pacing.window_ms,
            board=self.board,
        )
        if self.board is not None and self.deal_no < MAX_DEALINGS:
            assert self.dealt is not None
            weak = weak_seat(self.dealt.hands, self.board.dealer, self.rules)
            if weak is not None:  # §10 暴动, shared (R36): every table redeals this board
                self._emit(ev.Redealt, now, reason=ev.BOARD_WEAK_HAND, seat=weak)

    def declare(self, seat: int, cards: tuple[Card, ...], now: datetime) -> None:
        """R17/R18: declare trump with level card(s) already in hand at ``now``."""
        self._begin_command(now)
        hand = self.hand_at(seat, now) if self.hands or self.dealt else ()
        show = self.bidding.check_declare(seat, cards, hand)
        self._emit(ev.TrumpDeclared, now, **ev.show_fields(show))

    def overcall(self, seat: int, cards: tuple[Card, ...], now: datetime) -> None:
        """R20: a strictly stronger show in the window."""
        self._begin_command(now)
        show = self.bidding.check_overcall(seat, cards, self.hand_at(seat, now))
        self._emit(ev.Overcalled, now, **ev.show_fields(show))

    def pass_turn(self, seat: int, now: datetime) -> None:
        """Pass: in the window (R20) or the late declaring turn (R18); during the deal,
        once every card is drawn, four passes end the drawing early."""
        self._begin_command(now)
        if self.phase is RoundPhase.DEALING:
            if seat not in range(4):
                raise InvalidInputError(f"seat must be 0..3, got {seat!r}")
            if self.drawn_at(now) < DRAWS:
                raise IllegalMoveError(
                    "cards are still being drawn; passing ends the declaring only once all "
                    "are drawn (R16, R17)",
                    rule="R17",
                    code="still-dealing",
                )
            if seat in self.deal_passes:
                raise IllegalMoveError(
                    f"seat {seat} has passed already; the drawing ends when all four have",
                    rule="R17",
                    code="already-passed",
                )
            self._emit(ev.Passed, now, seat=seat)
            if len(self.deal_passes) == 4:
                self._end_drawing(now)
            return
        self.bidding.check_pass(seat)
        self._emit(ev.Passed, now, seat=seat)

    def bury(self, seat: int, cards: tuple[Card, ...], now: datetime) -> None:
        """R21: the burier takes the bottom (8 cards) into hand and buries any 8."""
        self._begin_command(now)
        self.bidding.check_bury(seat)
        if len(cards) != BOTTOM:
            raise IllegalMoveError(
                f"bury exactly 8 cards, not {len(cards)}", rule="R21", code="bury-eight"
            )
        full = [*self.hands[seat], *self.bottom]
        if not contains(full, cards):
            raise IllegalMoveError(
                f"{format_cards(cards)}: not all of these cards are in seat {seat}'s hand "
                f"and the bottom",
                rule="R21",
                code="cards-not-in-hand",
            )
        self._emit(ev.BottomBuried, now, seat=seat, cards=tuple(cards))

    def request_redeal(self, seat: int, now: datetime) -> None:
        """§10 weak_hand_redeal (暴动): a weak hand asks for a new deal."""
        self._begin_command(now)
        if self.phase in (RoundPhase.DEALING, RoundPhase.PLAYING, RoundPhase.SCORED):
            raise IllegalMoveError(
                "a weak-hand redeal is asked after the deal and before burying (§10)",
                rule="§10",
                code="redeal-request-closed",
            )
        self.bidding.check_weak_hand_redeal(seat, self.dealt_hand(seat))
        self._emit(ev.Redealt, now, reason="weak_hand", seat=seat)

    def play_cards(
        self, seat: int, cards: tuple[Card, ...], now: datetime, *, test_throw: bool = True
    ) -> None:
        """R22–R25: lead or follow; a failed throw plays the forced component (R22).
        ``test_throw`` False (a dry run): a throw is judged by its shape alone, never
        against the other hands (R33)."""
        self._begin_command(now)
        if self.play is None:
            raise IllegalMoveError(
                f"cards are played once trump and the bottom are settled (phase {self.phase})",
                rule="R22",
                code="not-playing-yet" if self.result is None else "round-over",
            )
        outcome = self.play.check(seat, cards, test_throw=test_throw)
        if outcome.attempted is not None:
            defender = seat % 2 != self.attackers
            self._emit(
                ev.ThrowFailed,
                now,
                seat=seat,
                attempted=outcome.attempted,
                forced=outcome.cards,
                penalty=throw_penalty(self.rules, len(outcome.attempted), defender),
            )
        self._emit(ev.CardPlayed, now, seat=seat, cards=outcome.cards)
        if outcome.trick_complete:
            assert outcome.winner is not None
            self._emit(
                ev.TrickWon,
                now,
                trick=self.play.tricks_done + 1,
                winner=outcome.winner,
                points=outcome.points,
            )
            if self.play.finished:
                self._score(now)

    # -- internals -------------------------------------------------------------------------

    def dealt_hand(self, seat: int) -> tuple[Card, ...]:
        assert self.dealt is not None
        return self.dealt.hands[seat]

    def abandon(self, reason: str, now: datetime) -> None:
        """R32: the match ended during this round; it stays unscored, its secrets kept."""
        if self.phase in (RoundPhase.SCORED, RoundPhase.ABANDONED):
            raise IllegalMoveError(
                f"round {self.number} is over already", rule="R32", code="round-over"
            )
        self._emit(ev.RoundAbandoned, now, reason=reason)

    def _begin_command(self, now: datetime) -> None:
        if self.abandoned is not None:
            raise IllegalMoveError(
                f"round {self.number} was abandoned: the match is over",
                rule="R32",
                code="match-finished",
            )
        self.claim_deadlines(now)

    def claim_deadlines(self, now: datetime) -> None:
        """End the drawing or the overcall window when their deadline has passed."""
        if self.dealt is None:
            raise IllegalMoveError("the round has not been dealt", rule="R16", code="not-dealt")
        if self._drawing_over(now):
            self._end_drawing(now)
        if self._window_over(now):
            self._emit(ev.WindowClosed, now)

    def deadline_due(self, now: datetime) -> bool:
        """Whether :meth:`claim_deadlines` would change the round at ``now`` (R16, R17,
        R20): the drawing or the overcall window is past its deadline."""
        return self.dealt is not None and (self._drawing_over(now) or self._window_over(now))

    def _drawing_over(self, now: datetime) -> bool:
        return (
            self.phase is RoundPhase.DEALING
            and now > self.drawing_deadline()
            and self.drawn_at(now) >= DRAWS
        )

    def _window_over(self, now: datetime) -> bool:
        return bool(
            self.phase is RoundPhase.OVERCALLING
            and self.pacing.window_ms
            and self.window_opened_at is not None
            and now > self.window_opened_at + timedelta(milliseconds=self.pacing.window_ms)
        )

    def _end_drawing(self, now: datetime) -> None:
        dealt = self.dealt
        assert dealt is not None
        after = self.bidding.apply_end_deal(dealt.bottom, dealt.hands)
        self._emit(
            ev.DrawingEnded,
            now,
            next_phase=str(_BIDDING_PHASES.get(after.phase, RoundPhase.PLAYING)),
            fallback_card=after.bottom_card if after.fallback else None,
        )

    def _score(self, now: datetime) -> None:
        """R26–R31: trick points, bottom bonus, penalties, level change, next dealer."""
        play, dealer = self.play, self.bidding.dealer
        assert play is not None and dealer is not None
        score = round_score(
            play, self.bottom, self.penalties, self.rules, dealer=dealer, attackers=self.attackers
        )
        self._emit(ev.RoundScored, now, **score, seed=self.seed_hex, commitment=self.commitment)

    # -- used by the events' apply ---------------------------------------------------------

    def _start_play(self) -> None:
        dealer = self.bidding.dealer
        assert dealer is not None
        ctx = trump_context(self.bidding.level, self.bidding.trump)
        self.play = TrickPlay(ctx, self.hands, dealer, (dealer + 1) % 2)

    def after_bidding(self, now: datetime, *, restart_window: bool = True) -> None:
        """Common tail of bidding transitions: (re)start the window clock when the window
        opens or a show is made (a pass does not extend it, R20), start play."""
        if self.bidding.phase is Phase.OVERCALL and restart_window:
            self.window_opened_at = now
        if self.bidding.phase is Phase.DONE and self.play is None:
            self._start_play()
