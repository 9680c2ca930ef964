"""Rounds and tournaments stored before boards (R36, docs/decisions.md D-boards): their
version 1 ``RoundStarted``, ``Dealt`` and ``TournamentCreated`` records read back with no
board and as tournaments of shared seeds."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import msgspec
from eventsourcing.persistence import StoredEvent

from domain.game.round import Round, RoundPhase
from domain.rules.ruleset import STANDARD
from services.game import GameService
from tests.archive.matches import bot_teams
from tests.conftest import T0, seed_bytes
from tests.tournaments import Tournaments

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def as_v1(stored: StoredEvent, originator: Any, drop: str) -> StoredEvent:
    """``stored`` as version 1 of its class wrote it: no ``drop`` field, no class_version."""
    state = msgspec.json.decode(stored.state)
    assert state.pop("class_version") == 2
    state.pop(drop)
    return StoredEvent(
        originator, stored.originator_version, stored.topic, msgspec.json.encode(state)
    )


def test_a_round_stored_before_boards_plays_no_board() -> None:
    service = GameService(POPO)
    r = Round.start(uuid4(), 2, STANDARD, (3, 5), 1, T0)
    r.deal(seed_bytes(1), T0)
    records = service.mapper.to_stored_event  # the codec, as the store writes
    old = uuid4()
    service.recorder.insert_events([as_v1(records(e), old, "board") for e in r.collect_events()])
    loaded = service.get_round(old)
    assert loaded.board is None and loaded.phase is RoundPhase.DEALING
    assert (loaded.bidding.dealer, loaded.level, loaded.bidding.trump_known) == (1, 5, False)


def test_a_tournament_stored_before_boards_shares_its_seeds() -> None:
    service = GameService(POPO)
    ts = Tournaments(service)
    t = ts.create(name="cup", rules=STANDARD, teams=bot_teams(2), fmt="round_robin", match_length=1)
    old = uuid4()
    stored = [service.mapper.to_stored_event(e) for e in service.events.get(t.id)]
    service.recorder.insert_events([as_v1(stored[0], old, "deals"), *(
        StoredEvent(old, s.originator_version, s.topic, s.state) for s in stored[1:]
    )])  # fmt: skip
    loaded = ts.get(old)
    assert loaded.deals == "seeds" and not loaded.boards
