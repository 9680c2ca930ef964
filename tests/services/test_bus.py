"""A round command through the bus (docs/decisions.md D-bus) and the credentials it takes
(docs/decisions.md D-access): one load of the match, authorisation before anything about
the key or the version, the key's record saved with the events, and the dry run as the
same call with ``dry=True`` (it cannot drift from the command)."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest

from domain.game.actions import action_of
from domain.game.match import Match
from domain.game.round_events import Pacing
from domain.rules.cards import parse_cards
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import STANDARD
from services.access import Credential, read_authorization, seat_in
from services.bus import Bus
from services.dryrun import DryRun
from services.game import GameService
from services.handlers import build_bus
from services.idempotency import IdempotencyRecord, Keys, RequestKey
from services.legal import LegalActions
from services.round_commands import ANY_VERSION, Act, CommandDone, Precondition
from services.sources import SEAT_ROLE, new_token
from services.views import table_view
from tests.commands import create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds


class Table:
    """Four people seated through the service, with their seat credentials."""

    def __init__(self, pacing: Pacing | None = None) -> None:
        self.clock = FakeClock()
        self.service = GameService(
            {"PERSISTENCE_MODULE": "eventsourcing.popo"},
            clock=self.clock,
            seeds=FixedSeeds(),
            pacing=pacing,
        )
        self.bus: Bus = build_bus(self.service)
        self.match_id = create_match(self.service, STANDARD, name="pipeline")
        self.seats = [
            Credential.parse(take_seat(self.service, self.match_id, n, f"p{n}")[0])
            for n in range(4)
        ]

    def version(self) -> int:
        match = self.service.get_match(self.match_id)
        round_ = self.service.current_round(match)
        return match.sequence(0 if round_ is None else round_.version)

    def run(
        self,
        seat: int | Credential | None,
        action: str = "pass",
        *,
        key: RequestKey | None = None,
        expected: Precondition = ANY_VERSION,
        dry: bool = False,
    ) -> object:
        caller = self.seats[seat] if isinstance(seat, int) else seat
        command = Act(self.match_id, action_of(action), expected)
        return self.bus.handle(command, caller, key=key, dry=dry)


def code_of(call: object) -> tuple[int, str]:
    with pytest.raises(ShengjiError) as info:
        assert callable(call)
        call()
    status = getattr(info.value, "status", None)
    return (status if isinstance(status, int) else 0), info.value.code


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[UUID]]:
    """The ids of every match loaded (``GameService.get_match``)."""
    seen: list[UUID] = []
    load = GameService.get_match

    def counted(
        self: GameService, match_id: UUID, version: int | None = None, *, read_only: bool = False
    ) -> Match:
        seen.append(match_id)
        return load(self, match_id, version, read_only=read_only)

    monkeypatch.setattr(GameService, "get_match", counted)
    yield seen


def test_a_command_with_a_key_loads_its_match_once(loads: list[UUID]) -> None:
    t = Table()
    loads.clear()
    key = RequestKey.of(t.seats[0].digest, "once", "fingerprint")
    done = t.run(0, key=key)
    assert loads == [t.match_id]
    assert isinstance(done, object) and getattr(done, "replayed", True) is False
    again = t.run(0, key=key)
    assert getattr(again, "replayed", False) is True
    body = getattr(again, "body", None)
    assert isinstance(body, CommandDone) and body.version == t.version()


def test_authorisation_comes_before_the_key_and_the_version() -> None:
    t = Table()
    key = RequestKey.of(t.seats[0].digest, "k", "fingerprint")
    t.run(0, key=key)
    other = Credential.parse(new_token(uuid4(), SEAT_ROLE))  # another match's seat token
    forged = Credential.parse(new_token(t.match_id, SEAT_ROLE))
    stale = Precondition(1)
    malformed = Precondition(malformed="If-Match must be one strong ETag")
    for caller, status in ((None, 401), (forged, 401), (other, 403)):
        for expected in (stale, malformed):
            refused = code_of(lambda c=caller, e=expected: t.run(c, key=key, expected=e))
            assert refused[0] == status
    assert code_of(lambda: t.run(1, expected=malformed)) == (0, "precondition-failed")
    assert code_of(lambda: t.run(1, expected=stale)) == (0, "precondition-failed")
    reused = RequestKey.of(t.seats[0].digest, "k", "another body")
    assert code_of(lambda: t.run(0, key=reused)) == (409, "idempotency-key-reused")


def test_a_dry_run_deals_a_void_deal_again_as_the_command_does() -> None:
    """R19: a drawing whose deadline passed with no declaration leaves the deal void; the
    first command deals again, then acts — and so does the dry run, on its copies."""
    t = Table(Pacing(interval_ms=0, declare_ms=1000, window_ms=0))
    t.clock.advance(seconds=2)  # the drawing's deadline passed: nobody declared
    before = t.version()
    dry = t.run(0, dry=True)
    body = getattr(dry, "body", None)
    assert isinstance(body, DryRun) and body.action == "pass" and body.version == before
    assert t.version() == before  # nothing saved: not the claim, not the new deal
    done = getattr(t.run(0), "body", None)
    assert isinstance(done, CommandDone)
    round_ = t.service.current_round(t.service.get_match(t.match_id))
    assert round_ is not None and round_.deal_no == 2  # dealt again, then the pass


def test_a_credential_is_read_once_and_told_apart() -> None:
    t = Table()
    match = t.service.get_match(t.match_id)
    token = t.seats[2].token
    assert read_authorization(f"Bearer {token}") == t.seats[2]
    assert read_authorization(None) is None
    for header in ("Basic abc", "Bearer", f"Bearer {token} x", "Bearer " + "x" * 201):
        assert code_of(lambda h=header: read_authorization(h))[0] == 401
    assert seat_in(t.service, match, t.seats[2]) == 2
    assert Credential.parse("not.a-token").role is None
    assert code_of(lambda: seat_in(t.service, match, Credential.parse("junk")))[0] == 401


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[RequestKey]]:
    """Every Idempotency-Key looked up in the store (``Keys.recorded``)."""
    seen: list[RequestKey] = []
    recorded = Keys.recorded

    def counted(self: Keys, key: RequestKey) -> IdempotencyRecord | None:
        seen.append(key)
        return recorded(self, key)

    monkeypatch.setattr(Keys, "recorded", counted)
    yield seen


def test_a_round_command_with_a_new_key_looks_nothing_up(lookups: list[RequestKey]) -> None:
    """A round command runs first (D-path3): a new key costs no read of its record; the
    same key again is told by the save, refused on the record, and answered again."""
    t = Table()
    key = RequestKey.of(t.seats[0].digest, "new", "fingerprint")
    done = t.run(0, key=key)
    assert getattr(done, "replayed", True) is False and lookups == []
    version = t.version()
    again = t.run(0, key=key)
    assert getattr(again, "replayed", False) is True and t.version() == version
    reused = RequestKey.of(t.seats[0].digest, "new", "another body")
    assert code_of(lambda: t.run(0, key=reused)) == (409, "idempotency-key-reused")
    assert t.version() == version


def test_a_key_used_before_saves_nothing_a_refused_run_claimed() -> None:
    """A round command's key used before, sent again once a deadline has passed: its run
    claims the deadline (the overcall window, R20) and is refused, and nothing is saved —
    the recorded answer is given again, as when the key is looked up first (D-path3)."""
    t = Table(Pacing(interval_ms=0, declare_ms=60_000, window_ms=1000))
    declarer = next(s for s in range(4) if _legal(t, s).shows)
    shows = _legal(t, declarer).shows[0]
    t.bus.handle(
        Act(t.match_id, action_of("declare", tuple(parse_cards(shows))), ANY_VERSION),
        t.seats[declarer],
    )
    for seat in range(4):
        if "pass" in _legal(t, seat).actions:
            t.run(seat)
    speaker = next(s for s in range(4) if "pass" in _legal(t, s).actions)
    key = RequestKey.of(t.seats[speaker].digest, "window", "fingerprint")
    assert getattr(t.run(speaker, key=key), "replayed", True) is False
    version = t.version()
    t.clock.advance(seconds=2)  # the window's deadline passed: a run would claim it
    again = t.run(speaker, key=key)
    assert getattr(again, "replayed", False) is True and t.version() == version


def _legal(t: Table, seat: int) -> LegalActions:
    match = t.service.get_match(t.match_id)
    return table_view(match, t.service.current_round(match), seat, t.clock()).legal
