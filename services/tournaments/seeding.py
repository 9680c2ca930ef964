"""Ratings at a tournament's registration, and round 1 seeded by them (docs/decisions.md
D-career; docs/tournaments.md "Seeding").

A team's players may name their accounts when it registers (``TeamPlayersLinked``). Each
player is then shown with their all-time rating in the **family of the tournament's rule
set** (:func:`services.ratings.model.family`); a player without an account, or without a
rating in that family, counts at the family's start (1500), and a bot seat at its kind's
anchor (bots are anchors on the rating scale, docs/decisions.md D-ratings). A team's rating
is the **mean of its two players' shown ratings**.

A Swiss tournament created with ``seeding: "rating"`` pairs round 1 from the teams by
rating, best first (ties: the registration order) — the top half against the bottom half,
as its registration order would be otherwise (R36). The first scheduling or publication of
round 1 fixes that order with the team ratings it used (``TeamsSeeded``), so the pairing
never moves with a rating after it; until then :func:`seeding_order` is the preview's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.accounts.account import Account
from domain.rules.errors import InvalidInputError
from domain.tournament.tournament import Tournament
from services.ratings.boards import RatingModels
from services.ratings.model import ANCHORS, MODEL, Rating, family
from services.ratings.rows import ALL_TIME
from services.ratings.view import RatingsView
from services.unit_of_work import UnitOfWork

START = MODEL.start().shown
"""What a player without a rating in the family counts as (the family's start)."""


class SeedPlayer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A player of a team, with the rating the seeding counts."""

    name: Annotated[str, Meta(description="The player's name in the team.")]
    kind: Annotated[str, Meta(description="`human`, or a bot's kind.")]
    player_id: Annotated[
        UUID | None, Meta(description="The account named at registration; null: none.")
    ]
    rating: Annotated[
        int,
        Meta(description="The shown rating in the family (1500 when none; a bot's anchor)."),
    ]
    rated: Annotated[bool, Meta(description="The account has a rating in the family.")]
    provisional: Annotated[
        bool, Meta(description="That rating is provisional (few rated matches yet).")
    ]


class SeedTeam(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A registered team with its rating."""

    team: Annotated[int, Meta(description="The team's number (registration order, from 0).")]
    name: Annotated[str, Meta(description="The team's name.")]
    rating: Annotated[
        int, Meta(description="The mean of its players' shown ratings (as fixed, once fixed).")
    ]
    seed: Annotated[int, Meta(description="Its place by rating, 1 for the best.")]
    players: Annotated[list[SeedPlayer], Meta(description="Its two players (R2).")]


class Seeding(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The teams of a tournament with their ratings, and how round 1 is seeded."""

    tournament_id: Annotated[UUID, Meta(description="The tournament.")]
    family: Annotated[
        str | None,
        Meta(description="The rated family of its rule set; null: none (all count 1500)."),
    ]
    seeding: Annotated[
        Literal["registration", "rating"],
        Meta(description="Round 1 paired by registration order, or by the teams' ratings."),
    ]
    fixed: Annotated[
        bool, Meta(description="Round 1's order by rating is fixed (its first scheduling).")
    ]
    teams: Annotated[list[SeedTeam], Meta(description="The teams in seeding order by rating.")]


def check_players(uow: UnitOfWork, accounts: tuple[UUID | None, UUID | None]) -> None:
    """422 naming a player's account that is no player's, or an erased player's."""
    for i, account in enumerate(accounts):
        if account is None:
            continue
        found = uow.find(account, Account)
        if found is None or found.erased:
            raise InvalidInputError(f"players[{i}].playerId: no player {account}")


def _player(
    view: RatingsView | None, fam: str | None, kind: str, account: UUID | None, name: str
) -> SeedPlayer:
    if kind != "human":
        anchor = ANCHORS.get(kind)
        shown = START if anchor is None else anchor.shown
        return SeedPlayer(
            name=name, kind=kind, player_id=None, rating=shown, rated=False, provisional=False
        )
    row = None
    if view is not None and fam is not None and account is not None:
        row = view.rating(fam, ALL_TIME, account)
    return SeedPlayer(
        name=name,
        kind=kind,
        player_id=account,
        rating=START if row is None else Rating(row.mu, row.sigma).shown,
        rated=row is not None,
        provisional=row is not None and row.provisional,
    )


def _players(ratings: RatingModels | None, t: Tournament) -> list[list[SeedPlayer]]:
    view = None if ratings is None else ratings.fresh()
    fam = family(t.preset, t.rules)
    out = []
    for number, team in enumerate(t.teams):
        linked = t.team_accounts.get(number, (None, None))
        out.append([_player(view, fam, team.kinds[i], linked[i], team.players[i]) for i in (0, 1)])
    return out


def seeding_order(ratings: RatingModels | None, t: Tournament) -> tuple[list[int], list[int]]:
    """The teams by rating, best first (ties: the registration order), and each one's
    rating (the mean of its players' shown ratings), in that order."""
    sums = [sum(p.rating for p in players) for players in _players(ratings, t)]
    order = sorted(range(len(sums)), key=lambda team: (-sums[team], team))
    return order, [round(sums[team] / 2) for team in order]


def seed_first_round(ratings: RatingModels | None, t: Tournament, now: datetime) -> None:
    """Fix round 1's order by rating before its first scheduling or publication (a
    tournament seeded by rating; nothing for another one, or once fixed)."""
    if t.seeding == "rating" and t.seeded is None and not t.rounds:
        order, values = seeding_order(ratings, t)
        t.seed_by(order, values, now)


def preview_seeding(ratings: RatingModels | None, t: Tournament) -> list[int] | None:
    """Round 1's order as a preview pairs it now (None: the tournament's own)."""
    if t.seeding != "rating" or t.seeded is not None or t.rounds:
        return None
    return seeding_order(ratings, t)[0]


def seeding_view(ratings: RatingModels | None, t: Tournament) -> Seeding:
    """``GET /v1/tournaments/{id}/seeding`` (module docstring)."""
    players = _players(ratings, t)
    if t.seeded is not None:
        order, values = list(t.seeded[0]), list(t.seeded[1])
    else:
        order, values = seeding_order(ratings, t)
    seeding: Literal["registration", "rating"] = (
        "rating" if t.seeding == "rating" else "registration"
    )
    return Seeding(
        tournament_id=t.id,
        family=family(t.preset, t.rules),
        seeding=seeding,
        fixed=t.seeded is not None,
        teams=[
            SeedTeam(
                team=team,
                name=t.teams[team].name,
                rating=rating,
                seed=place,
                players=players[team],
            )
            for place, (team, rating) in enumerate(zip(order, values, strict=True), start=1)
        ],
    )
