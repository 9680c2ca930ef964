"""A duplicate event of boards over REST (R36; docs/tournaments.md, "Boards"): four tables
of bots play each board with the same dealer, level, trump and cards — a weak hand redeals
the board at every table alike — and the comparison holds every table in each board's
field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from domain.game.round import round_id
from domain.game.round_events import BOARD_WEAK_HAND, Dealt, Redealt
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.views import table_view
from tests.api.rest import Json, auth, client, settle
from tests.conftest import FakeClock, FixedSeeds

BOTS = ("heuristic", "random")
DEALS = 2


def team(name: str) -> Json:
    return {
        "name": name,
        "players": [{"name": f"{name}-{i}", "kind": kind} for i, kind in enumerate(BOTS)],
    }


@pytest.fixture
def store() -> Iterator[GameService]:
    service = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def c(store: GameService) -> Iterator[TestClient[Litestar]]:
    with client(store) as test_client:
        yield test_client


def create(c: TestClient[Litestar], **body: Any) -> Any:
    return c.post(
        "/v1/tournaments",
        json={
            "name": "boards night",
            "teams": [team(f"B{i}") for i in range(8)],
            "format": "swiss",
            "swissRounds": 1,
            "matchLength": DEALS,
            "deals": "boards",
            **body,
        },
    )


def dealings(store: GameService, match_id: UUID, deal: int) -> list[tuple[Any, ...]]:
    """Every dealing of a table's deal as its events say: (deal_no, dealer, level, board,
    commitment, first seat) of each ``Dealt``, and (reason, seat) of each ``Redealt``."""
    out: list[tuple[Any, ...]] = []
    for e in store.events.get(round_id(match_id, deal)):
        if isinstance(e, Dealt):
            out.append((e.deal_no, e.dealer, e.level, e.board, e.commitment, e.first_seat))
        elif isinstance(e, Redealt):
            out.append((e.reason, e.seat))
    return out


def test_r36_four_tables_play_each_board_alike_and_compare_in_one_field(
    c: TestClient[Litestar], store: GameService
) -> None:
    """R36: 8 teams, 4 tables, 2 boards; §10 weak_hand_redeal 30 makes shared redeals."""
    made = create(c, rules={"weakHandRedeal": 30})
    assert made.status_code == 201, made.text
    assert made.json()["tournament"]["deals"] == "boards"
    url, org = f"/v1/tournaments/{made.json()['tournamentId']}", auth(made.json()["organiserToken"])
    c.app.state.bots.pause()  # board 1 as dealt, before any bot moves
    scheduled = c.post(f"{url}/rounds", headers=org).json()["round"]
    matches = [UUID(t["matchId"]) for t in scheduled["tables"]]
    assert len(matches) == 4
    views = []
    for match_id in matches:
        match = store.get_match(match_id)
        views.append(table_view(match, store.current_round(match), 0, store.clock()))
    boards = {v.board for v in views}
    assert len(boards) == 1 and None not in boards
    for v in views:  # the board's trump stands from the first card: nothing to declare
        assert v.trump_decided and v.dealer == v.board.dealer  # type: ignore[union-attr]
        assert v.level_rank == v.board.level_rank  # type: ignore[union-attr]
        assert v.legal.shows == []
    c.app.state.bots.resume()
    settle(c)
    c.post(f"{url}/results/collect", headers=org)

    redealt = 0
    for deal in range(1, DEALS + 1):
        seen = [dealings(store, m, deal) for m in matches]
        assert all(s == seen[0] for s in seen), f"board {deal} differs between tables"
        last = [d for d in seen[0] if len(d) == 6][-1]
        deal_no, dealer, level, board, _, first_seat = last
        assert board is not None and board.number == deal
        assert (dealer, level, first_seat) == (board.dealer, board.level, board.dealer)  # R16
        assert deal_no == 1 + sum(1 for d in seen[0] if d[0] == BOARD_WEAK_HAND)
        redealt += deal_no - 1
    assert redealt >= 1, "no board was redealt: the shared redeal went untested"

    r = c.get(f"{url}/rounds/1/comparison")
    assert r.status_code == 200, r.text
    body = r.json()
    assert [(f["deal"], len(f["scores"])) for f in body["fields"]] == [(1, 4), (2, 4)]
    for f in body["fields"]:
        assert f["board"] is not None
        assert f["attackingSeats"] == (f["board"]["dealer"] + 1) % 2  # R6
        assert sorted(s["table"] for s in f["scores"]) == [1, 2, 3, 4]
        assert all(s["top"] == 6 for s in f["scores"])
        assert sum(s["matchpoints"] for s in f["scores"]) == 12  # 4 tables x 3 others
    assert sorted((m["team"], m["top"]) for m in body["teams"]) == [(t, 12) for t in range(8)]


def test_r36_boards_are_played_as_a_number_of_deals(c: TestClient[Litestar]) -> None:
    """A board's level is the board's, never a team's: finish_at_A cannot end its matches."""
    r = create(c, matchLength="finish_at_A")
    assert r.status_code == 422, r.text
    assert c.get(f"/v1/tournaments/{create(c).json()['tournamentId']}").json()["deals"] == "boards"
