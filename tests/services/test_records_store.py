"""Importing a record stores a finished match on every store (POPO, SQLite, PostgreSQL):
its events are saved in one save, read back like any match's, and its record is the
imported record byte for byte (docs/records.md), plus its origin (docs/security.md)."""

from __future__ import annotations

import msgspec

from services.game import GameService
from services.history import match_history
from services.records.export import export_match
from services.records.format import encode
from services.records.replay import imported_match_id
from services.verify import verify_round
from tests.commands import import_record
from tests.conftest import Backend
from tests.services.test_records_play import play_match, rules_of


def test_an_imported_match_is_stored_and_exports_the_same_bytes(backend: Backend) -> None:
    played, played_id = play_match(31, rules=rules_of(2))
    record = export_match(played, played_id)
    service: GameService = backend.service()
    imported = import_record(service, record, store=True)
    assert imported.created and imported.match_id == imported_match_id(imported.digest)
    match_id = imported.match_id
    # a second service on the same store (another process) reads what was stored
    other = backend.service()
    exported = export_match(other, match_id)
    assert exported.origin is not None and exported.origin.digest == imported.digest
    exported = msgspec.structs.replace(
        exported, origin=None
    )  # the server's word (docs/security.md)
    assert encode(exported) == encode(record) == imported.data
    match = other.get_match(match_id)
    assert match.finished and match.round_number == 2
    assert [r.attackers_total for r in match.results] == [
        r.result.attackers_total for r in record.rounds if r.result is not None
    ]
    for number in (1, 2):  # R35: the stored rounds verify against their commitments
        assert verify_round(other, match.results[number - 1].round_id).number == number
    history = match_history(other, match_id, None, limit=1000)
    assert [i.type for i in history.items[-2:]] == ["MatchFinished", "MatchImported"]
    assert not history.more
    # importing it again stores nothing
    again = import_record(other, record, store=True)
    assert (again.match_id, again.created) == (match_id, False)
