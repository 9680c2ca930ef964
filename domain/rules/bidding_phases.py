"""The phases of a round's bidding (RULES R16–R21, §10) and whose turn it is in them; the
state machine that moves between them is :class:`domain.rules.bidding.Bidding`.

* ``DEALING`` (R17): a seat declares from the cards drawn so far; the first valid
  declaration stands, nothing may replace it before the deal ends (stronger shows wait
  for the window, R20). Round 1 (抢报, R18): the declarer becomes the dealer.
* ``end_deal`` → round 1: the window (反主反打) or, nobody declared, ``REDEAL`` (R19).
  Later rounds: the dealer buries first (炒底), or R19: bottom[2] names trump (no window),
  variant ``no_declaration=redeal`` → ``REDEAL``; variant ``declare_with_joker`` when the
  dealer's team cannot declare → ``LATE_DECLARING``: the other team, in play order.
* ``OVERCALL`` (R20): seats speak in turn from the dealer (s → s+1); an overcall must be
  strictly stronger, never by the current declarer (variant ``self_overcall``: 自保/自反);
  four passes in a row close it. Round 1: each overcaller becomes the dealer, then the
  dealer buries. Later rounds: each overcaller re-buries (``BURY``) and the window goes on.
* ``BURY`` (R21): ``burier`` buries 8 (the cards themselves are handled elsewhere).
* ``DONE``: dealer and trump settled, the dealer leads (R22). ``REDEAL``: deal again.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from domain.rules.errors import IllegalMoveError


class Phase(StrEnum):
    DEALING = "dealing"  # R17: cards are being drawn; declaring is open
    LATE_DECLARING = "late_declaring"  # R18 declare_with_joker: the other team may declare
    OVERCALL = "overcall"  # R20: the window; ``to_speak`` overcalls or passes
    BURY = "bury"  # R21, R20 炒底: ``burier`` buries 8 cards
    DONE = "done"  # dealer and trump settled: the dealer leads (R22)
    REDEAL = "redeal"  # R19 nobody declared, or §10 暴动


class RedealReason(StrEnum):
    NO_DECLARATION = "no_declaration"  # R19: round 1, or variant no_declaration=redeal
    WEAK_HAND = "weak_hand"  # §10 weak_hand_redeal (暴动)


Refusal = Callable[[], IllegalMoveError]
"""A check's refusal, built only when it is raised (its message is formatted then)."""


def check_speaker(phase: Phase, to_speak: int | None, seat: int) -> None:
    """``seat`` must be the one to speak: in turn in the overcall window (R20) or in the late
    declaring (R18, declare_with_joker)."""
    refusal = speaker_refusal(phase, to_speak, seat)
    if refusal is not None:
        raise refusal()


def speaker_refusal(phase: Phase, to_speak: int | None, seat: int) -> Refusal | None:
    """Why :func:`check_speaker` refuses ``seat`` (None: it is the one to speak)."""
    if phase is Phase.LATE_DECLARING:
        if seat != to_speak:
            return lambda: IllegalMoveError(
                f"it is seat {to_speak}'s turn to declare or pass, not seat {seat}'s",
                rule="R18",
                code="not-your-turn-to-declare",
            )
        return None
    if phase is not Phase.OVERCALL:
        return lambda: window_closed(phase)
    if seat != to_speak:
        return lambda: IllegalMoveError(
            f"it is seat {to_speak}'s turn to overcall or pass, not seat {seat}'s (R20)",
            rule="R20",
            code="not-your-turn-to-overcall",
        )
    return None


def window_closed(phase: Phase) -> IllegalMoveError:
    """The refusal of an overcall outside the window (R20)."""
    return IllegalMoveError(
        f"the overcall window is not open (phase {phase}); it opens when the deal "
        f"ends (round 1) or after the dealer buries (later rounds) (R20)",
        rule="R20",
        code="overcall-window-closed",
    )
