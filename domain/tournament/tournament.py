"""The ``Tournament`` aggregate: teams, format, the rounds with their tables and seeds'
commitments (R35, R36), the tables' results and the organiser's corrections.

Commands validate and trigger events; the events' ``apply`` only assigns
(:mod:`domain.tournament.events`). The secret of a tournament round is drawn by the
service and passed in (ARCHITECTURE decision 5); the matches of the tables are created by
the service from ``RoundScheduled`` (their ids are :func:`table_match_id`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.game.base import GameAggregate
from domain.game.match import SEAT_KINDS
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import MatchEnd, MatchEndKind, RuleSet
from domain.tournament import events as ev
from domain.tournament.duplicate import check_secret, first_team_parity, secret_commitment
from domain.tournament.pairing import MAX_TEAMS, Pairing, round_robin, round_robin_rounds, swiss
from domain.tournament.standings import Standing, TableResult, standings

FORMATS = ("round_robin", "swiss")
MAX_DEALS = 100


def table_match_id(tournament_id: UUID, number: int, table: int) -> UUID:
    """The match of table ``table`` (0-based) of tournament round ``number``."""
    return uuid5(NAMESPACE_URL, f"shengji:tournament:{tournament_id}:round:{number}:table:{table}")


def match_length_end(length: int | str) -> MatchEnd:
    """The match length as a §10 ``match_end``: a number of deals → ``rounds:N``, or
    ``finish_at_A`` (R32). ``wrap`` never ends by itself, so a tournament cannot use it."""
    if type(length) is int:
        if not 1 <= length <= MAX_DEALS:
            raise InvalidInputError(f"matchLength: 1..{MAX_DEALS} deals, got {length}", rule="R32")
        return MatchEnd(MatchEndKind.ROUNDS, length)
    if length == "finish_at_A":
        return MatchEnd(MatchEndKind.FINISH_AT_A)
    raise InvalidInputError(
        f"matchLength: a number of deals or 'finish_at_A', got {length!r}", rule="R32"
    )


class Tournament(GameAggregate):
    """A tournament of two-player teams (R2) under one rule set (§10)."""

    if TYPE_CHECKING:
        name: str
        preset: str | None
        rules: RuleSet
        match_length: str
        teams: tuple[ev.TeamEntry, ...]
        format: str
        total_rounds: int
        organiser_token_hash: str
        rounds: list[ev.RoundState]
        results: dict[tuple[int, int], ev.ResultEntry]

    @classmethod
    def create(
        cls,
        *,
        name: str,
        rules: RuleSet,
        teams: Sequence[ev.TeamEntry],
        fmt: str,
        match_length: int | str,
        now: datetime,
        preset: str | None = None,
        swiss_rounds: int | None = None,
        organiser_token_hash: str = "",
        tournament_id: UUID,
    ) -> Tournament:
        if not 1 <= len(name) <= 200:
            raise InvalidInputError("name: a tournament name is 1 to 200 characters")
        _check_teams(teams)
        if fmt not in FORMATS:
            raise InvalidInputError(f"format: one of {', '.join(FORMATS)}, got {fmt!r}")
        most = round_robin_rounds(len(teams))
        if fmt == "swiss":
            if type(swiss_rounds) is not int or not 1 <= swiss_rounds <= most:
                raise InvalidInputError(
                    f"swissRounds: 1..{most} rounds for {len(teams)} teams, got {swiss_rounds!r}"
                )
            total = swiss_rounds
        else:
            if swiss_rounds is not None:
                raise InvalidInputError("swissRounds: only for the swiss format")
            total = most
        end = match_length_end(match_length)
        fixed = RuleSet.from_mapping({**rules.to_mapping(), "match_end": str(end)})
        return cls._create(
            ev.TournamentCreated,
            id=tournament_id,
            name=name,
            preset=preset,
            rules=fixed.to_mapping(),
            match_length=str(end),
            teams=tuple(teams),
            format=fmt,
            total_rounds=total,
            organiser_token_hash=organiser_token_hash,
            timestamp=now,
        )

    # -- queries ---------------------------------------------------------------------------

    @property
    def current(self) -> ev.RoundState | None:
        return self.rounds[-1] if self.rounds else None

    @property
    def in_play(self) -> bool:
        """A scheduled round still has tables without a result."""
        current = self.current
        return current is not None and not current.revealed

    @property
    def finished(self) -> bool:
        return len(self.rounds) == self.total_rounds and not self.in_play

    def round_state(self, number: int) -> ev.RoundState:
        if type(number) is not int or not 1 <= number <= len(self.rounds):
            raise IllegalMoveError(
                f"round {number!r} has not been scheduled ({len(self.rounds)} so far)",
                rule="R36",
                code="round-not-scheduled",
            )
        return self.rounds[number - 1]

    def table_results(self) -> list[tuple[int, ev.TableEntry, TableResult]]:
        """(round number, table, result) of every table with a result, in order."""
        found = []
        for r in self.rounds:
            for table in r.tables:
                entry = self.results.get((r.number, table.table))
                if entry is not None:
                    found.append((r.number, table, _as_result(table, entry)))
        return found

    def byes(self) -> list[int]:
        """The teams given a bye, one per round that had one (scheduled rounds)."""
        return [r.bye for r in self.rounds if r.bye is not None]

    def standings(self) -> list[Standing]:
        return standings(len(self.teams), (res for _, _, res in self.table_results()), self.byes())

    # -- commands --------------------------------------------------------------------------

    def schedule_round(self, secret: bytes, now: datetime) -> int:
        """Pair the next round (R36: its seeds' commitment is published now)."""
        check_secret(secret)
        if self.in_play:
            current = self.current
            assert current is not None
            missing = [
                t.table + 1 for t in current.tables if (current.number, t.table) not in self.results
            ]
            raise IllegalMoveError(
                f"round {current.number} is still in play: tables {missing} have no result",
                rule="R36",
                code="round-in-play",
            )
        if len(self.rounds) >= self.total_rounds:
            raise IllegalMoveError(
                f"all {self.total_rounds} rounds have been played",
                rule="R36",
                code="tournament-over",
            )
        number = len(self.rounds) + 1
        pairing = self._pairing(number)
        tables = tuple(
            ev.TableEntry(i, a, b, first_team_parity(i), table_match_id(self.id, number, i))
            for i, (a, b) in enumerate(pairing.tables)
        )
        self._emit(
            ev.RoundScheduled,
            now,
            number=number,
            commitment=secret_commitment(secret),
            secret=secret.hex(),
            tables=tables,
            bye=pairing.bye,
        )
        if not tables:  # pragma: no cover - two teams or more always make a table
            self._complete(now)
        return number

    def record_result(self, number: int, table: int, result: TableResult, now: datetime) -> None:
        """A table's match finished: record its result; the last one completes the round
        and reveals its secret (R35)."""
        entry = self.table(number, table)
        if (number, table) in self.results:
            raise IllegalMoveError(
                f"round {number} table {table + 1} has its result already; correct it instead",
                rule="R36",
                code="result-recorded",
            )
        _check_result(entry, result)
        self._emit(
            ev.TableResultRecorded,
            now,
            number=number,
            table=table,
            winner=result.winner,
            levels=result.levels,
            points=result.points,
            deals=result.deals,
        )
        state = self.round_state(number)
        if all((number, t.table) in self.results for t in state.tables):
            self._complete(now)

    def correct_result(
        self, number: int, table: int, result: TableResult, *, by: str, reason: str, now: datetime
    ) -> None:
        """The organiser's explicit, recorded correction of a table's result."""
        entry = self.table(number, table)
        if (number, table) not in self.results:
            raise IllegalMoveError(
                f"round {number} table {table + 1} has no result yet to correct",
                rule="R36",
                code="result-not-recorded",
            )
        if not 1 <= len(by.strip()) <= 100 or not 1 <= len(reason.strip()) <= 500:
            raise InvalidInputError("by (1..100 characters) and reason (1..500) are required")
        _check_result(entry, result)
        self._emit(
            ev.ResultCorrected,
            now,
            number=number,
            table=table,
            winner=result.winner,
            levels=result.levels,
            points=result.points,
            by=by.strip(),
            reason=reason.strip(),
        )

    # -- internals -------------------------------------------------------------------------

    def _pairing(self, number: int) -> Pairing:
        if self.format == "round_robin":
            return round_robin(len(self.teams), number)
        met = {frozenset((res.first, res.second)) for _, _, res in self.table_results()}
        ranking = [s.team for s in self.standings()]
        return swiss(ranking, met, set(self.byes()), first_round=number == 1)

    def table(self, number: int, table: int) -> ev.TableEntry:
        """Table ``table`` (0-based) of round ``number``."""
        state = self.round_state(number)
        if type(table) is not int or not 0 <= table < len(state.tables):
            raise IllegalMoveError(
                f"round {number} has tables 1..{len(state.tables)}, not {table + 1!r}",
                rule="R36",
                code="no-such-table",
            )
        return state.tables[table]

    def _complete(self, now: datetime) -> None:
        current = self.current
        assert current is not None
        self._emit(ev.RoundCompleted, now, number=current.number, secret=current.secret)


def _as_result(table: ev.TableEntry, entry: ev.ResultEntry) -> TableResult:
    return TableResult(
        table.first, table.second, entry.winner, entry.levels, entry.points, entry.deals
    )


def _check_result(table: ev.TableEntry, result: TableResult) -> None:
    if (result.first, result.second) != (table.first, table.second):
        raise InvalidInputError(f"the result is for teams {table.first} and {table.second}")
    if result.winner not in (None, table.first, table.second):
        raise InvalidInputError("winner: one of the table's teams, or none for a draw")
    for name, pair in (("levels", result.levels), ("points", result.points)):
        if len(pair) != 2 or any(type(v) is not int or not 0 <= v <= 100_000 for v in pair):
            raise InvalidInputError(f"{name}: two integers >= 0 (first team, second team)")


def _check_teams(teams: Sequence[ev.TeamEntry]) -> None:
    if not 2 <= len(teams) <= MAX_TEAMS:
        raise InvalidInputError(f"teams: 2..{MAX_TEAMS} teams, got {len(teams)}")
    names = [t.name for t in teams]
    if len(set(names)) != len(names):
        raise InvalidInputError("teams: team names must differ")
    for i, team in enumerate(teams):
        if not 1 <= len(team.name) <= 100:
            raise InvalidInputError(f"teams[{i}].name: 1 to 100 characters")
        if len(team.players) != 2 or len(team.kinds) != 2:
            raise InvalidInputError(f"teams[{i}]: two players (R2: partners sit opposite)")
        for j, (player, kind) in enumerate(zip(team.players, team.kinds, strict=True)):
            if not 1 <= len(player) <= 100:
                raise InvalidInputError(f"teams[{i}].players[{j}].name: 1 to 100 characters")
            if kind not in SEAT_KINDS:
                raise InvalidInputError(
                    f"teams[{i}].players[{j}].kind: one of {', '.join(SEAT_KINDS)}, got {kind!r}"
                )
