"""Comparing the same deal across tables (R36: duplicate deals) — docs/tournaments.md,
"Comparing a deal across tables".

Every table of a tournament round plays the same seeds: deal ``d``'s ``n``-th dealing
(``n`` > 1 after a redeal, R19) is the same shuffle at every table, and every deal of a
tournament table is drawn from seat 0 whoever deals (docs/tournaments.md, "Seating"), so
the hands are the same seat for seat. The attackers of a deal (the dealer's opponents, R6)
hold the same cards at two tables when they sit in the same seats (0/2 or 1/3) — who that
is depends on who deals there (R18, R31). A board (D-boards) fixes the dealer: all its
tables' attackers sit alike.

A **field** is the tables whose attackers held the same cards in the same dealing. In a
field of ``k`` tables, each table's attackers' points (R29) are compared with the field's
average and median, and **matchpoints** are given as in duplicate bridge: for each other
table of the field, 2 when the attackers took more points, 1 as many, 0 fewer; the
defenders get the rest of the top (``2 × (k − 1)``). A field of one table compares with
nothing (top 0). A team's matchpoints are the sum over the deals it attacked or defended.

What differs between the tables of a field, without boards, is what the cards are worth:
the level and trump in play (R5, R7) follow each table's own match, so a field compares
the same hands under the tables' own trumps; on boards they are the board's.

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
    attacking_seats: int
    """The attackers' seats: 0 (0/2) or 1 (1/3)."""
    average: float
    median: float
    scores: tuple[FieldScore, ...]
    board: Board | None = None
    """The board its tables played (R36, D-boards), or None."""


def field_key(play: DealPlay) -> tuple[int, int, int]:
    """The field a table's dealing belongs to (the module's docstring)."""
    return play.deal, play.deal_no, play.attacking_seats


def compare(plays: Iterable[DealPlay]) -> list[DealField]:
    """Every field of ``plays``, in deal order, each with its tables' scores."""
    fields: dict[tuple[int, int, int], list[DealPlay]] = {}
    for play in plays:
        fields.setdefault(field_key(play), []).append(play)
    out = []
    for key in sorted(fields):
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
