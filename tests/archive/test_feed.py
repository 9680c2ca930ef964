"""The log as a feed (D17) on every store: every event once, in commit order, paged
without loss or repeat, redacted to what the public may see now (R33, R35, R36)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.feed import FeedItem, feed_page, last_position
from services.game import GameService
from services.history import match_history
from services.idempotency import IdempotencyRecord, Receipt, record_id
from tests.apps import make_app
from tests.archive.matches import (
    bot_match,
    bot_tournament,
    ended_match,
    open_match,
    tournament_in_play,
)
from tests.conftest import Backend


def everything(
    service: GameService, *, operator: bool = False, limit: int = 1000
) -> list[FeedItem]:
    items: list[FeedItem] = []
    after = 0
    while True:
        page = feed_page(service, after=after, limit=limit, operator=operator)
        items += page.items
        assert page.next >= after
        after = page.next
        if not page.more:
            return items


def by_type(items: list[FeedItem], stream: str) -> dict[str, list[FeedItem]]:
    out: dict[str, list[FeedItem]] = {}
    for item in items:
        if item.stream.id == stream:
            out.setdefault(item.type, []).append(item)
    return out


def test_every_event_once_in_commit_order_whatever_the_page_size(backend: Backend) -> None:
    service = backend.service()
    bot_match(service)
    ended_match(service)
    open_match(service)
    whole = everything(service, operator=True)
    positions = [i.position for i in whole]
    assert positions == list(range(1, last_position(service) + 1))  # gap-free, ordered
    for limit in (1, 7, 50):
        assert everything(service, operator=True, limit=limit) == whole
    # each stream's versions run 1, 2, 3, … in the log's order
    versions: dict[str, list[int]] = {}
    for item in whole:
        versions.setdefault(item.stream.id, []).append(item.version)
    assert all(v == list(range(1, len(v) + 1)) for v in versions.values())
    # another service on the same store (a replica) reads the same feed
    assert everything(backend.service(), operator=True) == whole


def test_a_round_in_play_hides_its_seed_a_scored_one_shows_it(backend: Backend) -> None:
    service = backend.service()
    played = bot_match(service)
    ended = ended_match(service)
    playing = open_match(service)
    items = everything(service)
    cases: list[tuple[Any, str, str, bool]] = [
        # match, event type, secret field, shown to the public now
        (played, "Dealt", "seed", True),  # R35: revealed once scored
        (played, "BottomBuried", "cards", True),  # R21/R33: public once scored
        (ended, "Dealt", "seed", False),  # R32: abandoned unscored, secret for good
        (playing, "Dealt", "seed", False),  # R33: in play
        (played, "SeatTaken", "tokenHash", False),  # never
        (played, "MatchCreated", "organiserTokenHash", False),  # never
    ]
    for match_id, kind, name, shown in cases:
        rows = [
            i for i in items if i.type == kind and str(match_id) in (i.stream.id, i.stream.match_id)
        ]
        assert rows, (kind, match_id)
        for row in rows:
            assert (name in row.data) is shown, (kind, name, row)
            assert (name in row.hidden) is not shown, (kind, name, row)


def test_the_operator_reads_every_field(backend: Backend) -> None:
    service = backend.service()
    open_match(service)
    items = everything(service, operator=True)
    assert all(not i.hidden and i.withheld is None for i in items)
    dealt = next(i for i in items if i.type == "Dealt")
    assert len(dealt.data["seed"]) == 64


def test_a_tournament_table_in_play_is_withheld_until_its_round_completes(
    backend: Backend,
) -> None:
    service = backend.service()
    done = bot_tournament(service)
    open_cup, tables = tournament_in_play(service)
    items = everything(service)
    table_ids = {str(t) for t in tables}
    closed = [i for i in items if i.stream.match_id in table_ids]
    assert closed and all(
        i.withheld and "R36" in i.withheld and i.data == {} and i.hidden for i in closed
    )
    # the tables' own match events stay open, as the summaries are
    assert any(i.stream.id == str(tables[0]) and i.type == "SeatTaken" for i in items)
    # R35: a tournament round's secret is public once the round completes
    scheduled = {str(done): True, str(open_cup): False}
    for item in items:
        if item.type == "RoundScheduled":
            assert ("secret" in item.data) is scheduled[item.stream.id]
    # the completed tournament's tables read as any match's
    rounds = [i for i in items if i.stream.kind == "round" and i.stream.match_id not in table_ids]
    assert any(i.type == "Dealt" and "seed" in i.data for i in rounds)


def test_other_aggregates_are_the_operators_only(backend: Backend) -> None:
    service = backend.service()
    open_match(service)
    rid = record_id("scope", "key")
    outcome = Receipt(201, rid, 1)
    service.save(IdempotencyRecord.record(rid, "f" * 64, outcome, datetime(2026, 1, 1, tzinfo=UTC)))
    public = everything(service)
    operator = everything(service, operator=True)
    assert len(operator) == len(public) + 1
    other = operator[-1]
    assert (other.stream.kind, other.type, other.class_version) == ("other", "Recorded", 2)
    # the public page passes over it: its next still reaches the end of the log
    assert feed_page(service, after=public[-1].position).next == other.position


@pytest.mark.parametrize(
    ("after", "limit"), [(-1, 10), (0, 0), (0, 1001), (10**15 + 1, 10), (2**64, 10)]
)
def test_bad_pages_are_refused(after: int, limit: int) -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with pytest.raises(ValueError, match=r"after|limit"):
        feed_page(service, after=after, limit=limit)


def test_tournament_tables_read_in_camel_case() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bot_tournament(service)
    scheduled = next(i for i in everything(service) if i.type == "RoundScheduled")
    table = scheduled.data["tables"][0]
    assert set(table) == {"table", "first", "second", "firstParity", "matchId"}


def test_the_public_feed_shows_what_a_spectators_history_shows(backend: Backend) -> None:
    """One redaction (R33): every match and round event of the feed carries the same data
    and hidden fields as the match's history read by a spectator."""
    service = backend.service()
    matches = [bot_match(service), ended_match(service), open_match(service)]
    feed = {
        (i.stream.id, i.version): (i.type, i.data, i.hidden)
        for i in everything(service)
        if i.stream.kind in ("match", "round")
    }
    compared = 0
    for match_id in matches:
        for item in match_history(service, match_id, None, limit=1000).items:
            key = (item.aggregate_id, item.aggregate_version)
            assert feed[key] == (item.type, item.data, item.hidden), key
            compared += 1
    assert compared == len(feed)


@pytest.fixture(scope="module")
def empty() -> Iterator[TestClient[Litestar]]:
    """One app on an empty store for the refusals (they only read)."""
    with TestClient(make_app()) as c:
        yield c


@pytest.mark.parametrize("after", [str(10**15 + 1), "1757620510395135206296856200768126976"])
def test_a_position_beyond_64_bits_is_a_422_not_a_500(
    after: str, empty: TestClient[Litestar]
) -> None:
    # schemathesis found it: the store's notification ids are 64-bit integers
    r = empty.get("/v1/events", params={"after": after})
    assert r.status_code == 422 and r.json()["code"] == "validation-failed"
