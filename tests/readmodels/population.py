"""A population of matches for the read models' tests, made through the services: played
to the end, ended by the organiser (a round abandoned), open, private (an invite code),
imported from a record, tournament tables, and players who sit, leave and finish.

:func:`populate` runs in steps (``steps``): a test follows the log between them, so the
view is written in many batches, as a live one is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from uuid import UUID

from domain.accounts.account import Account
from domain.game.timers import Timers
from domain.rules.ruleset import preset
from services.accounts.players import get_account
from services.game import GameService
from services.records.export import export_match
from services.table_life import leave
from tests.archive.matches import bot_match, bot_tournament, ended_match, open_match
from tests.commands import (
    claim_as_player,
    create_match,
    create_player,
    finish_match,
    import_record,
    take_seat,
    unit,
)

PERSON = "Zhang Sanfeng-unique"
"""A display name no row may hold (docs/players.md: names are sealed)."""


@dataclass
class Population:
    accounts: list[UUID] = field(default_factory=list)
    matches: list[UUID] = field(default_factory=list)


def _seated(
    service: GameService, people: list[Account], name: str, timers: Timers | None = None
) -> UUID:
    """A match where the ``people`` sit in seats 0.. and bots in the rest."""
    mid = create_match(service, preset("standard"), name=name, preset="standard", timers=timers)
    for seat, person in enumerate(people):
        claim_as_player(service, get_account(service, person.id), mid, seat)
    for seat in range(len(people), 4):
        take_seat(service, mid, seat, f"bot{seat}", "random")
    return mid


def steps(service: GameService, population: Population) -> Iterator[Callable[[], None]]:
    """The population's steps, each a few saves."""
    people: list[Account] = []

    def players() -> None:
        for i in range(3):
            account, _ = create_player(service, f"{PERSON} {i}", "en")
            people.append(account)
            population.accounts.append(account.id)

    def played() -> None:
        population.matches.append(bot_match(service, rounds=2))
        population.matches.append(bot_match(service, "tuolaji"))

    def ended_and_open() -> None:
        population.matches.append(ended_match(service))
        population.matches.append(open_match(service))

    def private() -> None:
        mid = create_match(
            service, preset("standard"), name="private", preset="standard", visibility="private"
        )
        population.matches.append(mid)

    def waiting() -> None:
        mid = create_match(service, preset("standard"), name="waiting", preset="standard")
        claim_as_player(service, get_account(service, people[0].id), mid, 2)
        population.matches.append(mid)

    def seated() -> None:
        population.matches.append(_seated(service, people[:2], "friends"))
        population.matches.append(_seated(service, people[1:2], "solo"))
        timers = Timers(declare_ms=30_000, bury_ms=60_000, play_ms=30_000)
        timed = _seated(service, people[:1], "timed", timers)
        population.matches.append(timed)

    def left() -> None:
        mid = _seated(service, people[2:3], "left")
        uow = unit(service)
        leave(uow, uow.get(people[2].id, Account, "player"), mid, "heuristic")
        uow.commit()
        population.matches.append(mid)

    def finished_with_people() -> None:
        mid = _seated(service, people[:1], "to end")
        finish_match(service, mid)
        population.matches.append(mid)

    def tournament() -> None:
        bot_tournament(service)

    def imported() -> None:
        record = export_match(service, population.matches[0])
        import_record(service, record, store=True)
        population.matches.append(create_match(service, preset("standard"), name="after"))

    yield from (
        players,
        played,
        ended_and_open,
        private,
        waiting,
        seated,
        left,
        finished_with_people,
        tournament,
        imported,
    )


def populate(service: GameService, between: Callable[[], object] = lambda: None) -> Population:
    """The whole population, ``between()`` after each step."""
    population = Population()
    for step in steps(service, population):
        step()
        between()
    return population
