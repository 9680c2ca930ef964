"""Records of board matches (R36; docs/records.md): a board match's record names each
round's board, leaves its shared redeals out of the moves (no one asked for them), and
replays — as a match, as a round, from its text — to the same record."""

from __future__ import annotations

import dataclasses

import msgspec

from domain.game.round import round_id
from domain.game.round_events import BOARD_WEAK_HAND, Redealt
from domain.rules.ruleset import STANDARD
from services.game import GameService
from services.records.export import export_match, export_round
from services.records.format import encode
from services.records.text import read_text, write_text
from tests.archive.matches import bot_teams
from tests.commands import import_record
from tests.conftest import FixedSeeds
from tests.driving import play_round
from tests.tournaments import Tournaments

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
DEALS = 3


def test_r36_a_board_match_s_record_replays_to_itself() -> None:
    service = GameService(POPO, seeds=FixedSeeds())
    ts = Tournaments(service)
    rules = dataclasses.replace(STANDARD, weak_hand_redeal=30)
    t = ts.create(
        name="boards", rules=rules, teams=bot_teams(2), fmt="round_robin", match_length=DEALS,
        deals="boards",
    )  # fmt: skip
    ts.schedule_next(t.id)
    assert play_round(ts, t.id).completed
    match_id = ts.get(t.id).round_state(1).tables[0].match_id
    record = export_match(service, match_id)
    shared = [
        sum(1 for e in service.events.get(round_id(match_id, n))
            if isinstance(e, Redealt) and e.reason == BOARD_WEAK_HAND)
        for n in range(1, DEALS + 1)
    ]  # fmt: skip
    assert sum(shared) >= 1, "no board was redealt: the shared redeal went unrecorded"
    for r, redeals in zip(record.rounds, shared, strict=True):
        assert r.board is not None and (r.board.number, r.board.dealer) == (r.number, r.dealer)
        assert len(r.deals) == 1 + redeals  # every dealing, as the table saw it
        assert all(a.action != "redeal" for a in r.actions)  # nobody asked
    archive = GameService(POPO)
    imported = import_record(archive, record, store=True)
    assert imported.match_id is not None
    again = export_match(archive, imported.match_id)
    assert encode(msgspec.structs.replace(again, origin=None)) == encode(record)
    assert encode(read_text(write_text(record))) == encode(record)
    redealt = 1 + next(n for n, k in enumerate(shared) if k)
    assert import_record(GameService(POPO), export_round(service, match_id, redealt), store=False)
