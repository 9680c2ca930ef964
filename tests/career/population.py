"""The ratings' population (:mod:`tests.ratings.population`: people, bots, a guest, a
leaver, a player timed out, repeated foursomes, an imported record, a paper result, an
erased player …) and what a player's career needs beyond it: a match the organiser ended
in its second round (one round scored, one abandoned, R32), a private table (its people
see it, nobody else), and a tournament table of accounts finished while its tournament
round is in play (held until the round completes, R36), then the round completed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from uuid import UUID

from domain.accounts.account import Account
from domain.rules.ruleset import STANDARD
from services.accounts.players import get_account
from services.accounts.seating import claim_seat
from services.dealer import Dealer
from services.game import GameService
from services.handlers import table_deals
from services.tournaments.results_policy import ResultsPolicy
from tests.archive.matches import bot_teams
from tests.commands import bus_of, create_match, create_player, finish_match, take_seat, unit
from tests.conftest import FakeClock
from tests.ratings.population import Population, play_out, populate, rules, seated
from tests.tournaments import Tournaments


@dataclass
class Careers:
    """The population (:class:`tests.ratings.population.Population`) and the matches
    added here."""

    base: Population
    late: list[Account] = field(default_factory=list)
    """Two people who join after the erasure."""
    late_tokens: list[str] = field(default_factory=list)
    abandoned: UUID | None = None
    private: UUID | None = None
    tournament: UUID | None = None
    held: UUID | None = None
    """A tournament table of accounts: finished, then held until its round completes."""

    @property
    def people(self) -> list[Account]:
        return [*self.base.people, *self.late]

    @property
    def tokens(self) -> list[str]:
        return [*self.base.tokens, *self.late_tokens]

    @property
    def erased(self) -> UUID:
        assert self.base.erased is not None
        return self.base.erased


def sit(service: GameService, mid: UUID, seats: list[Account | str], *, invited: bool) -> None:
    """Accounts claim their seats (``invited``: as an invite code lets them at a private
    table), bots take theirs."""
    for seat, who in enumerate(seats):
        if isinstance(who, Account):
            uow = unit(service)
            account = uow.get(who.id, Account, "player")
            claim_seat(
                uow, Dealer(table_deals(service)), account, uow.match(mid), seat, invited=invited
            )
            uow.commit()
        else:
            take_seat(service, mid, seat, f"bot {seat}", who)


def populate_careers(
    service: GameService,
    clock: FakeClock,
    between: Callable[[], object] = lambda: None,
    *,
    until_held: Callable[[Careers], object] = lambda _: None,
    based: Callable[[Population], object] = lambda _: None,
) -> Careers:
    """The whole population (module docstring); ``between()`` after each match,
    ``until_held(population)`` once the tournament table is held (before its round
    completes), ``based(population)`` once the ratings' population is played."""
    out = Careers(populate(service, clock, between))
    based(out.base)
    a, _, c, d, e, _ = out.base.people
    for i in range(2):
        account, token = create_player(service, f"Late Person {i}", "zh-CN")
        out.late.append(account)
        out.late_tokens.append(token)
    g, h = out.late
    # the organiser ends it in round 2: one round scored, one abandoned (R32)
    mid = seated(service, [c, d, e, "heuristic"], rounds=3)
    play_out(service, clock, mid, rounds=1)
    finish_match(service, mid)
    out.abandoned = mid
    clock.advance(seconds=60)
    between()
    # a private table: its people see it in their histories, nobody else
    mid = create_match(service, rules(), name="friends", preset="standard", visibility="private")
    sit(service, mid, [a, g, "random", "strong"], invited=True)
    play_out(service, clock, mid)
    out.private = mid
    clock.advance(seconds=60)
    between()
    # a tournament in play and a table of accounts of its round 1, finished (R36)
    ts = Tournaments(service)
    t = ts.create(
        name="club cup", rules=STANDARD, teams=bot_teams(4, "human"), fmt="round_robin",
        match_length=1,
    )  # fmt: skip
    ts.schedule_next(t.id)
    out.tournament = t.id
    mid = create_match(service, rules(), name="table", preset="standard", tournament=(t.id, 1))
    sit(service, mid, [get_account(service, p.id) for p in (c, g, d, h)], invited=False)
    play_out(service, clock, mid)
    out.held = mid
    clock.advance(seconds=60)
    between()
    until_held(out)
    # the round's own tables played out: the round completes (RoundCompleted)
    for table in ts.get(t.id).rounds[0].tables:
        play_out(service, clock, table.match_id)
    ResultsPolicy(bus_of(service)).catch_up()
    assert ts.get(t.id).rounds[0].revealed
    clock.advance(seconds=60)
    between()
    return out
