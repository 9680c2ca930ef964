"""A match's history (RULES R34): every event once, in the match's order, each numbered by
its match version, paged without loss or repeat, redacted per viewer (R33, R35); the
state as of any version equals the live view captured when that version was current."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.game.round import round_id
from domain.game.round_events import BottomBuried, RoundScored
from domain.rules.cards import card_names
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from services.errors import NotFoundError
from services.game import GameService
from services.history import match_history, state_at
from services.history_items import HistoryItem
from services.views import table_view
from tests.commands import create_match, take_seat
from tests.services.views_drive import SEED, T0, VIEWERS, Drive, drive, new_service


def everything(
    service: GameService, match_id: UUID, viewer: int | None, limit: int = 1000
) -> list[HistoryItem]:
    items: list[HistoryItem] = []
    after = 0
    while True:
        page = match_history(service, match_id, viewer, after=after, limit=limit)
        items += page.items
        if not page.more:
            return items
        after = page.next


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


def _name(item: HistoryItem) -> str:
    return "match" if item.round is None else f"round {item.round}"


# -- order and paging ---------------------------------------------------------------------


def test_every_event_once_numbered_by_match_version(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    items = histories["end"][None]
    assert [i.version for i in items] == list(range(1, len(items) + 1))
    match = d.match()
    current = d.service.current_round(match)
    assert current is not None
    assert len(items) == match.sequence(current.version)  # Match.sequence counts them all
    ids = {d.match_id: "match"} | {round_id(d.match_id, n): f"round {n}" for n in (1, 2, 3)}
    for aid, name in ids.items():
        stored = list(d.service.events.get(aid))
        mine = [i for i in items if i.aggregate_id == str(aid)]
        assert [i.aggregate_version for i in mine] == list(range(1, len(stored) + 1))
        assert [i.type for i in mine] == [type(e).__name__ for e in stored]
        assert {_name(i) for i in mine} == {name}
    assert len(items) == sum(len(list(d.service.events.get(aid))) for aid in ids)


def test_the_order_is_causal(played: tuple[Drive, Histories]) -> None:
    """After RoundBegun(n) come round n's events, then RoundRecorded(n)."""
    items = played[1]["end"][None]
    kinds = [(_name(i), i.type) for i in items]
    for n in (1, 2):
        begun = next(
            k for k, i in enumerate(items) if i.type == "RoundBegun" and i.data["number"] == n
        )
        recorded = next(
            k for k, i in enumerate(items) if i.type == "RoundRecorded" and i.data["number"] == n
        )
        assert kinds[begun + 1] == (f"round {n}", "RoundStarted")
        assert kinds[recorded - 1] == (f"round {n}", "RoundScored")
        assert {_name(i) for i in items[begun + 1 : recorded]} == {f"round {n}"}
        assert items[recorded].data["roundEvents"] == recorded - begun - 1


def test_a_command_leaves_the_match_at_its_last_event(played: tuple[Drive, Histories]) -> None:
    """CommandResult.version is the version of the command's last event."""
    d, histories = played
    items = histories["end"][None]
    versions = [s.result.version for s in d.snapshots]
    assert versions == sorted(set(versions))
    assert versions[-1] == len(items)
    for s in d.snapshots:
        if s.action != "take_seat" and s.round.result is None:
            last = items[s.result.version - 1]
            assert (last.aggregate_id, last.aggregate_version) == (
                str(s.result.round_id),
                s.result.round_version,
            )


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
    cursor = [0]
    matches: list[UUID] = []

    def during(d: Drive) -> None:
        matches.append(create_match(service, RuleSet()))  # other matches' events interleave
        page = match_history(service, d.match_id, 0, after=cursor[0], limit=4)
        read.extend(page.items)
        cursor[0] = page.next

    d = drive(rounds=1, service=service, before=during)
    while True:
        page = match_history(service, d.match_id, 0, after=cursor[0], limit=4)
        read.extend(page.items)
        cursor[0] = page.next
        if not page.items:
            break

    def keys(items: list[HistoryItem]) -> list[tuple[int, str, int]]:
        return [(i.version, i.aggregate_id, i.aggregate_version) for i in items]

    # the same events (the seed of a round read before it was scored stays hidden there)
    assert keys(read) == keys(everything(service, d.match_id, 0))
    assert {i.aggregate_id for i in read}.isdisjoint({str(m) for m in matches})


def test_a_page_reads_only_the_rounds_it_shows(played: tuple[Drive, Histories]) -> None:
    """Past rounds are skipped by their RoundRecorded length, never read."""
    d, histories = played
    service = d.service
    calls: list[tuple[str, Any]] = []
    real = service.recorder.select_events

    def spy(originator_id: UUID | str, **kwargs: Any) -> Sequence[Any]:
        calls.append((str(originator_id), kwargs))
        return real(originator_id, **kwargs)

    items = histories["end"][None]
    after = next(i.version for i in items if i.round == 3)  # round 3's first event
    service.recorder.select_events = spy  # type: ignore[method-assign]
    try:
        page = match_history(service, d.match_id, None, after=after, limit=5)
    finally:
        del service.recorder.select_events
    assert page.items == items[after : after + 5]
    read = {aid for aid, _ in calls}
    assert read <= {str(d.match_id), str(round_id(d.match_id, 3))}


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


def test_after_the_end_there_is_nothing(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    total = len(histories["end"][None])
    page = match_history(d.service, d.match_id, None, after=total + 5)
    assert (page.items, page.next, page.more) == ([], total + 5, False)


def test_an_unknown_match_has_no_history(played: tuple[Drive, Histories]) -> None:
    d, _ = played
    with pytest.raises(NotFoundError):
        match_history(d.service, uuid4(), None)
    with pytest.raises(NotFoundError):  # a round's id is not a match's
        match_history(d.service, round_id(d.match_id, 1), None)


# -- redaction (R21, R33, R35) ------------------------------------------------------------


def _shown(items: list[HistoryItem], match_: str, name: str) -> list[bool]:
    """For each event matching ``match_`` ("round 2 BottomBuried seat 1"), whether the
    field ``name`` is shown."""
    aggregate, kind, *seat = match_.rsplit(" ", 3) if "seat" in match_ else [*match_.rsplit(" ", 1)]
    out = []
    for i in items:
        if _name(i) == aggregate and i.type == kind:
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
    ("match SeatTaken", "tokenHash", "end", "everyone", False),  # never
    ("match MatchCreated", "organiserTokenHash", "end", "everyone", False),  # never
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
            text = msgspec.json.encode(items).decode()
            assert not any(h in text for h in hashes)
            assert round3 not in text
            assert (round2 in text) == (moment == "end")


def test_data_is_camel_case_in_card_notation(played: tuple[Drive, Histories]) -> None:
    items = played[1]["end"][None]
    played_item = next(i for i in items if i.type == "CardPlayed")
    assert all(isinstance(c, str) for c in played_item.data["cards"])
    begun = next(i for i in items if i.type == "RoundBegun")
    assert begun.data["levels"] == ["2", "2"]
    created = json.loads(msgspec.json.encode(items[0]))
    assert {"aggregateId", "aggregateVersion"} <= set(created)
    assert "declareWithJoker" in created["data"]["rules"]
    assert "startLevel" in created["data"]


# -- as of a version (R34) ----------------------------------------------------------------


def test_state_at_equals_the_live_view(played: tuple[Drive, Histories]) -> None:
    """Every command's match version, each viewer in turn (all of them at every score)."""
    d, _ = played
    for k, s in enumerate(d.snapshots):
        viewers = {VIEWERS[k % len(VIEWERS)]}
        if s.round.result is not None:
            viewers = set(VIEWERS)
        for viewer in viewers:
            state = state_at(d.service, d.match_id, s.result.version, viewer)
            assert state.view == s.live[viewer], (k, viewer)
            assert state.view.version == s.result.version


def test_state_at_while_seating() -> None:
    service = new_service(SEED)
    match_id = create_match(service, RuleSet())
    live = [table_view(service.get_match(match_id), None, 1, T0)]
    for seat in range(4):
        take_seat(service, match_id, seat, f"p{seat}")
        match = service.get_match(match_id)
        live.append(table_view(match, service.current_round(match), 1, T0))
    # MatchCreated, 4 × SeatTaken; the fourth is saved with RoundBegun, RoundStarted, Dealt
    assert [v.version for v in live] == [1, 2, 3, 4, 8]
    for view in live:
        assert state_at(service, match_id, view.version, 1).view == view
    begun = state_at(service, match_id, 6, None).view  # RoundBegun: no round event yet
    assert (begun.phase, begun.versions.round_version, begun.version) == ("seating", None, 6)


def test_every_version_has_a_state(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    items = histories["end"][2]
    for item in items[:: max(1, len(items) // 40)]:
        state = state_at(d.service, d.match_id, item.version, 2)
        assert state.view.version == item.version
        if item.type == "CardPlayed":
            assert state.view.trick[-1].cards == item.data["cards"] or state.view.tricks_done


def test_a_scored_round_reveals_everything_as_of_then(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    items = histories["end"][None]
    round1 = d.service.get_round(round_id(d.match_id, 1))
    first_play = next(i for i in items if i.round == 1 and i.type == "CardPlayed")
    state = state_at(d.service, d.match_id, first_play.version, None)
    assert state.revealed is not None
    then = d.service.get_round(round1.id, version=first_play.aggregate_version)
    assert state.revealed.hands[first_play.data["seat"]] and state.revealed.seed == then.seed_hex
    for seat in range(4):
        assert sorted(state.revealed.hands[seat]) == sorted(card_names(then.hand_at(seat, T0)))
    assert sorted(state.revealed.bottom) == sorted(card_names(then.bottom))
    open_play = next(i for i in items if i.round == 3 and i.type == "Dealt")
    assert state_at(d.service, d.match_id, open_play.version, 0).revealed is None  # R33


def test_the_round_result_is_in_the_state_at_its_score(played: tuple[Drive, Histories]) -> None:
    d, histories = played
    items = histories["end"][None]
    scored = next(i for i in items if i.round == 1 and i.type == "RoundScored")
    view = state_at(d.service, d.match_id, scored.version, 3).view
    assert view.phase == "scored" and view.result is not None
    events = list(d.service.events.get(round_id(d.match_id, 1)))
    assert isinstance(events[-1], RoundScored)
    assert view.result.seed == events[-1].seed


@pytest.mark.parametrize(("version", "error"), [(0, InvalidInputError), (10_000, NotFoundError)])
def test_state_at_a_missing_version(
    played: tuple[Drive, Histories], version: int, error: type[Exception]
) -> None:
    d, _ = played
    with pytest.raises(error):
        state_at(d.service, d.match_id, version, None)


def test_sqlite_store_orders_the_same_way(tmp_path: Path) -> None:
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "s.db")}
    d = drive(rounds=1, service=new_service(SEED, env))
    items = everything(d.service, d.match_id, None, limit=50)
    assert [i.version for i in items] == list(range(1, len(items) + 1))
    for s in d.snapshots[::10]:
        assert state_at(d.service, d.match_id, s.result.version, 1).view == s.live[1]
