"""Upcasting proven on every store (D17): events stored by an earlier version of
their class — raw stored records in the old shape, inserted through the recorder — are
read back through the upcasters into today's state: by the repository (the aggregate's
replay), by the feed, and by ``rebuild`` (every projection replays them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar
from uuid import UUID, uuid4

import msgspec
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from services.feed import feed_page
from services.idempotency import IdempotencyRecord, find, record_id
from services.projections import rebuild, registered
from tests.conftest import Backend

WHEN = datetime(2026, 1, 1, 12, tzinfo=UTC)


class Tally(Aggregate):
    """A small aggregate whose event went through three versions."""

    class Opened(Aggregate.Created):
        name: str

        def apply(self, aggregate: Any) -> None:
            aggregate.name = self.name
            aggregate.total = 0
            aggregate.bonus = 0

    class Scored(Aggregate.Event):
        """v1 stored ``pts``; v2 renamed it ``points``; v3 added ``bonus``."""

        class_version: ClassVar[int] = 3
        points: int
        bonus: int

        def apply(self, aggregate: Any) -> None:
            aggregate.total += self.points
            aggregate.bonus += self.bonus

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["points"] = state.pop("pts")

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            state["bonus"] = 10 if state["points"] >= 40 else 0

    @classmethod
    def open(cls, name: str) -> Tally:
        return cls._create(cls.Opened, id=uuid4(), name=name, timestamp=WHEN)

    def score(self, points: int, bonus: int) -> None:
        self.trigger_event(self.Scored, points=points, bonus=bonus, timestamp=WHEN)


def raw(originator: UUID, version: int, cls: type[Any], state: dict[str, Any]) -> StoredEvent:
    """A stored record as an older release of the code wrote it."""
    return StoredEvent(originator, version, get_topic(cls), msgspec.json.encode(state))


def test_old_events_replay_into_todays_state(backend: Backend) -> None:
    service = backend.service()
    tally = Tally.open("t")
    service.save(tally)
    ts = WHEN.isoformat()
    service.recorder.insert_events(
        [
            raw(tally.id, 2, Tally.Scored, {"timestamp": ts, "pts": 25}),  # v1
            raw(tally.id, 3, Tally.Scored, {"timestamp": ts, "points": 45, "class_version": 2}),
        ]
    )
    again = backend.service()  # a fresh process: nothing cached
    loaded: Any = again.repository.get(tally.id)
    assert (loaded.version, loaded.total, loaded.bonus) == (3, 70, 10)
    loaded.score(5, 1)  # today's version is written and read back as it is
    again.save(loaded)
    latest: Any = backend.service().repository.get(tally.id)
    assert (latest.version, latest.total, latest.bonus) == (4, 75, 11)
    stored: list[Any] = list(again.events.get(tally.id))
    assert [e.bonus for e in stored[1:]] == [0, 10, 1]
    # the feed reads them upcast (the operator: this is no match, round or tournament)
    items = feed_page(again, operator=True).items
    scored = [i.data for i in items if i.type == "Scored"]
    assert scored == [
        {"points": 25, "bonus": 0},
        {"points": 45, "bonus": 10},
        {"points": 5, "bonus": 1},
    ]
    assert {i.class_version for i in items if i.type == "Scored"} == {3}
    # and every projection replays through them
    projections, progress = rebuild(again)
    assert progress.done == 4 and {p.name for p in projections} == set(registered())


def test_a_version_1_idempotency_record_loses_its_tokens(backend: Backend) -> None:
    """The real upcaster of ``IdempotencyRecord.Recorded`` (v1 kept the whole answer)."""
    service = backend.service()
    rid = record_id("caller", "key-1")
    body = {"matchId": "m", "organiserToken": "o.secret", "seatTokens": ["s.secret"], "n": 1}
    state = {
        "originator_topic": get_topic(IdempotencyRecord),
        "timestamp": WHEN.isoformat(),
        "fingerprint": "f" * 64,
        "status": 201,
        "body": msgspec.json.encode(body).decode(),
    }
    service.recorder.insert_events([raw(rid, 1, IdempotencyRecord.Recorded, state)])
    record = find(backend.service(), rid)
    assert record is not None
    assert (record.fingerprint, record.outcome.status, record.outcome.version) == ("f" * 64, 201, 0)
    assert record.legacy_body is not None
    assert msgspec.json.decode(record.legacy_body) == {"matchId": "m", "n": 1}
