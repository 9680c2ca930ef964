"""Per-seat views offer only legal actions (R16–R25): every offered action is accepted, under
the variants too; a paced deal shows the cards drawn so far; only the expected seat is
offered a move; follow hints are few; a passed drawing deadline closes declaring.
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable
from datetime import timedelta

import pytest

from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.cards import parse_cards
from domain.rules.ruleset import RuleSet
from services.game import GameService
from services.legal import FOLLOW_HINTS
from services.views import SeatView, table_view
from tests.commands import act
from tests.services.views_drive import T0, Drive, _names, drive


@pytest.fixture(scope="module")
def played() -> Drive:
    return drive()


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
            leads = legal.leads
            assert leads is not None  # R12-R14: every lead of one combination, as data
            assert len(leads.singles) == len(set(view.hand))
            options += [(action, c) for c in leads.singles + leads.pairs + leads.tractors]
        elif action == "play":
            options += [(action, p) for p in legal.follows]
        else:
            options.append((action, []))
    return options


def _accepts(round_: Round, seat: int, action: str, cards: list[str]) -> None:
    """Run the command on a copy of the round, as GameService.act would (raises if not)."""
    r = pickle.loads(pickle.dumps(round_))  # a deep copy, several times quicker than deepcopy
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
            # an option offered twice (the same follow in two hints) is tried once
            for action, cards in dict.fromkeys(
                (action, tuple(cards)) for action, cards in _options(view)
            ):
                _accepts(s.round, seat, action, list(cards))
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
    act(
        service,
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
