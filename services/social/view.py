"""The friends' read model (docs/decisions.md D-social): its rows, the view as the
projection and the reads use it, and the view in memory.

* :class:`LinkRow` — what one player sees of another: ``friend``, ``incoming`` (a request
  waiting for the player), ``outgoing`` (the player's request), ``blocked`` (the player
  blocks the other) or ``blocked-by`` (the other blocks the player: never listed, kept so
  an erasure finds every pair). Keyed by (player, other); ``position`` is the log position
  that made it (the lists' keyset cursor).
* :class:`InvitationRow` — an open table invitation, keyed by its id (gone once answered
  or withdrawn; an expired one is filtered when read).

Like the career's view (:mod:`services.career.view`) it is kept from the log with its own
tracking position (:data:`TRACKED`), on SQLite and PostgreSQL by :mod:`infra.socialviews`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.popo import POPOTrackingRecorder

from services.readmodels.tracked import UPSTREAM, PositionMovedError, TrackedView

TRACKED: Final = f"{UPSTREAM}-social"
Kind = Literal["friend", "incoming", "outgoing", "blocked", "blocked-by"]


@dataclass(frozen=True, slots=True)
class LinkRow:
    player_id: UUID
    other_id: UUID
    kind: str
    since: str
    """ISO 8601: when it became so."""
    position: int


@dataclass(frozen=True, slots=True)
class InvitationRow:
    invitation_id: UUID
    inviter: UUID
    invitee: UUID
    match_id: UUID
    seat: int
    expires_at: str
    position: int


Row = LinkRow | InvitationRow


@dataclass(slots=True)
class Change:
    """The rows an event or a batch changed (None: deleted)."""

    links: dict[tuple[UUID, UUID], LinkRow | None] = field(default_factory=dict)
    invitations: dict[UUID, InvitationRow | None] = field(default_factory=dict)

    def merge(self, other: Change) -> None:
        self.links.update(other.links)
        self.invitations.update(other.invitations)


class SocialView(TrackedView[Change], ABC):
    """The friends' rows and the position they show (module docstring)."""

    tracked = TRACKED

    def new_change(self) -> Change:
        return Change()

    def link(self, player: UUID, other: UUID) -> LinkRow | None:
        """The row as the projection left it (a batch's first)."""
        return self.as_left(lambda c: c.links, (player, other), lambda k: self.stored_link(*k))

    def links_of(self, player: UUID) -> list[LinkRow]:
        """Every row of ``player`` as the projection left it (an erasure's)."""
        out = {r.other_id: r for r in self.stored_links(player, None, None, 0, None)}
        for (p, o), row in (self.pending.links if self.pending else {}).items():
            if p == player:
                if row is None:
                    out.pop(o, None)
                else:
                    out[o] = row
        return list(out.values())

    @abstractmethod
    def stored_link(self, player: UUID, other: UUID) -> LinkRow | None: ...

    @abstractmethod
    def stored_links(
        self,
        player: UUID,
        kinds: tuple[str, ...] | None,
        after: tuple[int, str] | None,
        limit: int,
        other: UUID | None,
    ) -> list[LinkRow]:
        """``player``'s rows of ``kinds`` (None: every kind) after the keyset place
        ``after`` (position, other id), oldest first, at most ``limit`` (0: all)."""

    @abstractmethod
    def invitations_for(self, player: UUID, *, inviter: bool) -> list[InvitationRow]:
        """The open invitations ``player`` received (or sent, ``inviter``)."""

    @abstractmethod
    def reset(self) -> None: ...

    @abstractmethod
    def replace_all(self, change: Change, tracking: Tracking) -> None: ...

    @abstractmethod
    def rows(self) -> Iterator[Row]: ...

    def contents(self) -> dict[str, Any]:
        out: dict[str, Any] = {"position": self.position(), "links": {}, "invitations": {}}
        for row in self.rows():
            values = {k: str(v) if isinstance(v, UUID) else v for k, v in asdict(row).items()}
            if isinstance(row, LinkRow):
                out["links"][f"{row.player_id}:{row.other_id}"] = values
            else:
                out["invitations"][str(row.invitation_id)] = values
        return out

    def as_change(self) -> Change:
        change = Change()
        for row in self.rows():
            if isinstance(row, LinkRow):
                change.links[row.player_id, row.other_id] = row
            else:
                change.invitations[row.invitation_id] = row
        return change


def page_of(
    rows: list[LinkRow], after: tuple[int, str] | None, limit: int, kinds: tuple[str, ...] | None
) -> list[LinkRow]:
    """Keyset paging of rows in memory (position, other id), oldest first."""
    kept = sorted(
        (r for r in rows if kinds is None or r.kind in kinds),
        key=lambda r: (r.position, str(r.other_id)),
    )
    if after is not None:
        kept = [r for r in kept if (r.position, str(r.other_id)) > after]
    return kept[:limit] if limit else kept


class MemorySocialView(POPOTrackingRecorder, SocialView):
    """The view in memory (POPO)."""

    def __init__(self) -> None:
        super().__init__()
        self.setup_batches()
        self.rows_lock = threading.RLock()
        self.clear()

    def clear(self) -> None:
        self.link_rows: dict[tuple[UUID, UUID], LinkRow] = {}
        self.invitation_rows: dict[UUID, InvitationRow] = {}

    def store(self, change: Change, start: int, tracking: Tracking) -> None:
        with self.rows_lock:
            if self.position() != start:
                raise PositionMovedError(f"the view is at {self.position()}, not {start}")
            self.insert_tracking(Tracking(TRACKED, tracking.notification_id))
            for key, link in change.links.items():
                if link is None:
                    self.link_rows.pop(key, None)
                else:
                    self.link_rows[key] = link
            for iid, invitation in change.invitations.items():
                if invitation is None:
                    self.invitation_rows.pop(iid, None)
                else:
                    self.invitation_rows[iid] = invitation

    def reset(self) -> None:
        with self.rows_lock:
            POPOTrackingRecorder.__init__(self)
            self.clear()

    def replace_all(self, change: Change, tracking: Tracking) -> None:
        with self.rows_lock:
            self.reset()
            if tracking.notification_id:
                self.store(change, 0, tracking)

    def stored_link(self, player: UUID, other: UUID) -> LinkRow | None:
        return self.link_rows.get((player, other))

    def stored_links(
        self,
        player: UUID,
        kinds: tuple[str, ...] | None,
        after: tuple[int, str] | None,
        limit: int,
        other: UUID | None,
    ) -> list[LinkRow]:
        with self.rows_lock:
            mine = [
                r
                for (p, o), r in self.link_rows.items()
                if p == player and (other is None or o == other)
            ]
        return page_of(mine, after, limit, kinds)

    def invitations_for(self, player: UUID, *, inviter: bool) -> list[InvitationRow]:
        with self.rows_lock:
            found = [
                r
                for r in self.invitation_rows.values()
                if (r.inviter if inviter else r.invitee) == player
            ]
        return sorted(found, key=lambda r: (r.position, str(r.invitation_id)))

    def rows(self) -> Iterator[Row]:
        with self.rows_lock:
            yield from list(self.link_rows.values())
            yield from list(self.invitation_rows.values())
