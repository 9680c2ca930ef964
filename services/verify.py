"""Deal fairness checks (RULES R35): anyone holding a revealed seed recomputes the deal.

:func:`verify_deal` checks ``sha256(seed) == commitment``, recomputes the deck order and
the deal (R16: one card at a time from the first seat, the last 8 are the bottom) with
:mod:`domain.rules.shuffle`, and compares the recomputed hands and bottom with recorded
ones when given. :func:`verify_round` checks a scored round in the store against its own
events: every ``Dealt`` against its commitment, the revealed seed against the last deal,
and the cards — every show, bury and play must come out of what the deal gave that seat
(and the bottom it took, R21), every hand must end empty, and ``RoundScored`` must hold
the last buried bottom and the attackers' trick points (R27, R28).

A failed check raises :class:`~services.errors.VerificationError` naming the first
mismatch. Messages only ever show cards of a scored round or of a seed the caller
supplied: a round's secrets stay secret until ``RoundScored`` reveals them (R33) — and, on
a tournament table, until its tournament round completes (409 ``deal-embargoed``, R36,
:mod:`services.embargo`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from domain.game.round_events import (
    BottomBuried,
    CardPlayed,
    Dealt,
    Overcalled,
    RoundScored,
    RoundStarted,
    TrickWon,
    TrumpDeclared,
)
from domain.rules.cards import Card, card_names, format_cards, points_of
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.shuffle import Deal, deal, seed_from_hex, shuffle_deck
from services.embargo import check_released
from services.errors import NotFoundError, VerificationError
from services.game import GameService


@dataclass(frozen=True, slots=True)
class DealCheck:
    """A deal recomputed from its seed (R35)."""

    seed: str
    commitment: str
    first_seat: int
    hands: list[list[str]]
    """The four hands in draw order (R16)."""
    bottom: list[str]


@dataclass(frozen=True, slots=True)
class RoundCheck:
    """A scored round that passed :func:`verify_round`."""

    round_id: str
    number: int
    seed: str
    commitment: str
    deals: int
    """How many deals the round had (redeals included, R19, 暴动); all were checked."""
    events: int


def _commitment(text: str) -> str:
    value = text.strip().lower() if isinstance(text, str) else ""
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise InvalidInputError(f"a commitment is 64 hex digits (sha256), got {text!r}", rule="R35")
    return value


def verify_deal(
    seed_hex: str,
    commitment: str,
    first_seat: int = 0,
    hands: Sequence[Sequence[Card]] | None = None,
    bottom: Sequence[Card] | None = None,
) -> DealCheck:
    """Check a revealed seed against its commitment and recompute the deal (R16, R35).

    ``hands`` (four) and ``bottom`` are compared as multisets of cards when given.
    Raises VerificationError naming the first mismatch; InvalidInputError when the seed,
    the commitment or the first seat is malformed.
    """
    seed = seed_from_hex(seed_hex)
    expected = _commitment(commitment)
    actual = hashlib.sha256(seed).hexdigest()
    if actual != expected:
        raise VerificationError(
            f"commitment mismatch: sha256(seed) is {actual}, the published commitment is "
            f"{expected} (R35)"
        )
    dealt: Deal = deal(shuffle_deck(seed), first_seat)
    if hands is not None:
        if len(hands) != 4:
            raise InvalidInputError(f"four hands are compared, got {len(hands)}", rule="R1")
        for seat, recorded in enumerate(hands):
            _compare(f"seat {seat}'s hand", dealt.hands[seat], recorded)
    if bottom is not None:
        _compare("the bottom", dealt.bottom, bottom)
    return DealCheck(
        seed=seed.hex(),
        commitment=expected,
        first_seat=first_seat,
        hands=[card_names(h) for h in dealt.hands],
        bottom=card_names(dealt.bottom),
    )


def recompute_deal(seed_hex: str, commitment: str, first_seat: int = 0) -> DealCheck:
    """The deal a seed gives (R16), whatever the commitment says (the answer to a failed
    check still shows it); the commitment as given, normalised."""
    seed = seed_from_hex(seed_hex)
    dealt: Deal = deal(shuffle_deck(seed), first_seat)
    return DealCheck(
        seed=seed.hex(),
        commitment=_commitment(commitment),
        first_seat=first_seat,
        hands=[card_names(h) for h in dealt.hands],
        bottom=card_names(dealt.bottom),
    )


def _compare(what: str, dealt: Sequence[Card], recorded: Sequence[Card]) -> None:
    """Raise VerificationError naming the first card ``recorded`` has and ``dealt`` lacks
    (or the other way round), in card order."""
    extra = Counter(recorded) - Counter(dealt)
    missing = Counter(dealt) - Counter(recorded)
    if not extra and not missing:
        return
    parts = [f"{what} does not match the deal (R35):"]
    if len(recorded) != len(dealt):
        parts.append(f"{len(recorded)} cards recorded, {len(dealt)} dealt;")
    if extra:
        parts.append(f"recorded {format_cards([min(extra)])}, which the deal does not give;")
    if missing:
        parts.append(f"the deal gives {format_cards([min(missing)])}, which the record lacks")
    raise VerificationError(" ".join(parts).rstrip(";"))


def verify_round(service: GameService, round_id: UUID) -> RoundCheck:
    """Check scored round ``round_id`` in the store against its events (R27, R28, R35)."""
    events = list(service.events.get(round_id))
    if not events or not isinstance(events[0], RoundStarted):
        raise NotFoundError(f"no round {round_id}")
    number = events[0].number
    scored = events[-1]
    if not isinstance(scored, RoundScored):
        raise IllegalMoveError(
            f"round {number} is not scored: its seed stays secret until then (R33, R35)",
            rule="R35",
            code="round-not-scored",
        )
    match = service.get_match(events[0].match_id)
    check_released(
        service,
        match.tournament_id,
        match.tournament_round,
        f"round {number} of tournament table {match.id}: its recomputed deal",
    )
    deals = [e for e in events if isinstance(e, Dealt)]
    for d in deals:
        try:
            verify_deal(d.seed, d.commitment, d.first_seat)
        except VerificationError as e:
            raise VerificationError(
                f"round {number}, deal v{d.originator_version}: {e.detail}"
            ) from None
    last = deals[-1]
    if (last.seed, last.commitment) != (scored.seed, scored.commitment):
        raise VerificationError(
            f"round {number}: RoundScored reveals seed {scored.seed} with commitment "
            f"{scored.commitment}, but the last deal (v{last.originator_version}) committed "
            f"to {last.commitment} (R35)"
        )
    _replay_cards(number, events[events.index(last) :], scored)
    return RoundCheck(
        str(round_id), number, scored.seed, scored.commitment, len(deals), len(events)
    )


def _replay_cards(number: int, events: Sequence[object], scored: RoundScored) -> None:
    """Follow every card from the last deal to the score (R16, R21, R22, R27, R28)."""
    first = events[0]
    assert isinstance(first, Dealt)
    dealt = deal(shuffle_deck(seed_from_hex(first.seed)), first.first_seat)
    held = [Counter(h) for h in dealt.hands]
    bottom: tuple[Card, ...] = dealt.bottom
    trick_points = 0
    attackers = (scored.dealer + 1) % 2
    for e in events[1:]:
        where = f"round {number}, v{getattr(e, 'originator_version', '?')} {type(e).__name__}"
        if isinstance(e, TrumpDeclared | Overcalled):
            _take(held[e.seat], e.cards, f"{where}: seat {e.seat} showed", remove=False)
        elif isinstance(e, BottomBuried):
            held[e.seat].update(bottom)
            _take(held[e.seat], e.cards, f"{where}: seat {e.seat} buried")
            bottom = tuple(e.cards)
        elif isinstance(e, CardPlayed):
            _take(held[e.seat], e.cards, f"{where}: seat {e.seat} played")
        elif isinstance(e, TrickWon) and e.winner % 2 == attackers:
            trick_points += e.points
    for seat, rest in enumerate(held):
        if rest.total():
            raise VerificationError(
                f"round {number}: seat {seat} still holds {format_cards(sorted(rest.elements()))} "
                f"when the round is scored (R22)"
            )
    if tuple(scored.bottom_cards) != bottom:
        raise VerificationError(
            f"round {number}: RoundScored shows the bottom {format_cards(scored.bottom_cards)}, "
            f"but {format_cards(bottom)} was buried last (R21, R28)"
        )
    if scored.bottom_points != points_of(bottom) or scored.trick_points != trick_points:
        raise VerificationError(
            f"round {number}: RoundScored counts {scored.trick_points} trick points and "
            f"{scored.bottom_points} in the bottom; the events give {trick_points} and "
            f"{points_of(bottom)} (R26, R27)"
        )


def _take(held: Counter[Card], cards: Sequence[Card], what: str, *, remove: bool = True) -> None:
    lacking = Counter(cards) - held
    if lacking:
        raise VerificationError(
            f"{what} {format_cards(cards)}, but the deal (and the bottom it took) did not "
            f"give it {format_cards(sorted(lacking.elements()))} (R35)"
        )
    if remove:
        held.subtract(cards)
