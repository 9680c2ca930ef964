"""What the organiser's tournament commands share (docs/decisions.md D-bus): who may send
them, and the handler of a command that changes the tournament and answers it as it then
stands.

**Who.** The organiser token of the tournament (401 without a valid token of it, 403 for a
token of something else, :func:`services.access.tournament_organiser`); a team's own writes
(check-in, withdrawal) take that team's token too; the service itself (:data:`SERVICE`: the
clerk, tools, tests) is admitted to all. The handler knows the caller as the name its events
record: ``organiser``, ``team N`` or ``service``.

**Against the state as it is.** Tournament writes take no ``If-Match``: a version conflict
is a background writer's save (the results policy, the clerk) or another call's, never the
organiser's stale read, so the handler runs again on the state that won
(:data:`ATTEMPTS`), checking the command again.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Final, Generic, Protocol, TypeVar
from uuid import UUID

from domain.rules.errors import IllegalMoveError
from domain.tournament.events import RoundState
from domain.tournament.tournament import Tournament
from services.access import team_or_organiser, tournament_organiser
from services.bus import Caller, Handler, Outcome, Service
from services.game import GameService
from services.idempotency import Fact
from services.tournaments.loading import get_tournament
from services.tournaments.views import TournamentView, tournament_view
from services.unit_of_work import Reading, UnitOfWork

Facts = dict[str, Fact]
ATTEMPTS: Final = 5
"""Runs of a tournament command against saves made first by another writer."""
ORGANISER: Final = "organiser"
SERVICE_NAME: Final = "service"


class OfTournament(Protocol):
    """A command on one tournament."""

    @property
    def tournament_id(self) -> UUID: ...


C = TypeVar("C", bound=OfTournament)


def organiser(service: GameService, tournament_id: UUID, caller: Caller) -> str:
    """The organiser (its token) or the service: who the events name (the module docstring)."""
    if isinstance(caller, Service):
        return SERVICE_NAME
    tournament_organiser(get_tournament(service, tournament_id), caller)
    return ORGANISER


def team_or_organiser_of(
    service: GameService, tournament_id: UUID, team: int, caller: Caller
) -> str:
    """A team's own write: the organiser, that team's token (``team N``) or the service."""
    if isinstance(caller, Service):
        return SERVICE_NAME
    return team_or_organiser(get_tournament(service, tournament_id), caller, team)


def sees_all(who: str) -> bool:
    """The caller is the organiser (or the service): its answers show every result
    recorded, the round in play's too (R36, :func:`services.embargo.shown_rounds`); a
    team's own writes answer what anyone sees."""
    return who in (ORGANISER, SERVICE_NAME)


def in_play(t: Tournament, number: int) -> RoundState:
    """Round ``number`` (404 unless scheduled), which must be the round in play (409
    ``round-not-current``)."""
    t.round_state(number)
    current = t.current
    if current is None or current.number != number or current.revealed:
        raise IllegalMoveError(
            f"round {number} is not in play", rule="R36", code="round-not-current"
        )
    return current


def as_of(state: Reading, outcome: Outcome) -> Tournament:
    """The tournament an answer shows: as of the outcome's recorded version."""
    return state.get(outcome.subject, Tournament, "tournament", outcome.version)


class TournamentChange(Handler[C, str, TournamentView], Generic[C]):
    """The handler of an organiser's command that changes the tournament (:meth:`change`)
    and answers it as it then stands (200)."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: C, caller: Caller) -> str:
        return organiser(self.service, command.tournament_id, caller)

    @abstractmethod
    def change(self, uow: UnitOfWork, t: Tournament, command: C, who: str) -> Facts | None:
        """The aggregate's command (events pending on ``t``; other aggregates in ``uow``);
        the outcome's facts, if any."""

    def handle(self, uow: UnitOfWork, command: C, who: str) -> Outcome:
        t = uow.get(command.tournament_id, Tournament, "tournament")
        facts = self.change(uow, t, command, who)
        return Outcome(200, t.id, t.version, facts=facts or {})

    def answer(self, command: C, who: str, outcome: Outcome, state: Reading) -> TournamentView:
        return tournament_view(as_of(state, outcome), organiser=sees_all(who))
