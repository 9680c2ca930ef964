"""The organiser's controls of a :class:`~domain.tournament.tournament.Tournament`
(docs/tournaments.md): registration, check-in, the start, late entries,
withdrawals (forfeits), forbidden pairings, pairing overrides, score adjustments and the
round deadline. A mixin of the aggregate: commands validate and trigger events; the
events' ``apply`` (:mod:`domain.tournament.events`) only assigns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from uuid import UUID

from domain.game.timers import Timers
from domain.names import look_alike
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.tournament import events as ev
from domain.tournament.pairing import MAX_TEAMS, round_robin_rounds
from domain.tournament.standings import DEFAULT_TIEBREAKS, LEGACY_TIEBREAKS, check_tiebreaks
from domain.tournament.teams import check_team

DEADLINE_RULES = ("flag", "finish")
"""``flag``: unfinished tables are listed for the organiser; ``finish``: they are ended as
the organiser's finish does (R32: a deal in play is abandoned unscored, the team ahead on
levels wins, level is a draw)."""
MAX_DEADLINE_S = 7 * 86_400
SEEDINGS = ("registration", "rating")
"""How a tournament's round 1 is seeded: the registration order, or the teams' ratings
(Swiss only; docs/decisions.md D-career)."""
MAX_ADJUSTMENT = 100


def settings_event(
    fmt: str,
    timers: Mapping[str, int] | None,
    round_deadline_s: int | None,
    deadline_rule: str,
    tiebreaks: Sequence[str] | None,
    registration: bool,
    checkin_required: bool,
    seeding: str = "registration",
) -> dict[str, Any]:
    """The fields of ``TournamentConfigured``, checked."""
    checked = None if timers is None else Timers.from_mapping(dict(timers)).to_mapping()
    if round_deadline_s is not None and (
        type(round_deadline_s) is not int or not 1 <= round_deadline_s <= MAX_DEADLINE_S
    ):
        raise InvalidInputError(f"roundDeadlineS: 1..{MAX_DEADLINE_S} seconds")
    if deadline_rule not in DEADLINE_RULES:
        raise InvalidInputError(f"deadlineRule: one of {', '.join(DEADLINE_RULES)}")
    order = DEFAULT_TIEBREAKS[fmt] if tiebreaks is None else check_tiebreaks(tiebreaks)
    if checkin_required and not registration:
        raise InvalidInputError("checkinRequired: only with an open registration")
    if seeding not in SEEDINGS:
        raise InvalidInputError(f"seeding: one of {', '.join(SEEDINGS)}, got {seeding!r}")
    if seeding == "rating" and fmt != "swiss":
        raise InvalidInputError("seeding: by rating seeds a Swiss round 1 only (R36)")
    return {
        "timers": checked,
        "round_deadline_s": round_deadline_s,
        "deadline_rule": deadline_rule,
        "tiebreaks": order,
        "registration": registration,
        "checkin_required": checkin_required,
        "seeding": seeding,
    }


def _reason(reason: str, by: str) -> None:
    if not 1 <= len(by.strip()) <= 100 or not 1 <= len(reason.strip()) <= 500:
        raise InvalidInputError("by (1..100 characters) and reason (1..500) are required")


class OrganiserControls:
    """Registration, withdrawals, pairing control, adjustments and deadlines."""

    if TYPE_CHECKING:
        id: Any
        format: str
        teams: tuple[ev.TeamEntry, ...]
        total_rounds: int
        rounds: list[ev.RoundState]
        results: dict[tuple[int, int], ev.ResultEntry]
        phase: str
        entrants: tuple[int, ...]
        joined: dict[int, int]
        withdrawn: dict[int, int]
        checked_in: set[int]
        absent: set[int]
        checkin_required: bool
        team_tokens: dict[int, str]
        timers: dict[str, int] | None
        round_deadline_s: int | None
        deadline_rule: str
        tiebreaks: tuple[str, ...]
        forbidden: dict[frozenset[int], str]
        overrides: dict[int, ev.PairingOverride]
        adjustments: list[ev.AdjustmentEntry]
        awarded_byes: list[tuple[int, int, str]]
        requested_bye_points: int
        requested_byes: dict[tuple[int, int], int]
        substitutes: dict[tuple[int, int, int], tuple[str, str, str]]
        cancelled: list[tuple[int, str, str]]
        published: dict[int, ev.PairingOverride]
        fixed_tables: dict[int, int]
        seeding: str
        team_accounts: dict[int, tuple[UUID | None, UUID | None]]
        seeded: tuple[tuple[int, ...], tuple[int, ...]] | None

        @property
        def in_play(self) -> bool: ...
        @property
        def current(self) -> ev.RoundState | None: ...
        def _emit(self, event_class: type[Any], now: datetime, **kwargs: Any) -> None: ...
        def active(self, number: int) -> list[int]: ...
        def complete_if_done(self, number: int, now: datetime) -> None: ...

    def init_controls(self) -> None:
        """The defaults (``TournamentCreated.apply``): a tournament created before these
        controls runs at once with its teams, no timers, no deadline, the legacy tiebreaks."""
        self.phase = "running"
        self.entrants = tuple(range(len(self.teams)))
        self.joined = {}
        self.withdrawn = {}
        self.checked_in = set()
        self.absent = set()
        self.checkin_required = False
        self.team_tokens = {}
        self.timers = None
        self.round_deadline_s = None
        self.deadline_rule = "flag"
        self.tiebreaks = LEGACY_TIEBREAKS
        self.forbidden = {}
        self.overrides = {}
        self.adjustments = []
        self.awarded_byes = []
        self.requested_bye_points = 1
        self.requested_byes = {}
        self.substitutes = {}
        self.cancelled = []
        self.published = {}
        self.fixed_tables = {}
        self.seeding = "registration"
        self.team_accounts = {}
        self.seeded = None

    # -- checks ----------------------------------------------------------------------------

    def check_running(self) -> None:
        if self.phase != "running":
            raise IllegalMoveError(
                "registration is still open: start the tournament first",
                rule="R36",
                code="registration-open",
            )

    def check_team_number(self, team: int) -> None:
        if type(team) is not int or not 0 <= team < len(self.teams):
            raise IllegalMoveError(
                f"no team {team!r}: teams are 0..{len(self.teams) - 1}",
                rule="R36",
                code="no-such-team",
            )

    def check_override(
        self, active: Sequence[int], tables: Sequence[tuple[int, int]], bye: int | None
    ) -> None:
        """A pairing must seat every active team once (a bye only for an odd count)."""
        seated = [team for pair in tables for team in pair] + ([] if bye is None else [bye])
        if sorted(seated) != sorted(active) or (bye is None) != (len(active) % 2 == 0):
            raise IllegalMoveError(
                f"a pairing seats each of the teams {sorted(active)} once, with a bye only "
                "for an odd count",
                rule="R36",
                code="pairing-invalid",
            )

    # -- registration ----------------------------------------------------------------------

    def register_team(
        self,
        team: ev.TeamEntry,
        *,
        by: str,
        token_hash: str,
        now: datetime,
        accounts: tuple[UUID | None, UUID | None] = (None, None),
    ) -> int:
        """A team enters: during registration (by itself or the organiser), or — Swiss
        only, organiser only — as a late entry from the next round. Its number.
        ``accounts``: its players' accounts, when named (:class:`ev.TeamPlayersLinked`)."""
        check_team(team)
        if any(look_alike(t.name, team.name) for t in self.teams):
            raise IllegalMoveError(
                f"a team is already called {team.name!r}, or a name that looks like it",
                rule="R36",
                code="team-name-taken",
            )
        if len(self.teams) >= MAX_TEAMS:
            raise IllegalMoveError(
                f"a tournament has at most {MAX_TEAMS} teams", rule="R36", code="tournament-full"
            )
        from_round = 1
        if self.phase != "registration":
            if by != "organiser" or self.format != "swiss":
                raise IllegalMoveError(
                    "registration is closed; only the organiser enters a late team, and only "
                    "in a Swiss tournament",
                    rule="R36",
                    code="registration-closed",
                )
            from_round = len(self.rounds) + 1
            if from_round > self.total_rounds:
                raise IllegalMoveError(
                    "every round has been scheduled: too late to enter",
                    rule="R36",
                    code="registration-closed",
                )
        self._emit(
            ev.TeamRegistered, now, team=team, by=by, from_round=from_round, token_hash=token_hash
        )
        number = len(self.teams) - 1
        self.link_players(number, accounts, now)
        return number

    def link_players(
        self, team: int, accounts: tuple[UUID | None, UUID | None], now: datetime
    ) -> None:
        """Name the accounts of ``team``'s players (none named: nothing recorded)."""
        if accounts[0] is not None and accounts[0] == accounts[1]:
            raise InvalidInputError("players: two players of a team are two accounts (R2)")
        if any(a is not None for a in accounts):
            self._emit(ev.TeamPlayersLinked, now, team=team, accounts=accounts)

    def seed_by(self, order: Sequence[int], ratings: Sequence[int], now: datetime) -> None:
        """Fix round 1's seeding of a tournament seeded by rating: the teams in ``order``
        (best first) with their team ratings. Once: the first scheduling or publication
        of round 1 fixes it; nothing to do for another tournament, or later."""
        if self.seeding != "rating" or self.seeded is not None or self.rounds:
            return
        if sorted(order) != list(range(len(self.teams))) or len(ratings) != len(order):
            raise InvalidInputError("a seeding orders every team once, each with its rating")
        self._emit(ev.TeamsSeeded, now, order=tuple(order), ratings=tuple(ratings))

    def check_in(self, team: int, now: datetime) -> None:
        """A registered team confirms it is here (idempotent)."""
        self.check_team_number(team)
        if self.phase != "registration":
            raise IllegalMoveError(
                "check-in is before the start", rule="R36", code="registration-closed"
            )
        if team in self.withdrawn:
            raise IllegalMoveError(f"team {team} has withdrawn", rule="R36", code="team-withdrawn")
        if team not in self.checked_in:
            self._emit(ev.TeamCheckedIn, now, team=team)

    def start(self, now: datetime) -> None:
        """Close registration: the entrants are the teams present (checked in when check-in
        is required); a Swiss tournament's rounds must fit them, a round robin's follow."""
        if self.phase != "registration":
            raise IllegalMoveError(
                "the tournament has started", rule="R36", code="registration-closed"
            )
        present = [t for t in range(len(self.teams)) if t not in self.withdrawn]
        entrants = [t for t in present if t in self.checked_in or not self.checkin_required]
        absent = [t for t in present if t not in entrants]
        if len(entrants) < 2:
            raise IllegalMoveError(
                f"two teams or more are needed, {len(entrants)} present",
                rule="R36",
                code="too-few-teams",
            )
        most = round_robin_rounds(len(entrants))
        total = most if self.format == "round_robin" else self.total_rounds
        if total > most:
            raise IllegalMoveError(
                f"{total} Swiss rounds need more than {len(entrants)} teams (at most {most})",
                rule="R36",
                code="too-few-teams",
            )
        self._emit(
            ev.TournamentStarted,
            now,
            entrants=tuple(entrants),
            absent=tuple(absent),
            total_rounds=total,
        )

    def withdraw(self, team: int, *, reason: str, by: str, now: datetime) -> list[int]:
        """The team leaves: not paired from the next round; its table of the round in play
        without a result is forfeited (the opponent scores a bye). The forfeited tables."""
        self.check_team_number(team)
        _reason(reason, by)
        if team in self.withdrawn:
            raise IllegalMoveError(
                f"team {team} has withdrawn already", rule="R36", code="team-withdrawn"
            )
        if self.phase == "running" and not self.in_play and len(self.rounds) >= self.total_rounds:
            raise IllegalMoveError("the tournament is over", rule="R36", code="tournament-over")
        self._emit(
            ev.TeamWithdrew,
            now,
            team=team,
            from_round=len(self.rounds) + 1,
            reason=reason.strip(),
            by=by.strip(),
        )
        forfeited = []
        current = self.current
        if current is not None and not current.revealed:
            for table in current.tables:
                if (
                    team in (table.first, table.second)
                    and (
                        current.number,
                        table.table,
                    )
                    not in self.results
                ):
                    other = table.second if team == table.first else table.first
                    self._emit(
                        ev.TableForfeited,
                        now,
                        number=current.number,
                        table=table.table,
                        winner=other,
                        reason=f"team {team} withdrew: {reason.strip()}",
                    )
                    forfeited.append(table.table)
            if forfeited:
                self.complete_if_done(current.number, now)
        return forfeited

    # -- pairing control -------------------------------------------------------------------

    def forbid(self, a: int, b: int, *, reason: str, now: datetime) -> None:
        """Teams ``a`` and ``b`` are not to be paired (Swiss; two teams of one club)."""
        for team in (a, b):
            self.check_team_number(team)
        if a == b:
            raise InvalidInputError("teams: two different teams")
        if self.format != "swiss":
            raise IllegalMoveError(
                "a round robin pairs every team with every other: no forbidden pairings",
                rule="R36",
                code="swiss-only",
            )
        _reason(reason, "organiser")
        self._emit(ev.PairingForbidden, now, teams=(min(a, b), max(a, b)), reason=reason.strip())

    def allow(self, a: int, b: int, now: datetime) -> None:
        if frozenset((a, b)) not in self.forbidden:
            raise IllegalMoveError(
                f"teams {a} and {b} are not forbidden to meet", rule="R36", code="not-forbidden"
            )
        self._emit(ev.PairingAllowed, now, teams=(min(a, b), max(a, b)))

    def override_pairings(
        self,
        number: int,
        tables: Sequence[tuple[int, int]],
        bye: int | None,
        *,
        reason: str,
        by: str,
        now: datetime,
    ) -> None:
        """The organiser sets the next round's pairing by hand, before it is scheduled."""
        self.check_running()
        _reason(reason, by)
        if number != len(self.rounds) + 1 or number > self.total_rounds:
            raise IllegalMoveError(
                f"only the next round ({len(self.rounds) + 1}) can be set, before it starts",
                rule="R36",
                code="round-started",
            )
        self.check_override(self.active(number), tables, bye)
        self._emit(
            ev.PairingsOverridden,
            now,
            number=number,
            tables=tuple((a, b) for a, b in tables),
            bye=bye,
            reason=reason.strip(),
            by=by.strip(),
        )

    # -- scores and time -------------------------------------------------------------------

    def adjust(self, team: int, match_points: int, *, reason: str, by: str, now: datetime) -> None:
        """A score adjustment (a penalty when negative), in match points, with why."""
        self.check_team_number(team)
        _reason(reason, by)
        if type(match_points) is not int or not 0 < abs(match_points) <= MAX_ADJUSTMENT:
            raise InvalidInputError(f"matchPoints: -{MAX_ADJUSTMENT}..{MAX_ADJUSTMENT}, not 0")
        self._emit(
            ev.ScoreAdjusted,
            now,
            team=team,
            match_points=match_points,
            reason=reason.strip(),
            by=by.strip(),
            after_round=len(self.rounds),
        )

    def round_deadline_s_of(self, state: ev.RoundState) -> int | None:
        """The deadline of round ``state`` in seconds: the tournament's when it was
        scheduled, or its own (never a later change's, D-hidden)."""
        return state.deadline_s

    def deadline(self) -> datetime | None:
        """When the round in play must be over: its scheduling + its deadline + the time
        it stood paused; None without a deadline, once complete, or while paused."""
        current = self.current
        if current is None or current.revealed or current.scheduled_at is None:
            return None
        seconds = self.round_deadline_s_of(current)
        if seconds is None or current.paused_at is not None:
            return None
        return current.scheduled_at + timedelta(seconds=seconds + current.paused_s)

    def table_deadline(self, table: int) -> datetime | None:
        """The round in play's deadline for one table (0-based), with its extension."""
        due = self.deadline()
        current = self.current
        if due is None or current is None:
            return None
        return due + timedelta(seconds=current.extensions.get(table, 0))

    def overdue_tables(self, now: datetime) -> list[int]:
        """The round in play's tables without a result, not yet handled, past their
        deadline (a table's extension counted; none while the round is paused)."""
        current = self.current
        if current is None:
            return []
        found = []
        for t in current.tables:
            due = self.table_deadline(t.table)
            if (
                due is not None
                and now > due
                and (current.number, t.table) not in self.results
                and t.table not in current.flagged
            ):
                found.append(t.table)
        return found

    def mark_deadline(self, tables: Sequence[int], now: datetime) -> None:
        """Record that the deadline passed with ``tables`` unfinished, under the rule."""
        current = self.current
        if current is None or not tables:
            return
        self._emit(
            ev.RoundDeadlinePassed,
            now,
            number=current.number,
            tables=tuple(tables),
            rule=current.deadline_rule,
        )
