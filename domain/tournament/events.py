"""The events of a :class:`~domain.tournament.tournament.Tournament`, each with its ``apply``.

``apply`` only assigns state. Fields some viewers may not see are listed in
``SECRET_FIELDS`` (as the round events do): the organiser token's hash, and a tournament
round's secret until ``RoundCompleted`` reveals it (R35, R36).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.rules.ruleset import RuleSet

if TYPE_CHECKING:
    from domain.tournament.tournament import Tournament


@dataclass(frozen=True, slots=True)
class TeamEntry:
    """A team: its name, and its two players' names and seat kinds (``human``, or a bot
    policy: ``random``, ``heuristic``, ``strong``). Partners sit opposite (R2)."""

    name: str
    players: tuple[str, str]
    kinds: tuple[str, str]


@dataclass(frozen=True, slots=True)
class TableEntry:
    """A table of a tournament round: the pairing, the first team's seat parity (0: seats
    0/2, 1: seats 1/3, see :mod:`domain.tournament.duplicate`) and its match."""

    table: int
    first: int
    second: int
    first_parity: int
    match_id: UUID


@dataclass(frozen=True, slots=True)
class ResultEntry:
    """A table's result as recorded (or corrected), from the pairing's first team."""

    winner: int | None
    levels: tuple[int, int]
    points: tuple[int, int]
    deals: int
    corrected_by: str | None = None
    reason: str | None = None


@dataclass(slots=True)
class RoundState:
    """A tournament round as the aggregate holds it (built by the events' apply)."""

    number: int
    commitment: str
    secret: str
    """Hex; secret until ``revealed`` (R35)."""
    tables: tuple[TableEntry, ...]
    bye: int | None
    revealed: bool = False


class TournamentEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, t: Tournament) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class TournamentCreated(Aggregate.Created):
    """An organiser created a tournament: rule set (with the match length as its
    ``match_end``, §10), teams, format and rounds, fixed for good."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("organiser_token_hash",)
    name: str
    preset: str | None
    rules: dict[str, bool | int | str | None]
    match_length: str
    teams: tuple[TeamEntry, ...]
    format: str
    total_rounds: int
    organiser_token_hash: str

    def apply(self, aggregate: Any) -> None:
        t: Tournament = aggregate
        t.name = self.name
        t.preset = self.preset
        t.rules = RuleSet.from_mapping(self.rules)
        t.match_length = self.match_length
        t.teams = tuple(self.teams)
        t.format = self.format
        t.total_rounds = self.total_rounds
        t.organiser_token_hash = self.organiser_token_hash
        t.rounds = []
        t.results = {}


class RoundScheduled(TournamentEvent):
    """A tournament round's tables, bye and the commitment of its secret (R35, R36)."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("secret",)
    number: int
    commitment: str
    secret: str
    tables: tuple[TableEntry, ...]
    bye: int | None

    def apply_to(self, t: Tournament) -> None:
        t.rounds.append(
            RoundState(self.number, self.commitment, self.secret, self.tables, self.bye)
        )


class TableResultRecorded(TournamentEvent):
    """A table's match finished; its result entered the tournament (pulled by the service)."""

    number: int
    table: int
    winner: int | None
    levels: tuple[int, int]
    points: tuple[int, int]
    deals: int

    def apply_to(self, t: Tournament) -> None:
        t.results[(self.number, self.table)] = ResultEntry(
            self.winner, self.levels, self.points, self.deals
        )


class ResultCorrected(TournamentEvent):
    """The organiser corrected a table's result: who did and why, and the new figures."""

    number: int
    table: int
    winner: int | None
    levels: tuple[int, int]
    points: tuple[int, int]
    by: str
    reason: str

    def apply_to(self, t: Tournament) -> None:
        before = t.results[(self.number, self.table)]
        t.results[(self.number, self.table)] = ResultEntry(
            self.winner, self.levels, self.points, before.deals, self.by, self.reason
        )


class RoundCompleted(TournamentEvent):
    """Every table of the round has its result: the round's secret is revealed (R35)."""

    number: int
    secret: str

    def apply_to(self, t: Tournament) -> None:
        t.rounds[self.number - 1].revealed = True
