"""Matches played for the record tests (docs/records.md), and the records of the paths that need
time: a paced deal (R16, R17), claimed deadlines (R20) and turn timeouts.

:func:`play_match` plays a whole match through ``GameService`` on POPO — bots at the
bot seats (``services.bots.run_bots``), and for a human seat that stalls, its turn
timeout is claimed once its limit has passed (``services.timers``) — on a clock that
ticks with every read, so moves, deals and deadlines carry distinct times.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from uuid import UUID

import msgspec
import pytest

from domain.game.round_events import Pacing
from domain.game.timers import Timers
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import STANDARD, RuleSet
from services.game import GameService
from services.records.export import export_match, export_round
from services.records.format import CLAIM, GameRecord, RecordUnavailableError, encode
from services.records.text import read_text, write_text
from tests.commands import (
    claim_timeout,
    create_match,
    finish_match,
    import_record,
    run_bots,
    take_seat,
)
from tests.conftest import FakeClock, FixedSeeds

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
BOTS = ("random", "heuristic", "random", "heuristic")


class TickingClock(FakeClock):
    """A clock that moves ``tick_ms`` forward every time it is read."""

    def __init__(self, tick_ms: int = 0) -> None:
        super().__init__()
        self.tick = timedelta(milliseconds=tick_ms)

    def __call__(self) -> datetime:
        self.now += self.tick
        return self.now


def rules_of(rounds: int = 1, **fields: object) -> RuleSet:
    return RuleSet.from_mapping(
        {**STANDARD.to_mapping(), "match_end": f"rounds:{rounds}", **fields}
    )


def play_match(
    seed: int = 0,
    *,
    rules: RuleSet | None = None,
    kinds: Sequence[str] = BOTS,
    pacing: Pacing | None = None,
    tick_ms: int = 0,
    timers: Timers | None = None,
    service: GameService | None = None,
) -> tuple[GameService, UUID]:
    """A finished match (``rules``: one round by default) played on POPO."""
    clock = TickingClock(tick_ms)
    svc = service or GameService(POPO, clock=clock, seeds=FixedSeeds(seed), pacing=pacing)
    match_id = create_match(svc, rules or rules_of(), name=f"table {seed}", timers=timers)
    for seat, kind in enumerate(kinds):
        take_seat(svc, match_id, seat, f"p{seat} «{kind}»", kind)
    for _ in range(20_000):
        run_bots(svc, match_id, 5000)
        if svc.get_match(match_id).finished:
            return svc, match_id
        # Time passes in small steps, so bots see a paced deal's cards before its deadline
        # (R16, R17), and a stalled seat's turn timer runs out.
        clock.advance(ms=250)
        if timers is not None:
            with contextlib.suppress(ShengjiError):  # nobody over time yet
                claim_timeout(svc, match_id, "sweeper")
    raise AssertionError("the match did not finish")


def roundtrip(record: GameRecord) -> bytes:
    """The record through import (stored on a fresh service) and export again — the
    export's origin (imported, this record's digest) left out."""
    archive = GameService(POPO)
    imported = import_record(archive, record, store=True)
    assert imported.match_id is not None and imported.created
    exported = export_match(archive, imported.match_id)
    assert exported.origin is not None and exported.origin.digest == imported.digest
    return encode(msgspec.structs.replace(exported, origin=None))


def test_a_paced_deal_records_its_times_and_the_claimed_deadlines() -> None:
    # R16/R17: cards reach the seats one per interval; the drawing ends at its deadline.
    pacing = Pacing(interval_ms=5, declare_ms=1000, window_ms=300)
    svc, match_id = play_match(3, pacing=pacing, tick_ms=7)
    record = export_match(svc, match_id)
    deal = record.rounds[0].deals[0]
    assert (deal.interval_ms, deal.declare_ms, deal.window_ms) == (5, 1000, 300)
    times = [a.at for r in record.rounds for a in r.actions]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert roundtrip(record) == encode(record)
    assert encode(read_text(write_text(record))) == encode(record)


def test_claims_of_passed_deadlines_are_moves() -> None:
    # R20 window_ms: the overcall window closes by its deadline, claimed as a move.
    pacing = Pacing(interval_ms=0, declare_ms=1000, window_ms=500)
    svc, match_id = play_match(
        5, pacing=pacing, kinds=("heuristic", "human", "heuristic", "human"), tick_ms=1,
        timers=Timers(declare_ms=2000, bury_ms=2000, play_ms=2000),
    )  # fmt: skip
    record = export_match(svc, match_id)
    claims = [a for r in record.rounds for a in r.actions if a.action == CLAIM]
    assert claims, "a deadline was claimed"
    assert all(a.seat is None and a.cards == [] for a in claims)
    assert roundtrip(record) == encode(record)


def test_turn_timeouts_are_the_bots_moves_marked_with_who_claimed_them() -> None:
    timers = Timers(declare_ms=2000, bury_ms=3000, play_ms=1000)
    svc, match_id = play_match(
        7, kinds=("heuristic", "human", "heuristic", "human"), timers=timers, tick_ms=3
    )
    record = export_match(svc, match_id)
    assert record.timers is not None and record.timers.play_ms == 1000
    timed_out = [a for r in record.rounds for a in r.actions if a.timeout is not None]
    assert timed_out and {a.seat for a in timed_out} == {1, 3}
    assert {a.timeout for a in timed_out} == {"sweeper"}
    text = write_text(record)
    assert "(timeout: sweeper)" in text and '[Timers "declare=2000 bury=3000 play=1000"]' in text
    assert encode(read_text(text)) == encode(record)
    assert roundtrip(record) == encode(record)
    # the round alone replays on its aggregate, timeouts included
    round_record = export_round(svc, match_id, 1)
    assert import_record(GameService(POPO), round_record, store=False).kind == "round"


@pytest.mark.parametrize(
    "rules",
    [
        rules_of(2, bottom_multiplier="exponential", throw_penalty_points=10),
        rules_of(2, weak_hand_redeal=25, self_overcall=True),
        rules_of(1, declare_with_joker=True, no_declaration="redeal", level_cap=None),
    ],
    ids=["exponential-penalty", "weak-hand-self-overcall", "joker-redeal"],
)
def test_variants_round_trip(rules: RuleSet) -> None:
    """§10 variants: every move replays, export → import → export is byte-identical."""
    svc, match_id = play_match(11, rules=rules)
    record = export_match(svc, match_id)
    assert roundtrip(record) == encode(record)


def test_a_match_the_organiser_ended_keeps_the_abandoned_round_secret() -> None:
    # R32: the round in play is abandoned unscored; R33: its deal and moves stay secret.
    svc = GameService(POPO, clock=TickingClock(2), seeds=FixedSeeds(4))
    match_id = create_match(svc, rules_of(1, match_end="wrap"), name="ended")
    for seat, kind in enumerate(BOTS):
        take_seat(svc, match_id, seat, f"p{seat}", kind)
    while svc.get_match(match_id).round_number < 2:
        run_bots(svc, match_id, 1)
    run_bots(svc, match_id, 3)  # a few moves of round 2, which will stay secret
    finish_match(svc, match_id, "the club closes")
    record = export_match(svc, match_id)
    abandoned = record.rounds[1]
    assert abandoned.abandoned is not None and abandoned.abandoned.reason == "the club closes"
    assert (abandoned.deals, abandoned.actions, abandoned.result) == ([], [], None)
    secret = svc.get_round(svc.get_match(match_id).current_round_id() or match_id).seed_hex
    assert secret not in encode(record).decode() and secret not in write_text(record)
    assert record.end is not None and record.end.reason == "the club closes"
    with pytest.raises(RecordUnavailableError, match="abandoned"):
        export_round(svc, match_id, 2)  # never scored: no record of its own, ever
    assert roundtrip(record) == encode(record)
    assert encode(read_text(write_text(record))) == encode(record)


def test_a_match_ended_before_its_seats_filled_has_a_record_without_rounds() -> None:
    svc = GameService(POPO, clock=TickingClock(1))
    match_id = create_match(svc, rules_of(), name="empty")
    take_seat(svc, match_id, 2, "only me", "human")
    finish_match(svc, match_id)
    record = export_match(svc, match_id)
    assert (len(record.seats), record.rounds) == (1, [])
    assert roundtrip(record) == encode(record)
