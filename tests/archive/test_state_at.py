"""``GET /v1/matches/{id}/state?at=<time>``: the state after the last event at or before a
moment (R34), the same answer as ``?version=`` of that event (D17)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from litestar.testing import TestClient

from services.errors import NotFoundError
from services.game import GameService
from services.history import match_history, version_at
from tests.apps import make_app
from tests.archive.matches import bot_match
from tests.conftest import T0, Backend, FakeClock


class TickingClock(FakeClock):
    """Every reading is a second after the previous one: each save has its own time."""

    def __call__(self) -> datetime:
        now = self.now
        self.now += timedelta(seconds=1)
        return now


def timeline(service: GameService, match_id: object) -> list[tuple[int, datetime]]:
    page = match_history(service, match_id, None, limit=1000)  # type: ignore[arg-type]
    return [(i.version, datetime.fromisoformat(i.timestamp)) for i in page.items]


def test_every_moment_finds_the_last_event_at_or_before_it(backend: Backend) -> None:
    service = backend.service(clock=TickingClock())
    match_id = bot_match(service)
    events = timeline(service, match_id)
    assert len({t for _, t in events}) > 20  # many distinct moments (saves)
    for _, moment in events:
        expected = max(v for v, t in events if t <= moment)
        assert version_at(service, match_id, moment) == expected
        assert version_at(service, match_id, moment + timedelta(milliseconds=500)) == expected
    end = events[-1][1] + timedelta(days=1)
    assert version_at(service, match_id, end) == events[-1][0]
    with pytest.raises(NotFoundError, match="did not exist"):
        version_at(service, match_id, events[0][1] - timedelta(seconds=1))


def test_over_http_at_answers_as_version() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=TickingClock())
    match_id = bot_match(service)
    events = timeline(service, match_id)
    version, moment = events[len(events) // 2]
    version = max(v for v, t in events if t <= moment)
    path = f"/v1/matches/{match_id}/state"
    with TestClient(make_app(service)) as c:
        by_time = c.get(path, params={"at": moment.isoformat()})
        assert by_time.status_code == 200
        assert by_time.json() == c.get(path, params={"version": version}).json()
        zulu = moment.astimezone().isoformat()  # another offset, the same moment
        assert c.get(path, params={"at": zulu}).json()["version"] == version
        cases: list[tuple[dict[str, Any], int, str | None]] = [
            ({}, 422, "invalid-input"),
            ({"version": 3, "at": moment.isoformat()}, 422, "invalid-input"),
            ({"at": "2026-01-01T12:00:00"}, 422, "invalid-input"),  # no time zone
            ({"at": (T0 - timedelta(days=1)).isoformat()}, 404, "not-found"),
            ({"at": "soon"}, 400, None),
        ]
        for params, status, code in cases:
            r = c.get(path, params=params)
            assert r.headers["content-type"].startswith("application/problem+json"), params
            assert r.status_code in (status, 422), (params, r.status_code)
            if code is not None:
                assert (r.status_code, r.json()["code"]) == (status, code), params
