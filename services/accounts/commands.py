"""A player's account: create it, sign in with the app's identity provider, edit the
profile, its sessions (open, rotate, refresh, end), a fresh seat token, and erasure — the
commands and their handlers (:mod:`services.bus`; docs/players.md).

A player token ``p.<account id hex>.<secret>`` is answered once (``Outcome.minted``); the
account's session keeps only its sha256, and a replay answers without it
(``tokenWithheld``). Erasure is crypto-shredding (docs/decisions.md F11): the player's key is
destroyed first — their names in the history read as erased whatever happens next — then, in
one save, their waiting ticket is cancelled, every match still played is left to the timeout
bot, the erasure is recorded (every session ends) and each seat they still hold is given a
token nobody has.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated, Final
from uuid import UUID, uuid4

import msgspec
from msgspec import Meta

from domain.accounts.account import LOCALES, Account
from domain.accounts.ticket import Ticket
from domain.rules.errors import IllegalMoveError
from domain.talk.table_talk import talk_id
from services import field_docs, table_life
from services.access import signed_player
from services.accounts.lobby import withdraw_ticket
from services.accounts.oidc import OidcError, OidcVerifier, account_id_of
from services.accounts.players import Signed, get_account
from services.accounts.seat_commands import PlayerSeat
from services.bus import Caller, Handler, Outcome, Service
from services.errors import ForbiddenError, NotFoundError, UnauthorizedError
from services.game import GameService
from services.match_commands import TOKEN, match_version
from services.social.commands import erase_social
from services.social.reads import SocialModels
from services.sources import PLAYER_ROLE, SEAT_ROLE, new_token, token_hash
from services.unit_of_work import Reading, UnitOfWork, forget

log = logging.getLogger(__name__)
SESSION: Final = "session"
ATTEMPTS: Final = 8


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class NewPlayer(_Answer, frozen=True, kw_only=True):
    """The player created, with the player token (shown once)."""

    player_id: Annotated[
        str, Meta(description="The player's id (a UUID): name it as a partner in quick play.")
    ]
    session_id: Annotated[str, Meta(description="The first session's id (this device).")]
    token: Annotated[
        str | None,
        Meta(
            description="The player token (long-lived; rotate or end its session to stop it).",
            examples=["s-8e1d47…"],
        ),
    ] = msgspec.field(default=None)
    display_name: Annotated[str, Meta(description="The name shown at tables.")]
    locale: Annotated[str, Meta(description="`en` or `zh-CN`.")]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class Profile(_Answer, frozen=True, kw_only=True):
    """The player as the token's owner sees it."""

    player_id: Annotated[str, Meta(description="The player's id (a UUID).")]
    display_name: Annotated[str, Meta(description="The name shown at tables.")]
    locale: Annotated[str, Meta(description="`en` or `zh-CN`.")]
    session_id: Annotated[str, Meta(description="The session of the token used for this call.")]
    session_expires_at: Annotated[
        str,
        Meta(
            description=(
                "When this session stops signing in unless refreshed "
                "(`POST /v1/players/me/sessions/current/refresh`), ISO "
                "8601: its idle limit (`SESSION_IDLE_S`) after it was "
                "opened, its token rotated or it was last refreshed."
            )
        ),
    ]


class SessionRefreshed(_Answer, frozen=True, kw_only=True):
    """The session was refreshed: its idle limit counts from now."""

    session_id: Annotated[
        str, Meta(description="The session refreshed (the one of the token used).")
    ]
    expires_at: Annotated[
        str,
        Meta(description="When the session stops signing in unless refreshed again, ISO 8601."),
    ]


class SessionToken(_Answer, frozen=True, kw_only=True):
    """A session and its player token (shown once): a new device's session, or the rotated
    token of this one."""

    session_id: Annotated[str, Meta(description="The session's id.")]
    token: Annotated[
        str | None,
        Meta(
            description=(
                "The player token of this session; null in an idempotent replay (`tokenWithheld`)."
            ),
            examples=["s-8e1d47…"],
        ),
    ]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreatePlayer:
    """A new player (a device account) and its first session."""

    display_name: str
    locale: str = "en"
    label: str = ""


@dataclass(frozen=True, slots=True)
class SignInWithOidc:
    """Sign in with the identity provider's access token (a JWT): the subject's account
    (made at its first sign-in) opens a session."""

    token: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class EditProfile:
    """The player's new display name and/or language; None: unchanged."""

    display_name: str | None = None
    locale: str | None = None


@dataclass(frozen=True, slots=True)
class RefreshSession:
    """The caller's session: its idle limit counts from now."""


@dataclass(frozen=True, slots=True)
class OpenSession:
    """Another device's session, beside the caller's."""

    label: str = ""


@dataclass(frozen=True, slots=True)
class RotateToken:
    """A new token for the caller's session; the one used stops working at once."""


@dataclass(frozen=True, slots=True)
class EndSession:
    """End one of the player's sessions (sign a device out)."""

    session_id: UUID


@dataclass(frozen=True, slots=True)
class RenewSeatToken:
    """A fresh seat token for the player's seat in ``match_id``; the old one stops working."""

    match_id: UUID


@dataclass(frozen=True, slots=True)
class ErasePlayer:
    """Erase the player (crypto-shredding): cannot be undone."""


# -- shared steps --------------------------------------------------------------------------------


class _PlayerCommand:
    """A command of the player signed in by the caller's player token (401/403)."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: object, caller: Caller) -> Signed:
        if isinstance(caller, Service):
            raise ForbiddenError("a player's command needs the player's token")
        return signed_player(self.service, caller)

    def account(self, uow: UnitOfWork, who: Signed) -> Account:
        return uow.get(who.account.id, Account, "player")


def profile(account: Account, session_id: UUID, service: GameService) -> Profile:
    """The player as the owner of the session's token sees it."""
    session = account.sessions[session_id]
    return Profile(
        player_id=str(account.id),
        display_name=account.display_name,
        locale=account.locale,
        session_id=str(session_id),
        session_expires_at=session.expires_at(service.table.session_idle).isoformat(),
    )


def _session_token(outcome: Outcome, state: Reading) -> SessionToken:
    return SessionToken(
        session_id=str(outcome.facts.get(SESSION) or ""),
        token=outcome.minted.get(TOKEN),
        token_withheld=state.replay,
    )


# -- the handlers --------------------------------------------------------------------------------


class CreatePlayerHandler(Handler[CreatePlayer, None, NewPlayer]):
    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: CreatePlayer, caller: Caller) -> None:
        return None  # anyone may (the hourly quota limits how many)

    def handle(self, uow: UnitOfWork, command: CreatePlayer, who: None) -> Outcome:
        account_id, session_id = uuid4(), uuid4()
        token = new_token(account_id, PLAYER_ROLE)
        account = Account.create(
            account_id,
            command.display_name,
            command.locale,
            session_id,
            token_hash(token),
            command.label,
            uow.now,
        )
        uow.add(account)
        facts = {SESSION: str(session_id)}
        return Outcome(201, account_id, account.version, facts=facts, minted={TOKEN: token})

    def answer(
        self, command: CreatePlayer, who: None, outcome: Outcome, state: Reading
    ) -> NewPlayer:
        if state.replay and get_account(self.service, outcome.subject).erased:
            # nothing of the person is left to answer with
            raise IllegalMoveError(
                "the player this Idempotency-Key created is erased", code="player-erased"
            )
        return NewPlayer(
            player_id=str(outcome.subject),
            session_id=str(outcome.facts.get(SESSION)),
            token=outcome.minted.get(TOKEN),
            display_name=command.display_name,
            locale=command.locale,
            token_withheld=state.replay,
        )


class SignInWithOidcHandler(Handler[SignInWithOidc, dict[str, object], NewPlayer]):
    """The subject of an erased player is refused (409 ``player-erased``): erasure is
    final. Two first sign-ins racing: one makes the account, the other opens a session."""

    attempts = 3

    def __init__(self, service: GameService, verifier: OidcVerifier | None) -> None:
        self.service = service
        self.verifier = verifier

    def authorise(self, command: SignInWithOidc, caller: Caller) -> dict[str, object]:
        """The provider's token verified (issuer, audience, expiry): its claims."""
        if self.verifier is None:
            raise ForbiddenError("sign-in with an identity provider is off on this service")
        try:
            return self.verifier.verify(command.token)
        except OidcError as e:
            log.info("oidc sign-in refused: %s", e)  # one line, no traceback: a 401
            raise UnauthorizedError(str(e)) from None

    def handle(self, uow: UnitOfWork, command: SignInWithOidc, who: dict[str, object]) -> Outcome:
        assert self.verifier is not None
        account_id = account_id_of(self.verifier.issuer, str(who["sub"]))
        session_id, token = uuid4(), new_token(account_id, PLAYER_ROLE)
        account = uow.find(account_id, Account)
        if account is None:
            name = str(who.get("name") or who.get("preferred_username") or "player")[:100]
            locale = str(who.get("locale") or "en")
            account = Account.create(
                account_id,
                name.strip() or "player",
                locale if locale in LOCALES else "en",
                session_id,
                token_hash(token),
                command.label,
                uow.now,
            )
            uow.add(account)
        elif account.erased:  # erasure is final: the subject never comes back as this player
            raise IllegalMoveError(
                "the player of this sign-in was erased and cannot come back",
                code="player-erased",
            )
        else:
            account.open_session(session_id, token_hash(token), command.label, uow.now)
        facts = {SESSION: str(session_id)}
        return Outcome(201, account_id, account.version, facts=facts, minted={TOKEN: token})

    def answer(
        self, command: SignInWithOidc, who: dict[str, object], outcome: Outcome, state: Reading
    ) -> NewPlayer:
        account = state.get(outcome.subject, Account, "player", outcome.version)
        return NewPlayer(
            player_id=str(account.id),
            session_id=str(outcome.facts.get(SESSION)),
            token=outcome.minted.get(TOKEN),
            display_name=account.display_name,
            locale=account.locale,
            token_withheld=state.replay,
        )


class EditProfileHandler(_PlayerCommand, Handler[EditProfile, Signed, Profile]):
    def handle(self, uow: UnitOfWork, command: EditProfile, who: Signed) -> Outcome:
        account = self.account(uow, who)
        account.edit_profile(command.display_name, command.locale, uow.now)
        return Outcome(200, account.id, account.version)

    def answer(
        self, command: EditProfile, who: Signed, outcome: Outcome, state: Reading
    ) -> Profile:
        account = state.get(outcome.subject, Account, "player", outcome.version)
        return profile(account, who.session_id, self.service)


class RefreshSessionHandler(_PlayerCommand, Handler[RefreshSession, Signed, SessionRefreshed]):
    def handle(self, uow: UnitOfWork, command: RefreshSession, who: Signed) -> Outcome:
        account = self.account(uow, who)
        account.refresh(who.session_id, uow.now)
        return Outcome(200, account.id, account.version, facts={SESSION: str(who.session_id)})

    def answer(
        self, command: RefreshSession, who: Signed, outcome: Outcome, state: Reading
    ) -> SessionRefreshed:
        account = state.get(outcome.subject, Account, "player", outcome.version)
        session = account.sessions[who.session_id]
        expires = session.expires_at(self.service.table.session_idle)
        return SessionRefreshed(session_id=str(who.session_id), expires_at=expires.isoformat())


class OpenSessionHandler(_PlayerCommand, Handler[OpenSession, Signed, SessionToken]):
    def handle(self, uow: UnitOfWork, command: OpenSession, who: Signed) -> Outcome:
        account = self.account(uow, who)
        session_id, token = uuid4(), new_token(account.id, PLAYER_ROLE)
        account.open_session(session_id, token_hash(token), command.label, uow.now)
        facts = {SESSION: str(session_id)}
        return Outcome(201, account.id, account.version, facts=facts, minted={TOKEN: token})

    def answer(
        self, command: OpenSession, who: Signed, outcome: Outcome, state: Reading
    ) -> SessionToken:
        return _session_token(outcome, state)


class RotateTokenHandler(_PlayerCommand, Handler[RotateToken, Signed, SessionToken]):
    """The key's scope is the old token: once rotated it no longer authorises, so a replay
    with it is a 401, never the new token (docs/players.md)."""

    def handle(self, uow: UnitOfWork, command: RotateToken, who: Signed) -> Outcome:
        account = self.account(uow, who)
        token = new_token(account.id, PLAYER_ROLE)
        account.rotate(who.session_id, token_hash(token), uow.now)
        facts = {SESSION: str(who.session_id)}
        return Outcome(200, account.id, account.version, facts=facts, minted={TOKEN: token})

    def answer(
        self, command: RotateToken, who: Signed, outcome: Outcome, state: Reading
    ) -> SessionToken:
        return _session_token(outcome, state)


class EndSessionHandler(_PlayerCommand, Handler[EndSession, Signed, None]):
    def handle(self, uow: UnitOfWork, command: EndSession, who: Signed) -> Outcome:
        account = self.account(uow, who)
        account.end_session(command.session_id, uow.now)
        return Outcome(204, account.id, account.version)

    def answer(self, command: EndSession, who: Signed, outcome: Outcome, state: Reading) -> None:
        return None


class RenewSeatTokenHandler(_PlayerCommand, Handler[RenewSeatToken, Signed, PlayerSeat]):
    """Takes no match version; a move saved first runs it again."""

    attempts = ATTEMPTS

    def handle(self, uow: UnitOfWork, command: RenewSeatToken, who: Signed) -> Outcome:
        seat = self.account(uow, who).seats.get(command.match_id)
        if seat is None:
            raise NotFoundError(f"you hold no seat in match {command.match_id}")
        match = uow.match(command.match_id)
        token = new_token(match.id, SEAT_ROLE)
        match.reissue_token(seat, token_hash(token), uow.now, who.session_id)
        version = match_version(uow, match)
        return Outcome(200, match.id, version, seat, minted={TOKEN: token})

    def answer(
        self, command: RenewSeatToken, who: Signed, outcome: Outcome, state: Reading
    ) -> PlayerSeat:
        return PlayerSeat(
            match_id=str(outcome.subject),
            seat=outcome.seat or 0,
            token=outcome.minted.get(TOKEN),
            version=outcome.version,
            token_withheld=state.replay,
        )


class ErasePlayerHandler(_PlayerCommand, Handler[ErasePlayer, Signed, None]):
    """The module docstring: the key first, then one save; the cached copies that still hold
    the name in memory are dropped after it. The same save ends everything between the
    player and any other (friendships, requests, blocks, invitations) and retires their
    friend code (docs/decisions.md D-social); their presence is forgotten after it."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService, social: SocialModels) -> None:
        super().__init__(service)
        self.social = social

    def handle(self, uow: UnitOfWork, command: ErasePlayer, who: Signed) -> Outcome:
        account = self.account(uow, who)
        if account.ticket is not None:  # a waiting ticket leaves its lobby first
            withdraw_ticket(uow, account, uow.get(account.ticket, Ticket, "ticket"))
        for match_id in list(account.seats):  # no table waits for an erased player
            if not uow.match(match_id).finished:
                table_life.leave(uow, account, match_id, self.service.table.substitute)
        account.erase(uow.now)  # refused when erased already
        view = self.social.fresh()
        others = [row.other_id for row in view.links_of(account.id)]
        invitations = [
            row.invitation_id
            for inviter in (True, False)
            for row in view.invitations_for(account.id, inviter=inviter)
        ]
        erase_social(uow, account.id, others, invitations)
        board = self.social.board

        def told() -> None:  # after the save: nothing of them is shown, the others hear it
            board.forget(account.id)
            for other in others:
                board.ring(other)

        uow.after(told)
        self.service.sealer.keys.erase(account.id)
        for match_id, seat in account.seats.items():  # the seats it still holds: finished
            match = uow.match(match_id)
            if match.seats[seat] is not None:
                match.reissue_token(seat, token_hash(new_token(match_id, SEAT_ROLE)), uow.now)
        tables = (*account.seats, *account.left)  # left ones show the name too
        talk = [talk_id(m) for m in tables]  # and their talk, its text sealed (R37)
        held = (account.id, *tables, *talk)
        uow.after(lambda: forget(self.service, *held))
        return Outcome(204, account.id, account.version)

    def answer(self, command: ErasePlayer, who: Signed, outcome: Outcome, state: Reading) -> None:
        return None
