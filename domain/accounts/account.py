"""The ``Account`` aggregate: a person who plays from one or more devices.

An account is created with a display name, a locale and its first session; every session
holds the sha256 of its long-lived player token (never the token: docs/players.md). A
session's token can be rotated (the old one stops working at once) and a session ended.
An account claims seats in matches (R1: one seat per match) and the services authorise a
seat's commands for the account's player token from any device.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.names import checked_name
from domain.rules.errors import IllegalMoveError, InvalidInputError

MAX_SESSIONS = 20
MAX_LABEL = 100
LOCALES = ("en", "zh-CN")


class Session:
    """One device's session: the sha256 of its player token, a label, when it opened and
    when it was last renewed (opened, token rotated or refreshed): a session idle longer
    than the service's limit no longer signs in (docs/players.md)."""

    __slots__ = ("label", "opened_at", "renewed_at", "token_hash")

    def __init__(
        self, token_hash: str, label: str, opened_at: datetime, renewed_at: datetime | None = None
    ) -> None:
        self.token_hash = token_hash
        self.label = label
        self.opened_at = opened_at
        self.renewed_at = renewed_at or opened_at

    def expires_at(self, idle: timedelta) -> datetime:
        return self.renewed_at + idle


class AccountEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, account: Account) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class AccountCreated(Aggregate.Created):
    """A person joined: display name, locale and the first session (token hash only)."""

    class_version: ClassVar[int] = 1
    PERSONAL_FIELDS: ClassVar[dict[str, str]] = {
        "display_name": "originator_id",
        "label": "originator_id",
    }
    """Stored encrypted under the account's own key (crypto-shredding): the name, and the
    device's label (it may name the person: "Mei's phone")."""
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("token_hash",)
    display_name: str
    locale: str
    session_id: UUID
    token_hash: str
    label: str

    def apply(self, aggregate: Any) -> None:
        a: Account = aggregate
        a.display_name = self.display_name
        a.locale = self.locale
        a.sessions = {self.session_id: Session(self.token_hash, self.label, self.timestamp)}
        a.seats = {}
        a.left = {}
        a.ticket = None
        a.quick_play = {}
        a.erased = False


class SessionOpened(AccountEvent):
    """Another device signed in: a new session with its own token."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("token_hash",)
    PERSONAL_FIELDS: ClassVar[dict[str, str]] = {"label": "originator_id"}
    """The device's label is stored encrypted under the account's key (crypto-shredding)."""
    session_id: UUID
    token_hash: str
    label: str

    def apply_to(self, account: Account) -> None:
        account.sessions[self.session_id] = Session(self.token_hash, self.label, self.timestamp)


class SessionTokenRotated(AccountEvent):
    """The session's token was replaced; the old one no longer authenticates."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("token_hash",)
    session_id: UUID
    token_hash: str

    def apply_to(self, account: Account) -> None:
        old = account.sessions[self.session_id]
        account.sessions[self.session_id] = Session(
            self.token_hash, old.label, old.opened_at, self.timestamp
        )


class SessionRefreshed(AccountEvent):
    """The session was used to ask for more time: its idle limit counts from now."""

    session_id: UUID

    def apply_to(self, account: Account) -> None:
        account.sessions[self.session_id].renewed_at = self.timestamp


class ProfileEdited(AccountEvent):
    """The player changed their display name and/or locale (both as they are now). The
    name is personal: sealed under the account's key like ``AccountCreated``'s. Seats
    already taken keep the name they were taken with."""

    PERSONAL_FIELDS: ClassVar[dict[str, str]] = {"display_name": "originator_id"}
    display_name: str
    locale: str

    def apply_to(self, account: Account) -> None:
        account.display_name = self.display_name
        account.locale = self.locale


class SessionEnded(AccountEvent):
    """The session was ended (signed out or revoked): its token no longer authenticates."""

    session_id: UUID

    def apply_to(self, account: Account) -> None:
        del account.sessions[self.session_id]


class SeatClaimed(AccountEvent):
    """The account sits in ``seat`` of ``match_id`` (R1), saved with the match's
    ``SeatTaken`` in one transaction."""

    match_id: UUID
    seat: int
    ticket_id: UUID | None = None
    """The lobby ticket that seated the account (quick play), now closed."""

    def apply_to(self, account: Account) -> None:
        account.seats[self.match_id] = self.seat
        if self.ticket_id is not None:
            account.quick_play[self.match_id] = self.ticket_id
            if account.ticket == self.ticket_id:
                account.ticket = None


class MatchLeft(AccountEvent):
    """The player left their seat in ``match_id`` (a bot plays it, or it is free again
    before round 1): the player token no longer acts there, and the match is listed as
    left. Saved with the match's ``SeatLeft``."""

    match_id: UUID

    def apply_to(self, account: Account) -> None:
        account.left[self.match_id] = account.seats.pop(self.match_id)


class Queued(AccountEvent):
    """The account waits in a lobby with ``ticket_id`` (one ticket at a time)."""

    ticket_id: UUID

    def apply_to(self, account: Account) -> None:
        account.ticket = self.ticket_id


class Unqueued(AccountEvent):
    """The account's ticket was cancelled."""

    ticket_id: UUID

    def apply_to(self, account: Account) -> None:
        account.ticket = None


class AccountErased(AccountEvent):
    """The person asked to be forgotten: their key is destroyed, so every name of theirs
    in the history reads as erased; every session ends."""

    def apply_to(self, account: Account) -> None:
        account.sessions = {}
        account.erased = True


class Account(GameAggregate):
    """A person: sessions (token hashes) and the seats they hold."""

    if TYPE_CHECKING:
        display_name: str
        locale: str
        sessions: dict[UUID, Session]
        seats: dict[UUID, int]
        left: dict[UUID, int]
        """Matches the player left, and the seat they held there."""
        ticket: UUID | None
        """The lobby ticket the account waits with, if any."""
        quick_play: dict[UUID, UUID]
        """Matches quick play seated the account in → the ticket that did."""
        erased: bool

    @classmethod
    def create(
        cls,
        account_id: UUID,
        display_name: str,
        locale: str,
        session_id: UUID,
        token_hash: str,
        label: str,
        now: datetime,
    ) -> Account:
        display_name = check_name(display_name)
        check_locale(locale)
        check_label(label)
        return cls._create(
            AccountCreated,
            id=account_id,
            display_name=display_name,
            locale=locale,
            session_id=session_id,
            token_hash=token_hash,
            label=label,
            timestamp=now,
        )

    # -- queries ---------------------------------------------------------------------------

    def session_of(self, token_hash: str, same: Any) -> UUID | None:
        """The session whose token hash is ``token_hash`` (``same``: a constant-time
        comparison, given by the caller), else None."""
        for session_id, session in self.sessions.items():
            if same(session.token_hash, token_hash):
                return session_id
        return None

    # -- commands --------------------------------------------------------------------------

    def open_session(self, session_id: UUID, token_hash: str, label: str, now: datetime) -> None:
        check_label(label)
        if len(self.sessions) >= MAX_SESSIONS:
            raise IllegalMoveError(
                f"an account has at most {MAX_SESSIONS} sessions: end one first",
                code="too-many-sessions",
            )
        self._emit(SessionOpened, now, session_id=session_id, token_hash=token_hash, label=label)

    def rotate(self, session_id: UUID, token_hash: str, now: datetime) -> None:
        self._known(session_id)
        self._emit(SessionTokenRotated, now, session_id=session_id, token_hash=token_hash)

    def refresh(self, session_id: UUID, now: datetime) -> None:
        self._known(session_id)
        self._emit(SessionRefreshed, now, session_id=session_id)

    def edit_profile(self, display_name: str | None, locale: str | None, now: datetime) -> None:
        """A new display name and/or locale (None: unchanged); nothing new: no event."""
        name = self.display_name if display_name is None else check_name(display_name)
        lang = self.locale if locale is None else locale
        check_locale(lang)
        if (name, lang) != (self.display_name, self.locale):
            self._emit(ProfileEdited, now, display_name=name, locale=lang)

    def leave(self, match_id: UUID, now: datetime) -> int:
        """The player leaves their seat in ``match_id``; answers the seat."""
        seat = self.seats.get(match_id)
        if seat is None:
            raise IllegalMoveError(
                f"you hold no seat in match {match_id}", rule="R1", code="not-seated"
            )
        self._emit(MatchLeft, now, match_id=match_id)
        return seat

    def end_session(self, session_id: UUID, now: datetime) -> None:
        self._known(session_id)
        self._emit(SessionEnded, now, session_id=session_id)

    def queue(self, ticket_id: UUID, now: datetime) -> None:
        """Quick play: one waiting ticket per person, so no ticket of theirs can seat them
        while another does."""
        if self.ticket is not None:
            raise IllegalMoveError(
                f"you wait with ticket {self.ticket} already: cancel it first",
                code="already-queued",
            )
        self._emit(Queued, now, ticket_id=ticket_id)

    def unqueue(self, ticket_id: UUID, now: datetime) -> None:
        if self.ticket == ticket_id:
            self._emit(Unqueued, now, ticket_id=ticket_id)

    def claim_seat(
        self, match_id: UUID, seat: int, now: datetime, *, ticket_id: UUID | None = None
    ) -> None:
        """R1: one seat per match for a person (a second would let one person play both
        sides of a partnership, R2)."""
        if match_id in self.left:
            raise IllegalMoveError(
                f"R1: you left seat {self.left[match_id]} of match {match_id}; a bot plays it now",
                rule="R1",
                code="left-match",
            )
        if match_id in self.seats:
            raise IllegalMoveError(
                f"R1: one seat per person in a match; you already sit in seat "
                f"{self.seats[match_id]} of match {match_id}",
                rule="R1",
                code="already-seated",
            )
        self._emit(SeatClaimed, now, match_id=match_id, seat=seat, ticket_id=ticket_id)

    def erase(self, now: datetime) -> None:
        """Forget the person (their key is destroyed by the service)."""
        if self.erased:
            raise IllegalMoveError("the player is erased already", code="player-erased")
        self._emit(AccountErased, now)

    def _known(self, session_id: UUID) -> None:
        if session_id not in self.sessions:
            raise IllegalMoveError(f"no session {session_id}", code="no-such-session")


def check_name(name: str) -> str:
    """The display name as stored (the name policy, :mod:`domain.names`)."""
    return checked_name(name, "displayName")


def check_locale(locale: str) -> None:
    if locale not in LOCALES:
        raise InvalidInputError(f"locale is one of {', '.join(LOCALES)}, not {locale!r}")


def check_label(label: str) -> None:
    if len(label) > MAX_LABEL:
        raise InvalidInputError(f"a session label is at most {MAX_LABEL} characters")
