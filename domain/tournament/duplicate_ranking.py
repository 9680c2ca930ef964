"""The duplicate ranking of a boards event (docs/tournaments.md, "The duplicate ranking";
docs/decisions.md D-duplicate-evening): each team's matchpoints over every board it
played, as a club scoring program gives them.

A round's boards are matchpointed field by field (:mod:`domain.tournament.comparison`):
each table's side scores 2 per other table of the field it beat, 1 per tie, and the top
of a field of ``k`` tables is ``2 × (k − 1)``. A team's **total** is the sum of its
matchpoints over the rounds counted, its **top** the sum of its fields' tops, and its
**percentage** ``100 × total / top`` — matchpoints over the tops they were scored
against, not an average of round percentages (a round of more tables weighs more, as
its boards had more to beat).

**The ranking and its tie rule.** Best percentage first; two teams of the same
percentage (to 1/100 of a per cent, as shown) rank by total matchpoints; teams still
equal **share the rank** (``3=``, as BridgeWebs writes it) and are listed by their
number. A team with no top yet (it sat out or played only fields of one table) has no
percentage and ranks after every team that has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PERCENT_PLACES = 2
"""Percentages are compared and shown to this many decimal places."""


@dataclass(frozen=True, slots=True)
class RoundScore:
    """A team's matchpoints in one round."""

    round: int
    matchpoints: int
    top: int

    @property
    def percent(self) -> float | None:
        return percent(self.matchpoints, self.top)


@dataclass(frozen=True, slots=True)
class RankedTeam:
    """A team's line of the duplicate ranking."""

    rank: int
    """Shared by teams equal under the tie rule (the module's docstring)."""
    tied: bool
    """Another team shares the rank."""
    team: int
    matchpoints: int
    top: int
    percent: float | None
    rounds: tuple[RoundScore, ...]


def percent(matchpoints: int, top: int) -> float | None:
    """``100 × matchpoints / top``, rounded to :data:`PERCENT_PLACES`; None without a top."""
    return None if top == 0 else round(100 * matchpoints / top, PERCENT_PLACES)


def rank_teams(by_round: Mapping[int, Mapping[int, tuple[int, int]]]) -> list[RankedTeam]:
    """The ranking from each round's ``{team: (matchpoints, top)}`` (the module's docstring)."""
    scores: dict[int, list[RoundScore]] = {}
    for number in sorted(by_round):
        for team, (got, top) in by_round[number].items():
            scores.setdefault(team, []).append(RoundScore(number, got, top))

    totals = {
        team: (sum(s.matchpoints for s in got), sum(s.top for s in got))
        for team, got in scores.items()
    }
    keys = {
        team: (pct is None, -(pct or 0.0), -mp)
        for team, (mp, top) in totals.items()
        for pct in (percent(mp, top),)
    }
    order = sorted(scores, key=lambda team: (keys[team], team))
    sharing: dict[tuple[bool, float, int], int] = {}
    for team in order:
        sharing[keys[team]] = sharing.get(keys[team], 0) + 1
    lines: list[RankedTeam] = []
    for place, team in enumerate(order, start=1):
        mp, top = totals[team]
        first = not lines or keys[order[place - 2]] != keys[team]
        lines.append(
            RankedTeam(
                rank=place if first else lines[-1].rank,
                tied=sharing[keys[team]] > 1,
                team=team,
                matchpoints=mp,
                top=top,
                percent=percent(mp, top),
                rounds=tuple(scores[team]),
            )
        )
    return lines
