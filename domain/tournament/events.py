"""The events of a :class:`~domain.tournament.tournament.Tournament`, each with its ``apply``.

``apply`` only assigns state. Fields some viewers may not see are listed in
``SECRET_FIELDS`` (as the round events do): the organiser token's hash, and a tournament
round's secret until ``RoundCompleted`` reveals it (R35, R36).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
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
    """The team's name (the name policy, docs/decisions.md D-integrity)."""
    players: tuple[str, str]
    """Its two players' names; partners sit opposite (R2)."""
    kinds: tuple[str, str]
    """Each player's seat kind: ``human``, or a bot policy (``random``, ``heuristic``,
    ``strong``)."""


@dataclass(frozen=True, slots=True)
class TableEntry:
    """A table of a tournament round: the pairing, the first team's seat parity (0: seats
    0/2, 1: seats 1/3, see :mod:`domain.tournament.duplicate`) and its match."""

    table: int
    """The table's number (stored from 0; served from 1, as the API counts them)."""
    first: int
    """The first team of the pairing (its number: registration order, from 0)."""
    second: int
    """The second team of the pairing."""
    first_parity: int
    """The first team's seats: 0 for seats 0 and 2, 1 for seats 1 and 3 (R2)."""
    match_id: UUID
    """The table's match."""


@dataclass(frozen=True, slots=True)
class ResultEntry:
    """A table's result as recorded (or corrected), from the pairing's first team."""

    COUNT_FIELDS: ClassVar[tuple[str, ...]] = ("levels",)
    """``levels`` are levels gained (R30), not ranks."""
    winner: int | None
    levels: tuple[int, int]
    points: tuple[int, int]
    deals: int
    corrected_by: str | None = None
    reason: str | None = None
    forfeit: bool = False
    """The loser withdrew: the winner scores a bye (docs/tournaments.md)."""
    entered: bool = False
    """The organiser entered it (a paper result): the table did not play it here."""


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
    scheduled_at: datetime | None = None
    override: str | None = None
    """The organiser's reason, when the pairing was set by hand."""
    flagged: tuple[int, ...] = ()
    """Tables (0-based) flagged for the organiser when the round's deadline passed."""
    deadline_s: int | None = None
    """The round's deadline in seconds from its scheduling: the tournament's when it was
    scheduled (``RoundScheduled``), or its own (``RoundTimeSet``). A later change of the
    tournament's time control (``TimeControlChanged``) is for the rounds to come."""
    timers: dict[str, int] | None = None
    """Its tables' turn timers, kept the same way."""
    deadline_rule: str = "flag"
    """What its deadline does to unfinished tables (``flag`` or ``finish``): the
    tournament's rule when it was scheduled."""
    extensions: dict[int, int] = field(default_factory=dict)
    """Seconds added to the deadline of one table (0-based)."""
    paused_at: datetime | None = None
    paused_s: float = 0.0
    """Seconds the round's clock stood still (pauses resumed)."""


class TournamentEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, t: Tournament) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class TournamentCreated(Aggregate.Created):
    """An organiser created a tournament: rule set (with the match length as its
    ``match_end``, §10), teams, format and rounds, fixed for good. Version 2 says how its
    tables share their deals (``deals``); version 1 events are read as ``seeds``
    (:meth:`upcast_v1_v2`)."""

    class_version: ClassVar[int] = 2
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("organiser_token_hash",)
    name: str
    preset: str | None
    rules: dict[str, bool | int | str | None]
    match_length: str
    teams: tuple[TeamEntry, ...]
    format: str
    total_rounds: int
    organiser_token_hash: str
    deals: str = "seeds"
    """``seeds``: the tables of a round share the deals' seeds (R36), each table's dealer,
    level and trump its own; ``boards``: a duplicate event of boards — every deal's dealer,
    level and trump are fixed for every table too (docs/decisions.md D-boards)."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A tournament created before boards shares its seeds."""
        state["deals"] = "seeds"

    def apply(self, aggregate: Any) -> None:
        t: Tournament = aggregate
        t.deals = self.deals
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
        t.init_controls()


class RoundScheduled(TournamentEvent):
    """A tournament round's tables, bye and the commitment of its secret (R35, R36)."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("secret",)
    number: int
    commitment: str
    secret: str
    tables: tuple[TableEntry, ...]
    bye: int | None

    def apply_to(self, t: Tournament) -> None:
        override = t.overrides.pop(self.number, None)
        t.published.pop(self.number, None)
        t.rounds.append(
            RoundState(
                self.number,
                self.commitment,
                self.secret,
                self.tables,
                self.bye,
                scheduled_at=self.timestamp,
                override=None if override is None else override.reason,
                # the time control in force now is this round's for good (D-hidden)
                deadline_s=t.round_deadline_s,
                timers=None if t.timers is None else dict(t.timers),
                deadline_rule=t.deadline_rule,
            )
        )


class TableResultRecorded(TournamentEvent):
    """A table's match finished; its result entered the tournament (pulled by the service)."""

    COUNT_FIELDS: ClassVar[tuple[str, ...]] = ("levels",)
    """``levels`` are levels gained by each team (R30), not ranks."""

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

    COUNT_FIELDS: ClassVar[tuple[str, ...]] = ("levels",)
    """``levels`` are levels gained by each team (R30), not ranks."""

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


# -- organisers' controls, class_version 1 ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class AdjustmentEntry:
    """A score adjustment or penalty, in match points, with who and why."""

    team: int
    match_points: int
    reason: str
    by: str
    after_round: int
    """Rounds scheduled when it was made (context for the reader)."""


@dataclass(frozen=True, slots=True)
class PairingOverride:
    """The organiser's pairing for a round not scheduled yet, and why."""

    tables: tuple[tuple[int, int], ...]
    bye: int | None
    reason: str
    by: str


class TournamentConfigured(TournamentEvent):
    """The organiser's settings: the tables' turn timers (the match timers' shape, ms), the
    round deadline and its rule (``finish`` or ``flag``), the tiebreak order, whether
    registration is open and whether check-in is required. Created tournaments record it
    right after ``TournamentCreated``; one without it keeps the defaults of
    :meth:`Tournament.init_controls`. Version 2 says how round 1 is seeded (``seeding``:
    ``registration`` order, or by ``rating``); version 1 events are read as
    ``registration`` (:meth:`upcast_v1_v2`)."""

    class_version: ClassVar[int] = 2
    timers: dict[str, int] | None
    round_deadline_s: int | None
    deadline_rule: str
    tiebreaks: tuple[str, ...]
    registration: bool
    checkin_required: bool
    seeding: str = "registration"

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """Settings made before seeding by rating: the registration order seeds."""
        state["seeding"] = "registration"

    def apply_to(self, t: Tournament) -> None:
        t.seeding = self.seeding
        t.timers = None if self.timers is None else dict(self.timers)
        t.round_deadline_s = self.round_deadline_s
        t.deadline_rule = self.deadline_rule
        t.tiebreaks = tuple(self.tiebreaks)
        t.checkin_required = self.checkin_required
        if self.registration:
            t.phase = "registration"


class TeamRegistered(TournamentEvent):
    """A team entered: by the organiser or by itself (its team token, stored hashed),
    from round ``from_round`` (1 before the start; a later Swiss round for a late entry)."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("token_hash",)
    team: TeamEntry
    by: str
    from_round: int
    token_hash: str

    def apply_to(self, t: Tournament) -> None:
        number = len(t.teams)
        t.teams = (*t.teams, self.team)
        if self.from_round > 1:
            t.joined[number] = self.from_round
        if self.token_hash:
            t.team_tokens[number] = self.token_hash
        t.published.clear()


class TeamPlayersLinked(TournamentEvent):
    """The accounts of team ``team``'s two players (None: a player without one), named
    when it registered: their ratings are shown, and in a tournament seeded by rating they
    make the team's seed (docs/decisions.md D-career). A claim of who plays: it seats no
    account and rates nothing. The accounts are not public in the feed."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("accounts",)
    team: int
    accounts: tuple[UUID | None, UUID | None]

    def apply_to(self, t: Tournament) -> None:
        t.team_accounts = {**t.team_accounts, self.team: (self.accounts[0], self.accounts[1])}


class TeamsSeeded(TournamentEvent):
    """Round 1 of a tournament seeded by rating: the teams in seeding order, best first,
    and the team ratings that order comes from (each the mean of its players' shown
    ratings in the tournament's family, a player without one at the family's start);
    round 1 is paired from it (Swiss: the top half against the bottom half)."""

    order: tuple[int, ...]
    ratings: tuple[int, ...]

    def apply_to(self, t: Tournament) -> None:
        t.seeded = (tuple(self.order), tuple(self.ratings))


class TeamCheckedIn(TournamentEvent):
    """A registered team confirmed it is present, before the start."""

    team: int

    def apply_to(self, t: Tournament) -> None:
        t.checked_in.add(self.team)


class TournamentStarted(TournamentEvent):
    """Registration closed: the entrants (teams present, in seeding order) and the rounds.
    With check-in required, the teams that did not check in are out (``absent``)."""

    entrants: tuple[int, ...]
    absent: tuple[int, ...]
    total_rounds: int

    def apply_to(self, t: Tournament) -> None:
        t.phase = "running"
        t.entrants = tuple(self.entrants)
        t.total_rounds = self.total_rounds
        t.absent = set(self.absent)
        for team in self.absent:
            t.withdrawn[team] = 1


class TeamWithdrew(TournamentEvent):
    """A team left: it is paired no more from round ``from_round`` (who and why)."""

    team: int
    from_round: int
    reason: str
    by: str

    def apply_to(self, t: Tournament) -> None:
        t.withdrawn[self.team] = self.from_round
        t.published.clear()


class TableForfeited(TournamentEvent):
    """A table without a result whose team withdrew: the other team wins by forfeit and
    scores as a bye (docs/tournaments.md)."""

    number: int
    table: int
    winner: int
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.results[(self.number, self.table)] = ResultEntry(
            self.winner, (0, 0), (0, 0), 0, None, self.reason, forfeit=True
        )


class ByeAwarded(TournamentEvent):
    """A round-robin team whose scheduled opponent withdrew sits out with a bye."""

    number: int
    team: int
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.awarded_byes.append((self.number, self.team, self.reason))


class PairingForbidden(TournamentEvent):
    """Two teams must not be paired (two teams of one club), and why."""

    teams: tuple[int, int]
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.forbidden[frozenset(self.teams)] = self.reason


class PairingAllowed(TournamentEvent):
    """A forbidden pairing was lifted."""

    teams: tuple[int, int]

    def apply_to(self, t: Tournament) -> None:
        t.forbidden.pop(frozenset(self.teams), None)


class PairingsOverridden(TournamentEvent):
    """The organiser set the pairing of round ``number`` by hand before it was scheduled;
    scheduling it uses these tables (and bye) instead of the computed pairing."""

    number: int
    tables: tuple[tuple[int, int], ...]
    bye: int | None
    reason: str
    by: str

    def apply_to(self, t: Tournament) -> None:
        t.overrides[self.number] = PairingOverride(
            tuple((a, b) for a, b in self.tables), self.bye, self.reason, self.by
        )
        t.published.pop(self.number, None)


class ScoreAdjusted(TournamentEvent):
    """A score adjustment or penalty in match points (negative for a penalty), with why."""

    team: int
    match_points: int
    reason: str
    by: str
    after_round: int

    def apply_to(self, t: Tournament) -> None:
        t.adjustments.append(
            AdjustmentEntry(self.team, self.match_points, self.reason, self.by, self.after_round)
        )


class RoundDeadlinePassed(TournamentEvent):
    """Round ``number``'s deadline passed with ``tables`` (0-based) unfinished; by the
    tournament's ``rule`` they were finished (R32) or flagged for the organiser."""

    TABLE_FIELDS: ClassVar[tuple[str, ...]] = ("tables",)
    """Fields that are table numbers although their name does not say so (served 1-based)."""
    number: int
    tables: tuple[int, ...]
    rule: str

    def apply_to(self, t: Tournament) -> None:
        state = t.rounds[self.number - 1]
        state.flagged = tuple(sorted({*state.flagged, *self.tables}))


# -- the director's tools, class_version 1 (docs/tournaments.md, "The director's room") -------


class TableResultEntered(TournamentEvent):
    """The organiser entered a table's result directly (paper result: a table played
    offline, or a result handed in late): levels gained per team, the winner and why. The
    table's match is ended with the same result; nothing was played to reach it here."""

    COUNT_FIELDS: ClassVar[tuple[str, ...]] = ("levels",)
    """``levels`` are levels gained by each team (R30), not ranks."""

    number: int
    table: int
    winner: int | None
    levels: tuple[int, int]
    points: tuple[int, int]
    by: str
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.results[(self.number, self.table)] = ResultEntry(
            self.winner, self.levels, self.points, 0, self.by, self.reason, entered=True
        )


class TimeControlChanged(TournamentEvent):
    """The organiser changed the time control of the rounds not scheduled yet: the tables'
    turn timers, the round deadline and its rule, the score of a requested bye. A round
    scheduled before keeps the deadline and timers it was scheduled with
    (``RoundState.deadline_s``, docs/decisions.md D-hidden)."""

    timers: dict[str, int] | None
    round_deadline_s: int | None
    deadline_rule: str
    requested_bye_points: int

    def apply_to(self, t: Tournament) -> None:
        t.timers = None if self.timers is None else dict(self.timers)
        t.round_deadline_s = self.round_deadline_s
        t.deadline_rule = self.deadline_rule
        t.requested_bye_points = self.requested_bye_points


class RoundTimeSet(TournamentEvent):
    """Round ``number``'s own deadline (seconds from its scheduling) and its tables' turn
    timers, set when it was scheduled or changed while it is in play."""

    number: int
    deadline_s: int | None
    timers: dict[str, int] | None

    def apply_to(self, t: Tournament) -> None:
        state = t.rounds[self.number - 1]
        state.deadline_s = self.deadline_s
        state.timers = None if self.timers is None else dict(self.timers)


class TableExtended(TournamentEvent):
    """One table of the round in play was given ``seconds`` more than the round's deadline."""

    number: int
    table: int
    seconds: int
    by: str
    reason: str

    def apply_to(self, t: Tournament) -> None:
        state = t.rounds[self.number - 1]
        state.extensions[self.table] = state.extensions.get(self.table, 0) + self.seconds


class RoundPaused(TournamentEvent):
    """The round in play's clock stopped (its deadline moves on while it is paused)."""

    number: int
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.rounds[self.number - 1].paused_at = self.timestamp


class RoundResumed(TournamentEvent):
    """The round's clock runs again: the pause's length is added to its deadline."""

    number: int
    paused_s: float

    def apply_to(self, t: Tournament) -> None:
        state = t.rounds[self.number - 1]
        state.paused_at = None
        state.paused_s += self.paused_s


class ByeRequested(TournamentEvent):
    """A team asked to sit out round ``number``: it is not paired and scores
    ``match_points`` (0, or 1: half a win)."""

    number: int
    team: int
    match_points: int
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.requested_byes[(self.number, self.team)] = self.match_points
        t.published.pop(self.number, None)


class PlayerSubstituted(TournamentEvent):
    """For round ``number``, ``player`` (0 or 1) of ``team`` is replaced by ``name``
    (a person, or a bot ``kind``), and why."""

    number: int
    team: int
    player: int
    name: str
    kind: str
    reason: str

    def apply_to(self, t: Tournament) -> None:
        t.substitutes[(self.number, self.team, self.player)] = (self.name, self.kind, self.reason)


class TeamRenamed(TournamentEvent):
    """A team's new name (its number, players and results stay)."""

    team: int
    name: str
    reason: str

    def apply_to(self, t: Tournament) -> None:
        old = t.teams[self.team]
        renamed = TeamEntry(self.name, old.players, old.kinds)
        t.teams = (*t.teams[: self.team], renamed, *t.teams[self.team + 1 :])


class RoundCancelled(TournamentEvent):
    """The round in play was cancelled (its tables' matches ended, their results dropped):
    the next scheduling pairs round ``number`` again, on new tables."""

    number: int
    reason: str
    by: str

    def apply_to(self, t: Tournament) -> None:
        state = t.rounds.pop()
        for table in state.tables:
            t.results.pop((self.number, table.table), None)
        t.awarded_byes = [b for b in t.awarded_byes if b[0] != self.number]
        t.cancelled.append((self.number, self.reason, self.by))


class PairingPublished(TournamentEvent):
    """The organiser published round ``number``'s pairing before scheduling it: from now
    on anyone may see it, and scheduling the round uses it as published."""

    number: int
    tables: tuple[tuple[int, int], ...]
    bye: int | None

    def apply_to(self, t: Tournament) -> None:
        t.published[self.number] = PairingOverride(
            tuple((a, b) for a, b in self.tables), self.bye, "published", "organiser"
        )


class TableFixed(TournamentEvent):
    """A team keeps table ``table`` (1-based; its home table, accessibility), or none."""

    team: int
    table: int | None
    reason: str

    def apply_to(self, t: Tournament) -> None:
        if self.table is None:
            t.fixed_tables.pop(self.team, None)
        else:
            t.fixed_tables[self.team] = self.table


DIRECTOR_EVENTS: tuple[type[TournamentEvent], ...] = (
    TableResultEntered,
    TimeControlChanged,
    RoundTimeSet,
    TableExtended,
    RoundPaused,
    RoundResumed,
    ByeRequested,
    PlayerSubstituted,
    TeamRenamed,
    RoundCancelled,
    PairingPublished,
    TableFixed,
)
