"""The duplicate ranking of a boards event as served (docs/tournaments.md, "The duplicate
ranking"): each team's matchpoints and percentage over the rounds shown, and by round,
ranked by :mod:`domain.tournament.duplicate_ranking` (its tie rule named in the view).

Only the completed rounds count (R36, :func:`services.embargo.shown_rounds`): a round's
boards are matchpointed from its tables' matches (:func:`services.tournaments.comparison.
deal_plays`) once it has completed, like every other result of the round. The standings
(JSON, CSV, stream), the display, the crosstable and the sheets show the same ranking."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Annotated
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.tournament.comparison import compare, team_matchpoints
from domain.tournament.duplicate_ranking import RankedTeam, rank_teams
from domain.tournament.tournament import Tournament
from services import field_docs
from services.embargo import shown_rounds
from services.game import GameService
from services.tournaments.comparison import deal_plays

TIE_RULE = (
    "percentage (matchpoints over the tops of the fields played, to 0.01 %), then total "
    "matchpoints; teams still equal share the rank"
)
"""The tie rule, as the views name it (:mod:`domain.tournament.duplicate_ranking`)."""


class _View(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class RoundMatchpoints(_View, frozen=True, kw_only=True):
    """A team's matchpoints in one round."""

    round: Annotated[int, Meta(description="The round's number.")]
    matchpoints: Annotated[int, Meta(description="Earned on its boards, attacking and defending.")]
    top: Annotated[int, Meta(description="The most it could have earned in that round.")]
    percent: Annotated[
        float | None, Meta(description="matchpoints / top in percent; null without a top.")
    ]


class DuplicateLine(_View, frozen=True, kw_only=True):
    """A team's line of the duplicate ranking."""

    rank: Annotated[int, Meta(description="From 1; teams equal under the tie rule share it.")]
    tied: Annotated[bool, Meta(description="Another team shares the rank (written `3=`).")]
    team: Annotated[int, field_docs.TEAM]
    name: Annotated[str, field_docs.NAME]
    matchpoints: Annotated[int, Meta(description="Total matchpoints over the rounds counted.")]
    top: Annotated[int, Meta(description="The sum of the tops of the fields it played.")]
    percent: Annotated[
        float | None,
        Meta(description="100 × matchpoints / top, to 0.01; null before it has a top."),
    ]
    rounds: Annotated[
        list[RoundMatchpoints], Meta(description="Round by round (the rounds it played).")
    ]
    withdrawn: Annotated[bool, Meta(description="The team has withdrawn.")] = False


class DuplicateRanking(_View, frozen=True, kw_only=True):
    """A boards event's ranking by matchpoints (duplicate scoring, R36)."""

    rounds: Annotated[list[int], Meta(description="The rounds counted: the completed ones (R36).")]
    tie_rule: Annotated[str, Meta(description="How the ranking orders and ties teams.")]
    lines: Annotated[list[DuplicateLine], Meta(description="Best first.")]


def _line(t: Tournament, r: RankedTeam) -> DuplicateLine:
    return DuplicateLine(
        rank=r.rank,
        tied=r.tied,
        team=r.team,
        name=t.teams[r.team].name,
        matchpoints=r.matchpoints,
        top=r.top,
        percent=r.percent,
        rounds=[
            RoundMatchpoints(round=s.round, matchpoints=s.matchpoints, top=s.top, percent=s.percent)
            for s in r.rounds
        ],
        withdrawn=r.team in t.withdrawn,
    )


Matchpoints = dict[int, tuple[int, int]]
MEMO_ROUNDS = 512
"""Completed rounds whose matchpoints a service keeps (:func:`round_matchpoints`)."""
_memos: weakref.WeakKeyDictionary[object, OrderedDict[tuple[UUID, int], Matchpoints]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def round_matchpoints(game: GameService, t: Tournament, number: int) -> Matchpoints:
    """Each team's ``(matchpoints, top)`` in completed round ``number``: read off its
    tables' matches once, then kept (the last :data:`MEMO_ROUNDS` per service) — a
    completed round's deals never change (a correction changes the tournament's result of
    a table, not the points of its deals; only a round in play can be cancelled)."""
    key = (t.id, number)
    with _lock:
        memo = _memos.setdefault(game, OrderedDict())
        found = memo.get(key)
        if found is not None:
            memo.move_to_end(key)
            return found
    found = team_matchpoints(compare(deal_plays(game, t.round_state(number))))
    with _lock:
        memo[key] = found
        while len(memo) > MEMO_ROUNDS:
            memo.popitem(last=False)
    return found


def duplicate_ranking(game: GameService, t: Tournament) -> DuplicateRanking | None:
    """The ranking over the completed rounds (blocking: reads the tables' matches of a
    round not read before); None unless ``t`` is a boards event."""
    if not t.boards:
        return None
    shown = sorted(shown_rounds(t))
    by_round = {n: round_matchpoints(game, t, n) for n in shown}
    return DuplicateRanking(
        rounds=shown, tie_rule=TIE_RULE, lines=[_line(t, r) for r in rank_teams(by_round)]
    )


def rank_text(line: DuplicateLine) -> str:
    """The rank as the pages write it: ``3``, or ``3=`` when shared."""
    return f"{line.rank}=" if line.tied else str(line.rank)
