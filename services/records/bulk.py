"""Bulk export of finished matches as ND-JSON (docs/records.md, "Bulk export").

:func:`finished_records` yields one line per finished match: the exact bytes of that
match's own record (``GET /v1/matches/{id}/record``, canonical JSON, no newline inside)
and a ``\\n``. It is a generator over the matches' endings
(:func:`services.finishes.finishes`: the ``MatchFinished`` notifications, a page at a
time), and exports one match per line: whatever the number of matches, only one record
and one page of notifications are held at once.

Order: the order the matches finished in the log (commit order). ``finished_from`` /
``finished_to`` filter on ``MatchFinished``'s time (for an imported record, the time the
record says the match ended), inclusive of ``from``, exclusive of ``to``; ``preset`` on
the match's rule-set preset (§10); ``tournament_id`` on the tournament of its tables;
``account_id`` on a player's seat (``SeatTaken.account_id``: the caller checks that the
player asks, as an account links a person's matches). A tournament table whose
tournament round is not complete is left out (R36: its record would be 409
``deal-embargoed``); it appears in a later export. A private table is left out but from
its own players' exports (``account_id``: they sat there; docs/decisions.md D-hidden).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.game.match_events import MatchCreated, SeatTaken
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import PRESETS
from services.embargo import embargo_for
from services.finishes import finishes
from services.game import GameService
from services.records.export import export_match
from services.records.format import encode


@dataclass(frozen=True, slots=True)
class BulkFilter:
    """Which finished matches a bulk export takes (all by default)."""

    finished_from: datetime | None = None
    finished_to: datetime | None = None
    preset: str | None = None
    tournament_id: UUID | None = None
    """Only the tables of this tournament."""
    account_id: UUID | None = None
    """Only the matches this player's account sat in."""

    def __post_init__(self) -> None:
        for name, moment in (
            ("finishedFrom", self.finished_from),
            ("finishedTo", self.finished_to),
        ):
            if moment is not None and moment.tzinfo is None:
                raise InvalidInputError(f"{name} needs a time zone (e.g. 2026-01-01T00:00:00Z)")
        if self.finished_from and self.finished_to and self.finished_from > self.finished_to:
            raise InvalidInputError(
                f"finishedFrom ({self.finished_from.isoformat()}) is after finishedTo "
                f"({self.finished_to.isoformat()})"
            )
        if self.preset is not None and self.preset not in PRESETS:
            raise InvalidInputError(
                f"unknown preset {self.preset!r}; known: {', '.join(sorted(PRESETS))} (§10)"
            )

    def takes_time(self, moment: datetime) -> bool:
        if self.finished_from is not None and moment < self.finished_from:
            return False
        return self.finished_to is None or moment < self.finished_to


def finished_matches(service: GameService, where: BulkFilter) -> Iterator[UUID]:
    """The ids of the finished matches ``where`` takes, in the order they finished."""
    for finished in finishes(service):
        if not where.takes_time(finished.timestamp):
            continue
        match_id: UUID = finished.originator_id
        stored = service.recorder.select_events(match_id, lte=1)
        created: Any = service.mapper.to_domain_event(stored[0])
        if not isinstance(created, MatchCreated) or not _takes(service, where, created):
            continue
        if where.account_id is None and service.get_match(match_id).private:
            continue  # D-hidden: a private table's record only in its players' own exports
        if where.tournament_id is not None and created.tournament_id != where.tournament_id:
            continue
        if embargo_for(service, created.tournament_id, created.tournament_round):
            continue  # R36: exported once its tournament round completes
        yield match_id


def _takes(service: GameService, where: BulkFilter, created: MatchCreated) -> bool:
    """The filters on the match itself: its preset, its tournament, a player's seat."""
    if where.preset is not None and created.preset != where.preset:
        return False
    if where.tournament_id is not None and created.tournament_id != where.tournament_id:
        return False
    if where.account_id is None:
        return True
    return any(
        isinstance(e, SeatTaken) and e.account_id == where.account_id
        for e in service.events.get(created.originator_id)
    )


def finished_records(service: GameService, where: BulkFilter) -> Iterator[bytes]:
    """One ND-JSON line per finished match: its record's canonical bytes and ``\\n``."""
    for match_id in finished_matches(service, where):
        yield encode(export_match(service, match_id)) + b"\n"


def take(lines: Iterator[bytes], max_bytes: int) -> list[bytes]:
    """The next lines of ``lines``, about ``max_bytes`` in all (at least one line unless
    ``lines`` is done): a chunk of the response, read in one trip to a worker thread."""
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= max_bytes:
            break
    return chunk
