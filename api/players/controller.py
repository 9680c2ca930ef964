"""``/v1/players``: create a player, its sessions (open, rotate, list, end), seats claimed
by the player, a fresh seat token, and the player's matches (docs/players.md).

A player token ``p.<account id hex>.<secret>`` is answered once, stored as its sha256 in
the account's session. It signs in the player's routes and acts for every seat the player
claimed, from any device (:func:`api.auth.seat_of`). 401: no token, or one that is not
(or no longer) valid; 403: a seat or organiser token where a player token is needed.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from api.auth import bearer, player_of, scope_of
from api.dto import LOCATION_HEADER, REPLAYED_HEADER, problems
from api.idempotency import Answer, Key, run
from api.matches import BEARER, IdempotencyKey, play_bots
from api.players.dto import (
    ClaimRequest,
    CreatePlayerRequest,
    NewPlayer,
    OpenSessionRequest,
    PlayerSeat,
    Profile,
    SessionItem,
    SessionList,
    SessionToken,
)
from api.runtime import Runtime
from api.strict import json_body, read_body
from services.accounts import lobby, players, seating
from services.accounts.my_matches import MyMatches, my_matches
from services.accounts.players import get_account
from services.idempotency import Outcome


def _client(request: Request[Any, Any, Any]) -> str | None:
    return request.client.host if request.client else None


class PlayerController(Controller):
    path = "/v1/players"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/",
        status_code=201,
        summary="Create a player (a device account); answers its player token once",
        description="The token is long-lived: rotate it (`POST /v1/players/me/token`) or end "
        "its session to stop it. Another device signs in with `POST /v1/players/me/sessions`.",
        responses=problems(409, body=True),
        response_headers=[LOCATION_HEADER, REPLAYED_HEADER],
        opt=json_body(CreatePlayerRequest),
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[NewPlayer]:
        data = await read_body(request, CreatePlayerRequest)
        service = runtime.service

        def work(key: Key) -> Answer[NewPlayer]:
            account_id = uuid4()
            account, token = players.create_player(
                service,
                data.display_name,
                data.locale,
                data.label,
                account_id=account_id,
                extras=key.records(Outcome(201, account_id, 1)),
            )
            session = next(iter(account.sessions))
            return Answer(201, _new(account.id, session, data, token))

        def replay(outcome: Outcome) -> NewPlayer:
            account = get_account(service, outcome.subject)
            return _new(account.id, next(iter(account.sessions)), data, None)

        scope = scope_of(bearer(request), _client(request))
        response = await run(runtime, request, idempotency_key, scope, work, replay)
        response.headers["Location"] = "/v1/players/me"
        return response

    @get(
        "/me",
        summary="The player of the token",
        responses=problems(401, 403),
        security=BEARER,
    )
    async def me(
        self, request: Request[Any, Any, Any], runtime: NamedDependency[Runtime]
    ) -> Profile:
        signed = await runtime.call(player_of, runtime.service, bearer(request))
        a = signed.account
        return Profile(
            player_id=str(a.id),
            display_name=a.display_name,
            locale=a.locale,
            session_id=str(signed.session_id),
        )

    @delete(
        "/me",
        status_code=204,
        summary="Erase the player (crypto-shredding): their key is destroyed",
        description="Every name of the player in the history now reads `erased player`: "
        "matches, replays, state at any version, records and standings keep working. Every "
        "session ends (the token stops working). Cannot be undone.",
        responses=problems(401, 403),
        security=BEARER,
    )
    async def erase(
        self, request: Request[Any, Any, Any], runtime: NamedDependency[Runtime]
    ) -> None:
        service, token = runtime.service, bearer(request)

        def work() -> None:
            account = player_of(service, token).account
            if account.ticket is not None:  # a waiting ticket leaves its lobby first
                lobby.cancel(service, account.id, account.ticket)
                account = player_of(service, token).account
            players.erase(service, account)

        await runtime.call(work)

    @get(
        "/me/sessions",
        summary="The player's sessions (devices), oldest first",
        responses=problems(401, 403),
        security=BEARER,
    )
    async def sessions(
        self, request: Request[Any, Any, Any], runtime: NamedDependency[Runtime]
    ) -> SessionList:
        signed = await runtime.call(player_of, runtime.service, bearer(request))
        return SessionList(
            items=[
                SessionItem(
                    session_id=str(sid),
                    label=s.label,
                    opened_at=s.opened_at.isoformat(),
                    current=sid == signed.session_id,
                )
                for sid, s in signed.account.sessions.items()
            ]
        )

    @post(
        "/me/sessions",
        status_code=201,
        summary="Open another session (a new device); answers its token once",
        responses=problems(401, 403, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(OpenSessionRequest | None),
    )
    async def open_session(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[SessionToken]:
        data = await read_body(request, OpenSessionRequest | None) or OpenSessionRequest()
        service, token = runtime.service, bearer(request)

        def work(key: Key) -> Answer[SessionToken]:
            signed = player_of(service, token)
            session_id, new = players.open_session(service, signed.account, data.label)
            _save_key(service, key, signed.account.id, signed.account.version, session_id)
            return Answer(201, SessionToken(session_id=str(session_id), token=new))

        return await run(
            runtime,
            request,
            idempotency_key,
            scope_of(token),
            work,
            session_replay,
            lambda: player_of(service, token),
        )

    @post(
        "/me/token",
        status_code=200,
        summary="Rotate the token of this session; the one used stops working at once",
        responses=problems(401, 403, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def rotate(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[SessionToken]:
        service, token = runtime.service, bearer(request)

        def work(key: Key) -> Answer[SessionToken]:
            signed = player_of(service, token)
            new = players.rotate(service, signed)
            _save_key(service, key, signed.account.id, signed.account.version, signed.session_id)
            return Answer(200, SessionToken(session_id=str(signed.session_id), token=new))

        # The key's scope is the old token: once rotated it no longer authorises, so a
        # replay with it is a 401, never the new token (docs/players.md).
        return await run(
            runtime,
            request,
            idempotency_key,
            scope_of(token),
            work,
            session_replay,
            lambda: player_of(service, token),
        )

    @delete(
        "/me/sessions/{session_id:uuid}",
        status_code=204,
        summary="End a session (sign a device out); its token stops working at once",
        responses=problems(401, 403, 409),
        security=BEARER,
    )
    async def end_session(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        session_id: FromPath[UUID],
    ) -> None:
        service, token = runtime.service, bearer(request)

        def work() -> None:
            signed = player_of(service, token)
            players.end_session(service, signed.account, session_id)

        await runtime.call(work)

    @post(
        "/me/seats",
        status_code=201,
        summary="Claim a seat as this player (R1: one seat per match)",
        description="The player token then acts for the seat from any device; the answer "
        "also carries a seat token. When the fourth seat fills, round 1 is dealt (R16).",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(ClaimRequest),
    )
    async def claim(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[PlayerSeat]:
        data = await read_body(request, ClaimRequest)
        service, token = runtime.service, bearer(request)
        match_id = data.match_id

        def work(key: Key) -> Answer[PlayerSeat]:
            signed = player_of(service, token)
            seat_token, done = seating.claim_seat(
                service,
                signed.account,
                match_id,
                data.seat,
                attach=key.attach(lambda p: Outcome(201, match_id, p.result.version, data.seat)),
            )
            play_bots(service, match_id, runtime.bot_steps)
            return Answer(
                201,
                PlayerSeat(
                    match_id=str(match_id), seat=data.seat, token=seat_token, version=done.version
                ),
            )

        def replay(outcome: Outcome) -> PlayerSeat:
            return PlayerSeat(
                match_id=str(match_id),
                seat=data.seat,
                token=None,
                version=outcome.version,
                token_withheld=True,
            )

        return await run(
            runtime,
            request,
            idempotency_key,
            scope_of(token),
            work,
            replay,
            lambda: player_of(service, token),
        )

    @post(
        "/me/matches/{match_id:uuid}/seat-token",
        status_code=200,
        summary="A fresh seat token for the player's seat; the old one stops working",
        responses=problems(401, 403, 404, 409),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def seat_token(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[PlayerSeat]:
        service, token = runtime.service, bearer(request)

        def work(key: Key) -> Answer[PlayerSeat]:
            signed = player_of(service, token)
            seat, new, version = players.fresh_seat_token(
                service,
                signed.account,
                match_id,
                lambda seat, version: key.records(Outcome(200, match_id, version, seat)),
            )
            return Answer(
                200, PlayerSeat(match_id=str(match_id), seat=seat, token=new, version=version)
            )

        def replay(outcome: Outcome) -> PlayerSeat:
            return PlayerSeat(
                match_id=str(match_id),
                seat=outcome.seat or 0,
                token=None,
                version=outcome.version,
                token_withheld=True,
            )

        return await run(
            runtime,
            request,
            idempotency_key,
            scope_of(token),
            work,
            replay,
            lambda: player_of(service, token),
        )

    @get(
        "/me/matches",
        summary="The player's matches: current (with whose turn) and finished",
        responses=problems(401, 403),
        security=BEARER,
    )
    async def matches(
        self, request: Request[Any, Any, Any], runtime: NamedDependency[Runtime]
    ) -> MyMatches:
        service, token = runtime.service, bearer(request)
        return await runtime.call(lambda: my_matches(service, player_of(service, token).account))


def _save_key(service: Any, key: Key, subject: UUID, version: int, session: UUID) -> None:
    """The key's record, after the account's save (a retry finds it and replays)."""
    records = key.records(Outcome(200, subject, version, facts={"session": str(session)}))
    if records:
        service.save(*records)


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


def session_replay(outcome: Outcome) -> SessionToken:
    """A replayed session answer: the session, its token withheld (docs/security.md)."""
    sid = str(outcome.facts.get("session") or "")
    return SessionToken(session_id=sid, token=None, token_withheld=True)
