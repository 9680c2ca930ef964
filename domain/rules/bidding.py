"""The bidding of a round: declaring (报主), overcalling (反主), R19 and 暴动 (RULES R16–R21, §10).

:class:`Bidding` is an immutable state machine. Each action has ``check_<action>``
(validate; raise IllegalMoveError with a stable ``code``; change nothing), ``apply_<action>``
(return the next state; no validation, it runs on every replay of the event) and
``<action>`` (both), as docs/decisions.md F6 asks. The phases and whose turn it is in them:
:mod:`domain.rules.bidding_phases` (docs/bidding.md draws them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from domain.rules.bidding_phases import (
    Phase,
    RedealReason,
    Refusal,
    check_speaker,
    speaker_refusal,
    window_closed,
)
from domain.rules.board import Board
from domain.rules.cards import Card, contains, format_cards, suit_of
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.overcall import check_overcall_show
from domain.rules.ruleset import NoDeclaration, RuleSet
from domain.rules.shows import (
    Show,
    check_redeal_request,
    parse_show,
    possible_declarations,
    possible_shows,
)
from domain.rules.shuffle import bottom_third_card
from domain.values import Value

__all__ = ["Bidding", "Phase", "RedealReason"]


def _seat(seat: int) -> int:
    if type(seat) is not int or not 0 <= seat <= 3:
        raise InvalidInputError(f"seat must be 0..3, got {seat!r}")
    return seat


def _board_fixed(who: str) -> IllegalMoveError:
    return IllegalMoveError(
        f"nobody {who} on a board: its dealer, level and trump are fixed for every table (R36)",
        rule="R36",
        code="board-trump-fixed",
    )


def _level(level: int) -> int:
    if type(level) is not int or not 0 <= level <= 12:
        raise InvalidInputError(f"level rank index must be 0..12, got {level!r}")
    return level


@dataclass(frozen=True, slots=True)
class Bidding(Value):
    """Who declared what, who speaks or buries next. Build with :meth:`round_one` or
    :meth:`later_round`; never mutate (every action returns a new state)."""

    rules: RuleSet
    first_round: bool
    """Round 1 of the match: 抢报 (R18) and 反主反打 (R20)."""
    levels: tuple[int, int]
    """Level rank index of team {0,2} and of team {1,3} (R2, R5)."""
    dealer: int | None
    """The dealer (庄家); None in round 1 until somebody declares (R18)."""
    phase: Phase = Phase.DEALING
    standing: Show | None = None
    """The declaration standing now (the last declaration or overcall)."""
    shows: tuple[Show, ...] = ()
    """Every declaration and overcall of the round, in order."""
    to_speak: int | None = None
    """Seat whose turn it is to overcall or pass (OVERCALL), or declare or pass (LATE_DECLARING)."""
    passes: int = 0
    """Passes in a row since the window opened or the last overcall (R20)."""
    burier: int | None = None
    """Seat that must bury now (BURY)."""
    buries: int = 0
    """Buries done so far: the dealer's first, then one per 炒底 overcall (R20, R21)."""
    bottom_card: Card | None = None
    """The bottom's 3rd card from the top, bottom[2], recorded when the deal ends (R19)."""
    fallback: bool = False
    """True when nobody declared and bottom_card named trump (R19)."""
    redeal_reason: RedealReason | None = None
    redeal_seat: int | None = None
    """The seat that asked for a weak-hand redeal (暴动), if that is why."""
    board: Board | None = None
    """A board (R36, :mod:`domain.rules.board`): dealer, level rank and trump fixed before
    the deal; nobody declares or overcalls, the dealer buries, then play."""

    # -- construction -------------------------------------------------------------------

    @classmethod
    def round_one(cls, rules: RuleSet, level: int = 0) -> Bidding:
        """Round 1 (R18 抢报): both teams at ``level``; the first declarer becomes dealer."""
        _level(level)
        return cls(rules, True, (level, level), None)

    @classmethod
    def later_round(cls, rules: RuleSet, dealer: int, levels: tuple[int, int]) -> Bidding:
        """A later round: ``dealer`` fixed by R31; ``levels`` of teams {0,2} and {1,3}."""
        return cls(rules, False, (_level(levels[0]), _level(levels[1])), _seat(dealer))

    @classmethod
    def for_board(cls, rules: RuleSet, board: Board) -> Bidding:
        """A board's round (R36): its dealer, level rank and trump stand from the start."""
        return cls(rules, False, (board.level, board.level), board.dealer, board=board)

    # -- queries ------------------------------------------------------------------------

    @property
    def level(self) -> int:
        """The round's level rank: the dealer team's level (R5)."""
        return self.levels[(self.dealer or 0) % 2]

    def level_for(self, seat: int) -> int:
        """The level rank ``seat``'s shows are made of now: its own team's when the show
        would make its team the defenders (round 1, LATE_DECLARING), else the round's."""
        if self.first_round or self.phase is Phase.LATE_DECLARING:
            return self.levels[seat % 2]
        return self.level

    @property
    def declarer(self) -> int | None:
        """The seat of the standing declaration (the current declarer)."""
        return None if self.standing is None else self.standing.seat

    @property
    def trump_known(self) -> bool:
        return self.standing is not None or self.fallback or self.board is not None

    @property
    def trump(self) -> int | None:
        """Trump suit 0..3, None = no-trump (R9). ValueError while nothing names it."""
        if self.standing is not None:
            return self.standing.trump
        if self.board is not None:
            return self.board.trump  # R36: the board's
        if self.fallback and self.bottom_card is not None:
            return suit_of(self.bottom_card)  # R19: a joker there → no-trump
        raise ValueError("trump is not decided yet")

    @property
    def bury_takes_bottom(self) -> bool:
        """In BURY: True for the dealer's first bury (the 8 bottom cards), False for a 炒底
        re-bury (the overcaller takes the 8 cards buried last, R20)."""
        return self.buries == 0

    @property
    def redeal_requests_open(self) -> bool:
        """暴动 timing (§10): after the deal and before the first bury."""
        open_phases = (Phase.LATE_DECLARING, Phase.OVERCALL, Phase.BURY)
        return self.phase in open_phases and self.buries == 0

    def legal_shows(self, seat: int, hand: Sequence[Card]) -> list[Show]:
        """Every show ``seat`` (holding ``hand``) may make right now, weakest first."""
        check: Callable[[int, Sequence[Card], Sequence[Card]], Show]
        may: Callable[[int], Refusal | None]
        if self.board is not None:
            return []  # R36: a board's trump is fixed
        if self.phase in (Phase.DEALING, Phase.LATE_DECLARING):
            check, may = self.check_declare, self._declarer_refusal
        elif self.phase is Phase.OVERCALL:
            check, may = self.check_overcall, self._overcaller_refusal
        else:
            return []
        _seat(seat)
        if may(seat) is not None:  # refused whatever the show: no show is checked
            return []
        legal: list[Show] = []
        for show in possible_shows(hand, self.level_for(seat), self.rules, seat=seat):
            try:
                legal.append(check(seat, show.cards, hand))
            except IllegalMoveError:
                continue
        return legal

    # -- declaring (R17, R18) -----------------------------------------------------------

    def check_declare(self, seat: int, cards: Sequence[Card], hand: Sequence[Card]) -> Show:
        """Validate ``seat`` declaring with ``cards`` out of ``hand`` (its cards so far)."""
        self._check_declarer(seat)
        show = self._parse(seat, cards, hand, "R17")
        if show.is_joker_pair:
            raise IllegalMoveError(
                f"{format_cards(show.cards)}: jokers alone never declare; a joker pair may "
                f"only overcall (R17, R20)",
                rule="R17",
                code="jokers-cannot-declare",
            )
        return show

    def _check_declarer(self, seat: int) -> None:
        """What :meth:`check_declare` asks of the seat and the phase, whatever the show."""
        _seat(seat)
        refusal = self._declarer_refusal(seat)
        if refusal is not None:
            raise refusal()

    def _declarer_refusal(self, seat: int) -> Refusal | None:
        """Why ``seat`` may not declare now whatever the show (None: it may try), as the
        error :meth:`check_declare` raises, built only when raised (a view asks for every
        seat at every version, :meth:`legal_shows`)."""
        if self.board is not None:
            return lambda: _board_fixed("declares")
        if self.phase is Phase.DEALING:
            standing = self.standing
            if standing is not None:
                return lambda: IllegalMoveError(
                    f"seat {standing.seat} has already declared {standing}; the "
                    f"first declaration stands and stronger shows wait for the overcall "
                    f"window after the deal (R17, R20)",
                    rule="R17",
                    code="already-declared",
                )
            if self._only_dealer_team() and seat % 2 != self._dealer() % 2:
                return lambda: IllegalMoveError(
                    f"seat {seat} may not declare: after round 1 only the dealer's team "
                    f"declares while the cards are drawn (R18, declare_with_joker)",
                    rule="R18",
                    code="not-eligible-to-declare",
                )
        elif self.phase is Phase.LATE_DECLARING:
            if seat != self.to_speak:
                to_speak = self.to_speak
                return lambda: IllegalMoveError(
                    f"it is seat {to_speak}'s turn to declare or pass, not seat {seat}'s "
                    f"(R18, declare_with_joker)",
                    rule="R18",
                    code="not-your-turn-to-declare",
                )
        else:
            phase = self.phase
            return lambda: IllegalMoveError(
                f"declaring is closed (phase {phase}): declarations are made while the "
                f"cards are drawn (R17); later shows are overcalls (R20)",
                rule="R17",
                code="declaring-closed",
            )
        return None

    def apply_declare(self, show: Show) -> Bidding:
        """The declaration stands; round 1 → its seat deals (R18); LATE_DECLARING → its
        team takes the deal and the declarer buries first (R18 declare_with_joker)."""
        if self.phase is Phase.LATE_DECLARING:
            return replace(
                self,
                phase=Phase.BURY,
                dealer=show.seat,
                standing=show,
                shows=(*self.shows, show),
                to_speak=None,
                passes=0,
                burier=show.seat,
            )
        dealer = show.seat if self.first_round else self.dealer
        return replace(self, standing=show, shows=(*self.shows, show), dealer=dealer)

    def declare(self, seat: int, cards: Sequence[Card], hand: Sequence[Card]) -> Bidding:
        return self.apply_declare(self.check_declare(seat, cards, hand))

    # -- end of the deal (R16, R19) -----------------------------------------------------

    def check_end_deal(
        self, bottom: Sequence[Card], hands: Sequence[Sequence[Card]] | None = None
    ) -> None:
        """Validate the end of drawing. ``bottom`` is the 8 cards in deck order (bottom[0]
        is the top). ``hands`` (the four 25-card hands) is needed only in variant
        ``declare_with_joker`` after round 1 when nobody declared (R18)."""
        if self.phase is not Phase.DEALING:
            raise IllegalMoveError(
                f"the deal has already ended (phase {self.phase})",
                rule="R16",
                code="deal-already-ended",
            )
        if len(bottom) != 8 or any(type(c) is not int or not 0 <= c <= 53 for c in bottom):
            raise InvalidInputError(f"the bottom must be 8 card kinds, got {list(bottom)!r}")
        if self._needs_hands() and (hands is None or len(hands) != 4):
            raise InvalidInputError(
                "the four hands are needed to know whether the dealer's team can declare "
                "(R18, declare_with_joker)"
            )

    def apply_end_deal(
        self, bottom: Sequence[Card], hands: Sequence[Sequence[Card]] | None = None
    ) -> Bidding:
        base = replace(self, bottom_card=bottom_third_card(bottom))  # R19
        if self.board is not None:  # R36: trump stands; the dealer takes the bottom (R21)
            return replace(base, phase=Phase.BURY, burier=self.dealer)
        if self.standing is not None:
            if self.first_round:  # R20 反主反打: the window opens before the bottom is taken
                return replace(base, phase=Phase.OVERCALL, to_speak=self.dealer, passes=0)
            return replace(base, phase=Phase.BURY, burier=self.dealer)  # R20 炒底
        if self.first_round:
            return base._redeal(RedealReason.NO_DECLARATION)  # R19
        if self._needs_hands():
            assert hands is not None
            dealer = self._dealer()
            team = (hands[dealer], hands[(dealer + 2) % 4])
            if not any(possible_declarations(h, self.level, self.rules) for h in team):
                return replace(base, phase=Phase.LATE_DECLARING, to_speak=(dealer + 1) % 4)
        return base._no_declaration()

    def end_deal(
        self, bottom: Sequence[Card], hands: Sequence[Sequence[Card]] | None = None
    ) -> Bidding:
        self.check_end_deal(bottom, hands)
        return self.apply_end_deal(bottom, hands)

    # -- the overcall window (R20) ------------------------------------------------------

    def check_overcall(self, seat: int, cards: Sequence[Card], hand: Sequence[Card]) -> Show:
        """Validate ``seat`` overcalling with ``cards`` out of ``hand`` (R20)."""
        self._check_overcaller(seat)
        show = self._parse(seat, cards, hand, "R20")
        assert self.standing is not None
        check_overcall_show(show, self.standing, self.rules, anyone_overcalled=len(self.shows) > 1)
        return show

    def _check_overcaller(self, seat: int) -> None:
        """What :meth:`check_overcall` asks of the seat and the phase, whatever the show."""
        _seat(seat)
        refusal = self._overcaller_refusal(seat)
        if refusal is not None:
            raise refusal()

    def _overcaller_refusal(self, seat: int) -> Refusal | None:
        """Why ``seat`` may not overcall now whatever the show (None: it may try), built
        only when raised (as :meth:`_declarer_refusal`)."""
        if self.board is not None:
            return lambda: _board_fixed("overcalls")
        if self.phase is not Phase.OVERCALL:
            phase = self.phase
            return lambda: window_closed(phase)
        return speaker_refusal(self.phase, self.to_speak, seat)

    def apply_overcall(self, show: Show) -> Bidding:
        """Round 1: the overcaller deals (反主反打). Later: the overcaller re-buries (炒底)."""
        base = replace(self, standing=show, shows=(*self.shows, show), passes=0)
        if self.first_round:
            return replace(base, dealer=show.seat, to_speak=(show.seat + 1) % 4)
        return replace(base, phase=Phase.BURY, burier=show.seat, to_speak=None)

    def overcall(self, seat: int, cards: Sequence[Card], hand: Sequence[Card]) -> Bidding:
        return self.apply_overcall(self.check_overcall(seat, cards, hand))

    def check_pass(self, seat: int) -> None:
        """Validate ``seat`` passing its turn (OVERCALL, R20; LATE_DECLARING, R18)."""
        _seat(seat)
        check_speaker(self.phase, self.to_speak, seat)

    def apply_pass(self, seat: int) -> Bidding:
        if self.phase is Phase.LATE_DECLARING:
            if self.passes == 0:
                return replace(self, passes=1, to_speak=(seat + 2) % 4)
            return replace(self, to_speak=None, passes=0)._no_declaration()
        passes = self.passes + 1
        if passes < 4:
            return replace(self, passes=passes, to_speak=(seat + 1) % 4)
        if self.first_round:  # the window is closed: now the dealer takes the bottom
            return replace(self, passes=passes, to_speak=None, phase=Phase.BURY, burier=self.dealer)
        return replace(self, passes=passes, to_speak=None, phase=Phase.DONE)

    def pass_(self, seat: int) -> Bidding:
        self.check_pass(seat)
        return self.apply_pass(seat)

    # -- burying (R21, R20 炒底) --------------------------------------------------------

    def check_bury(self, seat: int) -> None:
        _seat(seat)
        if self.phase is not Phase.BURY:
            raise IllegalMoveError(
                f"nobody buries now (phase {self.phase})", rule="R21", code="not-burying-now"
            )
        if seat != self.burier:
            raise IllegalMoveError(
                f"seat {self.burier} is to bury, not seat {seat}",
                rule="R21",
                code="not-your-turn-to-bury",
            )

    def apply_bury(self, seat: int) -> Bidding:
        """Round 1 or no declaration: done. Later rounds: the window (re)opens (R20 炒底)."""
        base = replace(self, burier=None, buries=self.buries + 1)
        if self.first_round or self.standing is None:
            return replace(base, phase=Phase.DONE)
        to_speak = self.dealer if self.buries == 0 else (seat + 1) % 4
        return replace(base, phase=Phase.OVERCALL, to_speak=to_speak, passes=0)

    def bury(self, seat: int) -> Bidding:
        self.check_bury(seat)
        return self.apply_bury(seat)

    # -- weak-hand redeal (暴动, §10) -----------------------------------------------------

    def check_weak_hand_redeal(self, seat: int, hand: Sequence[Card]) -> None:
        """Validate ``seat`` asking for a redeal with its 25 dealt cards ``hand``."""
        _seat(seat)
        if self.board is not None and self.rules.weak_hand_redeal is not None:
            raise IllegalMoveError(
                "on a board a weak hand redeals the board at every table, by itself when it "
                "is dealt; nobody asks for it (R36, §10)",
                rule="R36",
                code="board-redeal-shared",
            )
        if self.rules.weak_hand_redeal is not None and not self.redeal_requests_open:
            raise IllegalMoveError(
                f"a weak-hand redeal (暴动) is asked after the deal and before burying, "
                f"not in phase {self.phase} after {self.buries} bury(s) (§10)",
                rule="§10",
                code="redeal-request-closed",
            )
        check_redeal_request(hand, self.rules)

    def apply_weak_hand_redeal(self, seat: int) -> Bidding:
        return self._redeal(RedealReason.WEAK_HAND, seat)

    def request_redeal(self, seat: int, hand: Sequence[Card]) -> Bidding:
        self.check_weak_hand_redeal(seat, hand)
        return self.apply_weak_hand_redeal(seat)

    # -- helpers ------------------------------------------------------------------------

    def _dealer(self) -> int:
        assert self.dealer is not None
        return self.dealer

    def _only_dealer_team(self) -> bool:
        return self.rules.declare_with_joker and not self.first_round  # R18 variant

    def _needs_hands(self) -> bool:
        return self._only_dealer_team() and self.standing is None

    def _parse(self, seat: int, cards: Sequence[Card], hand: Sequence[Card], rule: str) -> Show:
        show = parse_show(seat, cards, self.level_for(seat), self.rules)
        if not contains(hand, show.cards):
            raise IllegalMoveError(
                f"{format_cards(show.cards)}: not all of these cards are in seat {seat}'s hand",
                rule=rule,
                code="cards-not-in-hand",
            )
        return show

    def _no_declaration(self) -> Bidding:
        """R19 after round 1: redeal (variant), else bottom[2] names trump; the dealer
        buries and no overcall window follows (nothing stands to be overcalled)."""
        if self.rules.no_declaration is NoDeclaration.REDEAL:
            return self._redeal(RedealReason.NO_DECLARATION)
        return replace(self, phase=Phase.BURY, burier=self.dealer, fallback=True)

    def _redeal(self, reason: RedealReason, seat: int | None = None) -> Bidding:
        return replace(
            self,
            phase=Phase.REDEAL,
            redeal_reason=reason,
            redeal_seat=seat,
            to_speak=None,
            burier=None,
        )
