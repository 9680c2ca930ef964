"""``/v1/players``: create a player, its sessions (open, rotate, list, end), seats claimed
by the player, a fresh seat token, and the player's matches (docs/players.md).

A player token ``p.<account id hex>.<secret>`` is answered once, stored as its sha256 in
the account's session. It signs in the player's routes and acts for every seat the player
claimed, from any device (:func:`api.auth.seat_of`). 401: no token, or one that is not
(or no longer) valid; 403: a seat or organiser token where a player token is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any
from uuid import UUID, uuid4

from litestar import Controller, Response, delete, patch
from litestar.params import FromPath

from api.calls import BEARER, CHECKED, Reading, Write, Writing, write_route
from api.dto import LOCATION_HEADER
from api.players.dto import (
    ClaimRequest,
    CreatePlayerRequest,
    EditProfileRequest,
    NewPlayer,
    OpenSessionRequest,
    Profile,
    SessionItem,
    SessionList,
    SessionRefreshed,
    SessionToken,
)
from api.routes import route
from domain.rules.errors import IllegalMoveError
from services.access import signed_player
from services.accounts import lobby, players
from services.accounts.my_matches import MyMatches, my_matches
from services.accounts.players import Signed, get_account
from services.accounts.seat_commands import ClaimSeatAsPlayer, LeaveMatch, LeftSeat, PlayerSeat
from services.accounts.store import save_all
from services.game import GameService
from services.idempotency import Receipt, Stamp


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
        service = write.runtime.service

        def work(_: None, stamp: Stamp) -> tuple[int, NewPlayer]:
            account_id = uuid4()
            account, token = players.create_player(
                service,
                data.display_name,
                data.locale,
                data.label,
                account_id=account_id,
                extras=stamp.records(Receipt(201, account_id, 1)),
            )
            return 201, _new(account.id, next(iter(account.sessions)), data, token)

        def replay(_: None, outcome: Receipt) -> NewPlayer:
            account = get_account(service, outcome.subject)
            if account.erased:  # nothing of the person is left to answer with
                raise IllegalMoveError(
                    "the player this Idempotency-Key created is erased", code="player-erased"
                )
            return _new(account.id, next(iter(account.sessions)), data, None)

        return await write.run(lambda: None, work, replay, location=lambda _: "/v1/players/me")

    @route("/me", 401, 403, security=BEARER)
    async def get_me(self, read: Reading) -> Profile:
        """The player of the token

        The player of the token: display name, locale, sign-in kind.
        """
        signed = await read.call(signed_player, read.service, read.credential)
        return _profile(read.service, signed)

    @write_route("/me", 200, 401, 403, 409, body=EditProfileRequest, handler=patch)
    async def edit_me(self, write: Writing) -> Response[Profile]:
        """Edit the player's display name and/or language

        The name is shown at tables from now on (seats already taken keep theirs); the language
        is that of problems answered without `Accept-Language`. An absent field is unchanged.
        """
        data = await write.body()
        service = write.runtime.service

        def work(signed: Signed, stamp: Stamp) -> tuple[int, Profile]:
            account = signed.account
            account.edit_profile(data.display_name, data.locale, service.clock())
            records = stamp.records(Receipt(200, account.id, account.version))
            save_all(service, account, *records)
            return 200, _profile(service, signed)

        def replay(signed: Signed, _: Receipt) -> Profile:
            return _profile(service, signed)

        return await write.run(_player(write), work, replay)

    @write_route("/me/sessions/current/refresh", 200, 401, 403)
    async def refresh_session(self, write: Writing) -> Response[SessionRefreshed]:
        """Refresh this session: its idle limit counts from now

        A session not refreshed (nor its token rotated) for `SESSION_IDLE_S` stops signing in
        (401, and its streams end); the token itself does not change.
        """
        service = write.runtime.service

        def answer(signed: Signed) -> SessionRefreshed:
            session = signed.account.sessions[signed.session_id]
            expires = session.expires_at(service.table.session_idle)
            return SessionRefreshed(
                session_id=str(signed.session_id), expires_at=expires.isoformat()
            )

        def work(signed: Signed, stamp: Stamp) -> tuple[int, SessionRefreshed]:
            account = signed.account
            account.refresh(signed.session_id, service.clock())
            save_all(service, account, *stamp.records(Receipt(200, account.id, account.version)))
            return 200, answer(signed)

        return await write.run(_player(write), work, lambda signed, _: answer(signed))

    @route("/me", 401, 403, status_code=204, security=BEARER, handler=delete)
    async def erase_player(self, read: Reading) -> None:
        """Erase the player (crypto-shredding): their key is destroyed

        Every name of the player in the history now reads `erased player`: matches, replays, state
        at any version, records and standings keep working. The player first leaves every match
        still being played (the timeout bot takes the seat, so no table waits for them). Every
        session ends (the token stops working). Cannot be undone.
        """
        service, cred, bus = read.service, read.credential, read.runtime.bus

        def work() -> None:
            account = signed_player(service, cred).account
            if account.ticket is not None:  # a waiting ticket leaves its lobby first
                lobby.cancel(service, account.id, account.ticket)
            for match_id in list(account.seats):  # no table waits for an erased player
                if not service.get_match(match_id).finished:
                    bus.execute(LeaveMatch(match_id), cred)
            players.erase(service, signed_player(service, cred).account)

        await read.call(work)

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
        service = write.runtime.service

        def work(signed: Signed, stamp: Stamp) -> tuple[int, SessionToken]:
            session_id, new = players.open_session(service, signed.account, data.label)
            _save_key(service, stamp, signed, session_id)
            return 201, SessionToken(session_id=str(session_id), token=new)

        return await write.run(_player(write), work, session_replay)

    @write_route("/me/token", 200, 401, 403)
    async def rotate_token(self, write: Writing) -> Response[SessionToken]:
        """Rotate the token of this session; the one used stops working at once

        Rotate this session's token: the answer carries the new one once, and the
        token used stops working at once.
        """
        service = write.runtime.service

        def work(signed: Signed, stamp: Stamp) -> tuple[int, SessionToken]:
            new = players.rotate(service, signed)
            _save_key(service, stamp, signed, signed.session_id)
            return 200, SessionToken(session_id=str(signed.session_id), token=new)

        # The key's scope is the old token: once rotated it no longer authorises, so a
        # replay with it is a 401, never the new token (docs/players.md).
        return await write.run(_player(write), work, session_replay)

    @route(
        "/me/sessions/{session_id:uuid}",
        401,
        403,
        409,
        status_code=204,
        security=BEARER,
        handler=delete,
    )
    async def end_session(self, read: Reading, session_id: FromPath[UUID]) -> None:
        """End a session (sign a device out); its token stops working at once

        End a session (sign a device out): its token stops working at once.
        """
        service, cred = read.service, read.credential

        def work() -> None:
            players.end_session(service, signed_player(service, cred).account, session_id)

        await read.call(work)

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
        service = write.runtime.service

        def work(signed: Signed, stamp: Stamp) -> tuple[int, PlayerSeat]:
            seat, new, version = players.fresh_seat_token(
                service,
                signed.account,
                match_id,
                lambda seat, version: stamp.records(Receipt(200, match_id, version, seat)),
            )
            return 200, _seat(match_id, seat, new, version)

        def replay(_: Signed, outcome: Receipt) -> PlayerSeat:
            return _seat(match_id, outcome.seat or 0, None, outcome.version)

        return await write.run(_player(write), work, replay)

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
        service, cred = read.service, read.credential
        return await read.call(lambda: my_matches(service, signed_player(service, cred).account))


def _player(write: Write) -> Callable[[], Signed]:
    """The player token's check (401/403): the account and session it signs in."""
    return partial(signed_player, write.runtime.service, write.credential)


def _save_key(service: Any, stamp: Stamp, signed: Signed, session: UUID) -> None:
    """The key's record, after the account's save (a retry finds it and replays)."""
    account = signed.account
    outcome = Receipt(200, account.id, account.version, facts={"session": str(session)})
    stamp.save_after(service, outcome)


def _seat(match_id: UUID, seat: int, token: str | None, version: int) -> PlayerSeat:
    """A seat's answer; a replay's (no token) says the token is withheld."""
    return PlayerSeat(
        match_id=str(match_id),
        seat=seat,
        token=token,
        version=version,
        token_withheld=token is None,
    )


def _new(
    account_id: UUID, session: UUID, data: CreatePlayerRequest, token: str | None
) -> NewPlayer:
    return NewPlayer(
        player_id=str(account_id),
        session_id=str(session),
        token=token,
        display_name=data.display_name,
        locale=data.locale,
        token_withheld=token is None,
    )


def session_replay(_: Signed, outcome: Receipt) -> SessionToken:
    """A replayed session answer: the session, its token withheld (docs/security.md)."""
    sid = str(outcome.facts.get("session") or "")
    return SessionToken(session_id=sid, token=None, token_withheld=True)


def _profile(service: GameService, signed: Signed) -> Profile:
    a = signed.account
    session = a.sessions[signed.session_id]
    return Profile(
        player_id=str(a.id),
        display_name=a.display_name,
        locale=a.locale,
        session_id=str(signed.session_id),
        session_expires_at=session.expires_at(service.table.session_idle).isoformat(),
    )
