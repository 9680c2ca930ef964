"""A stored version's views, built once for the command's answer and the live frames
(``services.views.stored_view``, docs/decisions.md D-path3): the answer's view is the acting
seat's frame view, the public part is built once per version, and nothing but the stored
state decides what is kept (a name opened otherwise, a state not saved)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

import services.embargo
import services.views
from domain.game.match_events import SeatInfo
from services.live import LiveTable
from services.round_commands import CommandDone
from services.views import stored_view, table_view
from tests.services.test_bus import Table


@pytest.fixture
def publics(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The match version of every public part built (``services.views._public``)."""
    built: list[int] = []
    public = services.views._public

    def counted(match: Any, round_: Any, *args: Any) -> dict[str, Any]:
        fields = public(match, round_, *args)
        built.append(fields["version"])
        return fields

    monkeypatch.setattr(services.views, "_public", counted)
    yield built


def test_the_answer_and_the_frames_share_a_version_s_views(publics: list[int]) -> None:
    t = Table()
    live = LiveTable.now(t.service, t.match_id)
    seat = next(s for s in range(4) if "pass" in _legal(t, s))
    publics.clear()
    done = getattr(t.run(seat), "body", None)
    assert isinstance(done, CommandDone)
    (step,) = live.advance()
    frames = {v: live.frame(step, v) for v in (0, 1, 2, 3, None)}
    assert frames[seat].view is done.view  # the answer's view, not built again
    assert publics == [done.version]  # one public part for the answer and five frames
    for viewer, frame in frames.items():  # each as table_view builds it alone
        alone = table_view(live.match, live.round, viewer, step.event.timestamp)
        assert frame.view == alone


def test_a_name_opened_otherwise_or_a_state_not_saved_is_not_served_kept() -> None:
    t = Table()
    match = t.service.get_match(t.match_id)
    round_ = t.service.current_round(match)
    at = t.clock()
    before = stored_view(t.service, match, round_, 0, at)
    erased = copy.deepcopy(match)  # the same version, a name opened otherwise (erased)
    info = erased.seats[1]
    assert info is not None
    erased.seats[1] = SeatInfo("(erased)", info.kind, info.token_hash)
    assert match.seats[1] is info  # the copy's seats are its own
    after = stored_view(t.service, erased, round_, 0, at)
    assert after.seats[1] is not None and after.seats[1].name == "(erased)"
    assert before.seats[1] is not None and before.seats[1].name != "(erased)"
    deciding = copy.deepcopy(round_)
    assert deciding is not None
    deciding.claim_deadlines(at.replace(year=at.year + 1))  # events pending: not saved
    assert deciding.pending_events
    seen = stored_view(t.service, match, deciding, 0, at)
    assert seen == table_view(match, deciding, 0, at)
    assert stored_view(t.service, match, round_, 0, at) is before  # still the stored one


def test_a_step_s_frames_look_their_views_up_once(
    publics: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follower's frames of one version take every viewer's view from one look-up of
    the state (its embargo resolved once, not once per viewer: docs/decisions.md D-path4),
    each the frame built for that viewer alone, in the viewers' order."""
    t = Table()
    live = LiveTable.now(t.service, t.match_id)
    seat = next(s for s in range(4) if "pass" in _legal(t, s))
    publics.clear()
    t.run(seat)
    (step,) = live.advance()
    resolved: list[object] = []
    resolve = services.embargo.resolve  # what services.views calls

    def counted(*args: Any) -> Any:
        resolved.append(args[0])
        return resolve(*args)

    monkeypatch.setattr(services.views, "resolve", counted)
    viewers = (None, 3, 1, 0, 2)
    frames = live.frames(step, viewers)
    assert len(resolved) == 1  # one key for the five viewers
    assert publics == [step.version]  # the answer's public part, then the same
    alone = LiveTable.now(t.service, t.match_id)  # another copy at the same version
    services.views._stored.clear()
    for viewer, frame in zip(viewers, frames, strict=True):
        assert frame == alone.frame(alone.last, viewer)


def _legal(t: Table, seat: int) -> list[str]:
    match = t.service.get_match(t.match_id)
    view = table_view(match, t.service.current_round(match), seat, t.clock())
    return list(view.legal.actions)
