"""Sealed names are a type of their own, never a string convention (docs/decisions.md
D-integrity, docs/players.md crypto-shredding): a sealed name is stored as a JSON object
no client can write; a name a client writes is shown as written, whatever it looks like;
a stored value that cannot be opened reads as unavailable, never as an error; and stores
written before — sealed names as ``enc:v1:`` strings — still read. One name policy
refuses what would mislead a reader."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from domain.game.match_events import SeatTaken
from domain.names import InvalidNameError, checked_name
from services.accounts.keys import ERASED, PREFIX, UNREADABLE, MemoryKeys, Sealer
from services.codec import MsgspecMapper

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def mapper() -> MsgspecMapper:
    m = MsgspecMapper()
    m.sealer = Sealer(MemoryKeys())
    return m


def seat_taken(name: str, account: UUID | None) -> SeatTaken:
    return SeatTaken(  # type: ignore[call-arg]
        originator_id=uuid4(),
        originator_version=2,
        timestamp=NOW,
        seat=0,
        player=name,
        kind="human",
        token_hash="h",
        account_id=account,
    )


def read(m: MsgspecMapper, event: StoredEvent) -> str:
    """The seat name ``event`` reads as."""
    decoded = m.to_domain_event(event)
    assert isinstance(decoded, SeatTaken)
    return decoded.player


def stored(state: dict[str, object]) -> StoredEvent:
    body = {"timestamp": NOW.isoformat(), "seat": 0, "kind": "human", "token_hash": "h", **state}
    return StoredEvent(
        originator_id=uuid4(),
        originator_version=2,
        topic=get_topic(SeatTaken),
        state=json.dumps({**body, "class_version": 2}).encode(),
    )


def test_a_players_name_is_stored_as_a_sealed_object_and_reads_back() -> None:
    m, account = mapper(), uuid4()
    saved = m.to_stored_event(seat_taken("Mei", account))
    state = json.loads(saved.state)
    assert state["player"]["sealed"] == "v1" and b"Mei" not in saved.state
    assert read(m, saved) == "Mei"
    assert m.sealer is not None
    m.sealer.keys.erase(account)
    assert read(m, saved) == ERASED


@pytest.mark.parametrize(
    "name",
    [
        "enc:v1:zz:QUFBQQ==",
        "enc:v1:",
        "enc:v1:9f1c2e4a6b8d4f0a8c3e5b7d9f1a2c4e:QUFBQQ==",  # an owner that looks real
        "enc:v1:00000000000000000000000000000000:" + "A" * 40,
    ],
)
def test_a_name_a_client_writes_is_shown_as_written(name: str) -> None:
    """A guest's name (no account) that looks like a sealed value is plain text: stored
    as a JSON string, read as written, now and from stores of either form."""
    m = mapper()
    saved = m.to_stored_event(seat_taken(name, None))
    assert json.loads(saved.state)["player"] == name
    assert read(m, saved) == name
    assert read(m, stored({"player": name, "account_id": None})) == name


def test_a_legacy_sealed_name_still_opens_and_a_forged_one_does_not() -> None:
    """Before sealed names were typed, the store held ``enc:v1:<account>:<box>`` strings:
    such a string opens when it names the event's own account (only the service sealed
    those); naming another account, it is shown as written."""
    m, account = mapper(), uuid4()
    assert m.sealer is not None
    sealed = m.sealer.seal(account, "player", "Mei")
    legacy = f"{PREFIX}{sealed.owner}:{sealed.box}"
    assert read(m, stored({"player": legacy, "account_id": str(account)})) == "Mei"
    assert read(m, stored({"player": legacy, "account_id": str(uuid4())})) == legacy
    damaged = f"{PREFIX}{account.hex}:" + base64.b64encode(b"x" * 40).decode()
    assert read(m, stored({"player": damaged, "account_id": str(account)})) == UNREADABLE
    garbage = f"{PREFIX}{account.hex}:%%%not base64"
    assert read(m, stored({"player": garbage, "account_id": str(account)})) == UNREADABLE


@pytest.mark.parametrize(
    "value",
    [
        {"sealed": "v1", "owner": "zz", "box": "QUFBQQ=="},
        {"sealed": "v1", "owner": uuid4().hex, "box": "QUFBQQ=="},
        {"sealed": "v2", "owner": uuid4().hex, "box": ""},
        {"anything": 1},
    ],
)
def test_a_damaged_sealed_value_reads_as_unavailable(value: dict[str, object]) -> None:
    assert read(mapper(), stored({"player": value, "account_id": None})) in (UNREADABLE, ERASED)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("a\u0000b", "control character"),
        ("line\nbreak", "control character"),
        ("evil\u202egnp.exe", "bidirectional"),
        ("\u2066x\u2069", "bidirectional"),
        ("\u200b\u200b", "visible"),
        ("   ", "visible"),
        ("", "1 to 100"),
        ("x" * 101, "1 to 100"),
        ("erased player", "service shows"),
        ("Unavailable Name", "service shows"),
        ("random bot 2", "service shows"),
    ],
)
def test_the_name_policy_refuses_what_misleads_a_reader(name: str, why: str) -> None:
    with pytest.raises(InvalidNameError) as refused:
        checked_name(name, "teams[0].name")
    assert refused.value.detail.startswith("teams[0].name ") and why in refused.value.detail


def test_the_name_policy_keeps_names_as_written_in_nfc() -> None:
    assert checked_name("Cafe\u0301", "name") == "Caf\u00e9"
    for name in (
        "李小龙 Bruce",
        "Ωμέγα",
        "مرحبا",
        "enc:v1:zz:QUFBQQ==",
        "Ω" * 100,
        "random bot 2 fan",
    ):
        assert checked_name(name, "name") == name
    assert checked_name("random bot 2", "name", bot=True) == "random bot 2"


def test_write_routes_refuse_a_misleading_name_naming_the_field() -> None:
    from litestar.testing import TestClient  # noqa: PLC0415

    from tests.apps import make_app  # noqa: PLC0415

    with TestClient(make_app()) as c:
        match_id = c.post("/v1/matches", json={"name": "x"}).json()["matchId"]
        refusals = [
            (c.post(f"/v1/matches/{match_id}/seats/0", json={"name": "a\u202eb"}), "name"),
            (c.post("/v1/players", json={"displayName": "erased player"}), "displayName"),
            (c.post("/v1/matches", json={"name": "\u200b"}), "name"),
        ]
        teams = [
            {"name": name, "players": [{"name": "a"}, {"name": "b"}]} for name in ("T\u0007", "U")
        ]
        body = {"name": "cup", "teams": teams, "format": "round_robin", "matchLength": 1}
        refusals.append((c.post("/v1/tournaments", json=body), "teams[0].name"))
        token = c.post("/v1/players", json={"displayName": "Mei"}).json()["token"]
        edit = {"displayName": "Mei\u2066"}
        headers = {"authorization": f"Bearer {token}"}
        refusals.append((c.patch("/v1/players/me", json=edit, headers=headers), "displayName"))
        for r, field in refusals:
            assert r.status_code == 422, r.text
            assert r.json()["code"] == "invalid-name" and r.json()["detail"].startswith(field)
        seated = c.post(f"/v1/matches/{match_id}/seats/0", json={"name": "enc:v1:zz:QUFBQQ=="})
        assert seated.status_code == 201
        history = c.get(f"/v1/matches/{match_id}/history")
        assert history.status_code == 200 and "enc:v1:zz:QUFBQQ==" in history.text


def test_a_device_label_is_sealed_like_a_name() -> None:
    from domain.accounts.account import AccountCreated, SessionOpened  # noqa: PLC0415

    for cls in (AccountCreated, SessionOpened):
        assert cls.PERSONAL_FIELDS["label"] == "originator_id"
    m, account = mapper(), uuid4()
    event = SessionOpened(  # type: ignore[call-arg]
        originator_id=account,
        originator_version=2,
        timestamp=NOW,
        session_id=uuid4(),
        token_hash="h",
        label="Mei's phone",
    )
    saved = m.to_stored_event(event)
    assert b"Mei" not in saved.state and json.loads(saved.state)["label"]["sealed"] == "v1"
    opened = m.to_domain_event(saved)
    assert isinstance(opened, SessionOpened) and opened.label == "Mei's phone"


def test_write_routes_refuse_a_spoofing_name_and_a_look_alike_at_the_table() -> None:
    """The spoofing policy (tests/domain/test_names.py) on the routes: 422 ``invalid-name``
    naming the field and what was refused."""
    from litestar.testing import TestClient  # noqa: PLC0415

    from tests.apps import make_app  # noqa: PLC0415

    with TestClient(make_app()) as c:
        match_id = c.post("/v1/matches", json={"name": "x"}).json()["matchId"]
        seats = f"/v1/matches/{match_id}/seats"
        assert c.post(f"{seats}/0", json={"name": "Kim"}).status_code == 201
        refusals = [
            (c.post(f"{seats}/1", json={"name": "Kirn"}), "looks like 'Kim'"),
            (c.post(f"{seats}/1", json={"name": "\u2800"}), "BRAILLE PATTERN BLANK"),
            (c.post("/v1/players", json={"displayName": "\u0435rased player"}), "Cyrillic"),
            (c.post("/v1/players", json={"displayName": "Mei\u200b"}), "ZERO WIDTH SPACE"),
        ]
        for r, why in refusals:
            assert r.status_code == 422, r.text
            assert r.json()["code"] == "invalid-name" and why in r.json()["detail"], r.text
            assert r.json()["type"].endswith("/invalid-name")
        assert c.post(f"{seats}/1", json={"name": "李明 🐼"}).status_code == 201
