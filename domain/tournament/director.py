"""The director's tools (docs/tournaments.md, "The director's room"): paper results, the
round clock (a round's own time control, one table's extension, pause and resume, the
time control of the rounds to come), requested byes, substitutes, renamed teams, a
cancelled round, a published pairing, fixed tables, and the warnings a hand-made pairing
earns (forbidden pairings and rematches).

Every command checks, then emits one event of :mod:`domain.tournament.events` with who
and why; the events' ``apply`` only assigns.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.game.match import SEAT_KINDS
from domain.game.timers import Timers
from domain.names import look_alike
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.tournament import events as ev
from domain.tournament.controls import DEADLINE_RULES, MAX_DEADLINE_S
from domain.tournament.pairing import Pairing
from domain.tournament.standings import DRAW, LOSS, TableResult
from domain.tournament.teams import check_team

MAX_EXTENSION_S = 86_400
REQUESTED_BYE_POINTS = (LOSS, DRAW)
"""A requested bye scores nothing, or half a win (a draw's match point), as configured."""


def _why(reason: str, by: str = "organiser") -> tuple[str, str]:
    if not 1 <= len(by.strip()) <= 100 or not 1 <= len(reason.strip()) <= 500:
        raise InvalidInputError("by (1..100 characters) and reason (1..500) are required")
    return reason.strip(), by.strip()


def check_deadline_s(value: int | None, where: str = "roundDeadlineS") -> int | None:
    if value is not None and (type(value) is not int or not 1 <= value <= MAX_DEADLINE_S):
        raise InvalidInputError(f"{where}: 1..{MAX_DEADLINE_S} seconds")
    return value


def check_timers(timers: Mapping[str, int] | None) -> dict[str, int] | None:
    return None if timers is None else Timers.from_mapping(dict(timers)).to_mapping()


def check_result(table: ev.TableEntry, result: TableResult) -> None:
    """A result fits its table: its two teams, a winner among them (or a draw), figures."""
    if (result.first, result.second) != (table.first, table.second):
        raise InvalidInputError(f"the result is for teams {table.first} and {table.second}")
    if result.winner not in (None, table.first, table.second):
        raise InvalidInputError("winner: one of the table's teams, or none for a draw")
    for name, pair in (("levels", result.levels), ("points", result.points)):
        if len(pair) != 2 or any(type(v) is not int or not 0 <= v <= 100_000 for v in pair):
            raise InvalidInputError(f"{name}: two integers >= 0 (first team, second team)")


def entered_winner(table: ev.TableEntry, winner: int | None, levels: tuple[int, int]) -> int | None:
    """The winner of an entered result: the one given, else the team that gained more
    levels (R30); a draw when both gained as many."""
    if winner is not None or levels[0] == levels[1]:
        return winner
    return table.first if levels[0] > levels[1] else table.second


class DirectorTools:
    """The director's commands and queries, mixed into the ``Tournament`` aggregate."""

    if TYPE_CHECKING:
        format: str
        teams: tuple[ev.TeamEntry, ...]
        total_rounds: int
        rounds: list[ev.RoundState]
        results: dict[tuple[int, int], ev.ResultEntry]
        timers: dict[str, int] | None
        round_deadline_s: int | None
        deadline_rule: str
        requested_bye_points: int
        requested_byes: dict[tuple[int, int], int]
        substitutes: dict[tuple[int, int, int], tuple[str, str, str]]
        forbidden: dict[frozenset[int], str]
        fixed_tables: dict[int, int]
        withdrawn: dict[int, int]

        @property
        def current(self) -> ev.RoundState | None: ...
        @property
        def in_play(self) -> bool: ...
        def _emit(self, event_class: type[Any], now: datetime, **kwargs: Any) -> None: ...
        def table(self, number: int, table: int) -> ev.TableEntry: ...
        def complete_if_done(self, number: int, now: datetime) -> None: ...
        def check_running(self) -> None: ...
        def check_team_number(self, team: int) -> None: ...
        def check_override(
            self, active: Sequence[int], tables: Sequence[tuple[int, int]], bye: int | None
        ) -> None: ...
        def active(self, number: int) -> list[int]: ...
        def preview(self) -> tuple[int, Pairing, list[int]]: ...
        def met(self) -> set[frozenset[int]]: ...

    # -- paper results ---------------------------------------------------------------------

    def enter_result(
        self, number: int, table: int, result: TableResult, *, by: str, reason: str, now: datetime
    ) -> None:
        """The organiser enters a table's result of the round in play directly (a paper
        result): recorded as entered, never as played; the last result completes the round."""
        entry = self._current_table(number, table)
        if (number, table) in self.results:
            raise IllegalMoveError(
                f"round {number} table {table + 1} has its result already; correct it instead",
                rule="R36",
                code="result-recorded",
            )
        reason, by = _why(reason, by)
        check_result(entry, result)
        self._emit(
            ev.TableResultEntered,
            now,
            number=number,
            table=table,
            winner=result.winner,
            levels=result.levels,
            points=result.points,
            by=by,
            reason=reason,
        )
        self.complete_if_done(number, now)

    def _current_table(self, number: int, table: int) -> ev.TableEntry:
        entry = self.table(number, table)
        current = self.current
        if current is None or number != current.number or current.revealed:
            raise IllegalMoveError(
                f"round {number} is not in play: only the current round's tables",
                rule="R36",
                code="round-not-current",
            )
        return entry

    # -- the round clock -------------------------------------------------------------------

    def change_time_control(
        self,
        *,
        timers: Mapping[str, int] | None,
        round_deadline_s: int | None,
        deadline_rule: str,
        requested_bye_points: int,
        now: datetime,
    ) -> None:
        """The time control of the rounds not scheduled yet (and a requested bye's score)."""
        if deadline_rule not in DEADLINE_RULES:
            raise InvalidInputError(f"deadlineRule: one of {', '.join(DEADLINE_RULES)}")
        if requested_bye_points not in REQUESTED_BYE_POINTS:
            raise InvalidInputError("requestedByePoints: 0 (nothing) or 1 (half a win)")
        self._emit(
            ev.TimeControlChanged,
            now,
            timers=check_timers(timers),
            round_deadline_s=check_deadline_s(round_deadline_s),
            deadline_rule=deadline_rule,
            requested_bye_points=requested_bye_points,
        )

    def set_round_time(
        self,
        number: int,
        deadline_s: int | None,
        timers: Mapping[str, int] | None,
        now: datetime,
    ) -> None:
        """Round ``number``'s own deadline and turn timers (at its scheduling, or while in
        play: a new deadline from its scheduling; new timers apply to tables seated later)."""
        current = self.current
        if current is None or current.number != number or current.revealed:
            raise IllegalMoveError(
                f"round {number} is not in play", rule="R36", code="round-not-current"
            )
        self._emit(
            ev.RoundTimeSet,
            now,
            number=number,
            deadline_s=check_deadline_s(deadline_s, "deadlineS"),
            timers=check_timers(timers),
        )

    def extend_table(
        self, number: int, table: int, seconds: int, *, by: str, reason: str, now: datetime
    ) -> None:
        """One table of the round in play gets ``seconds`` past the round's deadline."""
        self._current_table(number, table)
        if type(seconds) is not int or not 1 <= seconds <= MAX_EXTENSION_S:
            raise InvalidInputError(f"seconds: 1..{MAX_EXTENSION_S}")
        reason, by = _why(reason, by)
        self._emit(
            ev.TableExtended, now, number=number, table=table, seconds=seconds, by=by, reason=reason
        )

    def pause(self, reason: str, now: datetime) -> int:
        """Stop the round in play's clock (its deadline waits). The round's number."""
        current = self._round_in_play()
        if current.paused_at is not None:
            raise IllegalMoveError(
                f"round {current.number} is paused already", rule="R36", code="round-paused"
            )
        reason, _ = _why(reason)
        self._emit(ev.RoundPaused, now, number=current.number, reason=reason)
        return current.number

    def resume(self, now: datetime) -> int:
        """Start the round's clock again: its deadline moves by the pause's length."""
        current = self._round_in_play()
        if current.paused_at is None:
            raise IllegalMoveError(
                f"round {current.number} is not paused", rule="R36", code="round-not-paused"
            )
        paused_s = max(0.0, (now - current.paused_at).total_seconds())
        self._emit(ev.RoundResumed, now, number=current.number, paused_s=paused_s)
        return current.number

    def _round_in_play(self) -> ev.RoundState:
        current = self.current
        if current is None or current.revealed:
            raise IllegalMoveError("no round is in play", rule="R36", code="round-not-current")
        return current

    def round_timers(self, state: ev.RoundState) -> dict[str, int] | None:
        """The turn timers of round ``state``'s tables: the tournament's when it was
        scheduled, or its own (never a later change's, D-hidden)."""
        return state.timers

    # -- entries ---------------------------------------------------------------------------

    def _next_round(self, number: int) -> None:
        self.check_running()
        following = len(self.rounds) + 1
        if type(number) is not int or not following <= number <= self.total_rounds:
            raise IllegalMoveError(
                f"round {number!r} is scheduled or beyond the last: rounds "
                f"{following}..{self.total_rounds} can be set",
                rule="R36",
                code="round-started",
            )

    def request_bye(self, team: int, number: int, reason: str, now: datetime) -> int:
        """``team`` sits out round ``number`` (not scheduled yet) and scores the configured
        requested bye (0 or 1 match point). The score."""
        self.check_team_number(team)
        self._next_round(number)
        if team not in self.active(number):
            raise IllegalMoveError(
                f"team {team} is not to be paired in round {number}",
                rule="R36",
                code="team-not-active",
            )
        reason, _ = _why(reason)
        points = self.requested_bye_points
        self._emit(
            ev.ByeRequested, now, number=number, team=team, match_points=points, reason=reason
        )
        return points

    def requested(self, rounds: Container[int] | None = None) -> list[tuple[int, int]]:
        """(team, match points) of the requested byes of the rounds scheduled (of those in
        ``rounds`` only, when given)."""
        scheduled = {r.number for r in self.rounds}
        return [
            (team, p)
            for (n, team), p in self.requested_byes.items()
            if n in scheduled and (rounds is None or n in rounds)
        ]

    def substitute(
        self,
        number: int,
        team: int,
        player: int,
        name: str,
        kind: str,
        reason: str,
        now: datetime,
    ) -> None:
        """For round ``number`` (not scheduled yet), ``team``'s player ``player`` (0 or 1)
        is replaced by ``name`` (a person, or a bot of ``kind``); recorded with why."""
        self.check_team_number(team)
        self._next_round(number)
        if player not in (0, 1):
            raise InvalidInputError("player: 0 or 1 (the team's first or second player)")
        if not 1 <= len(name.strip()) <= 100 or kind not in SEAT_KINDS:
            raise InvalidInputError(
                f"name: 1 to 100 characters; kind: one of {', '.join(SEAT_KINDS)}"
            )
        reason, _ = _why(reason)
        self._emit(
            ev.PlayerSubstituted,
            now,
            number=number,
            team=team,
            player=player,
            name=name.strip(),
            kind=kind,
            reason=reason,
        )

    def lineup(self, number: int, team: int) -> ev.TeamEntry:
        """``team`` as it sits down in round ``number``: its substitutes in place."""
        entry = self.teams[team]
        players, kinds = list(entry.players), list(entry.kinds)
        for j in (0, 1):
            sub = self.substitutes.get((number, team, j))
            if sub is not None:
                players[j], kinds[j] = sub[0], sub[1]
        return ev.TeamEntry(entry.name, (players[0], players[1]), (kinds[0], kinds[1]))

    def rename(self, team: int, name: str, reason: str, now: datetime) -> None:
        self.check_team_number(team)
        old = self.teams[team]
        check_team(ev.TeamEntry(name, old.players, old.kinds))
        if any(look_alike(t.name, name) and i != team for i, t in enumerate(self.teams)):
            raise IllegalMoveError(
                f"a team is already called {name!r}, or a name that looks like it",
                rule="R36",
                code="team-name-taken",
            )
        reason, _ = _why(reason)
        self._emit(ev.TeamRenamed, now, team=team, name=name, reason=reason)

    def cancel_round(self, *, reason: str, by: str, now: datetime) -> ev.RoundState:
        """Cancel the round in play: its results are dropped (the caller ends its tables'
        matches); the round is paired again by the next scheduling. The cancelled round."""
        current = self._round_in_play()
        reason, by = _why(reason, by)
        self._emit(ev.RoundCancelled, now, number=current.number, reason=reason, by=by)
        return current

    def fix_table(self, team: int, table: int | None, reason: str, now: datetime) -> None:
        """``team`` keeps table ``table`` (1-based) from the next round on (None: no more)."""
        self.check_team_number(team)
        if table is not None:
            if type(table) is not int or not 1 <= table <= len(self.teams) // 2:
                raise InvalidInputError(f"table: 1..{max(1, len(self.teams) // 2)}")
            taken = [t for t, n in self.fixed_tables.items() if n == table and t != team]
            if taken:
                raise IllegalMoveError(
                    f"table {table} is team {taken[0]}'s already",
                    rule="R36",
                    code="table-taken",
                )
        reason, _ = _why(reason)
        self._emit(ev.TableFixed, now, team=team, table=table, reason=reason)

    # -- publication and warnings ----------------------------------------------------------

    def publish(self, now: datetime) -> int:
        """Publish the next round's pairing as scheduling would make it now; it is the one
        the round is scheduled with (unless the teams to pair change first). A Swiss
        pairing follows the standings, so it waits for the round in play to complete:
        published before, it would tell the results that stay hidden until then (R36)."""
        current = self.current
        if self.format == "swiss" and current is not None and self.in_play:
            raise IllegalMoveError(
                f"round {current.number} is in play: a Swiss pairing follows its results, "
                "hidden until it completes",
                rule="R36",
                code="round-in-play",
            )
        number, pairing, _ = self.preview()
        self._emit(ev.PairingPublished, now, number=number, tables=pairing.tables, bye=pairing.bye)
        return number

    def pairing_warnings(self, tables: Sequence[tuple[int, int]]) -> list[str]:
        """What a pairing does that the computed one avoids: forbidden pairings, rematches."""
        met = self.met()
        found = []
        for a, b in tables:
            pair = frozenset((a, b))
            if pair in self.forbidden:
                found.append(f"teams {a} and {b} are forbidden to meet ({self.forbidden[pair]})")
            if pair in met:
                found.append(f"teams {a} and {b} have met already (a rematch)")
        return found
