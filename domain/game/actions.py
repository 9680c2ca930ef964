"""The round actions: what a seat may do in a round, as one typed union (R16–R25, §10).

Every way a move reaches a round — a person's request, a bot's decision, a timed-out
seat's stand-in, a record's replay, the training environment — is one of these values,
and :func:`perform` is the one place a value becomes a command of the
:class:`~domain.game.round.Round` aggregate. :data:`ACTIONS` names them, in the order the
rule book introduces them: ``declare`` (亮主, R17, R18), ``overcall`` (反主, R20), ``pass``
(R17, R18, R20), ``bury`` (扣底, R21), ``play`` (R22–R25) and ``redeal`` (暴动, §10).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Final

from domain.game.round import Round
from domain.rules.cards import Card
from domain.rules.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class Declare:
    """Show a level card (or a pair of them, or jokers) to declare trump (R17, R18)."""

    name: ClassVar[str] = "declare"
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Overcall:
    """Overcall the standing show with a stronger one in the window (R20)."""

    name: ClassVar[str] = "overcall"
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass: no declaration at the end of the deal (R18), no overcall (R20)."""

    name: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True)
class Bury:
    """Bury eight cards as the new bottom (R21)."""

    name: ClassVar[str] = "bury"
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Play:
    """Lead or follow in the trick (R22–R25); a lead of several components is a throw
    (甩牌, R22)."""

    name: ClassVar[str] = "play"
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Redeal:
    """Ask for the weak-hand redeal (暴动, §10)."""

    name: ClassVar[str] = "redeal"


RoundAction = Declare | Overcall | Pass | Bury | Play | Redeal
"""A seat's move in a round."""

_KINDS: Final[tuple[type[RoundAction], ...]] = (Declare, Overcall, Pass, Bury, Play, Redeal)
BY_NAME: Final[Mapping[str, type[RoundAction]]] = {kind.name: kind for kind in _KINDS}
ACTIONS: Final[tuple[str, ...]] = tuple(BY_NAME)
"""The actions' names, as requests, records and views spell them."""


def action_of(name: str, cards: tuple[Card, ...] = ()) -> RoundAction:
    """The action named ``name`` (one of :data:`ACTIONS`) with ``cards``; a cardless
    action ignores them. InvalidInputError for another name."""
    kind = BY_NAME.get(name)
    if kind is None:
        raise InvalidInputError(f"unknown action {name!r}; one of {', '.join(ACTIONS)}")
    if kind is Pass:
        return Pass()
    if kind is Redeal:
        return Redeal()
    return kind(cards)  # type: ignore[call-arg]  # the kinds left take their cards


def cards_of(action: RoundAction) -> tuple[Card, ...]:
    """The cards an action shows, buries or plays (none for a pass or a redeal)."""
    return () if isinstance(action, Pass | Redeal) else action.cards


def perform(
    round_: Round, seat: int, action: RoundAction, now: datetime, *, dry: bool = False
) -> None:
    """``seat`` makes ``action`` in ``round_`` (its events pending, not saved). ``dry``:
    a dry run — a throw is judged by its shape, never against the other hands (R22, R33)."""
    match action:
        case Declare(cards):
            round_.declare(seat, cards, now)
        case Overcall(cards):
            round_.overcall(seat, cards, now)
        case Pass():
            round_.pass_turn(seat, now)
        case Bury(cards):
            round_.bury(seat, cards, now)
        case Play(cards):
            round_.play_cards(seat, cards, now, test_throw=not dry)
        case Redeal():
            round_.request_redeal(seat, now)
