"""A population of finished matches for the ratings' tests, made through the services:
one of every kind that counts or does not (docs/decisions.md D-ratings) — people with
accounts, people and bots, bots only, a guest, a player who leaves, a player timed out to
the end, a match ended before round 1 was recorded, an imported record, a result entered
on paper, a tournament table of bots, repeated foursomes, an erased player.

:func:`play_out` plays a match to its end, the people's seats moved by the random bot's
policy as if they moved themselves (and the seats in ``absent`` left to their turn timer:
the timeout bot moves for them)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from uuid import UUID

from domain.accounts.account import Account
from domain.game.match import Entered, Match
from domain.game.round import Round, RoundPhase
from domain.game.timers import Timers, turn_clock
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import MatchEnd, MatchEndKind, preset
from services.access import Credential
from services.accounts.commands import ErasePlayer
from services.accounts.players import get_account
from services.bots import next_move
from services.game import GameService
from services.legal import claimed
from services.records.export import export_match
from services.round_commands import Act, ClaimDeadlines
from services.table_life import leave
from tests.archive.matches import bot_match, bot_tournament
from tests.commands import (
    bus_of,
    claim_as_player,
    claim_timeout,
    create_match,
    create_player,
    finish_match,
    import_record,
    take_seat,
    unit,
)
from tests.conftest import FakeClock

TIMERS = Timers(declare_ms=30_000, bury_ms=60_000, play_ms=30_000)


def rules(name: str = "standard", rounds: int = 1):  # type: ignore[no-untyped-def]
    return dataclasses.replace(preset(name), match_end=MatchEnd(MatchEndKind.ROUNDS, rounds))


def seated(
    service: GameService,
    seats: list[Account | str],
    *,
    family: str = "standard",
    rounds: int = 1,
    timers: Timers | None = None,
) -> UUID:
    """A match whose seats hold accounts, bots (a kind) or a guest (``"guest"``)."""
    mid = create_match(service, rules(family, rounds), name="rated?", preset=family, timers=timers)
    for seat, who in enumerate(seats):
        if isinstance(who, Account):
            claim_as_player(service, get_account(service, who.id), mid, seat)
        elif who == "guest":
            take_seat(service, mid, seat, f"guest {seat}", "human")
        else:
            take_seat(service, mid, seat, f"bot {seat}", who)
    return mid


def play_out(
    service: GameService,
    clock: FakeClock,
    mid: UUID,
    absent: frozenset[int] = frozenset(),
    rounds: int | None = None,
) -> None:
    """Every move to the match's end (module docstring); ``rounds``: until that many
    rounds are recorded (the match goes on)."""
    bus = bus_of(service)
    for _ in range(20_000):
        match = service.get_match(mid)
        if match.finished or (rounds is not None and len(match.results) >= rounds):
            return
        round_ = service.current_round(match)
        now = service.clock()
        if round_ is not None and round_.dealt is not None:
            if claimed(round_, now).pending_events:
                bus.execute(ClaimDeadlines(mid))
                continue
            movers = {s: "random" for s in range(4) if s not in absent}
            move = next_move(match, round_, now, movers)
            if move is not None:
                bus.execute(Act(mid, move.action, seat=move.seat))
                continue
        clock.advance(STEP * steps_to_timeout(match, round_, now, absent))
        if absent:
            with contextlib.suppress(ShengjiError):
                claim_timeout(service, mid, "sweeper")
    raise AssertionError("the match did not finish")


STEP = timedelta(milliseconds=250)
"""How far :func:`play_out` moves the clock when nobody moves."""


def steps_to_timeout(
    match: Match, round_: Round | None, now: datetime, absent: frozenset[int]
) -> int:
    """How many of :data:`STEP` :func:`play_out` would wait, one at a time, before the
    timeout of an absent seat to act can be claimed (its turn clock's deadline passed):
    all at once, the clock at the same instant as after those steps; 1 otherwise, and in
    an overcall window, which has a deadline of its own (R20)."""
    if round_ is None or round_.phase is RoundPhase.OVERCALLING:
        return 1
    turn = turn_clock(match.timers, round_)
    if turn is None or turn.seat not in absent or now > turn.deadline:
        return 1
    return (turn.deadline - now) // STEP + 1


@dataclass
class Population:
    people: list[Account] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    """The people's player tokens, in the same order."""
    rated: list[UUID] = field(default_factory=list)
    """Matches that count, in the order they finished."""
    unrated: dict[str, UUID] = field(default_factory=dict)
    """A match of each kind that does not count, by the reason."""
    leaver: UUID | None = None
    timed_out: UUID | None = None
    erased: UUID | None = None
    repeated: list[UUID] = field(default_factory=list)


def populate(
    service: GameService, clock: FakeClock, between: Callable[[], object] = lambda: None
) -> Population:
    """The whole population, ``between()`` after each match (module docstring)."""
    pop = Population()
    for i in range(6):
        account, token = create_player(service, f"Rated Person {i}", "en")
        pop.people.append(account)
        pop.tokens.append(token)
    a, b, c, d, e, f = pop.people

    def rated(mid: UUID, absent: frozenset[int] = frozenset()) -> UUID:
        play_out(service, clock, mid, absent)
        clock.advance(seconds=60)  # each rated match at a time of its own
        pop.rated.append(mid)
        between()
        return mid

    rated(seated(service, [a, b, c, d]))  # four people
    rated(seated(service, [a, "heuristic", b, "strong"]))  # people and bots
    rated(seated(service, [e, f, "random", "heuristic"], family="tuolaji"))
    for _ in range(3):  # the same four again, the same day: less each time
        pop.repeated.append(rated(seated(service, [a, b, c, d])))
    # a person leaves mid-match: rated as losing
    mid = seated(service, [c, "random", d, e])
    uow = unit(service)
    leave(uow, uow.get(c.id, Account, "player"), mid, "heuristic")
    uow.commit()
    pop.leaver = rated(mid)
    # a person never moves again: timed out to the end
    pop.timed_out = rated(seated(service, [e, f, a, b], timers=TIMERS), frozenset({1}))
    # not rated
    pop.unrated["bots-only"] = bot_match(service)
    guest = seated(service, [a, "guest", "random", "random"])
    play_out(service, clock, guest)
    pop.unrated["guest"] = guest
    early = seated(service, [a, b, c, d])
    finish_match(service, early)  # round 1 never recorded
    pop.unrated["before-round-1"] = early
    record = export_match(service, pop.rated[0])
    imported = import_record(service, record, store=True)
    assert imported.match_id is not None
    pop.unrated["imported"] = imported.match_id
    entered = seated(service, [a, b, c, d], rounds=3)
    finish_match(service, entered, "result entered: paper", Entered(winner=0))
    pop.unrated["entered"] = entered
    bot_tournament(service)
    between()
    # a week later: the foursome counts fully again; then one of them is erased
    clock.advance(timedelta(days=8))
    pop.repeated.append(rated(seated(service, [a, b, c, d])))
    rated(seated(service, [f, "strong", e, "strong"]))
    bus_of(service).execute(ErasePlayer(), Credential.parse(pop.tokens[5]))
    pop.erased = f.id
    between()
    return pop
