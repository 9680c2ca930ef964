"""One store contract, three stores: POPO, SQLite and a real PostgreSQL (``backend``).

docs/decisions.md F1: the eventsourcing library's ``(originator_id, version)`` key is
our optimistic concurrency, its notification id our global order, and a command's events
— the round's, the match's and the next round's — are saved in one transaction. RULES
R34: every event is kept, in order, and the match can be rebuilt from them (as of any
event). The scenarios play whole matches through :class:`~services.game.GameService`
with simple deterministic bots, then check what the store holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

import pytest

from domain.game.match import Match
from domain.game.round import Round, RoundPhase, round_id
from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import MatchEnd, RuleSet
from infra.settings import Settings
from infra.store import build_service
from services.errors import VersionConflictError
from services.game import GameService
from tests.commands import act as send
from tests.commands import claim_deadlines, finish_match, version_of
from tests.conftest import Backend, FakeClock, FixedSeeds
from tests.integration.store_bots import (
    Bots,
    Note,
    act,
    last_id,
    match_state,
    new_match,
    notes,
    play_until,
    raw_log,
    round_state,
)

# -- the contract ---------------------------------------------------------------------------

SCENARIOS = [
    # Bot seeds searched for a match that shows what it should: overcalls (R20), a
    # 炒底 re-bury in a later round, failed throws (R22), redeals (R19, 暴动).
    pytest.param(
        RuleSet(match_end=MatchEnd.parse("rounds:3")),
        9,
        {"Overcalled", "ThrowFailed"},
        id="standard",
    ),
    pytest.param(
        RuleSet(
            declare_with_joker=True,
            self_overcall=True,
            throw_penalty_points=10,
            weak_hand_redeal=30,
            match_end=MatchEnd.parse("rounds:2"),
        ),
        8,
        {"Overcalled", "Redealt", "ThrowFailed"},
        id="variants",
    ),
]


@pytest.mark.parametrize(("rules", "bot_seed", "must_see"), SCENARIOS)
def test_a_whole_match_is_stored_in_order_and_rebuilds_the_same(
    backend: Backend, rules: RuleSet, bot_seed: int, must_see: set[str]
) -> None:
    svc = backend.service()
    mid = new_match(svc, rules)
    bots = Bots(bot_seed)
    round_ends: list[list[Note]] = []
    redeals: list[list[Note]] = []
    for _ in range(20_000):
        match = svc.get_match(mid)
        if match.finished:
            break
        r = svc.current_round(match)
        assert r is not None
        before, deal_no = last_id(svc), r.deal_no
        act(svc, mid, bots.move(r, svc))
        after = svc.get_round(r.id)
        if after.phase is RoundPhase.SCORED:
            round_ends.append(notes(svc, before + 1))
        elif after.deal_no != deal_no:
            redeals.append(notes(svc, before + 1))
    match = svc.get_match(mid)
    rounds = [svc.get_round(round_id(mid, n)) for n in range(1, match.round_number + 1)]

    # The match ran its course (R32 rounds:N) and redealt at least once (R19).
    assert match.finished and match.rules.match_end.rounds == len(match.results)
    assert len(round_ends) == match.round_number == len(rounds) and redeals
    for r, recorded in zip(rounds, match.results, strict=True):
        assert r.result is not None
        assert (recorded.number, recorded.attackers_total) == (r.number, r.result.attackers_total)

    # R34: every event is stored, once, in one gap-free order; each aggregate's own
    # versions run 1, 2, 3 … in that order.
    log = notes(svc)
    assert must_see <= {n.event for n in log}
    assert [n.id for n in log] == list(range(1, len(log) + 1))
    assert len(log) == match.version + sum(r.version for r in rounds)
    versions: dict[UUID, list[int]] = {}
    for n in log:
        versions.setdefault(n.originator_id, []).append(n.version)
    assert set(versions) == {mid, *(r.id for r in rounds)}
    for seen in versions.values():
        assert seen == list(range(1, len(seen) + 1))

    # A new service on the same store (another process, say) rebuilds the same state.
    other = backend.service()
    assert match_state(other.get_match(mid)) == match_state(match)
    for r in rounds:
        assert round_state(other.get_round(r.id)) == round_state(r)

    # R34: the state as of any event is the replay of the log up to that event.
    first = rounds[0]
    stored: list[Any] = [other.mapper.to_domain_event(n) for n in raw_log(other)]
    stored = [e for e in stored if e.originator_id == first.id]
    assert len(stored) == first.version
    replayed: Any = None
    for k, event in enumerate(stored, start=1):
        replayed = event.mutate(replayed)
        assert round_state(other.get_round(first.id, version=k)) == round_state(replayed)

    # Atomicity: the last play's save holds the round's last events, the match's record
    # and (unless the match is over) the next round's start, one after another.
    for number, saved in enumerate(round_ends, start=1):
        assert [n.id for n in saved] == list(range(saved[0].id, saved[0].id + len(saved)))
        by = [(n.originator_id, n.event) for n in saved]
        rid, next_rid = round_id(mid, number), round_id(mid, number + 1)
        assert by[0] == (rid, "CardPlayed") and by[-1][1] != "CardPlayed"
        scored = by.index((rid, "RoundScored"))
        assert all(o == rid for o, _ in by[: scored + 1])
        tail = by[scored + 1 :]
        if number < match.round_number:
            assert tail == [
                (mid, "RoundRecorded"),
                (mid, "RoundBegun"),
                (next_rid, "RoundStarted"),
                (next_rid, "Dealt"),
            ]
        else:
            assert tail == [(mid, "RoundRecorded"), (mid, "MatchFinished")]
    # … and a redeal is dealt in the same save as the command that called for it.
    for saved in redeals:
        assert saved[-1].event == "Dealt"
        assert len({n.originator_id for n in saved}) == 1


def _racing(
    b: GameService, a_moves: Callable[[], object], monkeypatch: pytest.MonkeyPatch
) -> list[int]:
    """Make ``b``'s next command lose a race: right after ``b`` has loaded the round,
    ``a_moves`` runs (and saves) first. Returns the last notification id after ``a``."""
    load = b.get_round
    after_a: list[int] = []

    def load_then_let_a_win(round_id: UUID, version: int | None = None) -> Round:
        stale = load(round_id, version)
        if not after_a:  # once: the round the command acts on
            a_moves()
            after_a.append(last_id(b))
        return stale

    monkeypatch.setattr(b, "get_round", load_then_let_a_win)
    return after_a


def test_two_services_acting_on_the_same_round_conflict(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = backend.service(), backend.service()
    mid = new_match(a, RuleSet())
    bots = Bots(3)
    _, r = play_until(a, mid, bots, lambda m, r: r.phase is RoundPhase.PLAYING)
    assert r.play is not None
    seat, hand = r.play.turn, sorted(r.play.hands[r.play.turn])
    mine, theirs = (hand[0],), (hand[-1],)
    assert mine != theirs

    seen = version_of(b, mid)  # b acts on what it saw: If-Match
    after_a = _racing(b, lambda: send(a, mid, seat, "play", mine), monkeypatch)
    with pytest.raises(VersionConflictError):
        send(b, mid, seat, "play", theirs, expected_version=seen)
    monkeypatch.undo()

    # Nothing of the losing command is stored; the winner's play stands everywhere.
    assert last_id(b) == after_a[0]
    log = notes(a)
    assert (log[-1].originator_id, log[-1].event) == (r.id, "CardPlayed")
    for svc in (a, b, backend.service()):
        reloaded = svc.get_round(r.id)
        assert reloaded.version == r.version + 1
        assert reloaded.play is not None and reloaded.play.trick == [mine]
    # The loser reloads and carries on: its next command is saved.
    send(b, mid, (seat + 1) % 4, "play", bots.move(b.get_round(r.id), b).cards)
    ids = [n.id for n in notes(a)]
    assert ids == sorted(set(ids))
    if backend.name != "postgres":  # a rolled-back insert there uses up sequence values
        assert ids == list(range(1, len(ids) + 1))


def test_a_conflict_on_the_last_play_stores_nothing_of_the_whole_save(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = backend.service(), backend.service()
    mid = new_match(a, RuleSet())

    def last_play_left(m: Match, r: Round) -> bool:
        p = r.play
        return (
            p is not None and len(p.trick) == 3 and sum(map(len, p.hands)) == len(p.hands[p.turn])
        )

    match, r = play_until(a, mid, Bots(4), last_play_left)
    assert r.play is not None
    seat, last = r.play.turn, tuple(r.play.hands[r.play.turn])

    seen = version_of(b, mid)  # b acts on what it saw: If-Match
    after_a = _racing(b, lambda: send(a, mid, seat, "play", last), monkeypatch)
    with pytest.raises(VersionConflictError):
        send(b, mid, seat, "play", last, expected_version=seen)
    monkeypatch.undo()

    assert last_id(b) == after_a[0]
    log = notes(a)
    assert sum(1 for n in log if n.event == "RoundRecorded") == 1
    assert sum(1 for n in log if n.event == "RoundStarted") == 2
    fresh = backend.service()
    again = fresh.get_match(mid)
    assert match_state(again) == match_state(a.get_match(mid))
    assert again.version == match.version + 2 and again.round_number == 2
    assert fresh.get_round(round_id(mid, 2)).version == 2  # RoundStarted, Dealt: once


# -- service paths once found broken (fixed; kept as regressions) ------------------------------


def test_round_one_passed_out_at_the_deadline_is_redealt() -> None:
    """claim_deadlines used to leave the round in phase redeal, refusing every command."""
    clock = FakeClock()
    svc = build_service(Settings(backend="popo", declare_ms=1_000), clock=clock, seeds=FixedSeeds())
    try:
        mid = new_match(svc, RuleSet())
        clock.advance(ms=1_001)  # nobody declared before the drawing's deadline
        claim_deadlines(svc, mid)
        r = svc.current_round(svc.get_match(mid))
        assert r is not None
        assert (r.phase, r.deal_no) == (RoundPhase.DEALING, 2)
    finally:
        svc.close()


def test_a_refused_command_after_the_deadline_still_redeals() -> None:
    """act used to throw a claimed deadline away with the refused command."""
    clock = FakeClock()
    svc = build_service(Settings(backend="popo", declare_ms=1_000), clock=clock, seeds=FixedSeeds())
    try:
        mid = new_match(svc, RuleSet())
        clock.advance(ms=1_001)
        with pytest.raises(IllegalMoveError):
            send(svc, mid, 0, "bury")
        r = svc.current_round(svc.get_match(mid))
        assert r is not None
        assert (r.phase, r.deal_no) == (RoundPhase.DEALING, 2)
    finally:
        svc.close()


def test_a_finished_match_takes_no_more_round_commands() -> None:
    """A round finished after finish_match used to be recorded (and end the match twice)."""
    svc = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        mid = new_match(svc, RuleSet(match_end=MatchEnd.parse("rounds:1")))
        finish_match(svc, mid)
        r = svc.current_round(svc.get_match(mid))
        assert r is not None
        assert r.phase is RoundPhase.ABANDONED  # saved with MatchFinished (R32)
        for seat in range(4):
            with pytest.raises(IllegalMoveError) as info:
                send(svc, mid, seat, "pass")
            assert info.value.code == "match-finished"
        with pytest.raises(IllegalMoveError) as info:
            r.pass_turn(0, svc.clock())  # the round itself refuses too
        assert info.value.code == "match-finished"
    finally:
        svc.close()
