"""The service's own read models as projections of the log (:mod:`services.projections`).

* ``match-summaries`` — every match's summary (``GET /v1/matches/{id}``: seats, levels,
  rounds and results, R29–R32), folded from the match's and its rounds' events — the
  whole summary the log holds, a tournament table's results too (the route withholds
  them while its tournament round is in play, R36: a moment of the tournament, not of
  the match's log);
* ``tournament-standings`` — every tournament's standings (R36), folded from its events;
* ``finished-matches`` — the finished matches the bulk export (``GET /v1/records``) takes:
  when each finished and its preset (private tables are not in it).

Each folds the events itself (``event.mutate``, the aggregates' own ``apply``), never
through the repository, so a rebuild checks that the log alone gives what the service
shows. Only the aggregates a model needs are kept: a match, and its round in play.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic

from domain.game.match import PRIVATE, Match
from domain.game.match_events import MatchCreated, MatchEvent, MatchFinished, TableMadePrivate
from domain.game.round import Round
from domain.game.round_events import RoundEvent, RoundStarted
from domain.tournament.events import RoundCompleted, TournamentCreated, TournamentEvent
from domain.tournament.tournament import Tournament
from services.game import GameService
from services.projections import PAGE, Projection, register
from services.records.bulk import BulkFilter, finished_matches
from services.summaries import match_summary
from services.tournaments.views import standings_view


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value)


def _ids_of(service: GameService, topic_class: type[Any]) -> Iterator[UUID]:
    """The ids of the aggregates created by ``topic_class`` events, read a page at a time."""
    cursor = 0
    while True:
        page = service.recorder.select_notifications(
            cursor, PAGE, topics=[get_topic(topic_class)], inclusive_of_start=False
        )
        for n in page:
            yield UUID(str(n.originator_id))
        if len(page) < PAGE:
            return
        cursor = page[-1].id


class MatchSummaries:
    name = "match-summaries"

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.matches: dict[UUID, Match] = {}
        self.rounds: dict[UUID, Round] = {}
        """Each match's latest round."""
        self.round_match: dict[UUID, UUID] = {}

    def reset(self) -> None:
        self.matches.clear()
        self.rounds.clear()
        self.round_match.clear()

    def apply(self, position: int, event: Any) -> None:
        folded: Any
        if isinstance(event, MatchCreated | MatchEvent):
            folded = event.mutate(self.matches.get(event.originator_id))
            self.matches[event.originator_id] = folded
        elif isinstance(event, RoundStarted):
            self.round_match[event.originator_id] = event.match_id
            folded = event.mutate(None)
            self.rounds[event.match_id] = folded
        elif isinstance(event, RoundEvent):
            match_id = self.round_match[event.originator_id]
            folded = event.mutate(self.rounds[match_id])
            self.rounds[match_id] = folded

    def finish(self) -> None:
        self.round_match.clear()

    def rebuilt(self) -> dict[str, Any]:
        return {
            str(mid): _plain(match_summary(m, self._current(m), embargo=None))
            for mid, m in self.matches.items()
        }

    def _current(self, match: Match) -> Round | None:
        current = self.rounds.get(match.id)
        return current if current is not None and current.id == match.current_round_id() else None

    def live(self) -> dict[str, Any]:
        out = {}
        for mid in _ids_of(self.service, MatchCreated):
            match = self.service.get_match(mid)
            out[str(mid)] = _plain(
                match_summary(match, self.service.current_round(match), embargo=None)
            )
        return out


class TournamentStandings:
    name = "tournament-standings"

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.tournaments: dict[UUID, Tournament] = {}

    def reset(self) -> None:
        self.tournaments.clear()

    def apply(self, position: int, event: Any) -> None:
        if isinstance(event, TournamentCreated | TournamentEvent):
            tid = event.originator_id
            folded: Any = event.mutate(self.tournaments.get(tid))
            self.tournaments[tid] = folded

    def finish(self) -> None:
        return

    def rebuilt(self) -> dict[str, Any]:
        return {str(tid): _plain(standings_view(t)) for tid, t in self.tournaments.items()}

    def live(self) -> dict[str, Any]:
        out = {}
        for tid in _ids_of(self.service, TournamentCreated):
            found: object = self.service.repository.get(tid)
            assert isinstance(found, Tournament)
            out[str(tid)] = _plain(standings_view(found))
        return out


class FinishedMatches:
    name = "finished-matches"

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.created: dict[UUID, MatchCreated] = {}
        self.finished: dict[UUID, str] = {}
        self.completed: set[tuple[UUID, int]] = set()
        self.private: set[UUID] = set()

    def reset(self) -> None:
        self.created.clear()
        self.finished.clear()
        self.completed.clear()
        self.private.clear()

    def apply(self, position: int, event: Any) -> None:
        if isinstance(event, MatchCreated):
            self.created[event.originator_id] = event
            if event.visibility == PRIVATE:
                self.private.add(event.originator_id)
        elif isinstance(event, TableMadePrivate):
            self.private.add(event.originator_id)
        elif isinstance(event, MatchFinished):
            self.finished[event.originator_id] = event.timestamp.isoformat()
        elif isinstance(event, RoundCompleted):
            self.completed.add((event.originator_id, event.number))

    def finish(self) -> None:
        return

    def rebuilt(self) -> dict[str, Any]:
        out = {}
        for mid, at in self.finished.items():
            created = self.created[mid]
            table = created.tournament_id, created.tournament_round
            if mid in self.private:
                continue  # D-hidden: only in its players' own exports
            if created.tournament_id is None or table in self.completed:  # R36
                out[str(mid)] = [at, created.preset]
        return out

    def live(self) -> dict[str, Any]:
        out = {}
        for mid in finished_matches(self.service, BulkFilter()):
            events: list[Any] = list(self.service.events.get(mid))
            ended = next(e for e in events if isinstance(e, MatchFinished))
            out[str(mid)] = [ended.timestamp.isoformat(), events[0].preset]
        return out


def _build(cls: type[Any]) -> Any:
    def factory(service: GameService) -> Projection:
        built: Projection = cls(service)
        return built

    return factory


for _cls in (MatchSummaries, TournamentStandings, FinishedMatches):
    register(_cls.name)(_build(_cls))
