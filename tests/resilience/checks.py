"""What the store holds after a fault run (docs/deploy.md): every acknowledged command's events
exactly once, every match replaying to the state its views show (R34), no gap or
duplicate in any aggregate's versions.

The checks read the store through a fresh :class:`~services.game.GameService` of their
own (an empty aggregate cache: every match is rebuilt from its events) and the replicas
through HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import msgspec
import psycopg
from psycopg import sql

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.history import match_history
from services.history_items import HistoryItem
from services.views import table_view
from tests.resilience.client import COMMAND_EVENTS, Ack, BotTable

Json = dict[str, Any]
CLOCK_FIELDS = frozenset({"deadline"})
"""Public view fields that depend on the reader's clock, not only on the events."""


@dataclass
class Verdict:
    acked: int = 0
    lost: int = 0
    duplicated: int = 0
    replay_mismatches: list[str] = field(default_factory=list)
    version_gaps: int = 0


def store_service(url: str, schema: str) -> GameService:
    settings = Settings(
        backend="postgres",
        database_url=url,
        postgres_schema=schema,
        create_tables=False,
        postgres_pool_size=1,
        postgres_max_overflow=2,
    )
    return build_service(settings)


def history(service: GameService, match_id: UUID) -> list[HistoryItem]:
    items: list[HistoryItem] = []
    after = 0
    while True:
        page = match_history(service, match_id, None, after=after, limit=1000)
        items += page.items
        if not page.more:
            return items
        after = page.next


def _matches(item: HistoryItem, ack: Ack) -> bool:
    if item.type != COMMAND_EVENTS[ack.action] or item.data.get("seat") != ack.seat:
        return False
    if ack.action in ("play", "declare"):  # public once shown (R33); buried cards are not
        return sorted(item.data.get("cards", [])) == sorted(ack.cards)
    return True


def exactly_once(
    items: list[HistoryItem], acks: list[Ack], seats: tuple[int, ...] = (0, 1, 2, 3)
) -> tuple[int, int]:
    """(lost, duplicated) of one match whose commands of ``seats`` were all sent by
    ``acks``' client, one at a time: each acknowledged command's event lies between the
    previous acknowledged version and its own; any other command event of those seats is a
    duplicate (the other seats are bots the worker moves)."""
    commands = [
        i for i in items if i.type in COMMAND_EVENTS.values() and i.data.get("seat") in seats
    ]
    lost = 0
    matched: set[int] = set()
    previous = 0
    for ack in sorted(acks, key=lambda a: a.version):
        found = [
            i
            for i in commands
            if previous < i.version <= ack.version and i.version not in matched and _matches(i, ack)
        ]
        if found:
            matched.add(found[0].version)
        else:
            lost += 1
        previous = ack.version
    return lost, len(commands) - len(matched)


def verify(url: str, schema: str, tables: list[BotTable], views: list[list[Json]]) -> Verdict:
    """Check every table (``views``: each table's public view from every replica)."""
    verdict = Verdict()
    service = store_service(url, schema)
    try:
        for table, seen in zip(tables, views, strict=True):
            match_id = UUID(table.match_id)
            lost, duplicated = exactly_once(history(service, match_id), table.acks, table.seats)
            verdict.acked += len(table.acks)
            verdict.lost += lost
            verdict.duplicated += duplicated
            match = service.get_match(match_id)
            rebuilt = table_view(match, service.current_round(match), None, datetime.now(UTC))
            expected = _comparable(msgspec.to_builtins(rebuilt))
            for replica, view in enumerate(seen):
                if _comparable(view) != expected:
                    verdict.replay_mismatches.append(
                        _mismatch(table.match_id, replica, view, expected)
                    )
    finally:
        service.close()
    verdict.version_gaps = version_gaps(url, schema)
    return verdict


def _mismatch(match_id: str, replica: int, view: Json, expected: Json) -> str:
    """Which replica showed what, against the match rebuilt from the store."""
    seen = _comparable(view)
    fields = sorted(k for k in seen.keys() | expected.keys() if seen.get(k) != expected.get(k))
    shown = {k: (seen.get(k), expected.get(k)) for k in fields if k != "history"}
    return (
        f"{match_id} replica {replica} shows v{view.get('version')}, the store "
        f"v{expected.get('version')}; differing (shown, rebuilt): {shown} {fields}"
    )


def _comparable(view: Json) -> Json:
    return {k: v for k, v in view.items() if k not in CLOCK_FIELDS}


def version_gaps(url: str, schema: str) -> int:
    """Aggregates whose stored versions are not exactly 1..n (R34: kept in order)."""
    query = sql.SQL(
        "SELECT count(*) FROM (SELECT originator_id FROM {}.shengji_events "
        "GROUP BY originator_id HAVING count(*) <> max(originator_version) "
        "OR count(DISTINCT originator_version) <> count(*)) AS bad"
    ).format(sql.Identifier(schema))
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else -1
