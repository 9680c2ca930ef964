"""The career's read model (docs/decisions.md D-career), on every store: kept from the log
in many batches it equals a projection of the whole log in one go, bit for bit, and its
reads (history pages, top partners, the matches released at a position) answer the same
on every store; a tournament table is held until its round completes (R36); an erased
player has no row and is an erased player wherever they played; ``shengji rebuild``'s
career rebuilds the stored view from the log."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.utils import get_topic

from domain.game.match_events import (
    MatchFinished,
    MatchImported,
    RoundRecorded,
    SeatLeft,
    SeatTaken,
)
from domain.game.round import round_id
from domain.game.round_events import RoundScored, ThrowFailed, TrickWon
from domain.rules.ruleset import RuleSet
from infra.careerviews import open_career_view
from services.career.reads import CareerModels, statistics
from services.career.rebuild import CareerRebuild, follower
from services.career.rows import ERASED, MatchRow, ReleasedRow, account_key
from services.career.view import CareerView, MemoryCareerView
from services.game import GameService
from services.projections import rebuild
from services.ratings.model import family
from tests.career.population import Careers
from tests.career.recorded import recorded, write_steps
from tests.conftest import BACKENDS, Backend, FakeClock, FixedSeeds, open_backend

Played = tuple[GameService, CareerView, Careers, dict[str, Any]]

pytestmark = pytest.mark.timeout(360)
"""A rebuild of the whole population on PostgreSQL reads every player's key once per event
that names them (the key store connects per read): on a machine running two suites at once
it took more than the run's 120 s a test (docs/testing.md)."""


def stored(backend: Backend, service: GameService) -> CareerView:
    if backend.name == "popo":
        return MemoryCareerView()
    return open_career_view(service, create=True)


def in_one_go(service: GameService) -> MemoryCareerView:
    view = MemoryCareerView()
    follower(service, view, batch=10**9).catch_up()
    return view


def play(backend: Backend) -> Played:
    """The population (played once, :mod:`tests.career.recorded`) written into
    ``backend``'s store a step at a time, its career kept in batches of 7 as it grows."""
    service = backend.service()
    view = stored(backend, service)
    kept = follower(service, view, batch=7)
    seen: dict[str, Any] = {}

    def until_held(pop: Careers) -> None:
        kept.catch_up()
        seen["held"] = [r.match_id for r in view.held()]
        seen["entries"] = {e.match_id for p in pop.people for e in view.entries_of(p.id)}

    recording = recorded()
    write_steps(recording, service, backend.clock, kept.catch_up, until_held=until_held)
    kept.catch_up()
    return service, view, recording.population, seen


@pytest.fixture(scope="module", params=BACKENDS)
def shared(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Backend, Played]]:
    """One population per store for the tests of this module: they read it (the rebuild
    puts the view back as it found it, which is what it asserts)."""
    with open_backend(
        request.param,
        tmp_path_factory.mktemp("career"),
        FakeClock(),
        FixedSeeds(),
        lambda: request.getfixturevalue("pg_url"),
    ) as backend:
        yield backend, play(backend)


@pytest.fixture
def played(shared: tuple[Backend, Played]) -> Played:
    return shared[1]


@pytest.fixture
def reader(shared: tuple[Backend, Played]) -> Backend:
    """The shared population's store, for services of the test's own on it."""
    return shared[0]


def test_kept_in_batches_the_view_is_the_log_projected_in_one_go_and_reads_alike(
    reader: Backend, played: Played
) -> None:
    _, view, pop, _ = played
    again = in_one_go(reader.service())
    assert view.contents() == again.contents()
    kinds = {key.split()[0] for key in again.contents()}
    assert kinds == {"position", "match", "entry", "totals", "partner", "released"}
    reads_as(view, again, pop)


def reads_as(view: CareerView, memory: MemoryCareerView, pop: Careers) -> None:
    """``view``'s reads answer as the memory view's (history pages, top partners, the
    matches released at each position)."""
    for person in pop.people:
        for listed_only in (False, True):
            pages: list[list[Any]] = []
            for v in (view, memory):
                found, before = [], None
                while True:
                    page = v.history(person.id, before, 2, listed_only=listed_only)
                    found += page
                    if len(page) < 2:
                        break
                    before = (page[-1].position, str(page[-1].match_id))
                pages.append(found)
            assert pages[0] == pages[1]
            assert pages[0] == memory.history(person.id, None, 1000, listed_only=listed_only)
        for fam in ("standard", "tuolaji"):
            assert view.top_partners(person.id, fam, 3) == memory.top_partners(person.id, fam, 3)
    positions = {r.released for r in memory.rows() if isinstance(r, MatchRow) and r.released}
    for position in positions:
        assert view.released_at(position) == memory.released_at(position)
    ids = [r.match_id for r in memory.released_at(max(positions))]
    assert view.matches(ids) == memory.matches(ids)


def test_a_tournament_table_is_held_until_its_round_completes_and_erasure_leaves_no_row(
    played: Played,
) -> None:
    """R36: a table's result tells another table of the round how the same cards went."""
    service, view, pop, seen = played
    assert seen["held"] == [pop.held]
    assert pop.held not in seen["entries"]
    assert pop.held is not None
    row = view.match(pop.held)
    assert row is not None and row.released is not None
    released = [r for r in view.rows() if isinstance(r, ReleasedRow)]
    assert [r.position for r in released if r.tournament_id == pop.tournament] == [row.released]
    entries = [e for e in view.entries_of(pop.late[0].id) if e.match_id == pop.held]
    assert [e.position for e in entries] == [row.released]
    (n,) = service.recorder.select_notifications(row.released, 1)
    assert n.topic.endswith("RoundCompleted")
    # the erased player: in no row, an erased player where they played
    erased = pop.erased
    contents = view.contents()
    assert not [k for k in contents if str(erased) in k]
    assert not [v for v in contents.values() if str(erased) in str(v)]
    mentioned = [
        r
        for r in view.rows()
        if isinstance(r, MatchRow) and any(s.who == ERASED for s in r.facts.seats)
    ]
    assert mentioned  # they played with others, who keep those matches
    assert not view.partners_with(account_key(erased))


def test_rebuild_replaces_the_stored_career(reader: Backend, played: Played) -> None:
    service, view, _, _ = played
    before = view.contents()
    projection = CareerRebuild(reader.service(), view)
    view.reset()
    assert view.contents() == {"position": 0}
    projections, _ = rebuild(service, [projection])
    for p in projections:
        p.store()  # type: ignore[attr-defined]
    assert view.contents() == before


def average(total: int, count: int) -> float | None:
    return None if count == 0 else round(total / count, 2)


def test_statistics_are_the_events_counted_again(played: Played) -> None:
    """Each person's statistics per family as :func:`services.career.reads.statistics`
    answers them equal a count made here from the events (R22, R28–R30)."""
    service, view, pop, _ = played
    models = CareerModels(service, view, follower(service, view))
    expected = recount(service, {pop.erased})
    seen = set()
    for person in pop.people:
        if person.id == pop.erased:
            continue
        for got in statistics(models, person, None).families:
            want = expected[person.id, got.family]
            seen.add((person.id, got.family))
            rounds = want["roundsAttacking"] + want["roundsDefending"]
            assert (got.matches, got.won, got.lost, got.drawn, got.left) == tuple(
                want[k] for k in ("matches", "won", "lost", "drawn", "left")
            )
            assert (got.rounds_attacking, got.rounds_defending) == (
                want["roundsAttacking"],
                want["roundsDefending"],
            )
            assert got.average_points_attacking == average(
                want["attacked"], want["roundsAttacking"]
            )
            assert got.average_points_defending == average(
                want["conceded"], want["roundsDefending"]
            )
            assert got.levels_per_round == average(want["levels"], rounds)
            assert (got.failed_throws, got.bottoms_won, got.bottom_points) == (
                want["failedThrows"],
                want["bottomsWon"],
                want["bottomPoints"],
            )
            mates = sorted(want["partners"].items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
            assert [
                (
                    f"account:{p.player_id}" if p.kind == "player" else f"bot:{p.bot}",
                    p.matches,
                    p.won,
                )
                for p in got.partners
            ] == [(k, m, w) for k, (m, w) in mates[:5]]
    assert seen == {k for k in expected if k[0] != pop.erased}
    assert sum(w["failedThrows"] for w in expected.values()) > 0  # the counts can fail
    assert sum(w["bottomsWon"] for w in expected.values()) > 0


COUNTED = (
    *("matches", "won", "lost", "drawn", "left", "roundsAttacking", "roundsDefending"),
    *("attacked", "conceded", "levels", "failedThrows", "bottomsWon", "bottomPoints"),
)


def recount(service: GameService, erased: set[UUID]) -> dict[tuple[UUID, str], dict[str, Any]]:
    """Every person's statistics per family, counted again from the events here: each
    finished match's seats and rounds, each round's failed throws, last trick and bottom."""
    out: dict[tuple[UUID, str], dict[str, Any]] = {}
    finished = get_topic(MatchFinished)
    for n in service.recorder.select_notifications(0, 100_000, topics=[finished]):
        mid = UUID(str(n.originator_id))
        events: list[Any] = list(service.events.get(mid))
        if any(isinstance(e, MatchImported) for e in events):
            continue
        created = events[0]
        fam = family(created.preset, RuleSet.from_mapping(created.rules)) or "custom"
        person: dict[int, UUID | None] = {}
        bot: dict[int, str] = {}
        left: set[int] = set()
        played: dict[int, list[RoundRecorded]] = {s: [] for s in range(4)}
        winner = None
        for e in events:
            if isinstance(e, SeatTaken):
                person[e.seat] = e.account_id
                if e.kind != "human":
                    bot[e.seat] = e.kind
            elif isinstance(e, SeatLeft) and e.replaced_by is not None:
                left.add(e.seat)
            elif isinstance(e, RoundRecorded):
                for s in range(4):
                    if s not in left:
                        played[s].append(e)
            elif isinstance(e, MatchFinished):
                winner = e.winner
                break
        if not any(isinstance(e, RoundRecorded) for e in events):
            continue
        for s, account in person.items():
            if account is None or account in erased:
                continue
            row = out.setdefault((account, fam), {"partners": {}, **dict.fromkeys(COUNTED, 0)})
            row["matches"] += 1
            outcome = (
                "left"
                if s in left
                else "drawn"
                if winner is None
                else ("won" if winner == s % 2 else "lost")
            )
            row[outcome] += 1
            mate_account, mate_bot = person.get((s + 2) % 4), bot.get((s + 2) % 4)
            mate = f"account:{mate_account}" if mate_account else f"bot:{mate_bot}"
            if mate_account not in erased and (mate_account or mate_bot):
                counted = row["partners"].setdefault(mate, [0, 0])
                counted[0] += 1
                counted[1] += outcome == "won"
            for r in played[s]:
                rnd: list[Any] = list(service.events.get(round_id(mid, r.number)))
                defending = r.dealer % 2 == s % 2
                row["roundsDefending" if defending else "roundsAttacking"] += 1
                row["conceded" if defending else "attacked"] += r.attackers_total
                row["levels"] += r.levels_gained if r.team_up == s % 2 else 0
                row["failedThrows"] += sum(
                    1 for e in rnd if isinstance(e, ThrowFailed) and e.seat == s
                )
                last = [e.winner for e in rnd if isinstance(e, TrickWon)][-1]
                scored = next(e for e in rnd if isinstance(e, RoundScored))
                if not defending and last % 2 == s % 2:
                    row["bottomsWon"] += 1
                    row["bottomPoints"] += scored.bottom_bonus
    return out
