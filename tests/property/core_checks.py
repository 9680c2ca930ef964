"""The checks of the core's properties (:mod:`tests.property.core_table`): replays give the live
state (R34), 108 cards at every version (R3), tricks + bottom = 200 points (R26).
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from uuid import UUID

from eventsourcing.application import Repository
from eventsourcing.domain import CanMutateProtocol

from domain.game.match import Match
from domain.game.round import Round, round_id
from domain.rules.cards import DECK_SIZE, POINTS
from domain.rules.shuffle import Deal
from services.game import GameService
from tests.property.core_table import DECK, POPO, FakeClock, TableService, diff, state_of


def load(repository: Repository[UUID], aid: UUID, version: int | None = None) -> Round | Match:
    """An aggregate rebuilt by ``repository`` (as of ``version``)."""
    aggregate: Round | Match = repository.get(aid, version=version)
    return aggregate


def stored_topics(svc: GameService, aggregate_id: UUID) -> list[str]:
    return [type(e).__name__ for e in svc.events.get(aggregate_id)]


AS_OF_SAMPLES = 4
"""Versions of each aggregate loaded ``as of`` through a second service, beside its first
and its last (each load replays from the start: every version would be quadratic)."""


def as_of_versions(versions: list[int]) -> list[int]:
    """The first, the last and up to :data:`AS_OF_SAMPLES` versions spread between them."""
    ordered = sorted(versions)
    if len(ordered) <= AS_OF_SAMPLES + 2:
        return ordered
    step = (len(ordered) - 1) / (AS_OF_SAMPLES + 1)
    return sorted({ordered[round(k * step)] for k in range(AS_OF_SAMPLES + 2)})


def check_replays(svc: TableService) -> None:
    """R34: from the stored events alone, every aggregate rebuilds to its live state: event
    by event (each stored event applied in turn: every version a command left it at, and
    the mid-command versions too), as of a version through a second service's load
    (``get_round/get_match(id, version=v)``: the first, the last and versions between), and
    at its head (a fresh repository, a second service on the same store, the cached
    service)."""
    other = TableService(POPO, recorder=svc.recorder, clock=FakeClock(), seeds=lambda: b"")
    latest: dict[UUID, int] = {}
    versions: dict[UUID, list[int]] = {}
    for aid, version in svc.live:
        latest[aid] = max(latest.get(aid, 0), version)
        versions.setdefault(aid, []).append(version)
    for aid, known in versions.items():
        for version in as_of_versions(known):
            live = svc.live[(aid, version)]
            loader = other.get_round if "bidding" in live else other.get_match
            as_of = state_of(loader(aid, version))
            assert as_of == live, f"{aid} v{version}: {diff(as_of, live)}"
    fresh: Repository[UUID] = Repository(svc.events)  # no cache: replay from scratch
    for aid, version in latest.items():
        live = svc.live[(aid, version)]
        head = load(fresh, aid)
        assert head.version == version
        assert state_of(head) == live, diff(state_of(head), live)
        if isinstance(head, Round):  # a second service on the store, and the cached one
            assert state_of(other.get_round(aid)) == live == state_of(svc.get_round(aid))
        else:
            assert state_of(other.get_match(aid)) == live == state_of(svc.get_match(aid))
        aggregate: Any = None
        compared = 0
        for stored in svc.events.get(aid):
            assert isinstance(stored, CanMutateProtocol)
            aggregate = stored.mutate(aggregate)
            key = (aid, aggregate.version)
            if key in svc.live:
                assert state_of(aggregate) == svc.live[key], f"{aid} v{aggregate.version}"
                compared += 1
        assert aggregate is not None and aggregate.version == version
        assert compared == len(versions[aid])  # every version a command left it at


def check_cards(svc: TableService) -> None:
    """R3: every card exactly twice in hands + bottom + played; R26: 200 points."""
    for live in svc.live.values():
        dealt = live.get("dealt")
        if dealt is None:
            continue
        assert isinstance(dealt, Deal)
        play, hands, bottom = live["play"], live["hands"], live["bottom"]
        assert isinstance(hands, tuple) and isinstance(bottom, tuple)
        if isinstance(play, dict):
            cards = [c for h in play["hands"] for c in h] + list(play["played"])
        elif hands:
            cards = [c for h in hands for c in h]
        else:  # still dealing: the hands are the deal's
            cards, bottom = [c for h in dealt.hands for c in h], dealt.bottom
        assert len(cards) + len(bottom) == DECK_SIZE
        assert Counter(cards) + Counter(bottom) == DECK


def check_scores(svc: TableService, match_id: UUID) -> None:
    """R26–R31 across the rounds: trick points + bottom = 200, dealer rotation, levels."""
    match = svc.get_match(match_id)
    previous = None
    for number in range(1, match.round_number + 1):
        r = svc.get_round(round_id(match_id, number))
        if previous is not None and previous.result is not None:
            assert r.dealer == previous.result.next_dealer  # R31
            assert r.levels == match.results[number - 2].levels  # R30
        if r.result is not None:
            events = list(svc.events.get(r.id))
            tricks = [e for e in events if type(e).__name__ == "TrickWon"]
            total = sum(getattr(e, "points", 0) for e in tricks)
            assert total + r.result.bottom_points == 200
            assert r.result.bottom_points == sum(POINTS[c] for c in r.result.bottom_cards)
            attackers = (r.result.dealer + 1) % 2
            won = sum(
                getattr(e, "points", 0) for e in tricks if getattr(e, "winner", 0) % 2 == attackers
            )
            assert r.result.trick_points == won
        previous = r


def count(svc: GameService, match_id: UUID, topic: str, *, after_round: int = 0) -> int:
    match = svc.get_match(match_id)
    return sum(
        stored_topics(svc, round_id(match_id, n)).count(topic)
        for n in range(after_round + 1, match.round_number + 1)
    )
