"""The director's tools as application commands (docs/tournaments.md, "The director's
room"): paper results, the round clock, requested byes, substitutes, renamed teams, a
cancelled round, a published pairing and fixed tables.

Each loads the tournament (a copy), calls the aggregate's command and saves with the
Idempotency-Key's record (``attach``), again on a background writer's conflict
(:meth:`Organiser._run`). A paper result and a cancelled round also end their tables'
matches — after the tournament's save, so the live standings never show a draw first.
"""

from __future__ import annotations

from collections.abc import Mapping
from uuid import UUID

from domain.game.match import ENTERED_PREFIX, Entered
from domain.tournament.events import RoundState
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament
from services.tournaments.organise import Attach, Organiser
from services.tournaments.service import finish_table_match


class Director(Organiser):
    """:class:`Organiser` with the director's tools."""

    def enter_result(
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
        attach: Attach = None,
    ) -> Tournament:
        """Enter a table's result (a paper result): the tournament records it as entered
        (``TableResultEntered``), then the table's match ends with the same winner and a
        reason saying it was entered (R32). A table that finished first keeps its played
        result (collected first: 409 ``result-recorded``)."""
        self.collect(tournament_id)

        def act(t: Tournament) -> None:
            entry = t.table(number, table)
            result = TableResult(entry.first, entry.second, winner, levels, points)
            t.enter_result(number, table, result, by=by, reason=reason, now=self.game.clock())

        tournament = self._do(tournament_id, act, attach)
        entry = tournament.table(number, table)
        match = self._table_match(entry)
        if match is not None and not match.finished:
            # the match's team 0 sits at seats 0/2: the first team when its parity is 0
            side = None
            if winner is not None:
                side = (0 if winner == entry.first else 1) ^ entry.first_parity
            text = (
                f"{ENTERED_PREFIX}levels {levels[0]}-{levels[1]} "
                f"({tournament.teams[entry.first].name} v {tournament.teams[entry.second].name}), "
                f"by {by.strip()}: {reason.strip()}"
            )
            finish_table_match(self.game, entry.match_id, text, Entered(side))
        return tournament

    def change_time_control(
        self,
        tournament_id: UUID,
        *,
        timers: Mapping[str, int] | None,
        round_deadline_s: int | None,
        deadline_rule: str,
        requested_bye_points: int,
        attach: Attach = None,
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.change_time_control(
                timers=timers,
                round_deadline_s=round_deadline_s,
                deadline_rule=deadline_rule,
                requested_bye_points=requested_bye_points,
                now=self.game.clock(),
            )

        return self._do(tournament_id, act, attach)

    def set_round_time(
        self,
        tournament_id: UUID,
        number: int,
        deadline_s: int | None,
        timers: Mapping[str, int] | None,
        attach: Attach = None,
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.set_round_time(number, deadline_s, timers, self.game.clock())

        return self._do(tournament_id, act, attach)

    def extend_table(
        self,
        tournament_id: UUID,
        number: int,
        table: int,
        seconds: int,
        *,
        by: str,
        reason: str,
        attach: Attach = None,
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.extend_table(number, table, seconds, by=by, reason=reason, now=self.game.clock())

        return self._do(tournament_id, act, attach)

    def pause(self, tournament_id: UUID, reason: str, attach: Attach = None) -> Tournament:
        return self._do(tournament_id, lambda t: t.pause(reason, self.game.clock()), attach)

    def resume(self, tournament_id: UUID, attach: Attach = None) -> Tournament:
        return self._do(tournament_id, lambda t: t.resume(self.game.clock()), attach)

    def request_bye(
        self, tournament_id: UUID, team: int, number: int, reason: str, attach: Attach = None
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.request_bye(team, number, reason, self.game.clock())

        return self._do(tournament_id, act, attach)

    def substitute(
        self,
        tournament_id: UUID,
        number: int,
        team: int,
        player: int,
        name: str,
        kind: str,
        reason: str,
        attach: Attach = None,
    ) -> Tournament:
        def act(t: Tournament) -> None:
            t.substitute(number, team, player, name, kind, reason, self.game.clock())

        return self._do(tournament_id, act, attach)

    def rename(
        self, tournament_id: UUID, team: int, name: str, reason: str, attach: Attach = None
    ) -> Tournament:
        return self._do(
            tournament_id, lambda t: t.rename(team, name, reason, self.game.clock()), attach
        )

    def cancel_round(
        self, tournament_id: UUID, *, reason: str, by: str, attach: Attach = None
    ) -> Tournament:
        """Cancel the round in play; its tables' matches are ended (R32) after the save."""

        def act(t: Tournament) -> tuple[Tournament, RoundState]:
            return t, t.cancel_round(reason=reason, by=by, now=self.game.clock())

        done: tuple[Tournament, RoundState] = self._run(tournament_id, act, attach)
        tournament, state = done
        for table in state.tables:
            match = self._table_match(table)
            if match is not None and not match.finished:
                reason_text = f"tournament: round cancelled: {reason.strip()}"
                finish_table_match(self.game, match.id, reason_text)
        return tournament

    def publish(self, tournament_id: UUID, attach: Attach = None) -> Tournament:
        return self._do(tournament_id, lambda t: t.publish(self.game.clock()), attach)

    def fix_table(
        self, tournament_id: UUID, team: int, table: int | None, reason: str, attach: Attach = None
    ) -> Tournament:
        return self._do(
            tournament_id, lambda t: t.fix_table(team, table, reason, self.game.clock()), attach
        )
