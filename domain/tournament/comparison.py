"""Comparing the same deal across tables (R36: duplicate deals) — docs/tournaments.md,
"Comparing a deal across tables".

Every table of a tournament round plays the same seeds: deal ``d``'s ``n``-th dealing
(``n`` > 1 after a redeal, R19) is the same shuffle at every table. The attackers of a
deal (the dealer's opponents, R6) hold the same cards at two tables when:

* **deal 1** is drawn from seat 0 at every table (R16), so the hands are the same seat
  for seat: the attackers hold the same cards where they sit in the same seats (0/2 or
  1/3) — who that is depends on who became the dealer (R18);
* **later deals** are drawn from each table's dealer (R16, R31), so the attackers always
  hold the same two hands of the shuffle (the second and the fourth drawn).

A **field** is the tables whose attackers held the same cards in the same dealing. In a
field of ``k`` tables, each table's attackers' points (R29) are compared with the field's
average and median, and **matchpoints** are given as in duplicate bridge: for each other
table of the field, 2 when the attackers took more points, 1 as many, 0 fewer; the
defenders get the rest of the top (``2 × (k − 1)``). A field of one table compares with
nothing (top 0). A team's matchpoints are the sum over the deals it attacked or defended.

What differs between the tables of a field is what the cards are worth: the level and
trump in play (R5, R7) follow each table's own match, so a field compares the same hands
under the tables' own trumps.

**Boards** (docs/decisions.md D-boards): in a duplicate event of boards every table plays
deal ``d`` as the same board — the same dealer, level and trump, the same hands seat for
seat, redealt alike — so a board's field is every table of the round that played it: the
same attacking seats, the same cards, the same trump. Its key keeps the attacking seats
(the board's dealer's opponents) for every deal.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from domain.rules.board import Board


@dataclass(frozen=True, slots=True)
class DealPlay:
    """One table's play of one dealing, as scored (R29)."""

    table: int
    """The table (0-based)."""
    deal: int
    """The match round (1, 2, …)."""
    deal_no: int
    """Its dealing: 1, then 2, … after a redeal (R19)."""
    attacking_seats: int
    """The attackers' seat parity: 0 (seats 0/2) or 1 (seats 1/3)."""
    attackers: int
    """The attacking team's number."""
    defenders: int
    points: int
    """The attackers' points (R29)."""
    board: Board | None = None
    """The board played (R36, D-boards); None when the tables share only the seeds."""


@dataclass(frozen=True, slots=True)
class FieldScore:
    """A table's score in its field."""

    table: int
    attackers: int
    defenders: int
    points: int
    vs_average: float
    """Points above (below, negative) the field's average."""
    vs_median: float
    matchpoints: int
    """The attackers' matchpoints; the defenders have ``top - matchpoints``."""
    top: int


@dataclass(frozen=True, slots=True)
class DealField:
    """A dealing's tables whose attackers held the same cards, compared."""

    deal: int
    deal_no: int
    attacking_seats: int | None
    """Deal 1 and boards: the attackers' seats; later deals of shared seeds: None (the same
    hands whatever the seats)."""
    average: float
    median: float
    scores: tuple[FieldScore, ...]
    board: Board | None = None
    """The board its tables played (R36, D-boards), or None."""


def field_key(play: DealPlay) -> tuple[int, int, int | None]:
    """The field a table's dealing belongs to (the module's docstring)."""
    keep_seats = play.deal == 1 or play.board is not None
    return play.deal, play.deal_no, play.attacking_seats if keep_seats else None


def compare(plays: Iterable[DealPlay]) -> list[DealField]:
    """Every field of ``plays``, in deal order, each with its tables' scores."""
    fields: dict[tuple[int, int, int | None], list[DealPlay]] = {}
    for play in plays:
        fields.setdefault(field_key(play), []).append(play)
    out = []
    for key in sorted(fields, key=lambda k: (k[0], k[1], -1 if k[2] is None else k[2])):
        members = sorted(fields[key], key=lambda p: p.table)
        points = [p.points for p in members]
        average = statistics.fmean(points)
        median = float(statistics.median(points))
        top = 2 * (len(members) - 1)
        scores = tuple(
            FieldScore(
                table=p.table,
                attackers=p.attackers,
                defenders=p.defenders,
                points=p.points,
                vs_average=p.points - average,
                vs_median=p.points - median,
                matchpoints=sum(2 if p.points > q else 1 if p.points == q else 0 for q in points)
                - 1,  # itself counted once as "equal"
                top=top,
            )
            for p in members
        )
        board = members[0].board
        out.append(DealField(key[0], key[1], key[2], average, median, scores, board))
    return out


def team_matchpoints(fields: Iterable[DealField]) -> dict[int, tuple[int, int]]:
    """Each team's matchpoints and the top it could have had, over ``fields``."""
    totals: dict[int, tuple[int, int]] = {}
    for f in fields:
        for s in f.scores:
            for team, mp in ((s.attackers, s.matchpoints), (s.defenders, s.top - s.matchpoints)):
                got, top = totals.get(team, (0, 0))
                totals[team] = (got + mp, top + s.top)
    return totals
