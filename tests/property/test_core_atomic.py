"""A command's events are stored all or none: an insert failing inside the transaction, a
concurrent save on the other aggregate of a multi-aggregate save (POPO, SQLite and
PostgreSQL through the ``backend`` fixture; the table: :mod:`tests.property.core_table`).
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID

import pytest
from eventsourcing.application import Repository
from eventsourcing.persistence import PersistenceError
from hypothesis import event, given, settings
from hypothesis import strategies as st

from domain.game.match import Match
from domain.game.round import RoundPhase, round_id
from domain.game.round_events import Pacing
from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import RuleSet
from services.errors import VersionConflictError
from services.game import GameService
from tests.commands import act, create_match, finish_match, take_seat, version_of
from tests.conftest import Backend
from tests.property.core_checks import load, stored_topics
from tests.property.core_table import (
    MAX_STEPS,
    POPO,
    FakeClock,
    Knobs,
    State,
    Table,
    TableService,
    first_draws,
    match_state,
    seeds_from,
    state_of,
)

FAIL_ON = ("TrickWon", "RoundScored", "RoundRecorded", "RoundStarted", "Dealt", "DrawingEnded")


@contextmanager
def sqlite_service(rng: random.Random, clock: FakeClock) -> Iterator[tuple[TableService, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)}
        svc = TableService(env, clock=clock, seeds=seeds_from(rng))
        try:
            yield svc, path
        finally:
            svc.close()


def snapshot_store(svc: GameService, match_id: UUID) -> tuple[int | None, dict[UUID, State]]:
    """The store's head and the reloaded state of the match and each of its rounds."""
    fresh: Repository[UUID] = Repository(svc.events)
    match = load(fresh, match_id)
    assert isinstance(match, Match)
    states: dict[UUID, State] = {match_id: match_state(match)}
    for n in range(1, match.round_number + 1):
        states[round_id(match_id, n)] = state_of(load(fresh, round_id(match_id, n)))
    return svc.recorder.max_notification_id(), states


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fail_on=st.sampled_from(FAIL_ON), warmup=st.integers(0, 150))
def test_a_failing_insert_stores_none_of_the_commands_events(
    seed: int, fail_on: str, warmup: int
) -> None:
    """An insert that fails inside the transaction, on the ``fail_on`` event of whichever
    command emits it next (after other events of the same command and of other aggregates
    in the same save), leaves the store and every reload exactly as before the command."""
    rng = random.Random(seed)
    clock = FakeClock()
    with sqlite_service(rng, clock) as (svc, path):
        table = Table.open(svc, clock, rng, RuleSet(), Knobs(illegal=0.0))
        for _ in range(warmup):
            table.step()
        with sqlite3.connect(path) as db:
            (events_table,) = db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%events'"
            ).fetchone()
            db.execute(
                f"CREATE TRIGGER fail_once BEFORE INSERT ON {events_table} "
                f"WHEN NEW.topic LIKE '%:{fail_on}' "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            )
        for _ in range(MAX_STEPS):
            before = snapshot_store(svc, table.match_id)
            round_before = table.round()
            command = table.decide(round_before)
            if command is None:
                continue
            try:
                table.run(command)
            except (VersionConflictError, PersistenceError):
                break
        else:
            raise AssertionError(f"no {fail_on} event in {MAX_STEPS} steps")
        event(f"failed on {fail_on} after {command.action}")
        assert snapshot_store(svc, table.match_id) == before
        assert state_of(table.round()) == state_of(round_before)
        with sqlite3.connect(path) as db:
            db.execute("DROP TRIGGER fail_once")
        head = svc.recorder.max_notification_id() or 0
        table.run(command)  # the same command, at the same time, now goes through
        topics = [
            n.topic.rpartition(":")[2] for n in svc.recorder.select_notifications(head + 1, 100)
        ]
        assert fail_on in topics


def last_card_conflict(svc: GameService, organiser: GameService, table: Table) -> None:
    """The last card of a round saves the round's events, RoundRecorded on the match and
    the next round together. If ``organiser`` (another service on the same store) finishes
    the match in between, the save conflicts on the match and none of the round's events
    stay: the round reloads as it was and no next round exists."""
    for _ in range(MAX_STEPS):
        r = table.round()
        play = r.play
        if play is not None and len(play.trick) == 3 and not play.hands[(play.turn + 1) % 4]:
            break  # the last card of the round is due
        table.step()
    round_before, match_before = state_of(r), table.match().version
    command = table.decide(r)
    assert command is not None and command.action == "play"
    table.clock.hook = lambda: finish_match(organiser, table.match_id)
    with pytest.raises(VersionConflictError):
        table.run(command)
    # The finish abandoned the round (R32) in its own save: the round's last stored event is
    # RoundAbandoned right after the version the refused command started from.
    (last,) = svc.recorder.select_events(r.id, desc=True, limit=1)
    assert last.originator_version == r.version + 1
    assert last.topic.endswith(":RoundAbandoned")
    assert state_of(svc.get_round(r.id, version=r.version)) == round_before
    assert state_of(organiser.get_round(r.id, version=r.version)) == round_before
    assert svc.get_round(r.id).phase is RoundPhase.ABANDONED
    assert svc.recorder.select_events(round_id(table.match_id, r.number + 1)) == []
    match = svc.get_match(table.match_id)
    assert match.finished and match.version == match_before + 1
    assert stored_topics(svc, table.match_id)[-1] == "MatchFinished"


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_concurrent_save_on_the_match_rolls_back_the_rounds_events(seed: int) -> None:
    rng = random.Random(seed)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng))
    organiser = TableService(POPO, recorder=svc.recorder, clock=clock, seeds=seeds_from(rng))
    last_card_conflict(svc, organiser, Table.open(svc, clock, rng, RuleSet(), Knobs(illegal=0)))


def test_on_every_store_a_conflicting_save_stores_none_of_its_events(backend: Backend) -> None:
    """The same on POPO, SQLite and PostgreSQL (two services on one store): the round's
    events roll back with the conflicting match event, and of two racing declarations
    (R17) exactly one is stored; the late one conflicts, and is refused when retried."""
    clock, rng = FakeClock(), random.Random(11)
    svc = backend.service(clock=clock, seeds=seeds_from(rng))
    organiser = backend.service(clock=clock)
    last_card_conflict(svc, organiser, Table.open(svc, clock, rng, RuleSet(), Knobs(illegal=0)))

    seeds = (random.Random(n).randbytes(32) for n in range(100))
    seed = next(s for s in seeds if len(first_draws(s, level=0)) == 4)
    first = first_draws(seed, level=0)
    racer = backend.service(clock=clock, seeds=lambda: seed, pacing=Pacing(10, 1_000, 0))
    rival = backend.service(clock=clock, seeds=lambda: seed, pacing=Pacing(10, 1_000, 0))
    mid = create_match(racer, RuleSet())
    for seat in range(4):
        take_seat(racer, mid, seat, f"p{seat}")
    clock.advance(ms=10 * max(k for k, _ in first.values()))
    clock.hook = lambda: act(rival, mid, 1, "declare", (first[1][1],))
    seen = version_of(racer, mid)  # it acts on what it saw: If-Match
    with pytest.raises(VersionConflictError):
        act(racer, mid, 2, "declare", (first[2][1],), expected_version=seen)
    with pytest.raises(IllegalMoveError) as info:
        act(racer, mid, 2, "declare", (first[2][1],))
    assert info.value.code == "already-declared"
    rid = round_id(mid, 1)
    assert stored_topics(racer, rid) == ["RoundStarted", "Dealt", "TrumpDeclared"]
    standing = racer.get_round(rid).bidding.standing
    assert standing is not None and standing.seat == 1
