"""The lobby sweeper's idle cost does not grow with the lobbies strangers open
(docs/decisions.md D-fair): it follows the log's lobby events and reads a lobby again only
after it changed; a lobby without tickets asking for bots costs nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest

from domain.rules.ruleset import STANDARD, RuleSet
from services.accounts import lobby
from services.game import GameService
from tests.commands import cancel_ticket, create_player, open_ticket, sweep_due
from tests.conftest import FakeClock


def rules(n: int) -> RuleSet:
    return RuleSet.from_mapping({**STANDARD.to_mapping(), "match_end": f"rounds:{n}"})


def test_an_idle_sweep_reads_no_lobby_however_many_were_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The finding: ~1,400 lobbies made by one player took idle CPU from 1% to 23-29%:
    the sweeper read every lobby ever opened every second."""
    clock = FakeClock()
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock)
    account, _ = create_player(service, "Mei", "en")
    for n in range(1, 101):  # 100 rule sets, 100 lobbies, each left empty
        request = lobby.TicketRequest(account.id, rules(n), None, None, 60_000, "random")
        ticket, made = open_ticket(service, request)
        assert made is None
        cancel_ticket(service, account.id, ticket.id)
    reads: list[UUID] = []
    real = lobby.get_lobby

    def counting(svc: Any, lid: UUID) -> Any:
        reads.append(lid)
        return real(svc, lid)

    monkeypatch.setattr(lobby, "get_lobby", counting)
    lobbies = lobby.Lobbies()
    assert sweep_due(service, lobbies) == []
    assert lobbies.due == {}  # every lobby is empty: none is followed
    reads.clear()
    for _ in range(5):
        assert sweep_due(service, lobbies) == []
    assert reads == []  # idle: no lobby read at all

    # a ticket that asks for bots is followed, and seated with bots once its wait is over
    request = lobby.TicketRequest(account.id, rules(7), None, None, 30_000, "random")
    ticket, _ = open_ticket(service, request)
    assert sweep_due(service, lobbies) == []
    assert list(lobbies.due) == [ticket.lobby_id]
    reads.clear()
    assert sweep_due(service, lobbies) == []
    assert reads == []  # not due yet: not read again
    clock.advance(timedelta(seconds=31))
    swept = sweep_due(service, lobbies)
    assert len(swept) == 1 and lobby.get_ticket(service, ticket.id).status == "matched"
    sweep_due(service, lobbies)
    assert lobbies.due == {}  # empty again: forgotten
