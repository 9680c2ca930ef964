"""The player's career as an eventsourcing ``Projection`` of the game's notification log
(docs/decisions.md D-career).

Three events move the view; every other one moves its position alone:

* ``MatchFinished`` — :func:`facts_of` reads the finished match from the store (its
  events up to the finish, the events of the rounds it scored) and says what the career
  keeps of it: nothing for a record imported (not played here), a match that scored
  no round or one without an account at its table; else its family, its seats and each
  account seat's :class:`Tally`. A match outside tournaments enters the histories of its
  account seats at once; a tournament table is **held** until its tournament round
  completes (R36: how a table went tells another table of the round how the same cards
  go), unless the log completed that round already;
* ``RoundCompleted`` — the tables of that tournament round held so far enter the
  histories, at this position;
* ``AccountErased`` — the player's history, totals and partner rows go, and the other
  players' partner rows that named them; every match that named them names an erased
  player.

A match entering the histories adds to each account seat's totals (its family's and
``""``, every family's) and partner row. Everything read is the finished match as it
stands at the finish (rounds are scored or abandoned before a match finishes), so a replay
of the log gives the same rows, bit for bit.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.dispatch import singledispatchmethod
from eventsourcing.persistence import Tracking
from eventsourcing.projection import Projection

from domain.accounts.account import AccountErased
from domain.game.match import PRIVATE
from domain.game.match_events import (
    MatchCreated,
    MatchFinished,
    MatchImported,
    RoundRecorded,
    SeatLeft,
    SeatTaken,
    TableMadePrivate,
)
from domain.game.round import round_id
from domain.game.round_events import RoundScored, ThrowFailed, TrickWon
from domain.rules.ruleset import RuleSet
from domain.tournament.events import RoundCompleted
from services.career.rows import (
    ALL,
    CUSTOM,
    ERASED,
    GUEST,
    Change,
    EntryRow,
    Facts,
    MatchRow,
    PartnerRow,
    ReleasedRow,
    Seat,
    Tally,
    Totals,
    TotalsRow,
    account_key,
    account_of,
    bot_key,
)
from services.career.view import CareerView
from services.game import GameService
from services.ratings.model import family
from services.ratings.projection import micros


def facts_of(service: GameService, finished: MatchFinished) -> tuple[MatchCreated, Facts] | None:
    """What the career keeps of the finished match, with its creation (None: nothing;
    module docstring)."""
    mid, version = finished.originator_id, finished.originator_version
    events = [
        service.mapper.to_domain_event(e) for e in service.recorder.select_events(mid, lte=version)
    ]
    if any(isinstance(e, MatchImported) for e in events):
        return None  # a record played elsewhere
    created = events[0]
    assert isinstance(created, MatchCreated)
    holders: dict[int, tuple[str, UUID | None]] = {}
    left_at: dict[int, int] = {}
    recorded: list[tuple[int, RoundRecorded]] = []
    listed = created.visibility != PRIVATE
    for i, e in enumerate(events):
        if isinstance(e, SeatTaken):
            holders[e.seat] = (e.kind, e.account_id)
        elif isinstance(e, SeatLeft):
            if e.replaced_by is None:
                holders.pop(e.seat, None)
            else:
                left_at[e.seat] = i
        elif isinstance(e, RoundRecorded):
            recorded.append((i, e))
        elif isinstance(e, TableMadePrivate):
            listed = False
    if not recorded or len(holders) < 4:
        return None  # nothing was scored
    seats = tuple(
        Seat(who=_who(kind, account), left=s in left_at)
        for s in range(4)
        for kind, account in [holders[s]]
    )
    people = [s for s in range(4) if account_of(seats[s].who) is not None]
    if not people:
        return None  # nobody's history: bots and guests only
    rounds = {r.number: _round_facts(service, mid, r.number) for _, r in recorded}
    tallies = {
        s: _tally(s, [r for i, r in recorded if i < left_at.get(s, len(events))], rounds)
        for s in people
    }
    rules = RuleSet.from_mapping(created.rules)
    return created, Facts(
        name=created.name,
        family=family(created.preset, rules) or CUSTOM,
        finished_at=micros(finished.timestamp),
        winner=finished.winner,
        reason=finished.reason,
        rounds=len(recorded),
        listed=listed,
        seats=(seats[0], seats[1], seats[2], seats[3]),
        tallies=tallies,
    )


def _who(kind: str, account: UUID | None) -> str:
    if kind != "human":
        return bot_key(kind)
    return GUEST if account is None else account_key(account)


def _round_facts(service: GameService, mid: UUID, number: int) -> tuple[list[int], int | None, int]:
    """A scored round's failed throws (the seats, R22), the seat that won its last trick
    and its bottom bonus (R28)."""
    throws: list[int] = []
    last: int | None = None
    bonus = 0
    for stored in service.recorder.select_events(round_id(mid, number)):
        event: Any = service.mapper.to_domain_event(stored)
        if isinstance(event, ThrowFailed):
            throws.append(event.seat)
        elif isinstance(event, TrickWon):
            last = event.winner
        elif isinstance(event, RoundScored):
            bonus = event.bottom_bonus
    return throws, last, bonus


def _tally(
    seat: int,
    played: list[RoundRecorded],
    rounds: dict[int, tuple[list[int], int | None, int]],
) -> Tally:
    """What ``seat`` did in the rounds ``played`` (those recorded while it held the seat)."""
    team = seat % 2
    out: dict[str, int] = dict.fromkeys(Tally.__struct_fields__, 0)
    for r in played:
        throws, last, bonus = rounds[r.number]
        attacking = r.dealer % 2 != team  # the dealer's team defends (R18, R31)
        if attacking:
            out["rounds_attacking"] += 1
            out["points_attacking"] += r.attackers_total
            if last is not None and last % 2 == team:  # R28: the attackers took the last trick
                out["bottoms_won"] += 1
                out["bottom_points"] += bonus
        else:
            out["rounds_defending"] += 1
            out["points_conceded"] += r.attackers_total
        if r.team_up == team:
            out["levels_gained"] += r.levels_gained
        out["failed_throws"] += throws.count(seat)
    return Tally(**out)


class Career(Projection[CareerView]):
    """The players' histories, totals and partners (module docstring)."""

    name = "career"

    def __init__(self, view: CareerView, service: GameService) -> None:
        super().__init__(view)
        self.service = service

    def forget(self) -> None:
        """Nothing is cached between events (the follower's interface)."""

    @singledispatchmethod
    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """An event that changes no row: the position alone."""
        self.view.record(Change(), tracking)

    @process_event.register
    def match_finished(self, event: MatchFinished, tracking: Tracking) -> None:
        change = Change()
        found = facts_of(self.service, event)
        if found is not None:
            created, facts = found
            tid, number = created.tournament_id, created.tournament_round
            held = tid is not None and not self.view.is_released(tid, number)
            row = MatchRow(
                match_id=event.originator_id,
                tournament_id=tid,
                tournament_round=number,
                released=None if held else tracking.notification_id,
                facts=facts,
            )
            change.matches[row.match_id] = row
            if not held:
                self._enter(change, row)
        self.view.record(change, tracking)

    @process_event.register
    def round_completed(self, event: RoundCompleted, tracking: Tracking) -> None:
        change = Change()
        tid, position = event.originator_id, tracking.notification_id
        change.released[tid, event.number] = ReleasedRow(
            tournament_id=tid, round=event.number, position=position
        )
        for held in sorted(self.view.held(tid, event.number), key=lambda r: str(r.match_id)):
            row = msgspec.structs.replace(held, released=position)
            change.matches[row.match_id] = row
            self._enter(change, row)
        self.view.record(change, tracking)

    @process_event.register
    def account_erased(self, event: AccountErased, tracking: Tracking) -> None:
        player = event.originator_id
        who = account_key(player)
        change = Change()
        entries = self.view.entries_of(player)
        named = [self.view.match(e.match_id) for e in entries] + self.view.held()
        for row in named:
            if row is None or not any(s.who == who for s in row.facts.seats):
                continue
            seats = tuple(
                Seat(who=ERASED, left=s.left) if s.who == who else s for s in row.facts.seats
            )
            tallies = {s: t for s, t in row.facts.tallies.items() if row.facts.seats[s].who != who}
            facts = msgspec.structs.replace(row.facts, seats=seats, tallies=tallies)
            change.matches[row.match_id] = msgspec.structs.replace(row, facts=facts)
        for e in entries:
            change.entries[e.player_id, e.match_id] = None
        for t in self.view.totals_of(player):
            change.totals[t.player_id, t.family] = None
        for p in [*self.view.partners_of(player), *self.view.partners_with(who)]:
            change.partners[p.player_id, p.family, p.partner] = None
        self.view.record(change, tracking)

    # -- a match enters the histories ------------------------------------------------------------

    def _enter(self, change: Change, row: MatchRow) -> None:
        """``row`` enters the histories of its account seats, at ``row.released``."""
        facts = row.facts
        assert row.released is not None
        for seat, taken in enumerate(facts.seats):
            player = account_of(taken.who)
            if player is None:
                continue
            change.entries[player, row.match_id] = EntryRow(
                player_id=player,
                match_id=row.match_id,
                seat=seat,
                position=row.released,
                listed=facts.listed,
            )
            outcome = facts.outcome(seat)
            tally = facts.tallies.get(seat, Tally())
            for fam in (facts.family, ALL):
                old = change.totals.get((player, fam)) or self.view.totals(player, fam)
                before = Totals() if old is None else old.totals
                change.totals[player, fam] = TotalsRow(
                    player_id=player, family=fam, totals=before.add(outcome, tally)
                )
            partner = facts.seats[(seat + 2) % 4].who
            if partner.startswith(("account:", "bot:")):
                key = (player, facts.family, partner)
                found = change.partners.get(key) or self.view.partner(*key)
                change.partners[key] = PartnerRow(
                    player_id=player,
                    family=facts.family,
                    partner=partner,
                    matches=1 + (0 if found is None else found.matches),
                    won=(outcome == "won") + (0 if found is None else found.won),
                )
