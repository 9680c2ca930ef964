"""A client generated from openapi.yaml by a real generator (openapi-python-client, the dev
extras) plays a whole round against the served app (uvicorn on a real port): seat 0 a
person through the generated client, seats 1-3 heuristic bots; it declares with a show
the view offers (R17), passes on overcalls (R20), buries (R21), leads from ``legal.leads``
(R22) — a dry run first (``?dryRun=true``) — and follows (R23) until round 1 is scored,
then reads the revealed seed (R35). Every answer is parsed into the generated models."""

from __future__ import annotations

import importlib
import importlib.metadata
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType
from typing import Any
from uuid import UUID

import pytest

from tests.api.served import ROOT, served
from tests.tool_cache import key_of, tool_output

PACKAGE = "shengji_client"


@pytest.fixture(scope="module")
def generated() -> Iterator[ModuleType]:
    """The client generated from the document, once per document and generator version
    (:mod:`tests.tool_cache`), imported."""
    generator = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    assert generator, "openapi-python-client is in the dev extras (pyproject.toml)"
    document = ROOT / "openapi.yaml"

    def generate(folder: Path) -> None:
        args = ["generate", "--path", str(document), "--meta", "none"]
        run = subprocess.run(
            [generator, *args, "--output-path", str(folder / PACKAGE)],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stdout + run.stderr

    version = importlib.metadata.version("openapi-python-client")
    folder = tool_output("python-client", key_of(document.read_bytes(), version), generate)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _api(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def _models() -> Any:
    return importlib.import_module(f"{PACKAGE}.models")


def test_the_generated_client_has_the_human_operations(generated: ModuleType) -> None:
    for module in (
        "matches.create_match",
        "matches.claim_seat",
        "matches.seat_bot",
        "commands.act",
        "views.get_seat_view",
        "live.stream_match",
    ):
        assert hasattr(_api(module), "sync"), module


def test_a_whole_round_through_the_generated_client(generated: ModuleType, tmp_path: Path) -> None:
    m = _models()
    with served(tmp_path) as base, ExitStack() as clients:
        anyone = clients.enter_context(
            generated.Client(base_url=base, raise_on_unexpected_status=True)
        )
        created = _api("matches.create_match").sync(
            client=anyone, body=m.CreateMatchRequest(name="generated", preset=None)
        )
        assert isinstance(created, m.NewMatch), created
        match_id = UUID(created.match_id)
        claimed = _api("matches.claim_seat").sync(
            match_id, 0, client=anyone, body=m.ClaimSeatRequest(name="Alice")
        )
        assert isinstance(claimed, m.SeatClaimed), claimed
        organiser = clients.enter_context(
            generated.AuthenticatedClient(base_url=base, token=created.organiser_token)
        )
        for seat in (1, 2, 3):
            bot = _api("matches.seat_bot").sync(
                match_id,
                seat,
                client=organiser,
                body=m.SeatBotRequest(kind=m.SeatBotRequestKind("heuristic")),
            )
            assert isinstance(bot, m.BotSeated), bot
        me = clients.enter_context(
            generated.AuthenticatedClient(base_url=base, token=claimed.token)
        )
        moves = _play_round_one(me, anyone, match_id)
        assert moves["cards played"] == 25 and moves["dry runs"] >= 1  # R16: 25 a seat
        summary = _api("matches.get_match").sync(match_id, client=anyone)
        assert isinstance(summary, m.MatchSummary)
        assert summary.rounds[0].status.value == "scored"
        round_one = _api("views.get_round").sync(match_id, 1, client=anyone)
        assert len(round_one.result.seed) == 64  # R35: revealed once scored
        verified = _api("views.verify_round").sync(match_id, 1, client=anyone)
        assert verified.ok is True


def _play_round_one(me: Any, anyone: Any, match_id: UUID) -> dict[str, int]:
    m = _models()
    act = _api("commands.act")
    moves = {"play": 0, "bury": 0, "declare": 0, "pass": 0, "dry runs": 0, "cards played": 0}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        summary = _api("matches.get_match").sync(match_id, client=anyone)
        if summary.rounds and summary.rounds[0].status.value == "scored":
            return moves
        view = _api("views.get_seat_view").sync(match_id, client=me)
        assert isinstance(view, m.SeatView), view
        legal = view.legal
        actions = [a.value for a in legal.actions]
        cards: list[str] | None = None
        if "play" in actions:
            action = "play"
            # a lead or a follow, each checked by a dry run first (the seat may never lead
            # in round 1: the first declarer leads, then each trick's winner)
            cards = legal.follows[0] if legal.follows else legal.leads.singles[0]
            dry = act.sync(
                match_id,
                m.ActAction("play"),
                client=me,
                body=m.ActionRequest(cards=cards),
                dry_run=True,
            )
            assert isinstance(dry, m.DryRun) and dry.legal, dry
            moves["dry runs"] += 1
        elif "bury" in actions:
            action, cards = "bury", legal.bury_from[: legal.bury_count]
        elif "declare" in actions:
            action, cards = "declare", legal.shows[0]
        elif "pass" in actions:
            action = "pass"  # the end of the deal, or an overcall window (R20)
        else:
            time.sleep(0.1)  # a bot's turn
            continue
        done = act.sync(
            match_id,
            m.ActAction(action),
            client=me,
            body=m.ActionRequest(cards=cards or []),
        )
        if isinstance(done, m.Problem):
            # a bot (off the request path) may have moved between the view and the command
            # (a conflict, or a declaration the bot's made moot): look again, as a client
            # does — but only when the match did move meanwhile
            again = _api("views.get_seat_view").sync(match_id, client=me)
            assert isinstance(again, m.SeatView) and again.version > view.version, done
            continue
        assert isinstance(done, m.CommandDone), done
        moves[action] += 1
        if action == "play":
            moves["cards played"] += len(cards or ())
    raise AssertionError(f"round 1 did not end: {moves}")
