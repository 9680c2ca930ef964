"""Tournament standings and their tiebreaks (docs/tournaments.md, "Standings").

A table's result (:class:`TableResult`) is read off its finished match: the winner (the
team ahead on levels, R30–R32; a draw when level), the levels each team gained (the sum
of ``levels_gained`` of the rounds it went up, R30) and the attackers' totals each team
took while attacking (R29). Every table of a tournament round plays the same seeds (R36),
so these totals compare teams on the same cards.

**Match points** rank first: a win 2, a draw 1, a loss 0, a bye 2 (a bye — also the one
the opponent of a withdrawn team gets — counts as a win with no levels and no points),
plus the organiser's adjustments (``adjustments``, in match points, may be negative).

Then the **tiebreaks**, in the tournament's configured order (each only breaks ties left
by the ones before); the names:

* ``buchholz`` — the sum of the match points (adjustments included) of the opponents the
  team played at a table (byes and forfeits add nothing);
* ``head_to_head`` — match points in the games among the teams still tied (a mini-league;
  it only separates teams that have played each other);
* ``levels_gained`` — levels gained over all the team's matches (R30);
* ``point_differential`` — attackers' points the team took minus those it conceded, on
  the same deals (R29, R36);
* ``wins`` — tables won.

**Registration order** (the seeding) always ends the order, so it is total and stable.
Defaults: Swiss ``buchholz, head_to_head, levels_gained, point_differential``; round robin
``head_to_head, levels_gained, point_differential``; a tournament created before tiebreaks
were configurable keeps ``levels_gained, point_differential, head_to_head``
(:data:`LEGACY_TIEBREAKS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from domain.rules.errors import InvalidInputError

WIN, DRAW, LOSS = 2, 1, 0
BYE_POINTS = WIN
TIEBREAKS = ("buchholz", "head_to_head", "levels_gained", "point_differential", "wins")
LEGACY_TIEBREAKS = ("levels_gained", "point_differential", "head_to_head")
DEFAULT_TIEBREAKS = {
    "swiss": ("buchholz", "head_to_head", "levels_gained", "point_differential"),
    "round_robin": ("head_to_head", "levels_gained", "point_differential"),
}


def check_tiebreaks(order: Sequence[str]) -> tuple[str, ...]:
    """A tiebreak order: names of :data:`TIEBREAKS`, each at most once."""
    if len(set(order)) != len(order) or any(name not in TIEBREAKS for name in order):
        raise InvalidInputError(
            f"tiebreaks: distinct names among {', '.join(TIEBREAKS)}, got {list(order)!r}"
        )
    return tuple(order)


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
    """Results, byes and adjustments."""
    adjustment: int = 0
    """The organiser's adjustments (match points, may be negative)."""
    levels_gained: int = 0
    points_for: int = 0
    points_against: int = 0
    buchholz: int = 0
    head_to_head: int = 0
    """Match points among the teams still tied when head-to-head is applied (0 when not)."""
    rank: int = 0
    opponents: list[int] = field(default_factory=list)

    @property
    def point_differential(self) -> int:
        return self.points_for - self.points_against


def standings(
    teams: int,
    results: Iterable[TableResult],
    byes: Iterable[int] = (),
    *,
    adjustments: Mapping[int, int] | None = None,
    tiebreaks: Sequence[str] = LEGACY_TIEBREAKS,
    forfeits: Iterable[int] = (),
    requested: Iterable[tuple[int, int]] = (),
) -> list[Standing]:
    """Every team's standing, best first: match points, then ``tiebreaks`` in order, then
    the seeding. ``byes`` and ``forfeits`` (wins by the opponent's withdrawal) score as
    byes; ``requested`` byes (team, match points) score their configured points;
    ``adjustments`` add match points."""
    order = check_tiebreaks(tiebreaks)
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
    for team in (*byes, *forfeits):
        lines[team].byes += 1
        lines[team].match_points += BYE_POINTS
    for team, value in requested:
        lines[team].byes += 1
        lines[team].match_points += value
    for team, value in (adjustments or {}).items():
        lines[team].adjustment += value
        lines[team].match_points += value
    for line in lines:
        line.buchholz = sum(lines[o].match_points for o in line.opponents)
    groups = _split([sorted(lines, key=lambda s: s.team)], lambda s: s.match_points)
    for name in order:
        if name == "head_to_head":
            for group in groups:
                if len(group) > 1:
                    members = {s.team for s in group}
                    for s in group:
                        s.head_to_head = _mini_league(s.team, members, played)
            groups = _split(groups, lambda s: s.head_to_head)
        else:
            groups = _split(groups, _attribute(name))
    ordered = [s for group in groups for s in sorted(group, key=lambda s: s.team)]
    for rank, s in enumerate(ordered, start=1):
        s.rank = rank
    return ordered


def _split(groups: list[list[Standing]], value: Callable[[Standing], int]) -> list[list[Standing]]:
    """Each group sorted by ``value`` (higher first, stable) and cut where it changes."""
    out: list[list[Standing]] = []
    for group in groups:
        if len(group) == 1:
            out.append(group)
            continue
        ordered = sorted(group, key=lambda s: -value(s))
        start = len(out)
        for s in ordered:
            if len(out) > start and value(out[-1][0]) == value(s):
                out[-1].append(s)
            else:
                out.append([s])
    return out


def _attribute(name: str) -> Callable[[Standing], int]:
    def value(s: Standing) -> int:
        return int(getattr(s, name))

    return value


def _mini_league(team: int, members: set[int], results: Sequence[TableResult]) -> int:
    return sum(
        r.match_points(team)
        for r in results
        if team in (r.first, r.second) and {r.first, r.second} <= members
    )
