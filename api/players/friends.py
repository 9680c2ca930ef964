"""Friends, blocks, the friend code, presence and table invitations over REST
(docs/players.md "Friends", docs/decisions.md D-social): every write a command through the
bus, every list read from the friends' read model. A player token signs every route in.
"""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from litestar import Controller, Response, delete, put
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, QueryParameter
from msgspec import Meta

from api.calls import BEARER, CHECKED, Read, Reading, Writing, write_route
from api.dto import _Request
from api.routes import route
from services.access import signed_player
from services.accounts.seat_commands import PlayerSeat
from services.social.commands import (
    AnswerFriendRequest,
    AnswerInvitation,
    BlockPlayer,
    ChoosePresence,
    FriendCodeAnswer,
    FriendRequestAnswer,
    InvitationSent,
    InviteFriend,
    PresenceChoice,
    RemoveFriend,
    RotateFriendCode,
    SendFriendRequest,
    WithdrawFriendRequest,
)
from services.social.reads import (
    FriendList,
    InvitationList,
    PlayerList,
    SocialSettings,
    list_friends,
    list_invitations,
    list_players,
    settings_of,
)

PageLimit = Annotated[int, QueryParameter(ge=1, le=100, description="Items per page")]
AfterCursor = Annotated[
    str | None,
    QueryParameter(max_length=200, description="`next` of the previous page (a keyset cursor)"),
]
Direction = Annotated[
    Literal["in", "out"],
    QueryParameter(description="`in`: requests waiting for you; `out`: yours"),
]


class FriendRequestBody(_Request, frozen=True, kw_only=True):
    """Whom to ask: their player id or their friend code (one of them)."""

    player_id: Annotated[UUID | None, Meta(description="The player's id.")] = None
    friend_code: Annotated[
        Annotated[str, Meta(min_length=10, max_length=12)] | None,
        Meta(
            description="Their friend code (case and dashes are free).",
            examples=["K7QXM2PAB9"],
        ),
    ] = None


class PresenceBody(_Request, frozen=True, kw_only=True):
    """The player's presence settings: a setting left out keeps its value."""

    appear_offline: Annotated[
        bool | None, Meta(description="Friends see you offline (left out: unchanged).")
    ] = None
    notify_friend_online: Annotated[
        bool | None,
        Meta(
            description="Hear `friend-online` (stream, webhooks) as a friend comes online "
            "(left out: unchanged)."
        ),
    ] = None


class InviteFriendBody(_Request, frozen=True, kw_only=True):
    """The friend to invite, and the seat (the lowest empty one by default)."""

    player_id: Annotated[UUID, Meta(description="The friend's id.")]
    seat: Annotated[
        Annotated[int, Meta(ge=0, le=3)] | None,
        Meta(description="Seat 0..3 (R1); the lowest empty one when left out."),
    ] = None


class InvitationAnswerBody(_Request, frozen=True, kw_only=True):
    """The answer to a friend request or a table invitation."""

    accept: Annotated[bool, Meta(description="true: take the seat; false: decline.")]


def _me(read: Read) -> UUID:
    return signed_player(read.service, read.credential).account.id


class FriendController(Controller):
    path = "/v1/players/me"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/friends", 400, 401, 403, security=BEARER)
    async def list_friends(
        self, read: Reading, limit: PageLimit = 50, after: AfterCursor = None
    ) -> FriendList:
        """The player's friends with their presence, oldest friendship first

        Presence is `online`, `in-match` (with the match when it is public), `away` or
        `offline` — derived from the friend's streams and commands; a friend appearing
        offline is `offline`. `after` = the previous page's `next`.
        """
        models = read.runtime.social
        return await read.call(lambda: list_friends(models, _me(read), after, limit))

    @write_route("/friends/{player_id:uuid}", 204, 401, 403, 404, handler=delete)
    async def remove_friend(self, write: Writing, player_id: FromPath[UUID]) -> None:
        """End a friendship (either friend may)

        Either friend ends it, and the open table invitations between them; neither is
        told. 404 for no friend with this id.
        """
        await write.send_no_content(RemoveFriend(player_id))

    @route("/friend-requests", 400, 401, 403, security=BEARER)
    async def list_friend_requests(
        self,
        read: Reading,
        direction: Direction = "in",
        limit: PageLimit = 50,
        after: AfterCursor = None,
    ) -> PlayerList:
        """Friend requests waiting for you (`in`) or sent by you (`out`), oldest first

        Requests to you (`in`) or yours (`out`), oldest first; `after` = the previous page's
        `next`. A player who blocks you never appears here, nor you in theirs.
        """
        models = read.runtime.social
        kind: Literal["incoming", "outgoing"] = "incoming" if direction == "in" else "outgoing"
        return await read.call(lambda: list_players(models, _me(read), kind, after, limit))

    @write_route("/friend-requests", 201, *CHECKED, body=FriendRequestBody)
    async def send_friend_request(self, write: Writing) -> Response[FriendRequestAnswer]:
        """Ask a player to be friends, by id or friend code

        A request both ways makes them friends at once (`status: friends`). 404 `no-player`
        for an id or code that names nobody you can ask — an unknown, erased or blocking
        player alike. Counted by `FRIEND_REQUEST_QUOTA_PER_HOUR` (429 with `Retry-After`).
        """
        data = await write.body()
        return await write.send(SendFriendRequest(data.player_id, data.friend_code))

    @write_route(
        "/friend-requests/{player_id:uuid}/answer", 204, *CHECKED, body=InvitationAnswerBody
    )
    async def answer_friend_request(self, write: Writing, player_id: FromPath[UUID]) -> None:
        """Accept or decline a request the player sent you

        `accept: true` makes you friends (they hear `friend-accepted`); `false` declines
        without telling them. 404 when no request of theirs waits for you.
        """
        data = await write.body()
        await write.send_no_content(AnswerFriendRequest(player_id, data.accept))

    @write_route("/friend-requests/{player_id:uuid}", 204, 401, 403, 404, 409, handler=delete)
    async def withdraw_friend_request(self, write: Writing, player_id: FromPath[UUID]) -> None:
        """Withdraw your request to the player

        The request is gone from both lists. 404 when none of yours waits for them.
        """
        await write.send_no_content(WithdrawFriendRequest(player_id))

    @route("/blocks", 400, 401, 403, security=BEARER)
    async def list_blocks(
        self, read: Reading, limit: PageLimit = 50, after: AfterCursor = None
    ) -> PlayerList:
        """The players you block, oldest first

        The players you block; `after` = the previous page's `next`. Nobody is told.
        """
        models = read.runtime.social
        return await read.call(lambda: list_players(models, _me(read), "blocked", after, limit))

    @write_route("/blocks/{player_id:uuid}", 204, 401, 403, 404, 409, handler=put)
    async def block_player(self, write: Writing, player_id: FromPath[UUID]) -> None:
        """Block a player

        The friendship, any request and the open table invitations between you end; they
        can no longer ask you, invite you or see your presence, and quick play (casual or
        ranked) never seats you together. They are not told: what
        they try is answered as for a player who does not exist.
        """
        await write.send_no_content(BlockPlayer(player_id, block=True))

    @write_route("/blocks/{player_id:uuid}", 204, 401, 403, 404, 409, handler=delete)
    async def unblock_player(self, write: Writing, player_id: FromPath[UUID]) -> None:
        """Lift your block

        Lift your block; the friendship does not come back (ask again).
        """
        await write.send_no_content(BlockPlayer(player_id, block=False))

    @route("/social", 401, 403, security=BEARER)
    async def get_social(self, read: Reading) -> SocialSettings:
        """Your friend code, presence settings and presence

        Your friend code (null until made), presence settings and the presence your friends
        see now.
        """
        models = read.runtime.social
        return await read.call(lambda: settings_of(models, _me(read)))

    @write_route("/friend-code", 200, 401, 403, 409)
    async def rotate_friend_code(self, write: Writing) -> Response[FriendCodeAnswer]:
        """A new friend code; the old one stops working at once

        The first call makes the player's code; each later one replaces it.
        """
        return await write.send(RotateFriendCode())

    @write_route("/presence", 200, *CHECKED, body=PresenceBody, handler=put)
    async def choose_presence(self, write: Writing) -> Response[PresenceChoice]:
        """Your presence settings

        `appearOffline`: friends see you offline and cannot invite you; `notifyFriendOnline`:
        `friend-online` on your stream and webhooks when a friend comes online. A setting left
        out keeps its value (turning "appear offline" on or off leaves the alerts as they are).
        """
        data = await write.body()
        return await write.send(ChoosePresence(data.appear_offline, data.notify_friend_online))

    @route("/invitations", 401, 403, security=BEARER)
    async def list_invitations(self, read: Reading) -> InvitationList:
        """Open table invitations from your friends, oldest first

        Invitations not yet answered nor expired, oldest first (at most 100).
        """
        models = read.runtime.social
        return await read.call(lambda: list_invitations(models, _me(read), read.service.clock()))

    @write_route(
        "/invitations/{invitation_id:uuid}/answer",
        201,
        *CHECKED,
        body=InvitationAnswerBody,
        also={
            204: ResponseSpec(
                data_container=None,
                description="Declined (`accept: false`): no content",
                generate_examples=False,
            )
        },
    )
    async def answer_invitation(
        self, write: Writing, invitation_id: FromPath[UUID]
    ) -> Response[PlayerSeat | None]:
        """Accept a table invitation (take the seat) or decline it

        Accepting answers the seat with a seat token once (201); declining answers 204.
        409 `invitation-expired`, `invitation-closed`, `no-free-seat`.
        """
        data = await write.body()
        return await write.send(AnswerInvitation(invitation_id, data.accept))


class TableInvitationController(Controller):
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route(
        "/v1/matches/{match_id:uuid}/friend-invitations", 201, *CHECKED, body=InviteFriendBody
    )
    async def invite_friend(
        self, write: Writing, match_id: FromPath[UUID]
    ) -> Response[InvitationSent]:
        """Invite a friend to an empty seat of a table where you sit

        It reaches the friend's player stream and webhooks (`table-invitation`) and lasts
        `TABLE_INVITATION_TTL_S`; inviting the same friend to the same table again answers
        the invitation still open (no second notice). 404 `no-friend` for anyone you cannot
        invite — not a friend, blocked, or offline to you — alike.
        """
        data = await write.body()
        return await write.send(InviteFriend(match_id, data.player_id, data.seat))
