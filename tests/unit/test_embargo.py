"""The duplicate-deal embargo (R33, R35, R36; services/embargo.py) on the service layer.

A two-table bots tournament round (every table plays the same seeds seat for seat, R36):
table A is played to its end with ``services.bots.run_bots`` while table B has not made a
move. Every read of table A — the views of the four seats and a spectator, of its current
and of every round, the state as of every version, the history pages, deal verification
and record export — shows nothing a scored deal would reveal beyond what that viewer saw
during play (R33): no seed, no other seat's hand as dealt, no bottom unless the viewer
buried it. Once the tournament round completes, everything is revealed (R33, R35).

Each check is also run once *without* the embargo, to show it would catch the leak.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import (
    BottomBuried,
    CardPlayed,
    Dealt,
    DrawingEnded,
    Overcalled,
    ThrowFailed,
    TrumpDeclared,
    deal_for,
)
from domain.rules.cards import card_name, card_names
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from services.bots import run_bots
from services.embargo import (
    UNCHECKED,
    DealEmbargoedError,
    Embargo,
    embargo_for,
    embargo_marker,
    embargo_of,
    embargoed,
    view_embargo,
)
from services.game import GameService
from services.history import match_history, state_at
from services.records.export import export_match, export_round
from services.tournaments.service import TournamentService
from services.verify import verify_round
from services.views import SeatView, table_view
from tests.conftest import T0, FakeClock, FixedSeeds

VIEWERS: tuple[int | None, ...] = (None, 0, 1, 2, 3)
_BURY_ENDS = ("Overcalled", "BottomBuried", "Dealt", "RoundScored")
CARD = re.compile(r"^(?:10|[2-9JQKA])[SHCD]$|^[SB]J$")
Json = Any


# -- the scene: table A finished, table B not started -----------------------------------------


@dataclass
class Scene:
    service: GameService
    tournaments: TournamentService
    tournament_id: UUID
    a: UUID
    """Table A's match: finished."""
    b: UUID
    """Table B's match: the same deals (R36), not a move made yet."""

    def match(self) -> Match:
        return self.service.get_match(self.a)

    def rounds(self) -> list[Round]:
        return [self.service.get_round(r.round_id) for r in self.match().results]

    def seeds(self) -> list[str]:
        """Every seed table A dealt (redeals included): secret until the release (R35)."""
        return [
            e.seed
            for r in self.rounds()
            for e in self.service.events.get(r.id)
            if isinstance(e, Dealt)
        ]

    def complete(self) -> None:
        """Play table B and collect: the tournament round completes (RoundCompleted)."""
        assert self.tournaments.run_round(self.tournament_id).completed


def bot_teams(n: int) -> list[TeamEntry]:
    return [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("heuristic", "random")) for i in range(n)]


def new_service() -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds()
    )


def half_played(deals: int = 2) -> Scene:
    """A round-robin tournament of four bot teams (two tables), round 1 scheduled; table
    A is played to its end by its bots, table B is left as dealt."""
    service = new_service()
    ts = TournamentService(service)
    t = ts.create(
        name="cup", rules=STANDARD, teams=bot_teams(4), fmt="round_robin", match_length=deals
    )
    ts.schedule_next(t.id)
    a, b = (table.match_id for table in ts.get(t.id).rounds[0].tables)
    run_bots(service, a, 10_000)
    assert service.get_match(a).finished
    other = service.get_match(b)
    assert not other.finished and other.round_number == 1 and not other.results
    # R36: table B holds the very deal table A has scored (the leak the embargo closes)
    first = next(
        e
        for e in service.events.get(service.get_match(a).results[0].round_id)
        if isinstance(e, Dealt)
    )
    dealing = service.current_round(other)
    assert dealing is not None and dealing.dealt is not None
    assert dealing.commitment == first.commitment
    assert dealing.dealt.hands == deal_for(first.seed, first.first_seat).hands
    return Scene(service, ts, t.id, a, b)


@pytest.fixture(scope="module")
def scene() -> Scene:
    return half_played()


@pytest.fixture(scope="module")
def released() -> Scene:
    s = half_played()
    s.complete()
    return s


# -- what a viewer may see: the card budget of a round (R33) ----------------------------------


def budget(service: GameService, round_id: UUID, viewer: int | None) -> Counter[str]:
    """The most copies of each card ``viewer`` saw at once in the round during play:
    every card played, shown (R17, R20) or shown by a failed throw (R22), the bottom's 3rd
    card when it named trump (R19); a seat also its hands as dealt, and the bottom and
    the buried cards if it ever buried or took them (R20, R21). A list in a response
    holding more copies of a card than this shows something the viewer never saw."""
    played: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    bottoms: list[str] = []
    handlers: set[int] = set()
    buried = False
    for e in service.events.get(round_id):
        if isinstance(e, Dealt):
            dealt = deal_for(e.seed, e.first_seat)
            bottoms += card_names(dealt.bottom)
            buried = False
            if viewer is not None:
                seen |= Counter(card_names(dealt.hands[viewer]))
        elif isinstance(e, CardPlayed):
            played += Counter(card_names(e.cards))
        elif isinstance(e, TrumpDeclared | Overcalled):
            seen |= Counter(card_names(e.cards))
            if isinstance(e, Overcalled) and buried:
                handlers.add(e.seat)  # 炒底: the overcaller takes the buried cards (R20)
        elif isinstance(e, ThrowFailed):
            seen |= Counter(card_names(e.attempted))
        elif isinstance(e, DrawingEnded) and e.fallback_card is not None:
            seen |= Counter([card_name(e.fallback_card)])
        elif isinstance(e, BottomBuried):
            handlers.add(e.seat)
            bottoms += card_names(e.cards)
            buried = True
    allowed = played | seen
    if viewer is not None and viewer in handlers:
        allowed |= seen + Counter(bottoms)
    return allowed


def card_lists(value: Json) -> Iterator[list[str]]:
    """Every list of R4 card tokens anywhere in a JSON value."""
    if isinstance(value, dict):
        for v in value.values():
            yield from card_lists(v)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) and CARD.match(v) for v in value):
            yield value
        else:
            for v in value:
                yield from card_lists(v)


def over_budget(value: Json, allowed: Counter[str]) -> list[str]:
    """The cards some list of ``value`` holds more copies of than ``allowed``."""
    return sorted(
        {
            card
            for cards in card_lists(value)
            for card, n in Counter(cards).items()
            if n > allowed[card]
        }
    )


def as_json(value: object) -> Json:
    return msgspec.json.decode(msgspec.json.encode(value))


def leaked_seeds(value: object, seeds: list[str]) -> list[str]:
    text = msgspec.json.encode(value).decode()
    return [s for s in seeds if s in text]


# -- views (R33 during play, R36 embargo) -----------------------------------------------------


@pytest.mark.parametrize("viewer", VIEWERS)
def test_views_of_every_round_of_table_a_reveal_nothing_until_the_round_completes(
    scene: Scene, viewer: int | None
) -> None:
    """R33/R36: seat and public views of every scored round of table A: no result, an
    explicit embargo, the bottom only to the seat that buried it, ``visible`` exactly
    what the seat saw during play; no seed anywhere."""
    service, match, seeds = scene.service, scene.match(), scene.seeds()
    for round_ in scene.rounds():
        embargo = view_embargo(service, match, round_)
        assert embargo == Embargo(scene.tournament_id, 1)
        view = table_view(match, round_, viewer, T0, embargo=embargo)
        assert view.phase == "scored" and view.result is None
        assert view.embargo is not None and "until tournament round 1 completes" in view.embargo
        assert "R36" in view.embargo
        assert leaked_seeds(view, seeds) == []
        assert over_budget(as_json(view), budget(service, round_.id, viewer)) == []
        if isinstance(view, SeatView):
            assert round_.play is not None
            buried = round_.buried_by == viewer
            expected = card_names(round_.play.played) + (
                card_names(round_.bottom) if buried else []
            )
            assert Counter(view.visible) == Counter(expected)
            assert (view.bottom is not None) == buried
            assert len(view.visible) == (108 if buried else 100)


@pytest.mark.parametrize("viewer", VIEWERS)
def test_the_checks_would_catch_the_leak(scene: Scene, viewer: int | None) -> None:
    """The same views without the embargo reveal the seeds and (to any non-burier) the
    bottom: the checks above are not vacuous."""
    service, match = scene.service, scene.match()
    round_ = scene.rounds()[0]
    view = table_view(match, round_, viewer, T0, embargo=None)
    assert view.result is not None and leaked_seeds(view, scene.seeds()) != []
    if viewer is not None and viewer != round_.buried_by:
        assert over_budget(as_json(view), budget(service, round_.id, viewer)) != []


@pytest.mark.parametrize("viewer", VIEWERS)
def test_a_caller_that_does_not_ask_gets_the_embargo(scene: Scene, viewer: int | None) -> None:
    """Fail safe: table_view without an embargo decision withholds a tournament table's
    scored deal (the command answers rely on it: a table plays only before its tournament
    round completes) and reveals an ordinary match's as before."""
    match = scene.match()
    round_ = scene.rounds()[-1]
    view = table_view(match, round_, viewer, T0)
    assert view.result is None and view.embargo is not None
    assert table_view(match, round_, viewer, T0, embargo=UNCHECKED) == view


# -- the state as of every version, and the history (R34) -------------------------------------


def _round_of(scene: Scene, number: int | None) -> Round | None:
    rounds = scene.rounds()
    return None if number is None or number > len(rounds) else rounds[number - 1]


@pytest.mark.parametrize("viewer", VIEWERS)
def test_state_at_every_version_withholds_what_the_round_hid(
    scene: Scene, viewer: int | None
) -> None:
    """R34 + R36: the table as of every version of table A: never a ``revealed``; scored
    rounds say why; nothing beyond what the viewer saw then or later in play."""
    service, seeds = scene.service, scene.seeds()
    page = match_history(service, scene.a, None, after=0, limit=1000)
    versions = [i.version for i in page.items]
    assert versions == list(range(1, len(versions) + 1)) and not page.more
    scored_states = 0
    for version in versions:
        at = state_at(service, scene.a, version, viewer)
        assert at.revealed is None, version
        assert leaked_seeds(at, seeds) == [], version
        round_ = _round_of(scene, at.view.round_number or None)
        if round_ is not None:
            assert over_budget(as_json(at), budget(service, round_.id, viewer)) == [], version
        # every round of table A is scored by now: its states say why nothing is revealed
        assert (at.embargo is not None) == (round_ is not None), version
        if at.view.phase == "scored":
            scored_states += 1
            assert at.view.embargo == at.embargo and at.view.result is None
        else:
            assert at.view.embargo is None
    assert scored_states >= 1


@pytest.mark.parametrize("viewer", VIEWERS)
def test_history_pages_keep_the_during_play_redaction(scene: Scene, viewer: int | None) -> None:
    """R33/R36: Dealt.seed hidden, BottomBuried.cards only for the seat that buried them
    (or the 炒底 taker), RoundScored without seed, bottomCards, bottomPoints; the page
    says why; paging loses and repeats nothing (R34)."""
    service, seeds = scene.service, scene.seeds()
    rounds = {r.number: r for r in scene.rounds()}
    after, items = 0, []
    while True:
        page = match_history(service, scene.a, viewer, after=after, limit=37)
        assert page.embargo is not None and "tournament round 1" in page.embargo
        assert leaked_seeds(page, seeds) == []
        items += page.items
        if not page.more:
            break
        after = page.next
    assert [i.version for i in items] == list(range(1, len(items) + 1))
    buried = 0
    for k, item in enumerate(items):
        if item.type == "Dealt":
            assert item.hidden == ["seed"] and "seed" not in item.data
        if item.type == "RoundScored":
            assert set(item.hidden) == {"seed", "bottomCards", "bottomPoints"}
            assert not {"seed", "bottomCards", "bottomPoints"} & set(item.data)
        if item.type == "BottomBuried":
            buried += 1
            # R21/R20: the seat that buried them, and the 炒底 overcaller who took them
            after_it = (i for i in items[k + 1 :] if i.type in _BURY_ENDS)
            nxt = next(after_it)
            takers = {item.data["seat"]}
            if nxt.type == "Overcalled":
                takers.add(nxt.data["seat"])
            assert ("cards" in item.data) == (viewer in takers), item
        if item.round is not None:
            allowed = budget(service, rounds[item.round].id, viewer)
            assert over_budget(as_json(item), allowed) == [], item
    assert buried >= 2


# -- verification and records (R35) -----------------------------------------------------------


def test_verify_and_records_answer_deal_embargoed(scene: Scene) -> None:
    """R35/R36: no recomputed deal and no record of table A until the round completes."""
    service = scene.service
    calls: list[Callable[[], object]] = [
        *[partial(verify_round, service, r.id) for r in scene.rounds()],
        partial(export_match, service, scene.a),
        *[partial(export_round, service, scene.a, n) for n in (1, 2)],
    ]
    for call in calls:
        with pytest.raises(DealEmbargoedError) as info:
            call()
        assert info.value.code == "deal-embargoed" and info.value.rule == "R36"
        assert "embargoed until tournament round 1 completes" in info.value.detail
        assert leaked_seeds(info.value.detail, scene.seeds()) == []


# -- after the tournament round completes: everything, as for any match -----------------------


@pytest.mark.parametrize("viewer", VIEWERS)
def test_after_the_round_completes_everything_is_revealed(
    released: Scene, viewer: int | None
) -> None:
    """R33/R35: once RoundCompleted, table A's views, states and history reveal every
    hand, the bottom and the seeds; verification and records work."""
    service, match, seeds = released.service, released.match(), released.seeds()
    for round_ in released.rounds():
        assert view_embargo(service, match, round_) is None
        view = table_view(match, round_, viewer, T0, embargo=None)
        assert view.result is not None and view.embargo is None
        assert view.result.seed in seeds and len(view.result.dealt_hands) == 4
        if isinstance(view, SeatView):
            assert len(view.visible) == 108
    page = match_history(service, released.a, viewer, limit=1000)
    assert page.embargo is None and set(leaked_seeds(page, seeds)) == set(seeds)
    scored = next(i for i in page.items if i.type == "RoundScored")
    assert scored.hidden == [] and "bottomCards" in scored.data
    at = state_at(service, released.a, scored.version, viewer)
    assert at.revealed is not None and at.embargo is None and at.view.result is not None


def test_after_the_round_completes_verify_and_records_work(released: Scene) -> None:
    service = released.service
    for round_ in released.rounds():
        assert verify_round(service, round_.id).seed == round_.seed_hex
    assert export_match(service, released.a).end is not None
    assert export_round(service, released.a, 1).rounds[0].deals


# -- the predicate: one None check for ordinary matches, a cache once completed ---------------


def test_an_ordinary_match_never_reads_a_tournament(monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-tournament matches pay a None check: the predicate reads nothing."""
    service = new_service()
    match_id = service.create_match(STANDARD)
    for seat in range(4):
        service.take_seat(match_id, seat, f"p{seat}", "heuristic")
    run_bots(service, match_id, 400)
    match = service.get_match(match_id)
    round_ = service.get_round(match.results[0].round_id)

    def no_reads(*args: object, **kwargs: object) -> object:
        raise AssertionError("read the store")

    monkeypatch.setattr(service.repository, "get", no_reads)
    assert embargo_of(service, match) is None and not embargoed(service, match)
    assert view_embargo(service, match, round_) is None
    assert embargo_for(service, None, 0) is None
    assert embargo_marker(round_, None) == ""
    assert table_view(match, round_, 0, T0).result is not None  # UNCHECKED: no tournament


def test_completion_is_remembered(released: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """A completed tournament round is remembered: later checks read nothing."""
    service, match = released.service, released.match()
    assert embargo_of(service, match) is None

    def no_reads(*args: object, **kwargs: object) -> object:
        raise AssertionError("read the store")

    monkeypatch.setattr(service.repository, "get", no_reads)
    assert embargo_of(service, match) is None
    assert embargo_for(service, released.tournament_id, 1) is None


def test_an_incomplete_round_is_read_each_time(scene: Scene) -> None:
    """Until it completes, the round's state is read again (another process may complete
    it): the embargo holds, and a missing tournament or round keeps it (fail safe)."""
    service = scene.service
    assert embargoed(service, scene.match())
    assert embargoed(service, service.get_match(scene.b))
    assert embargo_for(service, scene.tournament_id, 2) == Embargo(scene.tournament_id, 2)
    missing = uuid4()
    assert embargo_for(service, missing, 1) == Embargo(missing, 1)
    round_ = scene.rounds()[-1]
    assert embargo_marker(round_, Embargo(scene.tournament_id, 1)) == "e"
    assert embargo_marker(None, Embargo(scene.tournament_id, 1)) == ""
