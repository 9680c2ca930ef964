"""The duplicate-deal embargo of tournament tables (RULES R33, R35, R36).

Every table of a tournament round plays the same deal seeds, seat for seat (R36). When
one table scores a deal, R33 and R35 would reveal it — every hand as dealt, the bottom,
the seed — while another table of the same tournament round may still be playing those
very cards. So for a match that belongs to a tournament (``Match.tournament_id``,
``Match.tournament_round``) everything a scored deal reveals *beyond what a player of
that table saw during play* is withheld until the tournament round is complete (the
tournament aggregate's ``RoundCompleted``: the round state's ``revealed``):

* views (:mod:`services.views`): ``result`` is null and ``embargo`` says why; a seat's
  ``visible`` and ``bottom`` stay what R33 shows during play (its hand, the cards
  played, the bottom only to the seat that buried it);
* history (:mod:`services.history`): ``Dealt.seed`` and ``BottomBuried.cards`` keep their
  during-play redaction, and ``RoundScored``'s ``seed``, ``bottomCards`` and
  ``bottomPoints`` are left out (named in ``hidden``); the state as of a version has no
  ``revealed`` section, and ``embargo`` says why;
* deal verification (:mod:`services.verify`) and record export (:mod:`services.records.export`)
  answer 409 ``deal-embargoed`` (:class:`DealEmbargoedError`).

After the tournament round completes everything is revealed as for any match.

**A round's results too** (docs/decisions.md D-hidden). A table's *result* — the
attackers' points of its deals, their outcomes, the levels, the dealers that follow (R31),
the match's winner, the tournament's entry of it — tells another table of the round how
the same cards went. So every read of a round's results asks this module whether they are
shown (:func:`results_released`, :func:`shown_rounds`): **hidden until the tournament
round completes**, for every reader — the round's own seats too — but the tournament's
organiser (what the organiser's own commands answer). That is every tournament: its tables
share the seeds (R36) and hold the same hands seat for seat, on boards and on seeds alike.
The readers: the tournament's views, tables, standings (counting the completed rounds
only), exports and the director's pages (:mod:`services.tournaments`), the match summary
of a tournament table (:func:`embargo_of`, :mod:`services.summaries`) and the public
feed (:mod:`services.feed`).

**One predicate.** :func:`embargo_for` decides it for every reveal point. A match without
a tournament pays one ``None`` check. A tournament table reads its tournament (the
repository's cache, fast-forwarded) until its round completes; completion is permanent,
so a completed ``(tournament, round)`` is remembered per service and costs a set lookup
from then on. Views ask only when they would reveal something (:func:`view_embargo`: a
scored round). A tournament that cannot be found keeps the embargo (fail safe).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from domain.rules.errors import IllegalMoveError
from domain.tournament.tournament import Tournament

if TYPE_CHECKING:
    from domain.game.match import Match
    from domain.game.round import Round
    from services.game import GameService

__all__ = [
    "UNCHECKED",
    "DealEmbargoedError",
    "Embargo",
    "Unchecked",
    "check_released",
    "embargo_for",
    "embargo_marker",
    "embargo_of",
    "embargoed",
    "resolve",
    "results_released",
    "shown_rounds",
    "view_embargo",
]


class DealEmbargoedError(IllegalMoveError):
    """R36: a tournament table's deals stay secret until its tournament round completes
    (409 ``deal-embargoed``)."""

    code = "deal-embargoed"
    rule = "R36"


@dataclass(frozen=True, slots=True)
class Embargo:
    """A tournament table's deals are withheld until tournament round ``round`` of
    tournament ``tournament_id`` completes."""

    tournament_id: UUID
    round: int

    @property
    def reason(self) -> str:
        """What the withheld answers say (views' and states' ``embargo``, problems)."""
        return (
            f"embargoed until tournament round {self.round} completes (R36: every table of "
            "the round plays the same deals, and another table may still be playing them)"
        )


class Unchecked:
    """The type of :data:`UNCHECKED`: nobody asked the tournament (see :func:`resolve`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHECKED"


UNCHECKED: Final = Unchecked()
"""The default of ``table_view``'s ``embargo``: a caller that did not ask
:func:`embargo_for` gets the worst case (a tournament table is embargoed)."""


def resolve(match: Match, embargo: Embargo | Unchecked | None) -> Embargo | None:
    """``embargo`` as decided, or — when the caller did not decide — the embargo of any
    tournament table (fail safe: withheld rather than leaked)."""
    if not isinstance(embargo, Unchecked):
        return embargo
    if match.tournament_id is None:
        return None
    return Embargo(match.tournament_id, match.tournament_round)


_released: weakref.WeakKeyDictionary[object, set[tuple[UUID, int]]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _completed(service: GameService) -> set[tuple[UUID, int]]:
    found = _released.get(service)
    if found is None:
        with _lock:
            found = _released.setdefault(service, set())
    return found


def embargo_for(service: GameService, tournament_id: UUID | None, number: int) -> Embargo | None:
    """The embargo on a table of tournament ``tournament_id``'s round ``number``; None for
    a match outside tournaments or once that tournament round has completed (R36)."""
    if tournament_id is None:
        return None
    key = (tournament_id, number)
    completed = _completed(service)
    if key in completed:
        return None
    try:
        found: object = service.repository.get(tournament_id, deepcopy_from_cache=False)
    except AggregateNotFoundError:
        found = None
    if isinstance(found, Tournament) and results_released(found, number):
        completed.add(key)  # RoundCompleted is for good
        return None
    return Embargo(tournament_id, number)


def results_released(t: Tournament, number: int) -> bool:
    """R36: the deals and results of tournament round ``number`` of ``t`` may be shown —
    once the round has completed (``RoundCompleted``), never before. The one predicate of
    the embargo: a table's reveals (:func:`embargo_for`) and a round's results
    (:func:`shown_rounds`) both ask it."""
    return 1 <= number <= len(t.rounds) and t.rounds[number - 1].revealed


def shown_rounds(t: Tournament, *, organiser: bool = False) -> frozenset[int]:
    """The rounds of ``t`` whose table results a reader is shown (R36): the completed
    ones; every scheduled one to the tournament's organiser (its own commands' answers)."""
    return frozenset(r.number for r in t.rounds if organiser or results_released(t, r.number))


def embargo_of(service: GameService, match: Match) -> Embargo | None:
    """:func:`embargo_for` ``match``'s tournament round (None: nothing is withheld)."""
    if match.tournament_id is None:
        return None
    return embargo_for(service, match.tournament_id, match.tournament_round)


def embargoed(service: GameService, match: Match) -> bool:
    """True while ``match``'s scored deals must stay secret (R36)."""
    return embargo_of(service, match) is not None


def view_embargo(service: GameService, match: Match, round_: Round | None) -> Embargo | None:
    """The embargo a view of ``round_`` needs: asked only when the view would reveal
    something (the round is scored), so tables in play never read their tournament."""
    if match.tournament_id is None or round_ is None or round_.result is None:
        return None
    return embargo_of(service, match)


def embargo_marker(round_: Round | None, embargo: Embargo | None) -> str:
    """The ETag suffix of a view that withholds a scored round (``e``): the view changes
    when the tournament round completes, with no new match version."""
    return "e" if embargo is not None and round_ is not None and round_.result is not None else ""


def check_released(
    service: GameService, tournament_id: UUID | None, number: int, what: str
) -> None:
    """Raise :class:`DealEmbargoedError` (409 ``deal-embargoed``) while ``what`` (a
    verification, a record) would reveal an embargoed table's deals."""
    embargo = embargo_for(service, tournament_id, number)
    if embargo is not None:
        raise DealEmbargoedError(f"{what} is {embargo.reason}")
