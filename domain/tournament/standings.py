"""Tournament standings and their tiebreaks.

A table's result (:class:`TableResult`) is read off its finished match: the winner (the
team ahead on levels, R30–R32; a draw when level), the levels each team gained (the sum
of ``levels_gained`` of the rounds it went up, R30) and the attackers' totals each team
took while attacking (R29). Every table of a tournament round plays the same seeds (R36),
so these totals compare teams on the same cards.

Ranking, in order (each only breaks ties left by the ones before):

1. **match points**: a win 2, a draw 1, a loss 0, a bye 2 (a bye counts as a win with no
   levels and no points);
2. **levels gained** over all the team's matches (R30);
3. **point differential**: attackers' points the team took minus those it conceded, on
   the same deals (R29, R36);
4. **head-to-head**: match points in the games among the teams still tied (a mini-league;
   it only separates teams that have played each other);
5. **registration order** (the seeding), so the order is total and stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

WIN, DRAW, LOSS = 2, 1, 0
BYE_POINTS = WIN


@dataclass(frozen=True, slots=True)
class TableResult:
    """One table's outcome, seen from its pairing's ``first`` and ``second`` teams."""

    first: int
    second: int
    winner: int | None
    """``first`` or ``second`` (a team number), None for a draw."""
    levels: tuple[int, int]
    """Levels gained by first and second (R30)."""
    points: tuple[int, int]
    """Attackers' totals taken by first and second while attacking (R29)."""
    deals: int = 0
    """Deals (match rounds) played."""

    def match_points(self, team: int) -> int:
        if self.winner is None:
            return DRAW
        return WIN if self.winner == team else LOSS


@dataclass(slots=True)
class Standing:
    """A team's line in the standings."""

    team: int
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    match_points: int = 0
    levels_gained: int = 0
    points_for: int = 0
    points_against: int = 0
    head_to_head: int = 0
    """Match points among the teams tied with it on 1–3 (0 when not tied)."""
    rank: int = 0
    opponents: list[int] = field(default_factory=list)

    @property
    def point_differential(self) -> int:
        return self.points_for - self.points_against

    def key(self) -> tuple[int, int, int]:
        """Tiebreaks 1–3 (higher is better)."""
        return (self.match_points, self.levels_gained, self.point_differential)


def standings(
    teams: int, results: Iterable[TableResult], byes: Iterable[int] = ()
) -> list[Standing]:
    """Every team's standing, best first, ranked by the tiebreaks of this module."""
    lines = [Standing(t) for t in range(teams)]
    played: list[TableResult] = list(results)
    for r in played:
        for me, other, i in ((r.first, r.second, 0), (r.second, r.first, 1)):
            line = lines[me]
            line.played += 1
            line.opponents.append(other)
            points = r.match_points(me)
            line.match_points += points
            line.wins += points == WIN
            line.draws += points == DRAW
            line.losses += points == LOSS
            line.levels_gained += r.levels[i]
            line.points_for += r.points[i]
            line.points_against += r.points[1 - i]
    for team in byes:
        lines[team].byes += 1
        lines[team].match_points += BYE_POINTS
    ordered: list[Standing] = []
    for group in _groups(sorted(lines, key=lambda s: (tuple(-k for k in s.key()), s.team))):
        if len(group) > 1:
            members = {s.team for s in group}
            for s in group:
                s.head_to_head = _mini_league(s.team, members, played)
            group.sort(key=lambda s: (-s.head_to_head, s.team))
        ordered.extend(group)
    for rank, s in enumerate(ordered, start=1):
        s.rank = rank
    return ordered


def _groups(lines: Sequence[Standing]) -> list[list[Standing]]:
    groups: list[list[Standing]] = []
    for s in lines:
        if groups and groups[-1][0].key() == s.key():
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def _mini_league(team: int, members: set[int], results: Sequence[TableResult]) -> int:
    return sum(
        r.match_points(team)
        for r in results
        if team in (r.first, r.second) and {r.first, r.second} <= members
    )
