"""``/v1/players``: create a player, its sessions (open, rotate, list, end), seats claimed
by the player, a fresh seat token, and the player's matches (docs/players.md).

A player token ``p.<account id hex>.<secret>`` is answered once, stored as its sha256 in
the account's session. It signs in the player's routes and acts for every seat the player
claimed, from any device (:func:`api.auth.seat_of`). 401: no token, or one that is not
(or no longer) valid; 403: a seat or organiser token where a player token is needed.
"""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, Response, delete, patch
from litestar.params import FromPath

from api.calls import BEARER, CHECKED, Reading, Writing, write_route
from api.dto import LOCATION_HEADER
from api.players.dto import (
    ClaimRequest,
    CreatePlayerRequest,
    EditProfileRequest,
    OpenSessionRequest,
    SessionItem,
    SessionList,
)
from api.routes import route
from services.access import signed_player
from services.accounts.commands import (
    CreatePlayer,
    EditProfile,
    EndSession,
    ErasePlayer,
    NewPlayer,
    OpenSession,
    Profile,
    RefreshSession,
    RenewSeatToken,
    RotateToken,
    SessionRefreshed,
    SessionToken,
    profile,
)
from services.accounts.my_matches import MyMatches
from services.accounts.seat_commands import ClaimSeatAsPlayer, LeaveMatch, LeftSeat, PlayerSeat
from services.readmodels.lists import list_my_matches


class PlayerController(Controller):
    path = "/v1/players"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route("/", 201, 409, security=None, headers=(LOCATION_HEADER,), body=CreatePlayerRequest)
    async def create_player(self, write: Writing) -> Response[NewPlayer]:
        """Create a player (a device account); answers its player token once

        The token is long-lived: rotate it (`POST /v1/players/me/token`) or end its session to stop
        it. Another device signs in with `POST /v1/players/me/sessions`.
        """
        data = await write.body()
        command = CreatePlayer(data.display_name, data.locale, data.label)
        return await write.send(command, location=lambda _: "/v1/players/me")

    @route("/me", 401, 403, security=BEARER)
    async def get_me(self, read: Reading) -> Profile:
        """The player of the token

        The player of the token: display name, locale, sign-in kind.
        """
        signed = await read.call(signed_player, read.service, read.credential)
        return profile(signed.account, signed.session_id, read.service)

    @write_route("/me", 200, 401, 403, 409, body=EditProfileRequest, handler=patch)
    async def edit_me(self, write: Writing) -> Response[Profile]:
        """Edit the player's display name and/or language

        The name is shown at tables from now on (seats already taken keep theirs); the language
        is that of problems answered without `Accept-Language`. An absent field is unchanged.
        """
        data = await write.body()
        return await write.send(EditProfile(data.display_name, data.locale))

    @write_route("/me/sessions/current/refresh", 200, 401, 403)
    async def refresh_session(self, write: Writing) -> Response[SessionRefreshed]:
        """Refresh this session: its idle limit counts from now

        A session not refreshed (nor its token rotated) for `SESSION_IDLE_S` stops signing in
        (401, and its streams end); the token itself does not change.
        """
        return await write.send(RefreshSession())

    @write_route("/me", 204, 401, 403, 409, handler=delete)
    async def erase_player(self, write: Writing) -> None:
        """Erase the player (crypto-shredding): their key is destroyed

        Every name of the player in the history now reads `erased player`: matches, replays, state
        at any version, records and standings keep working. The player first leaves every match
        still being played (the timeout bot takes the seat, so no table waits for them). Every
        session ends (the token stops working). Cannot be undone.
        """
        await write.send_no_content(ErasePlayer())

    @route("/me/sessions", 401, 403, security=BEARER)
    async def list_sessions(self, read: Reading) -> SessionList:
        """The player's sessions (devices), oldest first

        The player's sessions (devices), oldest first; tokens are never shown again.
        """
        signed = await read.call(signed_player, read.service, read.credential)
        return SessionList(
            items=[
                SessionItem(
                    session_id=str(sid),
                    label=s.label,
                    opened_at=s.opened_at.isoformat(),
                    current=sid == signed.session_id,
                    expires_at=s.expires_at(read.service.table.session_idle).isoformat(),
                )
                for sid, s in signed.account.sessions.items()
            ]
        )

    @write_route("/me/sessions", 201, 401, 403, 409, body=OpenSessionRequest | None)
    async def open_session(self, write: Writing) -> Response[SessionToken]:
        """Open another session (a new device); answers its token once

        Open another session (a new device) with the player's token; answers the new
        session's token once.
        """
        data = await write.body() or OpenSessionRequest()
        return await write.send(OpenSession(data.label))

    @write_route("/me/token", 200, 401, 403)
    async def rotate_token(self, write: Writing) -> Response[SessionToken]:
        """Rotate the token of this session; the one used stops working at once

        Rotate this session's token: the answer carries the new one once, and the
        token used stops working at once.
        """
        # The key's scope is the old token: once rotated it no longer authorises, so a replay
        # with it is a 401, never the new token (docs/players.md).
        return await write.send(RotateToken())

    @write_route("/me/sessions/{session_id:uuid}", 204, 401, 403, 409, handler=delete)
    async def end_session(self, write: Writing, session_id: FromPath[UUID]) -> None:
        """End a session (sign a device out); its token stops working at once

        End a session (sign a device out): its token stops working at once.
        """
        await write.send_no_content(EndSession(session_id))

    @write_route("/me/seats", 201, *CHECKED, body=ClaimRequest)
    async def claim_seat_as_player(self, write: Writing) -> Response[PlayerSeat]:
        """Claim a seat as this player (R1: one seat per match)

        The player token then acts for the seat from any device; the answer also carries a seat
        token. When the fourth seat fills, round 1 is dealt (R16).
        """
        data = await write.body()
        return await write.send(ClaimSeatAsPlayer(data.match_id, data.seat))

    @write_route("/me/matches/{match_id:uuid}/seat-token", 200, *CHECKED)
    async def renew_seat_token(
        self, write: Writing, match_id: FromPath[UUID]
    ) -> Response[PlayerSeat]:
        """A fresh seat token for the player's seat; the old one stops working

        A fresh seat token for the player's seat in the match; the old one stops
        working at once (its open streams end). Takes no match version.
        """
        return await write.send(RenewSeatToken(match_id))

    @write_route("/me/matches/{match_id:uuid}/leave", 200, *CHECKED)
    async def leave_match(self, write: Writing, match_id: FromPath[UUID]) -> Response[LeftSeat]:
        """Leave the table: a bot plays your seat to the match's end

        The table goes on: the timeout bot (`TIMEOUT_BOT`) takes the seat at once (before round 1
        the seat is free again). Your player token and the seat's tokens no longer act there;
        the match is listed under `left` in your matches. Cannot be undone (R1: no second seat
        in the match). 409 `not-seated`, `match-finished`.
        """
        return await write.send(LeaveMatch(match_id))

    @route("/me/matches", 401, 403, security=BEARER)
    async def list_my_matches(self, read: Reading) -> MyMatches:
        """The player's matches: current (with whose turn) and finished

        The player's matches: current ones with whose turn it is and its deadline,
        then finished ones.
        """
        service, cred, lists = read.service, read.credential, read.runtime.lists
        return await read.call(lambda: list_my_matches(lists, signed_player(service, cred).account))
