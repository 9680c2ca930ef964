"""The ``Tournament`` aggregate: teams, format, the rounds with their tables and seeds'
commitments (R35, R36), the tables' results and the organiser's corrections.

Commands validate and trigger events; the events' ``apply`` only assigns
(:mod:`domain.tournament.events`). The secret of a tournament round is drawn by the
service and passed in (docs/decisions.md F5); the matches of the tables are created by
the service from ``RoundScheduled`` (their ids are :func:`table_match_id`).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.game.base import GameAggregate
from domain.names import checked_name
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import MatchEnd, MatchEndKind, RuleSet
from domain.tournament import events as ev
from domain.tournament.controls import OrganiserControls, settings_event
from domain.tournament.director import DirectorTools, check_result
from domain.tournament.duplicate import check_secret, first_team_parity, secret_commitment
from domain.tournament.pairing import MAX_TEAMS, Pairing, round_robin, round_robin_rounds, swiss
from domain.tournament.standings import Standing, TableResult, standings
from domain.tournament.teams import check_teams

FORMATS = ("round_robin", "swiss")
SEEDS = "seeds"
BOARDS = "boards"
DEALS = (SEEDS, BOARDS)
"""How a round's tables share their deals (``TournamentCreated.deals``): the seeds only,
or boards — seeds, dealer, level and trump (R36, docs/decisions.md D-boards)."""
MAX_DEALS = 100


def table_match_id(tournament_id: UUID, number: int, table: int, attempt: int = 0) -> UUID:
    """The match of table ``table`` (0-based) of tournament round ``number`` (paired again
    ``attempt`` times after cancellations)."""
    name = f"shengji:tournament:{tournament_id}:round:{number}:table:{table}"
    return uuid5(NAMESPACE_URL, name if attempt == 0 else f"{name}:attempt:{attempt}")


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


class Tournament(DirectorTools, OrganiserControls, GameAggregate):
    """A tournament of two-player teams (R2) under one rule set (§10)."""

    if TYPE_CHECKING:
        name: str
        preset: str | None
        rules: RuleSet
        match_length: str
        deals: str
        """``seeds`` or ``boards`` (:data:`DEALS`)."""
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
        timers: Mapping[str, int] | None = None,
        round_deadline_s: int | None = None,
        deadline_rule: str = "flag",
        tiebreaks: Sequence[str] | None = None,
        registration: bool = False,
        checkin_required: bool = False,
        deals: str = SEEDS,
        seeding: str = "registration",
        accounts: Sequence[tuple[UUID | None, UUID | None]] = (),
    ) -> Tournament:
        """``deals``: ``boards`` makes a duplicate event of boards (R36, docs/decisions.md
        D-boards): its matches are a number of deals, each a board. ``seeding``: how round
        1 is seeded (``rating``: Swiss only); ``accounts``: the teams' players' accounts,
        team by team, when named (docs/decisions.md D-career)."""
        name = checked_name(name, "name", max_length=200)
        if fmt not in FORMATS:
            raise InvalidInputError(f"format: one of {', '.join(FORMATS)}, got {fmt!r}")
        if deals not in DEALS:
            raise InvalidInputError(f"deals: one of {', '.join(DEALS)}, got {deals!r}")
        if deals == BOARDS and type(match_length) is not int:
            raise InvalidInputError(
                "deals: boards are played as a number of deals (matchLength N), not "
                f"{match_length!r}: a board's level is the board's, never a team's (R36)",
                rule="R36",
            )
        settings = settings_event(
            fmt,
            timers,
            round_deadline_s,
            deadline_rule,
            tiebreaks,
            registration,
            checkin_required,
            seeding,
        )
        if len(accounts) > len(teams):
            raise InvalidInputError("players' accounts are named for the teams given only")
        check_teams(teams, at_least=0 if registration else 2)
        most = round_robin_rounds(len(teams)) if not registration else MAX_TEAMS - 1
        if fmt == "swiss":
            if type(swiss_rounds) is not int or not 1 <= swiss_rounds <= most:
                raise InvalidInputError(
                    f"swissRounds: 1..{most} rounds for {len(teams)} teams, got {swiss_rounds!r}"
                )
            total = swiss_rounds
        else:
            if swiss_rounds is not None:
                raise InvalidInputError("swissRounds: only for the swiss format")
            total = 0 if registration else most
        end = match_length_end(match_length)
        fixed = RuleSet.from_mapping({**rules.to_mapping(), "match_end": str(end)})
        tournament = cls._create(
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
            deals=deals,
            timestamp=now,
        )
        tournament._emit(ev.TournamentConfigured, now, **settings)
        for team, linked in enumerate(accounts):
            tournament.link_players(team, linked, now)
        return tournament

    # -- queries ---------------------------------------------------------------------------

    @property
    def boards(self) -> bool:
        """A duplicate event of boards (R36, docs/decisions.md D-boards)."""
        return self.deals == BOARDS

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
        return (
            self.phase == "running" and len(self.rounds) == self.total_rounds and not self.in_play
        )

    @property
    def status(self) -> str:
        """``registration``, ``ready`` (the next round may be scheduled), ``in_play`` or
        ``finished``."""
        if self.phase == "registration":
            return "registration"
        if self.finished:
            return "finished"
        return "in_play" if self.in_play else "ready"

    def active(self, number: int) -> list[int]:
        """The teams paired in round ``number``: entrants and late entries from their
        round, less the withdrawn (docs/tournaments.md)."""
        return [
            team
            for team in range(len(self.teams))
            if (team in self.entrants or self.joined.get(team, 0) > 1)
            and self.joined.get(team, 1) <= number
            and self.withdrawn.get(team, number + 1) > number
            and (number, team) not in self.requested_byes
        ]

    def round_state(self, number: int) -> ev.RoundState:
        if type(number) is not int or not 1 <= number <= len(self.rounds):
            raise IllegalMoveError(
                f"round {number!r} has not been scheduled ({len(self.rounds)} so far)",
                rule="R36",
                code="round-not-scheduled",
            )
        return self.rounds[number - 1]

    def table_results(
        self, rounds: Container[int] | None = None
    ) -> list[tuple[int, ev.TableEntry, TableResult]]:
        """(round number, table, result) of every table with a result, in order; of the
        rounds in ``rounds`` only, when given."""
        found = []
        for r in self.rounds:
            if rounds is not None and r.number not in rounds:
                continue
            for table in r.tables:
                entry = self.results.get((r.number, table.table))
                if entry is not None and not entry.forfeit:
                    found.append((r.number, table, _as_result(table, entry)))
        return found

    def forfeit_wins(self, rounds: Container[int] | None = None) -> list[int]:
        """The winners of tables forfeited by a withdrawn team (each scores as a bye); of
        the rounds in ``rounds`` only, when given."""
        return [
            entry.winner
            for (number, _), entry in self.results.items()
            if entry.forfeit and entry.winner is not None and (rounds is None or number in rounds)
        ]

    def byes(self, rounds: Container[int] | None = None) -> list[int]:
        """The teams given a bye: the pairing's and those awarded when a round robin's
        opponent withdrew (scheduled rounds; those in ``rounds`` when given), once per bye."""
        paired = [
            r.bye
            for r in self.rounds
            if r.bye is not None and (rounds is None or r.number in rounds)
        ]
        awarded = [team for n, team, _ in self.awarded_byes if rounds is None or n in rounds]
        return [*paired, *awarded]

    def adjustment_totals(self) -> dict[int, int]:
        totals: dict[int, int] = {}
        for a in self.adjustments:
            totals[a.team] = totals.get(a.team, 0) + a.match_points
        return totals

    def standings(self, rounds: Container[int] | None = None) -> list[Standing]:
        """The teams' standings, best first (R36). A team absent at the start (it did not
        check in) never entered: it is left out, rather than ranked — below a team that
        played and was penalised, say — unless the organiser adjusted its score.
        ``rounds``: count the results and byes of these rounds only (the adjustments
        always) — the standings a reader is shown while a round is played (R36)."""
        lines = standings(
            len(self.teams),
            (res for _, _, res in self.table_results(rounds)),
            self.byes(rounds),
            adjustments=self.adjustment_totals(),
            tiebreaks=self.tiebreaks,
            forfeits=self.forfeit_wins(rounds),
            requested=self.requested(rounds),
        )
        entered = [s for s in lines if s.team not in self.absent or s.adjustment]
        for rank, s in enumerate(entered, start=1):
            s.rank = rank
        return entered

    # -- commands --------------------------------------------------------------------------

    def schedule_round(self, secret: bytes, now: datetime) -> int:
        """Pair the next round (R36: its seeds' commitment is published now)."""
        check_secret(secret)
        self.check_running()
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
        pairing, awarded = self._pairing(number)
        attempt = sum(1 for n, _, _ in self.cancelled if n == number)
        tables = tuple(
            ev.TableEntry(
                i, a, b, first_team_parity(i), table_match_id(self.id, number, i, attempt)
            )
            for i, (a, b) in enumerate(self._seated(pairing))
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
        for team in awarded:
            self._emit(ev.ByeAwarded, now, number=number, team=team, reason="opponent withdrew")
        if not tables:  # every opponent withdrew: nothing to play
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
        check_result(entry, result)
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
        self.complete_if_done(number, now)

    def complete_if_done(self, number: int, now: datetime) -> None:
        """The round's last result completes it and reveals its secret (R35)."""
        state = self.round_state(number)
        if not state.revealed and all((number, t.table) in self.results for t in state.tables):
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
        check_result(entry, result)
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

    def met(self) -> set[frozenset[int]]:
        """The pairs of teams that have played each other (a result recorded)."""
        return {frozenset((res.first, res.second)) for _, _, res in self.table_results()}

    def seat_counts(self) -> dict[int, int]:
        """How many times each team sat in seats 0/2 in the rounds scheduled."""
        counts: dict[int, int] = {}
        for r in self.rounds:
            for t in r.tables:
                team = t.first if t.first_parity == 0 else t.second
                counts[team] = counts.get(team, 0) + 1
        return counts

    def _seated(self, pairing: Pairing) -> list[tuple[int, int]]:
        """The pairing's tables in their numbered order — a team's fixed table first
        (:meth:`fix_table`) — each turned so that the team with fewer rounds in seats 0/2
        sits there (fair seating across rounds; the table's parity decides which of
        ``first``/``second`` that is, :func:`first_team_parity`). An override is kept as
        the organiser set it, but for fixed tables."""
        tables: list[tuple[int, int] | None] = [None] * len(pairing.tables)
        rest = []
        for pair in pairing.tables:
            homes = [self.fixed_tables[t] - 1 for t in pair if t in self.fixed_tables]
            home = next((h for h in homes if h < len(tables) and tables[h] is None), None)
            if home is None:
                rest.append(pair)
            else:
                tables[home] = pair
        free = iter(rest)
        ordered = [pair if pair is not None else next(free) for pair in tables]
        if len(self.rounds) + 1 in self.overrides:
            return ordered
        counts = self.seat_counts()
        seated = []
        for i, (a, b) in enumerate(ordered):
            # the first team sits at 0/2 on even tables, the second on odd ones (R36)
            at_02, at_13 = (a, b) if first_team_parity(i) == 0 else (b, a)
            swap = counts.get(at_13, 0) < counts.get(at_02, 0)  # fewer rounds at 0/2 goes there
            seated.append((b, a) if swap else (a, b))
        return seated

    def _pairing(
        self, number: int, seeding: Sequence[int] | None = None
    ) -> tuple[Pairing, list[int]]:
        """Round ``number``'s pairing (the organiser's override, if any) and the teams
        awarded a bye because their round-robin opponent withdrew. ``seeding``: round 1's
        order when not fixed yet (a preview of a tournament seeded by rating)."""
        override = self.overrides.get(number)
        active = self.active(number)
        if len(active) < 2:
            raise IllegalMoveError(
                f"round {number} would have {len(active)} team(s): two or more are needed",
                rule="R36",
                code="too-few-teams",
            )
        published = self.published.get(number)
        if published is not None and override is None:
            self.check_override(active, published.tables, published.bye)
            return Pairing(published.tables, published.bye), []
        if override is not None:
            self.check_override(active, override.tables, override.bye)
            return Pairing(override.tables, override.bye), []
        if self.format == "round_robin":
            circle = round_robin(len(self.entrants), number)
            tables: list[tuple[int, int]] = []
            awarded: list[int] = []
            for a, b in ((self.entrants[a], self.entrants[b]) for a, b in circle.tables):
                if a in active and b in active:
                    tables.append((a, b))
                else:
                    awarded.extend(team for team in (a, b) if team in active)
            bye = None if circle.bye is None else self.entrants[circle.bye]
            return Pairing(tuple(tables), bye if bye in active else None), awarded
        met = self.met()
        ranking = [s.team for s in self.standings() if s.team in active]
        order = self.seeded[0] if self.seeded is not None else seeding
        if number == 1 and self.seeding == "rating" and order is not None:
            ranking = [t for t in order if t in active]  # by rating (docs/decisions.md D-career)
        forbidden = set(self.forbidden)
        return swiss(ranking, met, self.byes(), first_round=number == 1, forbidden=forbidden), []

    def preview(self, seeding: Sequence[int] | None = None) -> tuple[int, Pairing, list[int]]:
        """The next round's pairing as it would be scheduled now (no event): its number,
        the pairing and the teams a round robin would award a bye; ``seeding``: round 1's
        order by rating as it stands now, when it is not fixed yet."""
        self.check_running()
        if len(self.rounds) >= self.total_rounds:
            raise IllegalMoveError(
                f"all {self.total_rounds} rounds have been scheduled",
                rule="R36",
                code="tournament-over",
            )
        number = len(self.rounds) + 1
        pairing, awarded = self._pairing(number, seeding)
        return number, Pairing(tuple(self._seated(pairing)), pairing.bye), awarded

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
