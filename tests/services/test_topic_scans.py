"""A scan of the log for a rare topic reads to the log's end and starts there next time
(docs/decisions.md D-pgcost): with none of its events written, its position is the log's
end, not 0, so the next scan reads only what is new."""

from __future__ import annotations

from services.accounts.lobby import Lobbies
from services.accounts.ranked import RankedQueues
from services.game import GameService
from services.tournaments.listing import open_tournaments
from tests.commands import create_player
from tests.conftest import FakeClock


def test_scans_without_their_topic_start_next_time_at_the_log_end() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
    lobbies, ranked = Lobbies(), RankedQueues()
    assert lobbies.refresh(service) == {}
    assert (lobbies.position, ranked.position) == (0, 0)
    create_player(service, "Ana")
    create_player(service, "Bo")
    end = service.recorder.max_notification_id() or 0
    assert end > 0
    lobbies.refresh(service)
    ranked.refresh(service)
    assert (lobbies.position, ranked.position) == (end, end)
    assert open_tournaments(service, 0) == ([], end)
    assert open_tournaments(service, end) == ([], end)
