"""A dry run reveals nothing hidden (R33; docs/decisions.md D-dry-run): over random
positions of random rounds, the dry-run answer for a seat is a function of that seat's
view alone — two positions the seat sees alike (its hand, the table) but whose hidden
cards differ (the other hands, the bottom it did not bury) get the same answer, legal or
refused, for the same command; a throw (R22) in particular is never tested against the
other hands.

Positions: every state of ``MATCHES`` one-round matches of four ``random`` bots, from the
end of the drawing to the last trick (at least 1,000 positions), each checked with several
commands of the seat to act and of another seat: random cards from the seat's hand (often
illegal), throws of one suit, the offered leads and follows, passes and burials.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import msgspec
import pytest

from domain.game.actions import action_of
from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.rules.cards import Card, card_names
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import STANDARD, RuleSet
from services.access import Credential
from services.bot_driver import play_one
from services.game import GameService
from services.round_commands import Act
from services.views import table_view
from tests.commands import bus_of, create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds

MATCHES = 12
POSITIONS = 1_000
ONE_ROUND = RuleSet.from_mapping({**STANDARD.to_mapping(), "match_end": "rounds:1"})
_JUDGED = (RoundPhase.DECLARING, RoundPhase.OVERCALLING, RoundPhase.BURYING, RoundPhase.PLAYING)


def hidden_swapped(round_: Round, seat: int, rng: random.Random) -> Round:
    """A copy of ``round_`` that ``seat`` sees alike, with every card it cannot see dealt
    again at random among the same places: the other hands (their sizes kept) and the
    bottom unless ``seat`` buried it (R21, R33)."""
    other = copy.deepcopy(round_)
    seats = [s for s in range(4) if s != seat]
    hands = other.play.hands if other.play is not None else other.hands
    pool: list[Card] = [c for s in seats for c in hands[s]]
    bottom_hidden = other.buried_by != seat and other.phase is not RoundPhase.BURYING
    if bottom_hidden:
        pool += list(other.bottom)
    rng.shuffle(pool)
    for s in seats:
        size = len(hands[s])
        hands[s][:] = sorted(pool[:size])
        pool = pool[size:]
        if other.play is not None and other.hands:
            other.hands[s] = list(hands[s])
    if bottom_hidden:
        other.bottom = tuple(pool)
    return other


def commands(
    round_: Round, seat: int, hand: list[Card], rng: random.Random
) -> Iterator[tuple[str, tuple[Card, ...]]]:
    """Commands a seat might send now: mostly plays of its own cards in the play."""
    if round_.phase is RoundPhase.PLAYING:
        for size in (1, 2, 3, 4):
            if len(hand) >= size:
                yield "play", tuple(rng.sample(hand, size))
        by_suit: dict[int, list[Card]] = {}
        play = round_.play
        assert play is not None
        for card in hand:
            by_suit.setdefault(play.ctx.category[card], []).append(card)
        for cards in by_suit.values():
            distinct = sorted(set(cards))
            if len(distinct) >= 2:  # a throw of one suit category (R15, R22)
                yield "play", tuple(rng.sample(distinct, min(len(distinct), rng.randint(2, 4))))
        yield "pass", ()
    else:
        yield "pass", ()
        if hand:
            yield "declare", tuple(rng.sample(hand, min(len(hand), rng.randint(1, 2))))
            yield "overcall", tuple(rng.sample(hand, min(len(hand), 2)))
        if len(hand) >= 8:
            yield "bury", tuple(rng.sample(hand, 8))


@dataclass(frozen=True, slots=True)
class Command:
    """A dry run as a seat sends it."""

    caller: Credential
    match_id: UUID
    action: str
    cards: tuple[Card, ...] = ()


def answer(service: GameService, match: Match, round_: Round, command: Command) -> Any:
    """The dry run's answer on ``round_`` (the bus loads this copy as the round)."""
    original = service.get_round

    def load(_: UUID, version: int | None = None) -> Round:
        return copy.deepcopy(round_)

    setattr(service, "get_round", load)  # noqa: B010 - the copy to judge
    try:
        act = Act(command.match_id, action_of(command.action, command.cards))
        done = bus_of(service).handle(act, command.caller, dry=True)
        return ("ok", msgspec.to_builtins(done.body))
    except ShengjiError as e:
        return ("refused", e.code, e.detail, e.rule)
    finally:
        setattr(service, "get_round", original)  # noqa: B010


def positions(rng: random.Random) -> Iterator[tuple[GameService, Match, Round, list[Credential]]]:
    """Every judged state of ``MATCHES`` rounds of four random bots."""
    for n in range(MATCHES):
        service = GameService(
            {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(n)
        )
        match_id: UUID = create_match(service, ONE_ROUND, name=f"views {n}")
        tokens = [take_seat(service, match_id, s, f"p{s}", "random")[0] for s in range(4)]
        creds = [Credential.parse(t) for t in tokens]
        while True:
            match = service.get_match(match_id)
            round_ = service.current_round(match)
            if match.finished or round_ is None:
                break
            if round_.phase in _JUDGED and not round_.pending_events:
                yield service, match, round_, creds
            if play_one(bus_of(service), match_id) in ("waiting", "over"):
                break
        service.close()


def test_equal_views_get_equal_dry_runs() -> None:
    rng = random.Random(2026)
    checked = 0
    throws = 0
    for service, match, round_, creds in positions(rng):
        now = service.clock()
        to_act = round_.to_act()
        seat = to_act if to_act is not None else rng.randrange(4)
        other = hidden_swapped(round_, seat, rng)
        assert table_view(match, other, seat, now) == table_view(match, round_, seat, now)
        hand = list(round_.hand_at(seat, now))
        if round_.phase is RoundPhase.BURYING and round_.bidding.burier == seat:
            hand += list(round_.bottom)
        for action, cards in commands(round_, seat, hand, rng):
            command = Command(creds[seat], match.id, action, cards)
            first = answer(service, match, round_, command)
            assert first == answer(service, match, other, command), (
                f"{action} {card_names(cards)} by seat {seat} in {round_.phase}"
            )
            throws += first[0] == "ok" and first[1].get("throw") is not None
        bystander = (seat + 1 + rng.randrange(3)) % 4  # another seat: its own view too
        command = Command(
            creds[bystander], match.id, "play", tuple(round_.hand_at(bystander, now))[:1]
        )
        assert answer(service, match, round_, command) == answer(
            service, match, hidden_swapped(round_, bystander, rng), command
        )
        checked += 1
    assert checked >= POSITIONS, f"only {checked} positions"
    assert throws > 50  # throws were judged, never tested against the other hands


@pytest.mark.parametrize("seed", [0, 1])
def test_a_throw_that_fails_when_played_is_judged_legal_by_the_dry_run(seed: int) -> None:
    """R22: whichever way the other hands would test it, the dry run says the same: a
    legal throw, tested when played, with its penalty; the real play may then fail."""
    rng = random.Random(seed)
    for service, match, round_, creds in positions(rng):
        play = round_.play
        if play is None or play.trick:
            continue
        seat = play.turn
        hand = list(play.hands[seat])
        suits: dict[int, list[Card]] = {}
        for card in hand:
            suits.setdefault(play.ctx.category[card], []).append(card)
        for cards in suits.values():
            distinct = sorted(set(cards), key=lambda c: play.ctx.order[c])
            if len(distinct) < 2:
                continue
            throw = (distinct[0], distinct[-1])
            command = Command(creds[seat], match.id, "play", throw)
            judged = answer(service, match, round_, command)
            assert judged[0] == "ok" and judged[1]["throw"]["tested"] == "when-played"
            assert judged[1]["played"] == card_names(throw)
            return
    raise AssertionError("no throw to judge")
