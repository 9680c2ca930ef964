"""What a view says about the table, row by row with the rule it follows: the trick in
progress (R11, R24, R26), the tricks won and their points (R26, R27), the attacking team
(R6), hand sizes in every phase (R16, R21, R33), the paced deal (R16, R17) and the match's
end (R30, R32)."""

from __future__ import annotations

import random
from datetime import timedelta
from uuid import UUID

import pytest

from domain.game.round import RoundPhase
from domain.game.round_events import Pacing
from domain.rules.cards import parse_cards
from domain.rules.context import trump_context
from domain.rules.play import TrickPlay
from domain.rules.ruleset import MatchEnd, MatchEndKind, RuleSet
from services.game import GameService
from services.summaries import match_summary
from services.view_play import play_fields
from services.views import SeatView, table_view
from tests.commands import create_match, take_seat
from tests.services.views_drive import T0, Drive, drive

HEARTS = 1  # SUITS = "SHCD"
HANDS = (  # level 2, hearts trump; seat 0 leads (R22)
    "5S AS 4C 6C",
    "KS AS 4D 7D",
    "3H 6C 8C 9C",
    "10S 7S 9D 8D",
)

# rule, plays in order from seat 0, seat winning so far, points in the trick so far
TRICKS = [
    ("R24", ["5S"], 0, 5),
    ("R24 R26", ["5S", "KS"], 1, 15),
    ("R24 R7: a trump kills a non-trump lead", ["5S", "KS", "3H"], 2, 15),
    ("R24: the trump stays ahead of a higher spade", ["5S", "KS", "3H", "10S"], None, 0),
    ("R11: of equal cards the first played wins", ["AS", "AS"], 0, 0),
    ("R24: a discard of another suit never wins", ["4C", "4D"], 0, 0),
    ("R23 R24: a follow below the lead", ["AS", "KS", "6C"], 0, 10),
]


def _play(plays: list[str]) -> TrickPlay:
    play = TrickPlay(
        trump_context(0, HEARTS), [parse_cards(h) for h in HANDS], leader=0, attackers=1
    )
    for seat, cards in enumerate(plays):
        play.play(seat, parse_cards(cards))
    return play


@pytest.mark.parametrize(("rule", "plays", "winning", "points"), TRICKS)
def test_the_trick_in_progress(
    rule: str, plays: list[str], winning: int | None, points: int
) -> None:
    fields = play_fields(_play(plays))
    assert fields["trick_winning"] == winning, rule
    assert fields["trick_points"] == points, rule


def test_a_won_trick_carries_its_points_and_who_won_it() -> None:
    """R26, R27: the trick 5S KS 3H 10S (25 points) goes to seat 2, a defender."""
    fields = play_fields(_play(["5S", "KS", "3H", "10S"]))
    (won,) = fields["won_tricks"]
    assert (won.number, won.leader, won.winner, won.points) == (1, 0, 2, 25)
    assert won.attackers_won is False  # attackers are seats 1 and 3 here
    assert fields["last_trick"].points == 25
    assert fields["attacker_points"] == 0  # R27: the defenders' tricks count for nothing
    assert fields["trick_leader"] is None  # seat 2 leads next, nothing played yet


@pytest.fixture(scope="module")
def played() -> Drive:
    return drive(rounds=2)


@pytest.mark.parametrize("viewer", [None, 0, 1, 2, 3])
def test_the_attacking_team_is_the_dealers_opponents(played: Drive, viewer: int | None) -> None:
    """R6: the attackers are the dealer's opponents; unknown before round 1's dealer (R18)."""
    seen = set()
    for s in played.snapshots:
        view = s.views[viewer]
        dealer = s.round.bidding.dealer
        assert view.attackers == (None if dealer is None else (dealer + 1) % 2)
        seen.add(view.attackers)
    assert seen >= {0, 1} or seen >= {None, 0} or seen >= {None, 1}


# phase, seat role, cards it holds (R16 25 each, R21 the burier takes the 8 of the bottom)
SIZES = [
    ("R21", "burying", "burier", 33),
    ("R21", "burying", "other", 25),
    ("R16", "dealing", "any", 25),
    ("R16", "overcalling", "any", 25),
]


@pytest.mark.parametrize(("rule", "phase", "role", "size"), SIZES)
def test_hand_sizes_in_every_phase(
    played: Drive, rule: str, phase: str, role: str, size: int
) -> None:
    found = 0
    for s in played.snapshots:
        r = s.round
        if r.phase is not RoundPhase(phase):
            continue
        burier = r.bidding.burier if r.phase is RoundPhase.BURYING else None
        for seat in range(4):
            if (role == "burier") != (seat == burier) and role != "any":
                continue
            for viewer in (None, 0, 1, 2, 3):
                assert s.views[viewer].hand_sizes[seat] == size, rule
            found += 1
    assert found, f"the driven match has no {phase} moment"


def test_hand_sizes_while_playing_count_the_cards_not_played(played: Drive) -> None:
    """R22, R33: every seat starts play with 25 and loses what it plays."""
    playing = [s for s in played.snapshots if s.round.phase is RoundPhase.PLAYING]
    assert playing
    for s in playing:
        view = s.views[None]
        assert sum(view.hand_sizes) == 100 - len(view.played)
        mine = s.views[0]
        assert isinstance(mine, SeatView)
        assert mine.hand_sizes[0] == len(mine.hand)


INTERVAL = 40
# ms after the deal starts, cards drawn (R16: the first at the start, one per interval)
DEAL = [
    ("R16", 0, 1),
    ("R16", INTERVAL - 1, 1),
    ("R16", INTERVAL, 2),
    ("R16", 10 * INTERVAL, 11),
    ("R16", 99 * INTERVAL, 100),
    ("R16", 500 * INTERVAL, 100),
]


@pytest.fixture(scope="module")
def paced() -> tuple[GameService, UUID]:
    rng = random.Random(3)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=lambda: T0,
        seeds=lambda: rng.randbytes(32),
        pacing=Pacing(interval_ms=INTERVAL, declare_ms=1000, window_ms=0),
    )
    match_id = create_match(service, RuleSet())
    for seat in range(4):
        take_seat(service, match_id, seat, f"p{seat}")
    return service, match_id


@pytest.mark.parametrize(("rule", "elapsed", "drawn"), DEAL)
def test_the_paced_deal_in_the_view(
    paced: tuple[GameService, UUID], rule: str, elapsed: int, drawn: int
) -> None:
    service, match_id = paced
    match = service.get_match(match_id)
    round_ = service.current_round(match)
    now = T0 + timedelta(milliseconds=elapsed)
    for viewer in (None, 0, 1, 2, 3):
        view = table_view(match, round_, viewer, now)
        assert view.deal is not None, rule
        assert view.deal.drawn == drawn, rule
        assert view.deal.interval_ms == INTERVAL
        assert view.deal.started_at == T0.isoformat()
        assert view.deal.first_seat == 0  # R16: round 1 draws from seat 0
        # seat s holds the cards k < drawn with k % 4 == s (R16), everyone sees the sizes
        assert view.hand_sizes == [len(range(s, drawn, 4)) for s in range(4)], rule
        if isinstance(view, SeatView):  # R33: its own cards, drawn so far
            assert len(view.hand) == view.hand_sizes[view.seat]


@pytest.mark.parametrize("rounds", [1, 2])
def test_at_match_end_the_view_says_who_won_and_the_final_levels(rounds: int) -> None:
    """R30, R32: after the last round the view carries the levels it left and the winner."""
    d = drive(rounds=rounds, rules=RuleSet(match_end=MatchEnd(MatchEndKind.ROUNDS, rounds)))
    match = d.match()
    assert match.finished
    current = d.service.current_round(match)
    summary = match_summary(match, current, embargo=None)
    for viewer in (None, 0, 1, 2, 3):
        view = table_view(match, current, viewer, T0)
        assert view.team_levels == summary.team_levels
        assert view.winner == summary.winner == match.winner
        assert view.match_finished
        assert view.last_result is not None
        assert view.team_levels == view.last_result.team_levels
