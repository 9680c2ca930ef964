"""The organiser's writes on a tournament (R36): the flow of every organiser write under its
Idempotency-Key (:func:`organiser_write`).

``POST /v1/tournaments`` answers the organiser token once: ``o.<tournament id hex>.<secret>``
(stored only as its sha256). Every write needs it (401 without a valid token of this
tournament; 403 for a token of something else, :mod:`services.access`); a team's own
writes take its team token too (:func:`team_or_organiser`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from uuid import UUID

from litestar import Response

from api.calls import Write
from domain.tournament.tournament import Tournament
from services.access import Credential, team_or_organiser, tournament_organiser
from services.idempotency import Receipt, Stamp
from services.tournaments.organise import Organiser
from services.tournaments.service import TournamentService
from services.tournaments.views import TournamentView, tournament_view

T = TypeVar("T")
Check = Callable[[Tournament, Credential | None], object]


def saved(o: TournamentService, stamp: Stamp, outcome: Receipt, answer: T) -> tuple[int, T]:
    """``answer``, once the key's record is saved: after the write, whose several saves
    are done already (docs/tournaments.md)."""
    stamp.save_after(o.game, outcome)
    return outcome.status, answer


def view_answer(o: Organiser, stamp: Stamp, t: Tournament) -> tuple[int, TournamentView]:
    """The tournament as a write left it (200), its key's record saved after the write."""
    return saved(o, stamp, Receipt(200, t.id, t.version), tournament_view(t))


def view_replay(t: Tournament, _: Receipt) -> TournamentView:
    """A replayed write's answer: the tournament as of the recorded version."""
    return tournament_view(t)


def team_check(team: int) -> Check:
    """The check of a team's own writes (check-in, withdrawal): the organiser token, or
    that team's own token (:func:`services.access.team_or_organiser`)."""
    return lambda t, cred: team_or_organiser(t, cred, team)


async def organiser_write(
    write: Write,
    tournament_id: UUID,
    act: Callable[[Organiser, Stamp], tuple[int, T]],
    replay: Callable[[Tournament, Receipt], T],
    check: Check = tournament_organiser,
) -> Response[T]:
    """An organiser's write on a tournament: ``check`` (the organiser token by default;
    401/403, before the Idempotency-Key is looked up), then ``act`` under the key's
    semantics; ``act`` saves the key's record (:func:`saved`, or with its command in one
    save). A replay rebuilds the answer from the tournament as of the recorded version."""
    tournaments = Organiser(write.runtime.service)

    def authorize() -> Organiser:
        check(tournaments.get(tournament_id), write.credential)
        return tournaments

    def again(o: Organiser, outcome: Receipt) -> T:
        return replay(o.get(tournament_id, version=outcome.version), outcome)

    return await write.run(authorize, act, again)
