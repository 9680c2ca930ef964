"""Friends, blocks, the friend code, presence choices and table invitations: the commands
and their handlers (:mod:`services.bus`; docs/players.md "Friends", docs/decisions.md
D-social).

No oracle: a request to a player who blocks the caller (or whom the caller blocks), to an
erased player or to an id or code that names nobody is the same 404 ``no-player``; an
invitation to anyone who is not a friend the caller can see online — a stranger, a
blocked friend, one appearing offline — is the same 404 ``no-friend``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Final, Literal
from uuid import UUID, uuid4

import msgspec
from msgspec import Meta

from domain.accounts.account import Account
from domain.accounts.friendship import Friendship
from domain.accounts.invite import CODE_ALPHABET
from domain.accounts.social import (
    CODE_LENGTH,
    FriendCode,
    SocialProfile,
    friend_code_id,
    social_id,
)
from domain.accounts.table_invitation import TableInvitation
from domain.rules.errors import IllegalMoveError, InvalidInputError
from services import field_docs
from services.access import signed_player
from services.accounts.players import Signed
from services.accounts.seat_commands import PlayerSeat
from services.accounts.seating import claim_seat, free_seats
from services.bus import Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.errors import ForbiddenError, NotFoundError
from services.game import GameService
from services.match_commands import TOKEN, match_version
from services.social.blocks import blocked_between, pair
from services.social.reads import SocialModels
from services.unit_of_work import Reading, UnitOfWork

STATUS: Final = "status"
CODE: Final = "code"
ATTEMPTS: Final = 5
NO_PLAYER: Final = "no player you can ask with this id or code"
NO_FRIEND: Final = "no friend of yours available to invite with this id"


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class FriendRequestAnswer(_Answer, frozen=True, kw_only=True):
    """What became of the request."""

    player_id: Annotated[str, Meta(description="The player asked (a UUID).")]
    status: Annotated[
        Literal["requested", "friends"],
        Meta(description="`requested`, or `friends` when they had asked you already."),
    ]


class FriendCodeAnswer(_Answer, frozen=True, kw_only=True):
    """The player's friend code (others ask with it)."""

    code: Annotated[str, Meta(description="The code (10 letters and digits).")]


class PresenceChoice(_Answer, frozen=True, kw_only=True):
    """The player's presence settings."""

    appear_offline: Annotated[bool, Meta(description="Friends see the player offline.")]
    notify_friend_online: Annotated[
        bool, Meta(description="Hear `friend-online` (stream, webhooks) as a friend comes online.")
    ]


class InvitationSent(_Answer, frozen=True, kw_only=True):
    """The invitation sent to the friend."""

    invitation_id: Annotated[str, Meta(description="The invitation (a UUID).")]
    match_id: Annotated[str, field_docs.MATCH_ID]
    seat: Annotated[int, field_docs.SEAT]
    expires_at: Annotated[str, Meta(description="When it lapses unanswered, ISO 8601.")]


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SendFriendRequest:
    """Ask a player (by id, or by their friend code) to be friends."""

    player_id: UUID | None = None
    friend_code: str | None = None


@dataclass(frozen=True, slots=True)
class AnswerFriendRequest:
    """Accept (or decline) the request ``player_id`` sent."""

    player_id: UUID
    accept: bool


@dataclass(frozen=True, slots=True)
class WithdrawFriendRequest:
    player_id: UUID


@dataclass(frozen=True, slots=True)
class RemoveFriend:
    player_id: UUID


@dataclass(frozen=True, slots=True)
class BlockPlayer:
    """Block (or unblock, ``block`` False) a player."""

    player_id: UUID
    block: bool = True


@dataclass(frozen=True, slots=True)
class RotateFriendCode:
    """A new friend code; the old one stops working."""


@dataclass(frozen=True, slots=True)
class ChoosePresence:
    """The player's presence settings; a setting left None keeps its value."""

    appear_offline: bool | None
    notify_friend_online: bool | None


@dataclass(frozen=True, slots=True)
class InviteFriend:
    """Invite a friend to an empty seat of a table where the caller sits."""

    match_id: UUID
    player_id: UUID
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class AnswerInvitation:
    invitation_id: UUID
    accept: bool


# -- shared steps --------------------------------------------------------------------------------


def new_friend_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class _Mine:
    """A command of the player signed in by the caller's player token."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService, models: SocialModels) -> None:
        self.service = service
        self.models = models
        self.board = models.board

    def authorise(self, command: object, caller: Caller) -> Signed:
        if isinstance(caller, Service):
            raise ForbiddenError("a player's command needs the player's token")
        return signed_player(self.service, caller)

    def withdraw_between(self, uow: UnitOfWork, me: UUID, other: UUID) -> None:
        """The open invitations either sent the other end in this save (a friendship
        ended, a block)."""
        view = self.models.fresh()
        rows = view.invitations_for(me, inviter=True) + view.invitations_for(me, inviter=False)
        for row in rows:
            if other in (row.inviter, row.invitee):
                invitation = uow.find(row.invitation_id, TableInvitation)
                if invitation is not None:
                    invitation.withdraw(uow.now)
                    uow.add(invitation)

    def tell(self, uow: UnitOfWork, *players: UUID) -> None:
        """Once saved, the streams of ``players`` read the log at once (any replica)."""
        board = self.board

        def told() -> None:
            for player in players:
                board.ring(player)

        uow.after(told)


def reachable(uow: UnitOfWork, player_id: UUID) -> Account | None:
    account = uow.find(player_id, Account)
    return None if account is None or account.erased else account


def _status(outcome: Outcome) -> str:
    return str(outcome.facts.get(STATUS) or "")


# -- the handlers --------------------------------------------------------------------------------


class SendFriendRequestHandler(_Mine, Handler[SendFriendRequest, Signed, FriendRequestAnswer]):
    def handle(self, uow: UnitOfWork, command: SendFriendRequest, who: Signed) -> Outcome:
        me = who.account.id
        target = self._target(uow, command)
        if target is None or target == me or reachable(uow, target) is None:
            raise NotFoundError(NO_PLAYER)
        found = pair(uow, me, target)
        if found is not None and found.blocked:
            raise NotFoundError(NO_PLAYER)  # the same answer as for nobody (no oracle)
        f = found or Friendship.open(me, target, uow.now)
        uow.add(f)
        friends = f.request(me, uow.now)
        self.tell(uow, me, target)
        status = "friends" if friends else "requested"
        return Outcome(201, f.id, f.version, facts={STATUS: status, "player": str(target)})

    @staticmethod
    def _target(uow: UnitOfWork, command: SendFriendRequest) -> UUID | None:
        if (command.player_id is None) == (command.friend_code is None):
            raise InvalidInputError("give playerId or friendCode (one of them)")
        if command.player_id is not None:
            return command.player_id
        assert command.friend_code is not None
        code = uow.find(friend_code_id(command.friend_code), FriendCode)
        return None if code is None or code.retired else code.owner

    def answer(
        self, command: SendFriendRequest, who: Signed, outcome: Outcome, state: Reading
    ) -> FriendRequestAnswer:
        status: Literal["requested", "friends"] = (
            "friends" if _status(outcome) == "friends" else "requested"
        )
        return FriendRequestAnswer(player_id=str(outcome.facts.get("player")), status=status)


class AnswerFriendRequestHandler(_Mine, Handler[AnswerFriendRequest, Signed, None]):
    def handle(self, uow: UnitOfWork, command: AnswerFriendRequest, who: Signed) -> Outcome:
        me = who.account.id
        f = pair(uow, me, command.player_id)
        if f is None or not f.pending_to(me):
            raise NotFoundError("no request from this player waits for your answer")
        if command.accept:
            f.accept(me, uow.now)
        else:
            f.decline(me, uow.now)
        uow.add(f)
        self.tell(uow, me, command.player_id)
        return Outcome(204, f.id, f.version)

    def answer(
        self, command: AnswerFriendRequest, who: Signed, outcome: Outcome, state: Reading
    ) -> None:
        return None


class WithdrawFriendRequestHandler(_Mine, Handler[WithdrawFriendRequest, Signed, None]):
    def handle(self, uow: UnitOfWork, command: WithdrawFriendRequest, who: Signed) -> Outcome:
        me = who.account.id
        f = pair(uow, me, command.player_id)
        if f is None or f.requester != me:
            raise NotFoundError("you have no request waiting for this player")
        f.withdraw(me, uow.now)
        uow.add(f)
        self.tell(uow, me, command.player_id)
        return Outcome(204, f.id, f.version)

    def answer(
        self, command: WithdrawFriendRequest, who: Signed, outcome: Outcome, state: Reading
    ) -> None:
        return None


class RemoveFriendHandler(_Mine, Handler[RemoveFriend, Signed, None]):
    def handle(self, uow: UnitOfWork, command: RemoveFriend, who: Signed) -> Outcome:
        me = who.account.id
        f = pair(uow, me, command.player_id)
        if f is None or not f.friends:
            raise NotFoundError("no friend of yours with this id")
        f.remove(me, uow.now)
        uow.add(f)
        self.withdraw_between(uow, me, command.player_id)
        self.tell(uow, me, command.player_id)
        return Outcome(204, f.id, f.version)

    def answer(self, command: RemoveFriend, who: Signed, outcome: Outcome, state: Reading) -> None:
        return None


class BlockPlayerHandler(_Mine, Handler[BlockPlayer, Signed, None]):
    def handle(self, uow: UnitOfWork, command: BlockPlayer, who: Signed) -> Outcome:
        me = who.account.id
        if command.player_id == me or reachable(uow, command.player_id) is None:
            raise NotFoundError(NO_PLAYER)
        f = pair(uow, me, command.player_id)
        if command.block:
            f = f or Friendship.open(me, command.player_id, uow.now)
            f.block(me, uow.now)
            self.withdraw_between(uow, me, command.player_id)
        else:
            if f is None or me not in f.blocked_by:
                raise NotFoundError("you do not block this player")
            f.unblock(me, uow.now)
        uow.add(f)
        self.tell(uow, me, command.player_id)
        return Outcome(204, f.id, f.version)

    def answer(self, command: BlockPlayer, who: Signed, outcome: Outcome, state: Reading) -> None:
        return None


def social_profile(uow: UnitOfWork, account_id: UUID) -> SocialProfile:
    found = uow.find(social_id(account_id), SocialProfile)
    if found is None:
        found = SocialProfile.open(account_id, uow.now)
    uow.add(found)
    return found


class RotateFriendCodeHandler(_Mine, Handler[RotateFriendCode, Signed, FriendCodeAnswer]):
    """A code already taken conflicts on its creation and another is drawn."""

    def handle(self, uow: UnitOfWork, command: RotateFriendCode, who: Signed) -> Outcome:
        profile = social_profile(uow, who.account.id)
        if profile.code is not None:
            old = uow.get(friend_code_id(profile.code), FriendCode, "friend code")
            old.retire(uow.now)
        code = new_friend_code()
        uow.add(FriendCode.issue(code, who.account.id, uow.now))
        profile.change_code(code, uow.now)
        return Outcome(200, profile.id, profile.version, facts={CODE: code})

    def answer(
        self, command: RotateFriendCode, who: Signed, outcome: Outcome, state: Reading
    ) -> FriendCodeAnswer:
        return FriendCodeAnswer(code=str(outcome.facts.get(CODE)))


class ChoosePresenceHandler(_Mine, Handler[ChoosePresence, Signed, PresenceChoice]):
    def handle(self, uow: UnitOfWork, command: ChoosePresence, who: Signed) -> Outcome:
        profile = social_profile(uow, who.account.id)
        hidden = (
            profile.appear_offline if command.appear_offline is None else command.appear_offline
        )
        notify = command.notify_friend_online
        profile.choose(hidden, profile.notify_online if notify is None else notify, uow.now)
        player = who.account.id
        uow.after(lambda: self.board.hide(player, hidden))
        return Outcome(200, profile.id, profile.version)

    def answer(
        self, command: ChoosePresence, who: Signed, outcome: Outcome, state: Reading
    ) -> PresenceChoice:
        profile = state.get(outcome.subject, SocialProfile, "social profile", outcome.version)
        return PresenceChoice(
            appear_offline=profile.appear_offline, notify_friend_online=profile.notify_online
        )


class InviteFriendHandler(_Mine, Handler[InviteFriend, Signed, InvitationSent]):
    """The inviter sits at the table; the friend is one they can see online (else 404
    ``no-friend``, whatever the reason: module docstring)."""

    def __init__(self, service: GameService, models: SocialModels, ttl: timedelta) -> None:
        super().__init__(service, models)
        self.ttl = ttl

    def handle(self, uow: UnitOfWork, command: InviteFriend, who: Signed) -> Outcome:
        me, friend = who.account.id, command.player_id
        if command.match_id not in who.account.seats:
            raise NotFoundError(f"you hold no seat in match {command.match_id}")
        match = uow.match(command.match_id)
        if match.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
        f = pair(uow, me, friend)
        available = (
            f is not None
            and f.friends
            and not f.blocked
            and reachable(uow, friend) is not None
            and self.board.of(friend).state != "offline"
        )
        if not available:
            raise NotFoundError(NO_FRIEND)
        free = free_seats(match)
        seat = command.seat if command.seat is not None else (free[0] if free else None)
        if seat is None or seat not in free:
            raise IllegalMoveError("R1: no empty seat to invite to", rule="R1", code="no-free-seat")
        sent = self.still_open(uow, me, friend, match.id)
        if sent is not None:  # asked again: the open invitation, not another notice
            return Outcome(201, sent.id, sent.version, sent.seat)
        invitation = TableInvitation.send(uuid4(), me, friend, match.id, seat, self.ttl, uow.now)
        uow.add(invitation)
        self.tell(uow, friend)
        return Outcome(201, invitation.id, invitation.version, seat)

    def still_open(
        self, uow: UnitOfWork, me: UUID, friend: UUID, match_id: UUID
    ) -> TableInvitation | None:
        """The caller's invitation of ``friend`` to this table still open, if any."""
        for row in self.models.fresh().invitations_for(me, inviter=True):
            if row.invitee == friend and row.match_id == match_id:
                invitation = uow.find(row.invitation_id, TableInvitation)
                if (
                    invitation is not None
                    and invitation.status == "open"
                    and uow.now < invitation.expires_at
                ):
                    return invitation
        return None

    def answer(
        self, command: InviteFriend, who: Signed, outcome: Outcome, state: Reading
    ) -> InvitationSent:
        invitation = state.get(outcome.subject, TableInvitation, "invitation", outcome.version)
        return InvitationSent(
            invitation_id=str(invitation.id),
            match_id=str(invitation.match_id),
            seat=invitation.seat,
            expires_at=invitation.expires_at.isoformat(),
        )


class AnswerInvitationHandler(_Mine, Handler[AnswerInvitation, Signed, PlayerSeat | None]):
    """Accepting takes the invited seat (or the lowest free one if it was taken meanwhile)
    with the match's own seat command; the invitation and the seat in one save."""

    def __init__(self, service: GameService, models: SocialModels, dealer: Dealer) -> None:
        super().__init__(service, models)
        self.dealer = dealer

    def handle(self, uow: UnitOfWork, command: AnswerInvitation, who: Signed) -> Outcome:
        invitation = uow.find(command.invitation_id, TableInvitation)
        if invitation is None or invitation.invitee != who.account.id:
            raise NotFoundError(f"no invitation {command.invitation_id}")
        if not command.accept:
            invitation.decline(uow.now)
            uow.add(invitation)
            return Outcome(204, invitation.id, invitation.version)
        invitation.accept(uow.now)
        uow.add(invitation)
        if blocked_between(uow, invitation.inviter, who.account.id):
            raise NotFoundError(f"no invitation {command.invitation_id}")
        match = uow.match(invitation.match_id)
        if match.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
        free = free_seats(match)
        if not free:
            raise IllegalMoveError("R1: the table has four players already", code="no-free-seat")
        seat = invitation.seat if invitation.seat in free else free[0]
        account = uow.get(who.account.id, Account, "player")
        token = claim_seat(
            uow,
            self.dealer,
            account,
            match,
            seat,
            invited=True,
            session_id=who.session_id,
            distinct=True,
        )
        version = match_version(uow, match)
        return Outcome(201, match.id, version, seat, minted={TOKEN: token})

    def answer(
        self, command: AnswerInvitation, who: Signed, outcome: Outcome, state: Reading
    ) -> PlayerSeat | None:
        if outcome.status == 204:
            return None
        return PlayerSeat(
            match_id=str(outcome.subject),
            seat=outcome.seat or 0,
            token=outcome.minted.get(TOKEN),
            version=outcome.version,
            token_withheld=state.replay,
        )


# -- erasure ---------------------------------------------------------------------------------------


def erase_social(
    uow: UnitOfWork, player: UUID, others: list[UUID], invitations: list[UUID]
) -> None:
    """In the erasure's save: everything between ``player`` and ``others`` ends, their
    open ``invitations`` (sent or received) are withdrawn, their friend code is retired
    and their settings erased."""
    for other in others:
        f = pair(uow, player, other)
        if f is not None:
            f.erase(player, uow.now)
            uow.add(f)
    for iid in invitations:
        invitation = uow.find(iid, TableInvitation)
        if invitation is not None:
            invitation.withdraw(uow.now)
            uow.add(invitation)
    profile = uow.find(social_id(player), SocialProfile)
    if profile is not None:
        if profile.code is not None:
            code = uow.find(friend_code_id(profile.code), FriendCode)
            if code is not None:
                code.retire(uow.now)
                uow.add(code)
        profile.erase(uow.now)
        uow.add(profile)
