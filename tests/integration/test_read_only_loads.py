"""A load is the library's copy of its cached aggregate (immutable values inside it are
shared, :mod:`domain.values`): no command ever changes in place what a reader holds, and
a command's save puts new objects into the cache (services/game.py)."""

from __future__ import annotations

from domain.rules.ruleset import STANDARD
from tests.commands import claim_deadlines, create_match, run_bots, take_seat
from tests.conftest import Backend


def test_commands_never_change_what_a_reader_holds(backend: Backend) -> None:
    service = backend.service()
    match_id = create_match(service, STANDARD, name="readers")
    for seat in range(4):
        take_seat(service, match_id, seat, f"p{seat}", "heuristic")
    held = []
    for _ in range(12):
        backend.clock.advance(seconds=120)  # deadlines pass
        claim_deadlines(service, match_id)
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        assert round_ is not None
        held.append((match, match.version, round_, round_.version, len(round_.pending_events)))
        run_bots(service, match_id, 25)  # the next command loads what the reader holds
    assert service.get_match(match_id).version > held[0][1] or any(
        r.version != held[0][3] for _, _, r, _, _ in held
    )
    assert len({id(r) for _, _, r, _, _ in held}) > 1  # the cache got new objects
    for match, version, round_, round_version, pending in held:
        assert (match.version, round_.version) == (version, round_version)
        assert len(round_.pending_events) == pending == 0
