"""A tournament's archive (docs/tournaments.md): the records of all its tables as ND-JSON — one game
record (docs/records.md) per line, in round and table order, each importable on its own
with ``POST /v1/records``. Only the tables of completed tournament rounds are in it: a
table's record waits for its round (R36, the duplicate embargo) and for its match to end
(R33); ``pending`` names the tables left out."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

from domain.tournament.tournament import Tournament
from services.errors import NotFoundError
from services.game import GameService
from services.records.export import export_match
from services.records.format import encode


def archive_lines(service: GameService, t: Tournament) -> Iterator[bytes]:
    """Each completed round's tables' records, one canonical JSON line each."""
    for state in t.rounds:
        if not state.revealed:
            continue
        for table in state.tables:
            entry = t.results.get((state.number, table.table))
            if entry is not None and entry.forfeit and not _finished(service, table.match_id):
                continue
            yield encode(export_match(service, table.match_id)) + b"\n"


def pending_tables(t: Tournament) -> list[str]:
    """``round/table`` (1-based) of the tables not archived yet (their round is in play)."""
    return [f"{s.number}/{tb.table + 1}" for s in t.rounds if not s.revealed for tb in s.tables]


def _finished(service: GameService, match_id: UUID) -> bool:
    try:
        return service.get_match(match_id).finished
    except NotFoundError:  # a forfeited table that was never seated
        return False
