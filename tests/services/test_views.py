"""Per-seat and public views (RULES R33): who sees what in each phase, 炒底 included; a
spectator sees no hand; the shape of a view. The legal actions a view offers are accepted:
:mod:`tests.services.test_views_legal`.

The match is driven through the service by a policy that only ever sends what the
views offer (:func:`tests.services.views_drive.drive`), with a fixed clock and seeds.
"""

from __future__ import annotations

import gc
import json

import msgspec
import pytest

from domain.game.round import RoundPhase
from domain.rules.cards import card_names
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from services.legal import NO_ACTIONS, LegalActions
from services.live import LiveTable
from services.views import PublicView, SeatView, table_view
from tests.commands import create_match
from tests.services.views_drive import T0, Drive, Snapshot, _bottom, _names, drive, new_service


@pytest.fixture(scope="module")
def played() -> Drive:
    return drive()


# -- who sees the bottom (R21, R20 炒底, R33) -----------------------------------------------


def _moments(d: Drive) -> dict[str, Snapshot]:
    """Named moments of the driven match (first snapshot of each)."""
    found: dict[str, Snapshot] = {}
    for s in d.snapshots:
        r = s.round
        names = [f"round {r.number} {r.phase}"]
        if r.phase is RoundPhase.BURYING and r.bidding.buries == 1:
            names.append(f"round {r.number} chaodi burying")  # an overcaller re-buries
        if r.number > 1 and r.phase is not RoundPhase.BURYING and r.bidding.buries == 2:
            names.append(f"round {r.number} after chaodi")
        for name in names:
            found.setdefault(name, s)
    return found


def _role(s: Snapshot, role: str) -> list[int | None]:
    r = s.round
    dealer = r.bidding.dealer
    taker = r.bidding.burier if r.phase is RoundPhase.BURYING else r.buried_by
    if role == "spectator":
        return [None]
    if role == "everyone":
        return [None, 0, 1, 2, 3]
    if role == "dealer":
        return [dealer]
    if role == "overcaller":
        return [taker]
    if role == "others":
        excluded = {dealer, taker} if r.number > 1 and r.bidding.buries else {dealer}
        return [seat for seat in range(4) if seat not in excluded]
    raise AssertionError(role)


# moment, role, what the role sees of the bottom: None, "bottom" (the round's bottom
# now: dealt, or buried last), "first buried" (what the dealer buried, under 炒底)
BOTTOM_TABLE = [
    ("round 1 dealing", "everyone", None),
    ("round 1 overcalling", "everyone", None),
    ("round 1 burying", "dealer", "bottom"),  # R21: the dealer takes the bottom
    ("round 1 burying", "others", None),
    ("round 1 playing", "dealer", "bottom"),  # R21: the seat that buried them
    ("round 1 playing", "others", None),
    ("round 1 playing", "spectator", None),
    ("round 1 scored", "everyone", "bottom"),  # R33: public at the end
    ("round 2 burying", "dealer", "bottom"),
    ("round 2 burying", "others", None),
    ("round 2 overcalling", "dealer", "bottom"),
    ("round 2 overcalling", "others", None),
    ("round 2 chaodi burying", "overcaller", "bottom"),  # R20 炒底: takes the 8 cards
    ("round 2 chaodi burying", "dealer", "bottom"),  # … which the dealer buried
    ("round 2 chaodi burying", "others", None),
    ("round 2 chaodi burying", "spectator", None),
    ("round 2 after chaodi", "overcaller", "bottom"),  # buried by the overcaller now
    ("round 2 after chaodi", "dealer", None),  # the dealer no longer knows the bottom
    ("round 2 after chaodi", "others", None),
    ("round 2 scored", "everyone", "bottom"),
]


@pytest.mark.parametrize(("moment", "role", "sees"), BOTTOM_TABLE)
def test_who_sees_the_bottom(played: Drive, moment: str, role: str, sees: str | None) -> None:
    snapshot = _moments(played)[moment]
    truth = _names(snapshot.round.bottom)
    for viewer in _role(snapshot, role):
        view = snapshot.views[viewer]
        if viewer is None:
            shown = None if view.result is None else sorted(view.result.bottom_cards)
        else:
            shown = _bottom(view)
        assert shown == (truth if sees else None), (moment, role, viewer)


def test_the_driven_match_has_every_moment(played: Drive) -> None:
    moments = _moments(played)
    assert {m for m, _, _ in BOTTOM_TABLE} <= set(moments)
    chaodi = moments["round 2 chaodi burying"].round.bidding
    assert chaodi.burier != chaodi.dealer  # the table's roles are distinct seats


# -- hands, visible cards, spectators (R33) -------------------------------------------------


def test_a_seat_sees_exactly_its_own_hand(played: Drive) -> None:
    for s in played.snapshots:
        for seat in range(4):
            view = s.views[seat]
            assert isinstance(view, SeatView)
            assert sorted(view.hand) == _names(s.round.hand_at(seat, T0))
            taking = view.phase == "burying" and "bury" in view.legal.actions
            # R21: the burier holds its hand and the 8 cards it takes
            assert view.hand_sizes[seat] == len(view.hand) + (8 if taking else 0)


def test_visible_cards_are_hand_bottom_and_played_until_scored(played: Drive) -> None:
    for s in played.snapshots:
        r = s.round
        for seat in range(4):
            view = s.views[seat]
            assert isinstance(view, SeatView)
            if r.result is not None:
                assert len(view.visible) == 108  # R33: everything is public at the end
                continue
            played_cards = [] if r.play is None else list(r.play.played)
            allowed = [*view.hand, *(view.bottom or []), *card_names(played_cards)]
            assert sorted(view.visible) == sorted(allowed)


def test_a_spectator_sees_no_hand(played: Drive) -> None:
    for s in played.snapshots:
        view = s.views[None]
        assert type(view) is PublicView
        fields = msgspec.to_builtins(view)
        assert not {"hand", "bottom", "visible", "legal", "seat"} & set(fields)


def test_the_seed_is_secret_until_the_round_is_scored(played: Drive) -> None:
    """R35: only the commitment is public; RoundScored reveals the seed."""
    for s in played.snapshots:
        seed = s.round.seed_hex
        for viewer, view in s.views.items():
            text = json.dumps(msgspec.to_builtins(view))
            assert (seed in text) == (s.round.result is not None), viewer
            assert s.round.commitment in text


def test_scored_round_reveals_the_deal(played: Drive) -> None:
    scored = _moments(played)["round 1 scored"]
    result = scored.views[None].result
    assert result is not None and scored.round.dealt is not None
    assert result.seed == scored.round.seed_hex
    assert result.dealt_hands == [card_names(h) for h in scored.round.dealt.hands]
    assert result.dealt_bottom == card_names(scored.round.dealt.bottom)


# -- shapes of the view ----------------------------------------------------------------------


def test_before_four_seats_there_is_no_round() -> None:
    service = new_service(0)
    match_id = create_match(service, RuleSet())
    view = table_view(service.get_match(match_id), None, 2, T0)
    assert (view.phase, view.hand, view.legal.actions, view.versions.round_version) == (
        "seating",
        [],
        [],
        None,
    )


@pytest.mark.parametrize("viewer", [-1, 4, True])
def test_a_viewer_is_a_seat_or_none(played: Drive, viewer: int) -> None:
    s = played.snapshots[0]
    with pytest.raises(InvalidInputError):
        table_view(played.match(), s.round, viewer, T0)


def test_a_round_of_another_match_is_refused(played: Drive) -> None:
    other = drive(run_seed=2, rounds=0)
    with pytest.raises(InvalidInputError):
        table_view(other.match(), played.snapshots[0].round, 0, T0)


def test_views_encode_as_json(played: Drive) -> None:
    for s in played.snapshots[:20]:
        for view in s.views.values():
            json.dumps(msgspec.to_builtins(view))


def test_views_are_camel_case_json(played: Drive) -> None:
    view = played.snapshots[-1].views[0]
    data = json.loads(msgspec.json.encode(view))
    assert {"matchId", "handSizes", "roundNumber", "trumpDecided", "legal"} <= set(data)
    assert {"buryFrom", "followCount", "moreFollows"} <= set(data["legal"])
    assert {"declareWithJoker", "matchEnd"} <= set(data["rules"])
    assert not [k for k in data if "_" in k]


def test_the_view_version_is_the_match_version(played: Drive) -> None:
    """A live view carries the match version the command left (Match.sequence)."""
    for s in played.snapshots:
        assert {v.version for v in s.live.values()} == {s.result.version}


def test_no_view_struct_is_tracked_by_the_collector(played: Drive) -> None:
    """A view and every Struct in it (its seats, tricks, shows, legal hints, the history
    item) is a tree of plain values, never in a reference cycle: the collector does not
    track them (msgspec's ``gc=False``), so the views a process keeps for a while are not
    walked at every young collection (docs/decisions.md D-fan). Their lists still are."""
    tracked: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, msgspec.Struct):
            if gc.is_tracked(value):
                tracked.append(type(value).__name__)
            for name in value.__struct_fields__:
                walk(getattr(value, name))
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    for snap in played.snapshots[::7]:  # every phase of both rounds
        for view in snap.views.values():
            walk(view)
    table = LiveTable.at(played.service, played.match_id, 30)
    walk(table.frame(table.last, 0).event)  # the event as a history item
    assert tracked == []


def test_a_seat_offered_nothing_shares_one_empty_hints_value(played: Drive) -> None:
    """A seat with nothing to send now (another's turn to play, R22–R23) gets the one empty
    ``LegalActions``: no lists of its own for every seat and version (docs/decisions.md
    D-fan); it encodes as any empty hints do."""
    waiting = [
        view
        for snap in played.snapshots
        if snap.round.phase is RoundPhase.PLAYING
        for seat, view in snap.views.items()
        if isinstance(view, SeatView) and not view.legal.actions
    ]
    assert waiting
    assert all(view.legal is NO_ACTIONS for view in waiting)
    assert msgspec.json.encode(NO_ACTIONS) == msgspec.json.encode(LegalActions(actions=[]))
