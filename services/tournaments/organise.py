"""The organiser's controls as application commands (docs/tournaments.md):
registration and team tokens, check-in, the start, late entries, withdrawals (their
forfeited tables' matches are ended), forbidden pairings, the preview and override of a
round's pairing, score adjustments, the round deadline, re-issued seat tokens.

Each command loads the tournament (a copy), calls the aggregate's command and saves;
``attach`` builds more aggregates for the same save (the Idempotency-Key's record).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.rules.errors import IllegalMoveError
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import TeamEntry
from domain.tournament.pairing import Pairing
from domain.tournament.tournament import Tournament
from services.errors import NotFoundError, VersionConflictError
from services.match_commands import ending as end_match
from services.sources import SEAT_ROLE, new_token, token_hash
from services.tournaments.service import (
    COLLECT_ATTEMPTS,
    SeatToken,
    TournamentService,
    finish_table_match,
)
from services.unit_of_work import UnitOfWork

TEAM_ROLE = "t"
"""A team token ``t.<tournament id hex>.<secret>``: a self-registered team's own check-in
and withdrawal."""

Attach = Callable[[Tournament], Sequence[Any]] | None


@dataclass(frozen=True, slots=True)
class Registered:
    team: int
    token: str | None
    """The team's token, for a team that registered itself (shown once)."""


class Organiser(TournamentService):
    """:class:`TournamentService` with the organiser's controls."""

    def _run(self, tournament_id: UUID, act: Callable[[Tournament], Any], attach: Attach) -> Any:
        """Load, act, save — again on a conflict: tournament writes take no ``If-Match``,
        so a conflict is a background writer's (the clerk collecting, a deadline) or
        another call's, never the organiser's stale read; the command is checked again
        against the state that won."""

        def once() -> Any:
            tournament = self.get(tournament_id)
            out = act(tournament)
            self.save(tournament, *(attach(tournament) if attach else ()))
            return out

        for _ in range(COLLECT_ATTEMPTS - 1):
            try:
                return once()
            except VersionConflictError:
                continue  # save() dropped our copy: the next read is the store's
        return once()

    def register(
        self, tournament_id: UUID, team: TeamEntry, *, by_organiser: bool, attach: Attach = None
    ) -> Registered:
        token = None if by_organiser else new_token(tournament_id, TEAM_ROLE)

        def act(t: Tournament) -> int:
            return t.register_team(
                team,
                by="organiser" if by_organiser else "self",
                token_hash="" if token is None else token_hash(token),
                now=self.game.clock(),
            )

        return Registered(self._run(tournament_id, act, attach), token)

    def _do(
        self, tournament_id: UUID, act: Callable[[Tournament], object], attach: Attach
    ) -> Tournament:
        def acted(t: Tournament) -> Tournament:
            act(t)
            return t

        tournament: Tournament = self._run(tournament_id, acted, attach)
        return tournament

    def check_in(self, tournament_id: UUID, team: int, attach: Attach = None) -> Tournament:
        return self._do(tournament_id, lambda t: t.check_in(team, self.game.clock()), attach)

    def start(self, tournament_id: UUID, attach: Attach = None) -> Tournament:
        return self._do(tournament_id, lambda t: t.start(self.game.clock()), attach)

    def withdraw(
        self, tournament_id: UUID, team: int, *, reason: str, by: str, attach: Attach = None
    ) -> Tournament:
        """Collect first (a table that finished keeps its result), then withdraw; the
        matches of the forfeited tables are ended (R32) so nobody plays them on — in the
        same save as the withdrawal: all of it, or (a move saved first at a table) none of
        it and again on the state that won (docs/decisions.md D-integrity)."""
        self.collect(tournament_id)
        ending = f"tournament: team {team} withdrew"

        ended: list[Any] = []

        def act(t: Tournament) -> Tournament:
            ended.clear()  # an attempt after a conflict starts from the state that won
            for table in t.withdraw(team, reason=reason, by=by, now=self.game.clock()):
                assert t.current is not None
                match = self._table_match(t.current.tables[table])
                if match is not None and not match.finished:
                    uow = UnitOfWork(self.game)
                    end_match(uow, uow.match(match.id), ending)
                    ended.extend(uow.changed())
            return t

        def with_ended(t: Tournament) -> list[Any]:
            return [*ended, *(attach(t) if attach else ())]

        tournament: Tournament = self._run(tournament_id, act, with_ended)
        return tournament

    def forbid(
        self, tournament_id: UUID, a: int, b: int, reason: str, attach: Attach = None
    ) -> Tournament:
        return self._do(
            tournament_id, lambda t: t.forbid(a, b, reason=reason, now=self.game.clock()), attach
        )

    def allow(self, tournament_id: UUID, a: int, b: int, attach: Attach = None) -> Tournament:
        return self._do(tournament_id, lambda t: t.allow(a, b, self.game.clock()), attach)

    def preview(self, tournament_id: UUID) -> tuple[Tournament, int, Pairing, list[int]]:
        """The next round's pairing as scheduling would make it now (nothing is saved)."""
        tournament = self.get(tournament_id)
        number, pairing, awarded = tournament.preview()
        return tournament, number, pairing, awarded

    def override(
        self,
        tournament_id: UUID,
        number: int,
        tables: Sequence[tuple[int, int]],
        bye: int | None,
        *,
        reason: str,
        by: str,
        attach: Attach = None,
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.override_pairings(number, tables, bye, reason=reason, by=by, now=self.game.clock())

        return self._do(tournament_id, act, attach)

    def adjust(
        self,
        tournament_id: UUID,
        team: int,
        match_points: int,
        *,
        reason: str,
        by: str,
        attach: Attach = None,
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.adjust(team, match_points, reason=reason, by=by, now=self.game.clock())

        return self._do(tournament_id, act, attach)

    def enforce_deadline(self, tournament_id: UUID) -> list[int]:
        """Past the round in play's deadline: its unfinished tables are ended (rule
        ``finish``, R32) or flagged (``flag``), and ``RoundDeadlinePassed`` records which.
        The tables handled (0-based); nothing before the deadline."""
        tournament = self.collect(tournament_id)
        overdue = tournament.overdue_tables(self.game.clock())
        current = tournament.current
        if not overdue or current is None:
            return []
        if tournament.deadline_rule == "finish":
            for table in overdue:
                match = self._table_match(current.tables[table])
                if match is not None and not match.finished:
                    finish_table_match(
                        self.game, match.id, "tournament: the round's deadline passed"
                    )
        tournament = self.get(tournament_id)
        tournament.mark_deadline(overdue, self.game.clock())
        self.save(tournament)
        self.collect(tournament_id)
        return overdue

    def reissue_tokens(self, tournament_id: UUID, number: int, table: int) -> tuple[SeatToken, ...]:
        """New seat tokens for the people's seats of a table (the old ones stop working);
        bots have none. Only a table of the round in play."""
        tournament = self.get(tournament_id)
        entry = tournament.table(number, table)
        if number != len(tournament.rounds) or not tournament.in_play:
            raise IllegalMoveError(
                f"round {number} is not in play: only its tables' tokens can be re-issued",
                rule="R36",
                code="round-not-current",
            )
        match = self._table_match(entry)
        if match is None:
            raise NotFoundError(f"round {number} table {table + 1} is not seated yet")
        teams = seat_teams(entry.table, entry.first, entry.second)
        tokens = []
        now = self.game.clock()
        for seat, info in enumerate(match.seats):
            if info is None or info.kind != "human":
                continue
            token = new_token(match.id, SEAT_ROLE)
            match.reissue_token(seat, token_hash(token), now)
            tokens.append(SeatToken(table, seat, teams[seat], info.name, token))
        if tokens:
            self.game.save(match)
        return tuple(tokens)
