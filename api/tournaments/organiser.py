"""The organiser's writes on a tournament (R36): the organiser token's check, and the flow
of every organiser POST under its Idempotency-Key (:func:`organiser_write`).

``POST /v1/tournaments`` answers the organiser token once: ``o.<tournament id hex>.<secret>``
(stored only as its sha256). Every write needs it (401 without a valid token of this
tournament; 403 for a token of something else).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar
from uuid import UUID

from litestar import Request, Response
from litestar.params import HeaderParameter

from api.auth import ForbiddenError, UnauthorizedError, bearer, scope_of
from api.idempotency import KEY_DOC, Answer, Key, run
from api.runtime import Runtime
from domain.tournament.tournament import Tournament
from services.idempotency import Outcome
from services.sources import ORGANISER_ROLE
from services.tournaments.organise import TEAM_ROLE, Organiser
from services.tournaments.service import TournamentService

BEARER: list[dict[str, list[str]]] = [{"bearer": []}]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", min_length=1, max_length=255, description=KEY_DOC),
]

T = TypeVar("T")
Check = Callable[[Organiser, Tournament, str | None], None]


def require_organiser(service: TournamentService, t: Tournament, token: str | None) -> None:
    """``token`` must be the organiser token of tournament ``t``."""
    if token is None:
        raise UnauthorizedError("the organiser token is needed: Authorization: Bearer <token>")
    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) != 32:
        raise UnauthorizedError("this is not an organiser token")
    if parts[1] != t.id.hex:
        raise ForbiddenError(f"this token belongs to something else, not tournament {t.id}")
    if parts[0] != ORGANISER_ROLE:
        raise ForbiddenError(
            "a seat or team token cannot be used here: the organiser token is needed"
        )
    if not service.is_organiser(t, token):
        raise UnauthorizedError("the token is not the organiser token of this tournament")


def saved(runtime: Runtime, key: Key, outcome: Outcome, answer: T) -> Answer[T]:
    """``answer``, once the key's record is saved: after the command, whose several saves
    are done already (docs/tournaments.md)."""
    records = key.records(outcome)
    if records:
        runtime.service.save(*records)
    return Answer(outcome.status, answer)


def team_or_organiser(team: int) -> Check:
    """The check of a team's own writes (check-in, withdrawal): the organiser token, or
    the team token that team got when it registered itself (``t.<tournament id hex>.…``)."""

    def check(service: Organiser, t: Tournament, token: str | None) -> None:
        parts = (token or "").split(".")
        if token is None or parts[0] != TEAM_ROLE:
            require_organiser(service, t, token)
            return
        if len(parts) != 3 or parts[1] != t.id.hex:
            raise ForbiddenError(f"this token belongs to something else, not tournament {t.id}")
        if not any(service.is_team(t, n, token) for n in range(len(t.teams))):
            raise UnauthorizedError("the token is not a team token of this tournament")
        if not service.is_team(t, team, token):
            raise ForbiddenError(f"this is another team's token, not team {team}'s")

    return check


async def organiser_write(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    tournament_id: UUID,
    idempotency_key: str | None,
    act: Callable[[Organiser, Key], Answer[T]],
    replay: Callable[[Tournament, Outcome], T],
    check: Check | None = None,
) -> Response[T]:
    """An organiser's POST on a tournament: the organiser token is checked first (401/403,
    also before the Idempotency-Key is looked up), then ``act`` runs in a worker thread
    under the key's semantics; ``act`` saves the key's record (:func:`saved`, or with
    its command in one save). A replay rebuilds the answer from the tournament as of the
    recorded version. ``check``: who may write (the organiser by default)."""
    tournaments = Organiser(runtime.service)
    token = bearer(request)

    def authorize() -> None:
        (check or require_organiser)(tournaments, tournaments.get(tournament_id), token)

    def work(key: Key) -> Answer[T]:
        authorize()
        return act(tournaments, key)

    def again(outcome: Outcome) -> T:
        return replay(tournaments.get(tournament_id, version=outcome.version), outcome)

    return await run(runtime, request, idempotency_key, scope_of(token), work, again, authorize)
