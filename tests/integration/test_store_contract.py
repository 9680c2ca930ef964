"""One store contract, three stores: POPO, SQLite and a real PostgreSQL (``backend``).

ARCHITECTURE decision 1: the eventsourcing library's ``(originator_id, version)`` key is
our optimistic concurrency, its notification id our global order, and a command's events
— the round's, the match's and the next round's — are saved in one transaction. RULES
R34: every event is kept, in order, and the match can be rebuilt from them (as of any
event). The scenarios play whole matches through :class:`~services.game.GameService`
with simple deterministic bots, then check what the store holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import Notification

from domain.game.match import Match
from domain.game.round import Round, RoundPhase, round_id
from domain.players.combos import random_lead
from domain.rules.cards import Card
from domain.rules.errors import IllegalMoveError
from domain.rules.follow import random_follow
from domain.rules.ruleset import MatchEnd, RuleSet
from domain.rules.shows import may_request_redeal
from infra.pgcluster import PostgresUnavailableError, postgres_url
from infra.settings import Settings, SettingsError, build_service, persistence_env
from services.errors import VersionConflictError
from services.game import GameService
from tests.conftest import Backend, FakeClock, FixedSeeds

# -- the bots ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Move:
    seat: int
    action: str
    cards: tuple[Card, ...] = ()


class Bots:
    """Four simple seeded seats: declare/overcall now and then, bury at random, lead a
    random single/pair/tractor/throw (domain.players.combos) and follow at random (R23).

    Round 1's first deal is always passed out, so every scenario redeals once (R19)."""

    def __init__(self, seed: int, *, declare: float = 0.6, overcall: float = 0.35) -> None:
        self.rng = random.Random(seed)
        self.declare = declare
        self.overcall = overcall

    def move(self, r: Round, svc: GameService) -> Move:
        rng, now = self.rng, svc.clock()
        phase = r.phase
        if phase is RoundPhase.DEALING:
            declaring_allowed = not (r.number == 1 and r.deal_no == 1)
            for seat in range(4):
                if seat in r.deal_passes:
                    continue
                shows = r.bidding.legal_shows(seat, r.hand_at(seat, now))
                if declaring_allowed and shows and rng.random() < self.declare:
                    return Move(seat, "declare", rng.choice(shows).cards)
                return Move(seat, "pass")
            raise AssertionError("every seat passed but the drawing has not ended")
        if phase in (RoundPhase.OVERCALLING, RoundPhase.DECLARING, RoundPhase.BURYING):
            speaker = r.to_act()
            assert speaker is not None
            seat = speaker
            weak = [s for s in range(4) if may_request_redeal(r.dealt_hand(s), r.rules)]
            if weak and r.bidding.redeal_requests_open and rng.random() < 0.3:
                return Move(weak[0], "redeal")
            if phase is RoundPhase.BURYING:
                full = [*r.hands[seat], *r.bottom]
                return Move(seat, "bury", tuple(rng.sample(full, 8)))
            shows = r.bidding.legal_shows(seat, r.hand_at(seat, now))
            if shows and rng.random() < self.overcall:
                action = "overcall" if phase is RoundPhase.OVERCALLING else "declare"
                return Move(seat, action, rng.choice(shows).cards)
            return Move(seat, "pass")
        if phase is RoundPhase.PLAYING:
            play = r.play
            assert play is not None
            seat, hand = play.turn, play.hands[play.turn]
            if play.lead_shape is None:
                return Move(seat, "play", tuple(random_lead(play.ctx, hand, rng, 0.1)))
            return Move(seat, "play", tuple(random_follow(play.ctx, play.lead_shape, hand, rng)))
        raise AssertionError(f"no move in phase {phase}: the service deals and records itself")


def new_match(svc: GameService, rules: RuleSet) -> UUID:
    mid = svc.create_match(rules, name="contract")
    for seat in range(4):
        svc.take_seat(mid, seat, f"bot{seat}", "random")
    return mid


def act(svc: GameService, mid: UUID, move: Move) -> None:
    svc.act(mid, move.seat, move.action, move.cards)


def play_until(
    svc: GameService, mid: UUID, bots: Bots, stop: Callable[[Match, Round], bool]
) -> tuple[Match, Round]:
    """Let the bots act until ``stop(match, round)``; returns that state."""
    for _ in range(20_000):
        match = svc.get_match(mid)
        r = svc.current_round(match)
        assert r is not None
        if stop(match, r):
            return match, r
        act(svc, mid, bots.move(r, svc))
    raise AssertionError("the bots did not get there in 20 000 commands")


# -- reading the store ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Note:
    id: int
    originator_id: UUID
    version: int
    topic: str

    @property
    def event(self) -> str:
        return self.topic.rsplit(":", 1)[-1]


def raw_log(svc: GameService, start: int = 1) -> list[Notification]:
    """The notification log from ``start`` on, page by page (the library's sections)."""
    found: list[Notification] = []
    size = svc.notification_log.section_size
    while True:
        page = svc.notification_log.select(start=start, limit=size)
        found += page
        if len(page) < size:
            return found
        start = page[-1].id + 1


def notes(svc: GameService, start: int = 1) -> list[Note]:
    return [
        Note(n.id, UUID(str(n.originator_id)), n.originator_version, n.topic)
        for n in raw_log(svc, start)
    ]


def last_id(svc: GameService) -> int:
    return svc.recorder.max_notification_id() or 0


def match_state(m: Match) -> dict[str, Any]:
    return {
        "version": m.version,
        "name": m.name,
        "rules": m.rules,
        "seats": m.seats,
        "levels": m.levels,
        "laps": m.laps,
        "dealer": m.dealer,
        "round_number": m.round_number,
        "round_open": m.round_open,
        "results": [vars(r) for r in m.results],
        "winner": m.winner,
        "finished": m.finished,
    }


def round_state(r: Round) -> dict[str, Any]:
    play = r.play
    return {
        "version": r.version,
        "phase": r.phase,
        "deal_no": r.deal_no,
        "seed": r.seed_hex,
        "levels": r.levels,
        "bidding": r.bidding,
        "hands": r.hands,
        "bottom": r.bottom,
        "buried_by": r.buried_by,
        "play": None
        if play is None
        else (play.hands, play.trick, play.tricks_done, play.attacker_points, play.played),
        "penalties": r.penalties,
        "result": None if r.result is None else vars(r.result),
    }


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
    load = b.current_round
    after_a: list[int] = []

    def load_then_let_a_win(match: Match) -> Round | None:
        stale = load(match)
        a_moves()
        after_a.append(last_id(b))
        return stale

    monkeypatch.setattr(b, "current_round", load_then_let_a_win)
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

    after_a = _racing(b, lambda: a.act(mid, seat, "play", mine), monkeypatch)
    with pytest.raises(VersionConflictError):
        b.act(mid, seat, "play", theirs)
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
    b.act(mid, (seat + 1) % 4, "play", bots.move(b.get_round(r.id), b).cards)
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

    after_a = _racing(b, lambda: a.act(mid, seat, "play", last), monkeypatch)
    with pytest.raises(VersionConflictError):
        b.act(mid, seat, "play", last)
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


# -- the wiring under the contract (infra.settings, infra.pgcluster) ------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"PERSISTENCE": "popo"}, {"PERSISTENCE_MODULE": "eventsourcing.popo"}),
        (
            {},
            {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": "var/shengji.sqlite3",
                "SQLITE_LOCK_TIMEOUT": "5",
                "CREATE_TABLE": "y",
                "AGGREGATE_CACHE_FASTFORWARD": "n",
            },
        ),
        (
            {"SQLITE_PATH": "/data/x.db", "CREATE_TABLES": "off", "SQLITE_LOCK_TIMEOUT": "9"},
            {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": "/data/x.db",
                "SQLITE_LOCK_TIMEOUT": "9",
                "CREATE_TABLE": "n",
                "AGGREGATE_CACHE_FASTFORWARD": "n",
            },
        ),
        (
            {
                "DATABASE_URL": "postgresql://sheng%40ji:p%3Ass%2Fw@db.local:6543/games",
                "POSTGRES_POOL_SIZE": "7",
            },
            {
                "PERSISTENCE_MODULE": "eventsourcing.postgres",
                "APPLICATION_RECORDER_TOPIC": "infra.pgstore:LockingInsertRecorder",
                "POSTGRES_ENABLE_DB_FUNCTIONS": "y",
                "POSTGRES_DBNAME": "games",
                "POSTGRES_HOST": "db.local",
                "POSTGRES_PORT": "6543",
                "POSTGRES_USER": "sheng@ji",
                "POSTGRES_PASSWORD": "p:ss/w",
                "POSTGRES_POOL_SIZE": "7",
                "POSTGRES_MAX_OVERFLOW": "10",
                "POSTGRES_CONNECT_TIMEOUT": "10",
                "POSTGRES_SCHEMA": "",
                "CREATE_TABLE": "y",
            },
        ),
    ],
    ids=["popo", "sqlite-default", "sqlite-path", "postgres-url-decoded"],
)
def test_settings_choose_the_store(environ: dict[str, str], expected: dict[str, str]) -> None:
    assert persistence_env(Settings.from_env(environ)) == expected


def test_settings_read_pacing_server_and_socket_urls() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://postgres:@/shengji?host=/tmp/pg",
            "HOST": "0.0.0.0",
            "PORT": "9000",
            "DEAL_INTERVAL_MS": "250",
            "DECLARE_MS": "5000",
            "WINDOW_MS": "8000",
            "LOG_LEVEL": "debug",
        }
    )
    assert (s.backend, s.host, s.port, s.log_level) == ("postgres", "0.0.0.0", 9000, "DEBUG")
    pacing = s.pacing
    assert (pacing.interval_ms, pacing.declare_ms, pacing.window_ms) == (250, 5000, 8000)
    env = persistence_env(s)
    assert (env["POSTGRES_HOST"], env["POSTGRES_PORT"], env["POSTGRES_PASSWORD"]) == (
        "/tmp/pg",
        "5432",
        "",
    )


@pytest.mark.parametrize(
    "environ",
    [
        {"PERSISTENCE": "mongo"},
        {"PERSISTENCE": "postgres"},
        {"DATABASE_URL": "mysql://u@h/db"},
        {"DATABASE_URL": "postgresql://u@h/db?sslmode=require"},
        {"DATABASE_URL": "postgresql://h/db"},
        {"DATABASE_URL": "postgresql://u@h:99999/db"},
        {"PORT": "http"},
        {"CREATE_TABLES": "maybe"},
        {"DECLARE_MS": "-1"},
        {"LOG_LEVEL": "LOUD"},
    ],
)
def test_settings_refuse_what_cannot_work(environ: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        Settings.from_env(environ)


def test_build_service_makes_the_sqlite_folder_and_uses_the_pacing(tmp_path: Path) -> None:
    settings = Settings(sqlite_path=tmp_path / "var" / "db" / "x.sqlite3", window_ms=5_000)
    svc = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    try:
        mid = new_match(svc, RuleSet())
        assert settings.sqlite_path.is_file()
        r = svc.current_round(svc.get_match(mid))
        assert r is not None and r.pacing.window_ms == 5_000
    finally:
        svc.close()


def test_postgres_url_passes_database_url_through() -> None:
    with postgres_url({"DATABASE_URL": "postgresql://u@h/db"}) as url:
        assert url == "postgresql://u@h/db"


def test_no_postgres_server_is_an_error_not_a_skip() -> None:
    with (
        pytest.raises(PostgresUnavailableError),
        postgres_url({}, search_path="", globs=(), allow_pgserver=False),
    ):
        pass  # pragma: no cover - never reached


# -- service paths once found broken (fixed; kept as regressions) ------------------------------


def test_round_one_passed_out_at_the_deadline_is_redealt() -> None:
    """claim_deadlines used to leave the round in phase redeal, refusing every command."""
    clock = FakeClock()
    svc = build_service(Settings(backend="popo", declare_ms=1_000), clock=clock, seeds=FixedSeeds())
    try:
        mid = new_match(svc, RuleSet())
        clock.advance(ms=1_001)  # nobody declared before the drawing's deadline
        svc.claim_deadlines(mid)
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
            svc.act(mid, 0, "bury")
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
        svc.finish_match(mid)
        r = svc.current_round(svc.get_match(mid))
        assert r is not None
        assert r.phase is RoundPhase.ABANDONED  # saved with MatchFinished (R32)
        for seat in range(4):
            with pytest.raises(IllegalMoveError) as info:
                svc.act(mid, seat, "pass")
            assert info.value.code == "match-finished"
        with pytest.raises(IllegalMoveError) as info:
            r.pass_turn(0, svc.clock())  # the round itself refuses too
        assert info.value.code == "match-finished"
    finally:
        svc.close()
