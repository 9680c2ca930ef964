"""A match's history (RULES R34): every event once, in the store's order, paged by cursor
without loss or repeat, redacted per viewer (R33, R35); the state as of any version
equals the live view captured when that version was current."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from domain.game.round import round_id
from domain.game.round_events import BottomBuried
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from services.errors import NotFoundError
from services.game import GameService
from services.history import (
    HistoryItem,
    match_as_of,
    match_history,
    round_as_of,
    view_at,
)
from services.views import table_view
from tests.unit.test_views import SEED, T0, VIEWERS, Drive, drive, new_service


def everything(
    service: GameService, match_id: UUID, viewer: int | None, limit: int = 1000
) -> list[HistoryItem]:
    items: list[HistoryItem] = []
    after: int | None = None
    while True:
        page = match_history(service, match_id, viewer, after=after, limit=limit)
        items += page.items
        if not page.more:
            return items
        after = page.cursor


Histories = dict[str, dict[int | None, list[HistoryItem]]]


@pytest.fixture(scope="module")
def played() -> tuple[Drive, Histories]:
    """Two rounds (round 2 with 炒底); history read mid-round-2 and at the end."""
    histories: Histories = {}

    def during(d: Drive) -> None:
        r = d.service.current_round(d.match())
        if "round 2 playing" in histories or r is None or r.number != 2 or r.play is None:
            return
        if r.play.tricks_done:
            histories["round 2 playing"] = {
                v: everything(d.service, d.match_id, v) for v in VIEWERS
            }

    d = drive(rounds=2, before=during)
    histories["end"] = {v: everything(d.service, d.match_id, v) for v in VIEWERS}
    return d, histories


# -- order and paging ---------------------------------------------------------------------


def test_every_event_once_in_order(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    items = histories["end"][None]
    cursors = [i.cursor for i in items]
    assert cursors == sorted(set(cursors))
    ids = {d.match_id: "match"} | {round_id(d.match_id, n): f"round {n}" for n in (1, 2, 3)}
    for aid, name in ids.items():
        stored = list(d.service.events.get(aid))
        mine = [i for i in items if i.aggregate_id == str(aid)]
        assert [i.version for i in mine] == list(range(1, len(stored) + 1))
        assert [i.type for i in mine] == [type(e).__name__ for e in stored]
        assert {i.aggregate for i in mine} == {name}
    assert len(items) == sum(len(list(d.service.events.get(aid))) for aid in ids)


def test_the_order_is_causal(played: tuple[Drive, Histories]) -> None:
    """RoundBegun(N) before round N starts; round N's RoundScored before RoundRecorded(N)."""
    items = played[1]["end"][None]
    position = {(i.aggregate, i.type, i.data.get("number")): k for k, i in enumerate(items)}
    kinds = [(i.aggregate, i.type) for i in items]
    for n in (1, 2):
        started = kinds.index((f"round {n}", "RoundStarted"))
        scored = kinds.index((f"round {n}", "RoundScored"))
        assert position[("match", "RoundBegun", n)] < started
        assert scored < position[("match", "RoundRecorded", n)]


@pytest.mark.parametrize("limit", [1, 3, 17, 100])
@pytest.mark.parametrize("viewer", [None, 2])
def test_pages_add_up_to_the_whole(
    played: tuple[Drive, Histories], limit: int, viewer: int | None
) -> None:
    d, histories = played
    assert everything(d.service, d.match_id, viewer, limit) == histories["end"][viewer]


def test_paging_while_events_are_saved() -> None:
    """Pages read while this match and others are played lose and repeat nothing."""
    service = new_service(3)
    read: list[HistoryItem] = []
    cursor: list[int | None] = [None]
    matches: list[UUID] = []

    def during(d: Drive) -> None:
        matches.append(service.create_match(RuleSet()))  # other matches' events interleave
        page = match_history(service, d.match_id, 0, after=cursor[0], limit=4)
        read.extend(page.items)
        cursor[0] = page.cursor

    d = drive(rounds=1, service=service, before=during)
    while True:
        page = match_history(service, d.match_id, 0, after=cursor[0], limit=4)
        read.extend(page.items)
        cursor[0] = page.cursor
        if not page.items:
            break

    def keys(items: list[HistoryItem]) -> list[tuple[int, str, int]]:
        return [(i.cursor, i.aggregate_id, i.version) for i in items]

    # the same events (the seed of a round read before it was scored stays hidden there)
    assert keys(read) == keys(everything(service, d.match_id, 0))
    assert {i.aggregate_id for i in read}.isdisjoint({str(m) for m in matches})


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"limit": 0}, InvalidInputError),
        ({"limit": 1001}, InvalidInputError),
        ({"after": -1}, InvalidInputError),
        ({"viewer": 4}, InvalidInputError),
    ],
)
def test_bad_queries(
    played: tuple[Drive, Histories], kwargs: dict[str, int], error: type[Exception]
) -> None:
    d, _ = played
    args: dict[str, int | None] = {"viewer": None, **kwargs}
    viewer = args.pop("viewer")
    with pytest.raises(error):
        match_history(d.service, d.match_id, viewer, **args)  # type: ignore[arg-type]


def test_an_unknown_match_has_no_history(played: tuple[Drive, Histories]) -> None:
    with pytest.raises(NotFoundError):
        match_history(played[0].service, uuid4(), None)


# -- redaction (R21, R33, R35) ------------------------------------------------------------


def _shown(items: list[HistoryItem], match_: str, name: str) -> list[bool]:
    """For each event matching ``match_`` ("round 2 BottomBuried seat 1"), whether the
    field ``name`` is shown."""
    aggregate, kind, *seat = match_.rsplit(" ", 3) if "seat" in match_ else [*match_.rsplit(" ", 1)]
    out = []
    for i in items:
        if i.aggregate == aggregate and i.type == kind:
            if seat and i.data["seat"] != int(seat[-1]):
                continue
            assert (name in i.data) != (name in i.hidden)
            out.append(name in i.data)
    assert out, match_
    return out


def _roles(d: Drive) -> dict[str, list[int | None]]:
    r2 = d.service.get_round(round_id(d.match_id, 2))
    buries = [e for e in d.service.events.get(r2.id) if isinstance(e, BottomBuried)]
    dealer, overcaller = buries[0].seat, buries[1].seat
    others = [s for s in range(4) if s not in (dealer, overcaller)]
    return {
        "dealer": [dealer],
        "overcaller": [overcaller],
        "others": [*others, None],
        "everyone": list(VIEWERS),
    }


# event (aggregate, type), field, moment, role, shown?
REDACTION_TABLE = [
    ("match SeatTaken", "token_hash", "end", "everyone", False),  # never
    ("match SeatTaken", "player", "end", "everyone", True),
    ("round 1 Dealt", "seed", "round 2 playing", "everyone", True),  # round 1 is scored
    ("round 2 Dealt", "seed", "round 2 playing", "everyone", False),  # R35: secret
    ("round 2 Dealt", "commitment", "round 2 playing", "everyone", True),  # R35: public
    ("round 2 Dealt", "seed", "end", "everyone", True),
    ("round 3 Dealt", "seed", "end", "everyone", False),
    ("round 2 BottomBuried dealer", "cards", "round 2 playing", "dealer", True),  # R21
    ("round 2 BottomBuried dealer", "cards", "round 2 playing", "overcaller", True),  # 炒底
    ("round 2 BottomBuried dealer", "cards", "round 2 playing", "others", False),
    ("round 2 BottomBuried overcaller", "cards", "round 2 playing", "overcaller", True),
    ("round 2 BottomBuried overcaller", "cards", "round 2 playing", "dealer", False),
    ("round 2 BottomBuried overcaller", "cards", "round 2 playing", "others", False),
    ("round 2 BottomBuried dealer", "cards", "end", "everyone", True),  # R33: the end
    ("round 2 BottomBuried overcaller", "cards", "end", "everyone", True),
    ("round 2 Overcalled", "cards", "round 2 playing", "everyone", True),  # shown (R20)
    ("round 2 CardPlayed", "cards", "round 2 playing", "everyone", True),  # played (R33)
]


@pytest.mark.parametrize(("event", "name", "moment", "role", "shown"), REDACTION_TABLE)
def test_redaction(
    played: tuple[Drive, Histories], event: str, name: str, moment: str, role: str, shown: bool
) -> None:
    d, histories = played
    roles = _roles(d)
    for who in ("dealer", "overcaller"):
        event = event.replace(f" {who}", f" seat {roles[who][0]}")
    for viewer in roles[role]:
        assert set(_shown(histories[moment][viewer], event, name)) == {shown}, viewer


def test_no_secret_in_any_item(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    match = d.match()
    hashes = [info.token_hash for info in match.seats if info is not None]
    round2 = d.service.get_round(round_id(d.match_id, 2)).seed_hex
    round3 = d.service.get_round(round_id(d.match_id, 3)).seed_hex
    for moment, by_viewer in histories.items():
        for items in by_viewer.values():
            text = json.dumps([asdict(i) for i in items])
            assert not any(h in text for h in hashes)
            assert round3 not in text
            assert (round2 in text) == (moment == "end")


def test_data_is_in_card_notation(played: tuple[Drive, Histories]) -> None:
    items = played[1]["end"][None]
    played_item = next(i for i in items if i.type == "CardPlayed")
    assert all(isinstance(c, str) for c in played_item.data["cards"])
    begun = next(i for i in items if i.type == "RoundBegun")
    assert begun.data["levels"] == ["2", "2"]


# -- as of a version (R34) ----------------------------------------------------------------


def test_round_as_of_equals_the_live_view(played: tuple[Drive, Histories]) -> None:
    """Every command's round version, each viewer in turn (the spectator at every score)."""
    d, _ = played
    for k, s in enumerate(d.snapshots):
        rid, version = s.result.round_id, s.result.round_version
        assert rid is not None and version is not None
        viewers = {VIEWERS[k % len(VIEWERS)]}
        if s.round.result is not None:
            viewers |= {None}
        for viewer in viewers:
            assert round_as_of(d.service, rid, version, viewer) == s.views[viewer]


def test_match_as_of_while_seating() -> None:
    service = new_service(SEED)
    match_id = service.create_match(RuleSet())
    live = [table_view(service.get_match(match_id), None, 1, T0)]
    for seat in range(4):
        service.take_seat(match_id, seat, f"p{seat}")
        match = service.get_match(match_id)
        live.append(table_view(match, service.current_round(match), 1, T0))
    versions = [v.versions.match_version for v in live]
    assert versions == [1, 2, 3, 4, 6]
    for view in live:
        assert match_as_of(service, match_id, view.versions.match_version, 1) == view


def test_match_as_of_the_last_moment_of_a_version(played: tuple[Drive, Histories]) -> None:
    """A match version current while a round was played shows that round's end."""
    d, _ = played
    match = d.match()
    now = match_as_of(d.service, d.match_id, match.version, 0)
    assert now == table_view(match, d.service.current_round(match), 0, T0)
    during_round_1 = match_as_of(d.service, d.match_id, 6, None)
    assert (during_round_1.round_number, during_round_1.phase) == (1, "scored")
    assert during_round_1.versions.match_version == 6


def test_view_at_a_cursor(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    items = histories["end"][3]
    first_play = next(i for i in items if i.type == "CardPlayed")
    view = view_at(d.service, d.match_id, first_play.cursor, 3)
    assert view.played == first_play.data["cards"]
    assert view_at(d.service, d.match_id, items[0].cursor, None).phase == "seating"


@pytest.mark.parametrize("version", [0, 10_000])
def test_as_of_a_missing_version(played: tuple[Drive, Histories], version: int) -> None:
    d, _ = played
    with pytest.raises(NotFoundError):
        round_as_of(d.service, round_id(d.match_id, 1), version, None)
    with pytest.raises(NotFoundError):
        match_as_of(d.service, d.match_id, version, None)


def test_sqlite_store_orders_the_same_way(tmp_path: Path) -> None:
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "s.db")}
    d = drive(rounds=1, service=new_service(SEED, env))
    items = everything(d.service, d.match_id, None, limit=50)
    assert [i.cursor for i in items] == sorted({i.cursor for i in items})
    for s in d.snapshots[::10]:
        assert s.result.round_id is not None and s.result.round_version is not None
        view = round_as_of(d.service, s.result.round_id, s.result.round_version, 1)
        assert view == s.views[1]
