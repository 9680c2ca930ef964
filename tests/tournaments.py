"""Tournaments in tests: the product's tournament commands (:mod:`services.tournaments.
commands`, ``control_commands``, ``director_commands``) through the bus of a test's service,
sent as the service itself, with the plain arguments a test has at hand; and the results
policy caught up where a test reads the standings right after its tables finished
(:meth:`Tournaments.results`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from domain.rules.ruleset import RuleSet
from domain.tournament.events import TeamEntry
from domain.tournament.tournament import Tournament
from services.bus import Bus
from services.game import GameService
from services.tournaments.answers import ScheduledRound
from services.tournaments.commands import (
    CollectResults,
    CorrectResult,
    CreateTournament,
    FinishTable,
    ScheduleRound,
)
from services.tournaments.control_commands import AdjustScore, Forbid, Withdraw
from services.tournaments.loading import get_tournament
from services.tournaments.results_policy import ResultsPolicy
from tests.commands import bus_of


class Tournaments:
    """The tournament commands of ``service``'s bus (as the service)."""

    def __init__(self, service: GameService) -> None:
        self.game = service
        self.bus: Bus = bus_of(service)
        self.policy = ResultsPolicy(self.bus)

    def get(self, tournament_id: UUID, version: int | None = None) -> Tournament:
        return get_tournament(self.game, tournament_id, version)

    def create(
        self,
        *,
        name: str,
        rules: RuleSet,
        teams: Sequence[TeamEntry],
        fmt: str,
        match_length: int | str,
        **kw: Any,
    ) -> Tournament:
        command = CreateTournament(
            name=name, rules=rules, teams=tuple(teams), fmt=fmt, match_length=match_length, **kw
        )
        done = self.bus.execute(command)
        return self.get(UUID(done.tournament_id))

    def schedule_next(
        self,
        tournament_id: UUID,
        deadline_s: int | None = None,
        timers: Mapping[str, int] | None = None,
    ) -> ScheduledRound:
        answer: ScheduledRound = self.bus.execute(ScheduleRound(tournament_id, deadline_s, timers))
        return answer

    def results(self, tournament_id: UUID) -> Tournament:
        """The tournament once the results policy has caught up with the log."""
        self.policy.catch_up()
        return self.get(tournament_id)

    def collect(self, tournament_id: UUID) -> Tournament:
        self.bus.execute(CollectResults(tournament_id))
        return self.get(tournament_id)

    def finish_table(self, tournament_id: UUID, number: int, table: int, reason: str) -> Tournament:
        self.bus.execute(FinishTable(tournament_id, number, table, reason))
        return self.get(tournament_id)

    def correct(
        self,
        tournament_id: UUID,
        number: int,
        table: int,
        *,
        winner: int | None,
        levels: tuple[int, int],
        points: tuple[int, int],
        by: str,
        reason: str,
    ) -> Tournament:
        command = CorrectResult(tournament_id, number, table, winner, levels, points, by, reason)
        self.bus.execute(command)
        return self.get(tournament_id)

    def adjust(self, tournament_id: UUID, team: int, points: int, *, reason: str, by: str) -> None:
        self.bus.execute(AdjustScore(tournament_id, team, points, reason, by))

    def withdraw(self, tournament_id: UUID, team: int, *, reason: str) -> None:
        self.bus.execute(Withdraw(tournament_id, team, reason))

    def forbid(self, tournament_id: UUID, a: int, b: int, *, reason: str) -> None:
        self.bus.execute(Forbid(tournament_id, a, b, reason))
