"""A withdrawal is all or nothing (docs/tournaments.md, docs/decisions.md D-integrity):
the team's withdrawal, the forfeit of its table and the end of the table's match (R32)
are one save, so a move saved at that table in between makes the withdrawal try again on
the state that won — it never answers a conflict after it took effect, and never leaves a
forfeited table playing on."""

from __future__ import annotations

from typing import Any

import pytest

from domain.game.match import Entered, Match
from domain.game.match_events import MatchFinished, SeatTokenReissued
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TableForfeited, TeamEntry, TeamWithdrew
from services.game import GameService
from services.tournaments import tables
from services.unit_of_work import UnitOfWork
from tests.conftest import FakeClock, FixedSeeds
from tests.tournaments import Tournaments


def teams() -> list[TeamEntry]:
    return [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("human", "human")) for i in range(4)]


def test_a_move_saved_during_a_withdrawal_makes_it_try_again_not_half_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds()
    )
    organiser = Tournaments(game)
    t = organiser.create(
        name="cup", rules=STANDARD, teams=teams(), fmt="round_robin", match_length=1
    )
    organiser.schedule_next(t.id)
    table = next(e for e in organiser.get(t.id).rounds[0].tables if 0 in (e.first, e.second))
    ending = tables.ending  # type: ignore[attr-defined]
    raced: list[int] = []

    def racing(uow: UnitOfWork, match: Match, reason: str, entered: Entered | None) -> Any:
        if not raced:  # someone at the table acts first: the match moves on
            other = game.get_match(match.id)
            other.reissue_token(0, "another token", game.clock())
            game.save(other)
            raced.append(other.version)
        return ending(uow, match, reason, entered)

    monkeypatch.setattr(tables, "ending", racing)
    organiser.withdraw(t.id, 0, reason="ill")
    tournament = organiser.get(t.id)
    assert raced and 0 in tournament.withdrawn
    match = game.get_match(table.match_id)
    assert match.finished
    match_events = [type(e) for e in game.events.get(table.match_id)]
    assert match_events.count(MatchFinished) == 1 and SeatTokenReissued in match_events
    kinds = [type(e) for e in game.events.get(t.id)]
    assert kinds.count(TeamWithdrew) == 1 and kinds.count(TableForfeited) == 1
