"""The friends' projection: the log's friendship and invitation events into the rows of
:mod:`services.social.view` (docs/decisions.md D-social). Nothing is cached between
events: every row it reads is the view's (as the batch left it)."""

from __future__ import annotations

from functools import singledispatchmethod
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking

from domain.accounts.friendship import (
    FriendAccepted,
    FriendRemoved,
    FriendRequestDeclined,
    FriendRequested,
    FriendRequestWithdrawn,
    FriendshipErased,
    PlayerBlocked,
    PlayerUnblocked,
)
from domain.accounts.table_invitation import InvitationEvent, TableInvited
from services.social.view import Change, InvitationRow, LinkRow, SocialView


class Social:
    """Folds events into the view (the follower's projection)."""

    def __init__(self, view: SocialView) -> None:
        self.view = view

    def forget(self) -> None:
        """Nothing is cached between events (the follower's interface)."""

    @singledispatchmethod
    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """An event that changes no row: the position alone."""
        self.view.record(Change(), tracking)

    def _both(
        self, change: Change, event: Any, mine: str | None, theirs: str | None, at: int
    ) -> None:
        since = event.timestamp.isoformat()
        for player, other, kind in ((event.by, event.other, mine), (event.other, event.by, theirs)):
            change.links[player, other] = (
                None if kind is None else LinkRow(player, other, kind, since, at)
            )

    @process_event.register
    def requested(self, event: FriendRequested, tracking: Tracking) -> None:
        change = Change()
        self._both(change, event, "outgoing", "incoming", tracking.notification_id)
        self.view.record(change, tracking)

    @process_event.register
    def accepted(self, event: FriendAccepted, tracking: Tracking) -> None:
        change = Change()
        self._both(change, event, "friend", "friend", tracking.notification_id)
        self.view.record(change, tracking)

    @process_event.register(FriendRequestWithdrawn)
    @process_event.register(FriendRequestDeclined)
    @process_event.register(FriendRemoved)
    @process_event.register(FriendshipErased)
    def ended(self, event: Any, tracking: Tracking) -> None:
        change = Change()
        self._both(change, event, None, None, tracking.notification_id)
        self.view.record(change, tracking)

    @process_event.register
    def blocked(self, event: PlayerBlocked, tracking: Tracking) -> None:
        change = Change()
        at, since = tracking.notification_id, event.timestamp.isoformat()
        change.links[event.by, event.other] = LinkRow(event.by, event.other, "blocked", since, at)
        theirs = self.view.link(event.other, event.by)
        if theirs is None or theirs.kind != "blocked":  # both may block
            change.links[event.other, event.by] = LinkRow(
                event.other, event.by, "blocked-by", since, at
            )
        self.view.record(change, tracking)

    @process_event.register
    def unblocked(self, event: PlayerUnblocked, tracking: Tracking) -> None:
        change = Change()
        at, since = tracking.notification_id, event.timestamp.isoformat()
        theirs = self.view.link(event.other, event.by)
        if theirs is not None and theirs.kind == "blocked":  # the other still blocks
            change.links[event.by, event.other] = LinkRow(
                event.by, event.other, "blocked-by", since, at
            )
        else:
            change.links[event.by, event.other] = None
            if theirs is not None:
                change.links[event.other, event.by] = None
        self.view.record(change, tracking)

    @process_event.register
    def invited(self, event: TableInvited, tracking: Tracking) -> None:
        change = Change()
        iid: UUID = event.originator_id
        change.invitations[iid] = InvitationRow(
            iid,
            event.inviter,
            event.invitee,
            event.match_id,
            event.seat,
            event.expires_at.isoformat(),
            tracking.notification_id,
        )
        self.view.record(change, tracking)

    @process_event.register
    def invitation_ended(self, event: InvitationEvent, tracking: Tracking) -> None:
        change = Change()
        change.invitations[event.originator_id] = None
        self.view.record(change, tracking)
