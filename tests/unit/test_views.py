"""Per-seat and public views (RULES R33): who sees what in each phase, 炒底 included;
the legal actions a view offers are accepted; a spectator sees no hand.

The match is driven through the service by a policy that only ever sends what the
views offer (:func:`drive`), with a fixed clock and seeds; :mod:`tests.unit.test_history`
reuses the driver.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from uuid import UUID

import msgspec
import pytest

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.cards import Card, card_names, parse_cards
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from services.game import CommandResult, GameService
from services.legal import FOLLOW_HINTS
from services.views import PublicView, SeatView, table_view

T0 = datetime(2024, 1, 1, tzinfo=UTC)
VIEWERS: tuple[int | None, ...] = (None, 0, 1, 2, 3)
SEED = 7
"""A run seed whose round 2 has one 炒底 overcall (R20), not by the dealer, under
:func:`choose`."""


def new_service(run_seed: int, env: dict[str, str] | None = None) -> GameService:
    rng = random.Random(run_seed)
    env = env or {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    return GameService(env, clock=lambda: T0, seeds=lambda: rng.randbytes(32))


@dataclass
class Snapshot:
    """The live state right after a command: the round acted on and every viewer's view."""

    result: CommandResult
    round: Round
    views: dict[int | None, SeatView | PublicView]
    action: str = ""
    seat: int | None = None
    live: dict[int | None, SeatView | PublicView] = field(default_factory=dict)
    """The views of the match's current round (differs from ``views`` once a command
    scored ``round`` and the next round began)."""


@dataclass
class Drive:
    service: GameService
    match_id: UUID
    snapshots: list[Snapshot] = field(default_factory=list)

    def match(self) -> Match:
        return self.service.get_match(self.match_id)

    def capture(self, result: CommandResult, action: str = "", seat: int | None = None) -> None:
        match = self.match()
        round_ = None if result.round_id is None else self.service.get_round(result.round_id)
        views = {v: table_view(match, round_, v, T0) for v in VIEWERS}
        current = self.service.current_round(match)
        live = views
        if current is not None and round_ is not None and current.id != round_.id:
            live = {v: table_view(match, current, v, T0) for v in VIEWERS}
        if round_ is not None:
            self.snapshots.append(Snapshot(result, round_, views, action, seat, live))


def choose(view: SeatView, round_number: int) -> tuple[str, list[str]] | None:
    """A policy that only uses what the view offers: overcall with the strongest show,
    declare in round 1 (or when nobody has), bury the first 8, play the first hint."""
    legal = view.legal
    if "bury" in legal.actions:
        return "bury", legal.bury_from[: legal.bury_count]
    if "play" in legal.actions:
        return "play", legal.follows[0] if legal.follows else view.hand[:1]
    if "overcall" in legal.actions:
        return "overcall", legal.shows[-1]
    if "declare" in legal.actions and (round_number == 1 or not view.declarations):
        return "declare", legal.shows[0]
    if "pass" in legal.actions:
        return "pass", []
    return None


def drive(
    run_seed: int = SEED,
    rounds: int = 2,
    service: GameService | None = None,
    before: Callable[[Drive], None] | None = None,
    rules: RuleSet | None = None,
) -> Drive:
    """Seat four players and play ``rounds`` rounds through the service (R16–R31)."""
    service = service or new_service(run_seed)
    match_id = service.create_match(rules or RuleSet())
    d = Drive(service, match_id)
    for seat in range(4):
        _, result = service.take_seat(match_id, seat, f"p{seat}")
        d.capture(result, "take_seat", seat)
    while len(d.match().results) < rounds:
        if before is not None:
            before(d)
        match = d.match()
        round_ = service.current_round(match)
        assert round_ is not None
        expected = table_view(match, round_, None, T0).expected
        assert expected is not None
        seats = range(4) if expected.seat is None else (expected.seat,)
        for seat in seats:
            choice = choose(table_view(match, round_, seat, T0), round_.number)
            if choice is not None:
                action, cards = choice
                result = service.act(match_id, seat, action, tuple(parse_cards(cards)))
                d.capture(result, action, seat)
                break
        else:  # pragma: no cover - the views must always offer the expected seat a move
            raise AssertionError(f"no action offered for {expected}")
    return d


@pytest.fixture(scope="module")
def played() -> Drive:
    return drive()


def _names(cards: list[Card] | tuple[Card, ...]) -> list[str]:
    return sorted(card_names(cards))


def _bottom(view: SeatView | PublicView) -> list[str] | None:
    assert isinstance(view, SeatView)
    return None if view.bottom is None else sorted(view.bottom)


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
            assert view.hand_sizes[seat] == len(view.hand)


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


# -- legal actions are accepted ----------------------------------------------------------


def _options(view: SeatView) -> list[tuple[str, list[str]]]:
    legal = view.legal
    options: list[tuple[str, list[str]]] = []
    for action in legal.actions:
        if action in ("declare", "overcall"):
            options += [(action, show) for show in legal.shows]
        elif action == "bury":
            n = legal.bury_count
            options += [(action, legal.bury_from[:n]), (action, legal.bury_from[-n:])]
        elif action == "play" and legal.lead is not None:
            pairs = [c for c in set(view.hand) if view.hand.count(c) == 2]
            options += [(action, view.hand[:1]), (action, view.hand[-1:])]
            options += [(action, [c, c]) for c in pairs[:1]]
        elif action == "play":
            options += [(action, p) for p in legal.follows]
        else:
            options.append((action, []))
    return options


def _accepts(round_: Round, seat: int, action: str, cards: list[str]) -> None:
    """Run the command on a copy of the round, as GameService.act would (raises if not)."""
    r = copy.deepcopy(round_)
    kinds = tuple(parse_cards(cards))
    commands: dict[str, Callable[[], None]] = {
        "declare": lambda: r.declare(seat, kinds, T0),
        "overcall": lambda: r.overcall(seat, kinds, T0),
        "pass": lambda: r.pass_turn(seat, T0),
        "bury": lambda: r.bury(seat, kinds, T0),
        "play": lambda: r.play_cards(seat, kinds, T0),
        "redeal": lambda: r.request_redeal(seat, T0),
    }
    commands[action]()
    assert r.version > round_.version


def _check_offers(d: Drive) -> set[str]:
    offered: set[str] = set()
    for s in d.snapshots:
        for seat in range(4):
            view = s.views[seat]
            assert isinstance(view, SeatView)
            for action, cards in _options(view):
                _accepts(s.round, seat, action, cards)
                offered.add(action)
    return offered


def test_every_offered_action_is_accepted(played: Drive) -> None:
    assert _check_offers(played) == {"declare", "overcall", "pass", "bury", "play"}


@pytest.mark.parametrize(
    ("rules", "run_seed", "rounds", "offered", "phase"),
    [
        # R18 variant: round 3 has nobody of the dealer's team able to declare
        (RuleSet(declare_with_joker=True), 0, 3, "declare", RoundPhase.DECLARING),
        (RuleSet(self_overcall=True), 5, 2, "overcall", RoundPhase.OVERCALLING),  # 自保 / 自反
        (RuleSet(weak_hand_redeal=40), 6, 2, "redeal", RoundPhase.OVERCALLING),  # 暴动 (§10)
    ],
)
def test_offered_actions_are_accepted_under_variants(
    rules: RuleSet, run_seed: int, rounds: int, offered: str, phase: RoundPhase
) -> None:
    d = drive(run_seed, rounds=rounds, rules=rules)
    assert offered in _check_offers(d)
    assert any(s.round.phase is phase for s in d.snapshots)


def test_a_paced_deal_shows_the_cards_drawn_so_far() -> None:
    """R16/R17: with one card every 100 ms, at 550 ms six cards are out (seats 0 1 0 …)."""
    rng = random.Random(0)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=lambda: T0,
        seeds=lambda: rng.randbytes(32),
        pacing=Pacing(interval_ms=100, declare_ms=1000),
    )
    d = drive(rounds=0, service=service)
    match = d.match()
    round_ = service.current_round(match)
    assert round_ is not None and round_.dealt is not None
    views = [table_view(match, round_, s, T0 + timedelta(milliseconds=550)) for s in range(4)]
    assert views[0].hand_sizes == [2, 2, 1, 1]
    for seat, view in enumerate(views):
        assert sorted(view.hand) == _names(round_.dealt.hand_after(seat, 6))
        assert view.visible == view.hand
    assert all("pass" not in v.legal.actions for v in views)  # R17: still drawing


def test_only_the_expected_seat_is_offered_a_move(played: Drive) -> None:
    for s in played.snapshots:
        expected = s.views[None].expected
        for seat in range(4):
            view = s.views[seat]
            assert isinstance(view, SeatView)
            if expected is None:
                assert view.legal.actions == []
            elif expected.seat is not None and seat != expected.seat:
                assert view.legal.actions == [], (expected, seat)


def test_follow_hints_are_few(played: Drive) -> None:
    hints = [
        v.legal
        for s in played.snapshots
        for v in s.views.values()
        if isinstance(v, SeatView) and v.legal.follows
    ]
    assert hints and all(len(h.follows) <= FOLLOW_HINTS for h in hints)
    assert any(h.more_follows for h in hints)
    assert all(len(p) == h.follow_count for h in hints for p in h.follows)


def test_a_passed_drawing_deadline_closes_declaring() -> None:
    """R16/R17: after the declaring time the next command ends the drawing, so the view
    no longer offers a declaration (the window of R20 opens instead)."""
    d = drive(rounds=0)
    service = d.service
    match = d.match()
    round_ = service.current_round(match)
    assert round_ is not None
    seat = next(s for s in range(4) if round_.bidding.legal_shows(s, round_.hand_at(s, T0)))
    service.act(
        d.match_id,
        seat,
        "declare",
        round_.bidding.legal_shows(seat, round_.hand_at(seat, T0))[0].cards,
    )
    round_ = service.current_round(match)
    assert round_ is not None
    late = T0 + timedelta(seconds=31)
    views = [table_view(match, round_, s, late) for s in range(4)]
    assert all("declare" not in v.legal.actions for v in views)
    assert views[seat].legal.actions[-1] == "pass"  # the window opens with the dealer (R20)
    assert views[seat].phase == "dealing"  # the stored state is shown as it is


# -- shapes of the view ----------------------------------------------------------------------


def test_before_four_seats_there_is_no_round() -> None:
    service = new_service(0)
    match_id = service.create_match(RuleSet())
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
