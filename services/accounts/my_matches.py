"""``GET /v1/players/me/matches``: the account's matches, current first, with whose turn
it is and its deadline (docs/players.md).

:func:`item` is one match as the list shows it: the read models keep it for each match
(:mod:`services.readmodels`), and the route reads the list from them
(:func:`services.readmodels.lists.list_my_matches`). :func:`my_matches` builds the list
from the account's seats and each match's current state: the player stream's snapshot,
taken at the stream's position, and the read models' tests hold the route to it.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.accounts.account import Account
from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.timers import turn_clock
from services import field_docs
from services.game import GameService

_OVER = frozenset((RoundPhase.SCORED, RoundPhase.ABANDONED))


class MyMatch(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One match the player sits in."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    name: Annotated[str, field_docs.NAME]
    seat: Annotated[int, Meta(description="The player's seat (R1); the player token acts for it.")]
    status: Annotated[
        str, Meta(description="`waiting` (seats free), `playing` or `finished` (R32).")
    ]
    version: Annotated[int, field_docs.VERSION]
    round_number: Annotated[int, field_docs.ROUND_NUMBER]
    to_act: Annotated[
        int | None,
        Meta(
            description=(
                "The seat whose turn it is (None between rounds, while dealing, or when over)."
            )
        ),
    ]
    your_turn: Annotated[bool, Meta(description="The player's seat is to act now.")]
    turn_deadline: Annotated[
        str | None,
        Meta(
            description=(
                "When the seat to act times out (turn limits, docs/timers.md); None without one."
            ),
            examples=["2026-12-01T20:01:00+00:00"],
        ),
    ]
    winner: Annotated[
        int | None,
        Meta(
            description=(
                "The winning team (0: seats 0 and 2, 1: seats 1 and 3) once finished (R2, R32)."
            )
        ),
    ]
    rematch: Annotated[
        str | None,
        Meta(
            description=(
                "The rematch asked for after this match: confirm your "
                "seat with `POST /v1/matches/{id}/rematch` "
                "(docs/decisions.md D-table-life)."
            )
        ),
    ]


class MyMatches(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The matches the player sits in."""

    current: Annotated[
        list[MyMatch], Meta(description="Matches not finished (waiting for seats or playing).")
    ]
    finished: Annotated[
        list[MyMatch],
        Meta(
            description=(
                "Finished matches (R32); with partners, outcomes and rating moves, paged: "
                "GET /v1/players/{id}/matches."
            )
        ),
    ]
    left: Annotated[
        list[MyMatch],
        Meta(
            description=(
                "Matches the player left (a bot plays their seat, or it was freed before round 1)."
            )
        ),
    ]


def my_matches(service: GameService, account: Account) -> MyMatches:
    items = [one(service, match_id, seat) for match_id, seat in account.seats.items()]
    return MyMatches(
        current=[i for i in items if i.status != "finished"],
        finished=[i for i in items if i.status == "finished"],
        left=[one(service, match_id, seat) for match_id, seat in account.left.items()],
    )


def one(service: GameService, match_id: UUID, seat: int) -> MyMatch:
    match = service.get_match(match_id)
    return item(match, service.current_round(match), seat)


def item(match: Match, round_: Round | None, seat: int) -> MyMatch:
    """The player's ``seat`` in ``match`` with its current round ``round_``."""
    to_act: int | None = None
    deadline: str | None = None
    if round_ is not None and not match.finished and round_.phase not in _OVER:
        to_act = round_.to_act()
        clock = turn_clock(match.timers, round_)
        deadline = None if clock is None else clock.deadline.isoformat()
    status = "finished" if match.finished else ("playing" if match.seated else "waiting")
    return MyMatch(
        match_id=str(match.id),
        name=match.name,
        seat=seat,
        status=status,
        version=match.sequence(0 if round_ is None else round_.version),
        round_number=match.round_number,
        to_act=to_act,
        your_turn=to_act == seat,
        turn_deadline=deadline,
        winner=match.winner,
        rematch=None if match.rematch is None else str(match.rematch),
    )
