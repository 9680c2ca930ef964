"""Table talk's rules through the bus (R37): free text is never said at a tournament table
while its match is played, even where its creator allowed it; once the match is over it
may be; talk never moves the match's version."""

from __future__ import annotations

from uuid import UUID, uuid4

import pytest

from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import STANDARD
from domain.talk.options import TalkOptions
from services.access import Credential
from services.bus import SERVICE
from services.game import GameService
from services.match_commands import ClaimSeat, CreateMatch, FinishMatch
from services.talk.commands import Say
from tests.commands import bus_of, version_of
from tests.conftest import FakeClock, FixedSeeds


def test_free_text_is_refused_at_a_tournament_table_in_play_and_allowed_after() -> None:
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds()
    )
    bus = bus_of(service)
    made = bus.execute(
        CreateMatch(STANDARD, name="table 1", tournament=(uuid4(), 1), talk=TalkOptions(True))
    )
    match_id = UUID(made.match_id)
    seats = [bus.execute(ClaimSeat(match_id, n, f"p{n}"), SERVICE).token for n in range(2)]
    me = Credential.parse(seats[0])
    assert bus.execute(Say(match_id, phrase="good-luck"), me).message.phrase == "good-luck"
    with pytest.raises(IllegalMoveError) as refused:
        bus.execute(Say(match_id, text="my hand is great"), me)
    assert (refused.value.code, refused.value.rule) == ("free-text-off", "R37")
    assert "tournament table" in refused.value.detail
    before = version_of(service, match_id)
    bus.execute(FinishMatch(match_id))
    said = bus.execute(Say(match_id, text="well played all"), me).message
    assert said.text == "well played all"
    assert version_of(service, match_id) == before + 1  # the finish; talk takes no version
