"""The lists, read from the read models (docs/decisions.md D-readmodels).

:class:`ReadModels` is the view and what keeps it fresh; each list first asks it to reach
the log's last notification id (a client that created a match and lists next sees it),
then reads one page of rows by position — its cost is that of the page, however long the
history:

* :func:`list_matches` — ``GET /v1/matches``: public matches in creation order (the
  ``MatchCreated`` position is the cursor); ``origin`` keeps those played here, or the
  imported records in the order they were imported (the ``MatchImported`` position);
* :func:`list_my_matches` — ``GET /v1/players/me/matches``: the account's seats, current
  and finished in the order they were claimed, then those it left in the order it left;
* :func:`list_tournaments` — ``GET /v1/tournaments``: tournaments in creation order,
  ``status`` keeps those in that state now.

The answers are those the log scans gave (same items, order and ``next``/``more``), so
clients see no change; private tables are never listed (docs/decisions.md D-table-life).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import msgspec

from domain.accounts.account import Account
from domain.rules.errors import InvalidInputError
from services.accounts.my_matches import MyMatch, MyMatches
from services.game import GameService
from services.readmodels.runner import Follower, Freshness
from services.readmodels.view import ListsView, MemoryListsView
from services.summaries import MatchList, MatchListItem, Origin
from services.tournaments.listing import STATUSES, TournamentList, TournamentListItem

log = logging.getLogger(__name__)

MAX_PAGE = 100
_MATCH_ITEM = msgspec.json.Decoder(MatchListItem)
_MY_ITEM = msgspec.json.Decoder(MyMatch)
_TOURNAMENT_ITEM = msgspec.json.Decoder(TournamentListItem)


@dataclass(frozen=True, slots=True)
class ReadModels:
    """The lists' view on the service's store and what brings it up to the log."""

    service: GameService
    view: ListsView
    freshness: Freshness

    @classmethod
    def in_memory(cls, service: GameService) -> ReadModels:
        """A view in memory, followed by this process (POPO stores, tests)."""
        view = MemoryListsView()
        return cls(service, view, Follower(service, view))

    def fresh(self) -> ListsView:
        """The view, once it shows the log up to its last notification id (or after
        waiting for it as long as a read may)."""
        target = self.service.recorder.max_notification_id() or 0
        if not self.freshness.reach(target):
            log.warning("read models: behind the log (at %d of %d)", self.view.position(), target)
        return self.view


def _check_page(after: int, limit: int) -> None:
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be 1..{MAX_PAGE}, got {limit!r}")
    if type(after) is not int or after < 0:
        raise InvalidInputError(f"after is a position >= 0, got {after!r}")


def list_matches(
    lists: ReadModels, *, after: int = 0, limit: int = 50, origin: Origin | None = None
) -> MatchList:
    """Public matches created after log position ``after``, oldest first, at most ``limit``
    (private tables are never listed);
    ``origin``: only the matches played here, or only the imported records (listed in the
    order they were imported; the cursor is then a position of the imports)."""
    _check_page(after, limit)
    if origin not in (None, "played", "imported"):
        raise InvalidInputError(f"origin is played or imported, got {origin!r}")
    page = lists.fresh().match_page(after, limit, origin)
    items = [_MATCH_ITEM.decode(item) for item in page.items]
    return MatchList(items=items, next=page.next, more=page.more)


def list_tournaments(
    lists: ReadModels, *, after: int = 0, limit: int = 50, status: str | None = None
) -> TournamentList:
    """Tournaments created after log position ``after``, oldest first, at most ``limit``."""
    _check_page(after, limit)
    if status is not None and status not in STATUSES:
        raise InvalidInputError(f"status is one of {', '.join(STATUSES)}, got {status!r}")
    page = lists.fresh().tournament_page(after, limit, status)
    items = [_TOURNAMENT_ITEM.decode(item) for item in page.items]
    return TournamentList(items=items, next=page.next, more=page.more)


def list_my_matches(lists: ReadModels, account: Account) -> MyMatches:
    """The matches ``account`` sits in (current, then finished) and those it left."""
    seated: list[tuple[int, MyMatch]] = []
    left: list[tuple[int, MyMatch]] = []
    for seat, mine in lists.fresh().seats_of(account.id):
        template = _MY_ITEM.decode(mine)
        item = msgspec.structs.replace(
            template, seat=seat.seat, your_turn=template.to_act == seat.seat
        )
        if seat.left is None:
            seated.append((seat.claimed, item))
        else:
            left.append((seat.left, item))
    items = [i for _, i in sorted(seated, key=lambda p: p[0])]
    return MyMatches(
        current=[i for i in items if i.status != "finished"],
        finished=[i for i in items if i.status == "finished"],
        left=[i for _, i in sorted(left, key=lambda p: p[0])],
    )
