"""Credentials: a bearer token read once, and checked against what it claims to open.

Every token the service mints is ``<role>.<owner id hex>.<secret>``
(:func:`services.sources.new_token`) and is stored only as its sha256:

* ``s`` a **seat** token of a match: that seat's commands and private view (R1, R33);
* ``o`` the **organiser** token of a match or of a tournament: its admin actions;
* ``t`` a **team** token of a tournament: the team's own check-in and withdrawal;
* ``p`` a **player** token of an account: the player's routes, and every seat the player
  claimed, from any device (docs/players.md).

:func:`read_authorization` parses an ``Authorization`` header into a :class:`Credential`
(the one parser of that header); the checks below take the credential and the aggregate
it is used on — already loaded by the caller, so a command loads its match once — and
answer who is calling or raise (RFC 9110 / RFC 6750):

* **401** ``unauthorized`` — no credential where one is needed, a malformed one, or one
  that is not (or no longer) valid for what it names: unknown, forged, rotated, revoked;
* **403** ``forbidden`` — a well-formed credential of *another* match, tournament or team,
  or of the wrong role.

:func:`caller_of` resolves a credential on its own (no route) to who is calling, or None:
the limits (rate, quotas, stream caps) count a request by it (docs/decisions.md
D-access). A new way to revoke a credential is a check added there and in
:func:`signed_player`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Final, Literal
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from domain.game.match import Match
from domain.tournament.tournament import Tournament
from services.accounts.players import (
    Signed,
    account_holder,
    get_account,
    seat_for,
    token_holder,
)
from services.errors import ForbiddenError, NotFoundError, UnauthorizedError
from services.game import GameService
from services.sources import ORGANISER_ROLE, PLAYER_ROLE, SEAT_ROLE, token_hash

MAX_TOKEN: Final = 200
"""No token we mint is longer; a longer one is refused unread."""
TEAM_ROLE: Final = "t"
Role = Literal["s", "o", "t", "p"]
ROLES: Final = frozenset((SEAT_ROLE, ORGANISER_ROLE, TEAM_ROLE, PLAYER_ROLE))


@dataclass(frozen=True, slots=True)
class Credential:
    """A bearer token as presented: its text and, when it has our shape, its role and the
    id of what it names (its owner). Nothing here is verified yet."""

    token: str
    role: Role | None
    """None: not the shape of a token we mint."""
    owner: UUID | None

    @classmethod
    def parse(cls, token: str) -> Credential:
        parts = token.split(".")
        if len(parts) != 3 or parts[0] not in ROLES or len(parts[1]) != 32 or not parts[2]:
            return cls(token, None, None)
        try:
            owner = UUID(hex=parts[1])
        except ValueError:
            return cls(token, None, None)
        role: Role = parts[0]  # type: ignore[assignment]  # one of ROLES
        return cls(token, role, owner)

    @property
    def digest(self) -> str:
        """sha256 of the token: what the store keeps (and the idempotency scope)."""
        return token_hash(self.token)

    def matches(self, stored: str) -> bool:
        """The token is the one whose hash is ``stored`` (compared in constant time)."""
        return bool(stored) and secrets.compare_digest(stored, self.digest)


def bearer_text(header: str | None, max_length: int = MAX_TOKEN) -> str | None:
    """The token of an ``Authorization`` header's value: None without the header; 401 for
    anything but ``Bearer <token>`` (one token, at most ``max_length`` characters)."""
    if header is None:
        return None
    scheme, _, rest = header.strip().partition(" ")
    token = rest.strip()
    if scheme.lower() != "bearer" or not token or len(token) > max_length or " " in token:
        raise UnauthorizedError("use Authorization: Bearer <token>")
    return token


def read_authorization(header: str | None) -> Credential | None:
    """The credential of an ``Authorization`` header's value (:func:`bearer_text`)."""
    token = bearer_text(header)
    return None if token is None else Credential.parse(token)


def read_token(value: str | None) -> Credential | None:
    """The credential of a ``?token=`` query value (EventSource cannot send headers)."""
    if not value or len(value) > MAX_TOKEN:
        return None
    return Credential.parse(value)


# -- matches -------------------------------------------------------------------------------------


ROLE_NAMES: Final = {
    SEAT_ROLE: "a seat token",
    ORGANISER_ROLE: "an organiser token",
    TEAM_ROLE: "a team token",
    PLAYER_ROLE: "a player token",
}


def _shaped(cred: Credential, owner: UUID, role: str, what: str, of: str) -> None:
    """401 for a token not of our shape; 403 for one of another owner or role (a player
    or team token where a match's token is needed is the wrong role, not a bad token)."""
    if cred.role is None:
        raise UnauthorizedError(f"this is not a token of this service: {what} token is needed")
    if cred.role not in (SEAT_ROLE, ORGANISER_ROLE):
        raise ForbiddenError(f"{ROLE_NAMES[cred.role]} cannot be used here: {what} token is needed")
    if cred.owner != owner:
        raise ForbiddenError(f"this token belongs to another {of}, not {owner}")
    if cred.role != role:
        other = "an organiser" if cred.role == ORGANISER_ROLE else "a seat"
        raise ForbiddenError(f"{other} token cannot be used here: {what} token is needed")


SEAT_TOKEN_NEEDED: Final = "a seat token is needed: Authorization: Bearer <seat token>"
"""Why a read or a move of a seat without a credential is a 401 — for any match id, one
that exists or not, so it tells nothing of a private table (D-hidden)."""


def presented(cred: Credential | None, needed: str) -> Credential:
    """The credential of a request that needs one, before anything is looked up: 401
    without one (``needed`` says which) or with one not of the shape of a token we mint —
    for any id, one that exists or not, so neither tells anything of a private table
    (D-hidden). A well-formed token is checked against what it names afterwards."""
    if cred is None:
        raise UnauthorizedError(needed)
    if cred.role is None:
        raise UnauthorizedError(f"this is not a token of this service ({needed})")
    return cred


def seat_in(service: GameService, match: Match, cred: Credential | None) -> int:
    """The seat ``cred`` acts for in ``match`` (R1): a seat token of the match, or the
    player token of the account that claimed the seat (docs/players.md)."""
    if cred is None:
        raise UnauthorizedError(SEAT_TOKEN_NEEDED)
    if cred.role == PLAYER_ROLE:
        seat = seat_for(signed_player(service, cred).account, match.id)
        if seat is None:
            raise ForbiddenError(f"this player holds no seat in match {match.id}")
        return seat
    _shaped(cred, match.id, SEAT_ROLE, "a seat", "match")
    for seat, info in enumerate(match.seats):
        if info is not None and cred.matches(info.token_hash):
            ended = _session_ended(service, match, seat)
            if ended is not None:
                raise UnauthorizedError(ended)
            return seat
    raise UnauthorizedError("the token is not a seat token of this match")


def _session_ended(service: GameService, match: Match, seat: int) -> str | None:
    """Why the seat's token no longer works although it is the seat's: it was minted
    through a player's session (:attr:`Match.minted_through`) that has since ended or
    expired — a seat token lives no longer than the session that got it (docs/players.md).
    None: it works (a guest's token, or one minted through no session)."""
    session_id = match.minted_through.get(seat)
    account_id = match.accounts.get(seat)
    if session_id is None or account_id is None:
        return None
    try:
        account = get_account(service, account_id)
    except NotFoundError:
        return "the player session this seat token was minted through has ended"
    session = account.sessions.get(session_id)
    if session is None:
        return (
            "the player session this seat token was minted through has ended (signed out, "
            "revoked or erased): sign in again and ask for a fresh seat token"
        )
    idle = service.table.session_idle
    expires = session.expires_at(idle)
    if service.clock() >= expires:
        return (
            f"the player session this seat token was minted through expired at "
            f"{expires.isoformat()} (unused for more than {int(idle.total_seconds())} s): "
            "sign in again and ask for a fresh seat token"
        )
    return None


def organiser_of(match: Match, cred: Credential | None) -> None:
    """``cred`` must be the organiser token of ``match``."""
    if cred is None:
        raise UnauthorizedError(
            "the organiser token is needed: Authorization: Bearer <organiser token>"
        )
    _shaped(cred, match.id, ORGANISER_ROLE, "an organiser", "match")
    if not cred.matches(match.organiser_token_hash):
        raise UnauthorizedError("the token is not the organiser token of this match")


def viewer_in(service: GameService, match: Match, cred: Credential | None) -> int | None:
    """Whose eyes a read uses (R33): a seat for its seat (or player) token, a spectator
    (None) without a token or with the organiser's."""
    if cred is None:
        return None
    if cred.role == ORGANISER_ROLE:
        organiser_of(match, cred)
        return None
    return seat_in(service, match, cred)


def member_of(service: GameService, match: Match, cred: Credential | None) -> bool:
    """``cred`` belongs to someone of the table: its organiser token (its creator), a seat
    token of it (a working one), or the player token of an account that holds one of its
    seats or one kept for it (a rematch's ``account:…``), or a guest's seat token of the
    first match whose rematch keeps a seat for it (``token:…``). Never raises: a credential
    that is not one of these is simply no member."""
    if cred is None or cred.role is None or cred.owner is None:
        return False
    if cred.role == PLAYER_ROLE:
        signed = player_of(service, cred)
        if signed is None:
            return False
        account = signed.account
        kept = account_holder(account.id)
        return seat_for(account, match.id) is not None or kept in match.reserved
    if cred.role == SEAT_ROLE and token_holder(cred.digest) in match.reserved:
        return True
    if cred.owner != match.id:
        return False
    if cred.role == ORGANISER_ROLE:
        return cred.matches(match.organiser_token_hash)
    if cred.role == SEAT_ROLE:
        return any(
            info is not None
            and cred.matches(info.token_hash)
            and _session_ended(service, match, seat) is None
            for seat, info in enumerate(match.seats)
        )
    return False


def check_visible(service: GameService, match: Match, cred: Credential | None) -> None:
    """A private table exists only for the people of the table (:func:`member_of`): to
    anyone else — no token, another match's, another player's — it is 404, answered in
    the very words of a match that does not exist, never a 401 or 403 that would confirm
    it does (docs/decisions.md D-hidden). A public table: nothing to check."""
    if match.private and not member_of(service, match, cred):
        raise NotFoundError(f"no match {match.id}")


Claimer = Literal["organiser"] | int


def seat_or_organiser(service: GameService, match: Match, cred: Credential | None) -> Claimer:
    """Anyone at the table: ``"organiser"`` for the organiser token, else the seat."""
    if cred is None:
        raise UnauthorizedError(
            "a seat token or the organiser token of this match is needed: "
            "Authorization: Bearer <token>"
        )
    if cred.role == ORGANISER_ROLE:
        organiser_of(match, cred)
        return "organiser"
    return seat_in(service, match, cred)


# -- players -------------------------------------------------------------------------------------


def signed_player(service: GameService, cred: Credential | None) -> Signed:
    """The account and session a player token signs in (docs/players.md)."""
    if cred is None:
        raise UnauthorizedError("a player token is needed: Authorization: Bearer <player token>")
    if cred.role is None:
        raise UnauthorizedError("this is not a token of this service: a player token is needed")
    if cred.role != PLAYER_ROLE:
        raise ForbiddenError(
            f"{ROLE_NAMES[cred.role]} cannot be used here: a player token is needed"
        )
    signed = _session(service, cred)
    if isinstance(signed, str):
        raise UnauthorizedError(signed)
    return signed


def player_of(service: GameService, cred: Credential) -> Signed | None:
    """The account and session a player credential signs in; None when it is not a player
    token, names no account, matches none of its sessions (revoked, rotated, forged) or
    its session expired (idle longer than the service's limit, docs/players.md)."""
    signed = _session(service, cred)
    return None if isinstance(signed, str) else signed


def _session(service: GameService, cred: Credential) -> Signed | str:
    """The account and session of a player credential, or why it signs in none."""
    invalid = "the player token is not valid (unknown, rotated or revoked)"
    if cred.role != PLAYER_ROLE or cred.owner is None:
        return invalid
    try:
        account = get_account(service, cred.owner)
    except NotFoundError:
        return invalid
    session_id = account.session_of(cred.digest, secrets.compare_digest)
    if session_id is None:
        return invalid
    idle = service.table.session_idle
    expires = account.sessions[session_id].expires_at(idle)
    if service.clock() >= expires:
        return (
            f"the player session expired at {expires.isoformat()}: unused for more than "
            f"{int(idle.total_seconds())} s; sign in again"
        )
    return Signed(account, session_id)


def player_locale(service: GameService, cred: Credential) -> str | None:
    """The stored locale of the player whose token ``cred`` is (one of its sessions'),
    expired or not — the caller holds the token, so nothing is told to anyone else; None
    for any other credential (docs/players.md: problems without ``Accept-Language``)."""
    if cred.role != PLAYER_ROLE or cred.owner is None:
        return None
    try:
        account = get_account(service, cred.owner)
    except NotFoundError:
        return None
    found = account.session_of(cred.digest, secrets.compare_digest)
    return None if found is None else account.locale


def player_if_any(service: GameService, cred: Credential | None) -> Signed | None:
    """The player of an optional credential: None without one; a credential that is not a
    valid player token is refused (403 for a seat or organiser token)."""
    return None if cred is None else signed_player(service, cred)


# -- tournaments ---------------------------------------------------------------------------------


def tournament_organiser(t: Tournament, cred: Credential | None) -> None:
    """``cred`` must be the organiser token of tournament ``t``."""
    if cred is None:
        raise UnauthorizedError("the organiser token is needed: Authorization: Bearer <token>")
    if cred.owner is None:
        raise UnauthorizedError(
            "this is not a token of this service: the organiser token is needed"
        )
    if cred.owner != t.id:
        raise ForbiddenError(f"this token belongs to something else, not tournament {t.id}")
    if cred.role != ORGANISER_ROLE:
        raise ForbiddenError(
            "a seat or team token cannot be used here: the organiser token is needed"
        )
    if not cred.matches(t.organiser_token_hash):
        raise UnauthorizedError("the token is not the organiser token of this tournament")


def team_or_organiser(t: Tournament, cred: Credential | None, team: int) -> str:
    """A team's own writes (check-in, withdrawal): the organiser token (``"organiser"``),
    or the team token that team got when it registered itself (``"team N"``)."""
    if cred is None or cred.role != TEAM_ROLE:
        tournament_organiser(t, cred)
        return "organiser"
    if cred.owner != t.id:
        raise ForbiddenError(f"this token belongs to something else, not tournament {t.id}")
    if not any(cred.matches(h) for h in t.team_tokens.values()):
        raise UnauthorizedError("the token is not a team token of this tournament")
    if not cred.matches(t.team_tokens.get(team, "")):
        raise ForbiddenError(f"this is another team's token, not team {team}'s")
    return f"team {team}"


# -- who is calling, without a route -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """A verified credential: its role and what it names (a match, tournament or
    account), and for a player token its session."""

    role: Role
    owner: UUID
    session: UUID | None = None
    seat: int | None = None
    """For a seat token, its seat (a re-issued token keeps it)."""

    @property
    def identity(self) -> str:
        """What the limits count the caller as, whatever token it presents: the account
        for a player token (every session and rotation of it), the seat of a match for a
        seat token (a re-issue keeps it), the match or tournament for an organiser or team
        token (docs/decisions.md D-fair)."""
        if self.role == PLAYER_ROLE:
            return f"player:{self.owner}"
        if self.role == SEAT_ROLE:
            return f"seat:{self.owner}:{self.seat}"
        return f"{'organiser' if self.role == ORGANISER_ROLE else 'team'}:{self.owner}"


def caller_of(service: GameService, cred: Credential) -> Caller | None:
    """Who ``cred`` is, verified against the store (one aggregate read, usually the
    cache, and one sha256), or None when it opens nothing."""
    if cred.role is None or cred.owner is None:
        return None
    if cred.role == PLAYER_ROLE:
        signed = player_of(service, cred)
        return None if signed is None else Caller(PLAYER_ROLE, cred.owner, signed.session_id)
    try:
        found: object = service.repository.get(cred.owner, deepcopy_from_cache=False)
    except AggregateNotFoundError:
        return None
    stored: list[str] = []
    if isinstance(found, Match):
        if cred.role == ORGANISER_ROLE:
            stored = [found.organiser_token_hash]
        elif cred.role == SEAT_ROLE:
            for seat, info in enumerate(found.seats):
                if info is not None and cred.matches(info.token_hash):
                    if _session_ended(service, found, seat) is not None:
                        return None
                    return Caller(SEAT_ROLE, cred.owner, seat=seat)
    elif isinstance(found, Tournament):
        if cred.role == ORGANISER_ROLE:
            stored = [found.organiser_token_hash]
        elif cred.role == TEAM_ROLE:
            stored = list(found.team_tokens.values())
    if any(cred.matches(h) for h in stored):
        return Caller(cred.role, cred.owner)
    return None
