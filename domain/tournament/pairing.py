"""Who plays whom in a tournament round: round-robin and Swiss pairing.

Teams are numbered 0..n-1 in registration order (the seeding). A pairing is a tuple of
``(first, second)`` team pairs, one per table, plus the team that sits out (the bye) when
the count is odd. Table order is the order of the pairs (table 1 first).

* **Round-robin** (:func:`round_robin`): the circle method. Team 0 stays put, the others
  rotate one place a round; with an odd count a phantom team makes the bye. Every team
  meets every other exactly once in ``n - 1`` rounds (``n`` rounds when n is odd).
* **Swiss** (:func:`swiss`): round 1 folds the seeding (1 v n/2+1, 2 v n/2+2, …); later
  rounds pair by standing — the best unpaired team against the next best it has not
  met — backtracking when a choice leaves the rest unpairable without rematches. Only
  when no rematch-free pairing exists at all are rematches allowed (same order). With an
  odd count the bye goes to the lowest-ranked team that has not had one (then the next
  lowest, if that one's bye leaves the rest unpairable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from domain.rules.errors import InvalidInputError

MAX_TEAMS = 64
SEARCH_BUDGET = 200_000
"""Pairing attempts Swiss backtracking may make before it allows rematches."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One tournament round: the tables' ``(first, second)`` teams and the bye, if any."""

    tables: tuple[tuple[int, int], ...]
    bye: int | None = None


def _check_count(n: int) -> None:
    if type(n) is not int or not 2 <= n <= MAX_TEAMS:
        raise InvalidInputError(f"a tournament has 2..{MAX_TEAMS} teams, got {n!r}")


def round_robin_rounds(n: int) -> int:
    """How many rounds a round-robin of ``n`` teams takes (n - 1, or n when odd)."""
    _check_count(n)
    return n if n % 2 else n - 1


def round_robin(n: int, number: int) -> Pairing:
    """Round ``number`` (1-based) of the circle-method round-robin of ``n`` teams."""
    total = round_robin_rounds(n)
    if type(number) is not int or not 1 <= number <= total:
        raise InvalidInputError(f"a round-robin of {n} teams has rounds 1..{total}")
    slots: list[int | None] = [*range(n), *([None] if n % 2 else [])]
    size = len(slots)
    rest = slots[1:]
    shift = (number - 1) % (size - 1)
    rotated = rest[-shift:] + rest[:-shift] if shift else rest
    circle = [slots[0], *rotated]
    tables: list[tuple[int, int]] = []
    bye: int | None = None
    for i in range(size // 2):
        a, b = circle[i], circle[size - 1 - i]
        if a is None or b is None:
            bye = b if a is None else a
            continue
        # Alternate who is "first" so no team is always first (seats 0/2 or 1/3 depend on
        # the table, see domain.tournament.seating; this only varies the listing).
        tables.append((a, b) if (number + i) % 2 else (b, a))
    return Pairing(tuple(tables), bye)


def swiss(
    ranking: Sequence[int],
    met: Collection[frozenset[int]],
    had_bye: Collection[int],
    *,
    first_round: bool = False,
    forbidden: Collection[frozenset[int]] = (),
) -> Pairing:
    """A Swiss round for the teams in ``ranking`` (best first).

    ``met``: the pairs of teams that have played each other; ``had_bye``: the teams given
    a bye, once per bye (a team twice if it had two). ``first_round`` folds the ranking
    (top half v bottom half); ``forbidden``: pairs never to pair while avoidable.
    """
    order = list(ranking)
    _check_count(len(order))
    if len(set(order)) != len(order):
        raise InvalidInputError("a ranking lists each team once")
    banned = {frozenset(p) for p in forbidden}
    candidates = _bye_candidates(order, had_bye)
    if first_round:
        folded = _fold(order, candidates[0])
        if not any(frozenset(p) in banned for p in folded.tables):
            return folded
    met_set = {frozenset(p) for p in met}
    for avoid, allow_rematch in ((banned, False), (banned, True), (set(), True)):
        for bye in candidates:
            rest = [t for t in order if t != bye]
            budget = [SEARCH_BUDGET]
            found = _pair(rest, met_set, allow_rematch, budget, avoid)
            if found is not None:
                return Pairing(tuple(found), bye)
    raise AssertionError("pairing with rematches allowed always succeeds")  # pragma: no cover


def _fold(order: list[int], bye: int | None) -> Pairing:
    rest = [t for t in order if t != bye]
    half = len(rest) // 2
    return Pairing(tuple(zip(rest[:half], rest[half:], strict=True)), bye)


def _bye_candidates(order: list[int], had_bye: Collection[int]) -> list[int | None]:
    """Who may sit out: the teams with the fewest byes, lowest-ranked first."""
    if len(order) % 2 == 0:
        return [None]
    counts = Counter(had_bye)
    fewest = min(counts[t] for t in order)
    return [t for t in reversed(order) if counts[t] == fewest]


def _pair(
    teams: list[int],
    met: set[frozenset[int]],
    allow_rematch: bool,
    budget: list[int],
    banned: set[frozenset[int]],
) -> list[tuple[int, int]] | None:
    """Pair ``teams`` (ranked) top-down, backtracking; None when impossible."""
    if not teams:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        return None
    top, rest = teams[0], teams[1:]
    for i, other in enumerate(rest):
        pair = frozenset((top, other))
        if pair in banned or (not allow_rematch and pair in met):
            continue
        tail = _pair(rest[:i] + rest[i + 1 :], met, allow_rematch, budget, banned)
        if tail is not None:
            return [(top, other), *tail]
    return None
