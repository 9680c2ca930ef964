"""The play phase state machine: turns, errors, trick winners leading (R22), points (R27)."""

from __future__ import annotations

import pytest

from domain.rules.cards import format_cards
from domain.rules.errors import IllegalMoveError, ShengjiError
from domain.rules.play import TrickPlay
from domain.rules.shapes import ShapeKind
from tests.helpers import cards, ctx


def _table(hands: str, *, leader: int = 0, attackers: int = 1) -> TrickPlay:
    """Level 2, trump H; ``hands`` are the four seats' hands separated by "|"."""
    return TrickPlay(ctx("2", "H"), [cards(h) for h in hands.split("|")], leader, attackers)


HANDS = "AS 3D 4D | KS 5D 6D | 3H 7D 8D | QS 9D 10D"

# id, plays made first (seat:cards, ";"), the offending seat and cards, error code, rule
ERROR_ROWS = [
    ("R22-not-your-turn-before-lead", "", 1, "KS", "not-your-turn", "R22"),
    ("R22-not-your-turn-after-lead", "0:AS", 2, "3H", "not-your-turn", "R22"),
    ("R3-cards-not-in-hand", "", 0, "KS", "cards-not-in-hand", "R3"),
    ("R3-cards-not-in-hand-second-copy", "", 0, "AS AS", "cards-not-in-hand", "R3"),
    ("R22-empty-play", "", 0, "", "empty-play", "R22"),
    ("R22-mixed-lead", "", 0, "AS 3D", "mixed-lead", "R22"),
    ("R23.1-illegal-follow-suit", "0:AS", 1, "5D", "illegal-follow", "R23"),
    ("R23-illegal-follow-count", "0:AS", 1, "KS 5D", "illegal-follow", "R23"),
    (
        "R22-round-over",
        "0:AS;1:KS;2:3H;3:QS;2:7D;3:9D;0:3D;1:5D;3:10D;0:4D;1:6D;2:8D",
        3,
        "9D",
        "round-over",
        "R22",
    ),
]


def _replay(game: TrickPlay, plays: str) -> None:
    for step in filter(None, plays.split(";")):
        seat, text = step.split(":")
        game.play(int(seat), cards(text))


@pytest.mark.parametrize(
    ("before", "seat", "play", "code", "rule"),
    [r[1:] for r in ERROR_ROWS],
    ids=[r[0] for r in ERROR_ROWS],
)
def test_illegal_move_codes(before: str, seat: int, play: str, code: str, rule: str) -> None:
    game = _table(HANDS)
    _replay(game, before)
    hands = [list(h) for h in game.hands]
    turn, trick = game.turn, list(game.trick)
    with pytest.raises(IllegalMoveError) as info:
        game.play(seat, cards(play))
    assert info.value.code == code
    assert info.value.rule == rule
    # a refused play changes nothing
    assert game.hands == hands
    assert (game.turn, game.trick) == (turn, trick)


def test_r23_illegal_follow_detail_names_the_rule() -> None:
    game = _table(HANDS)
    game.play(0, cards("AS"))
    with pytest.raises(IllegalMoveError) as info:
        game.play(1, cards("5D"))
    assert "R23.1" in info.value.detail


def test_r22_check_does_not_change_state() -> None:
    game = _table(HANDS)
    outcome = game.check(0, cards("AS"))
    assert outcome.cards == tuple(cards("AS"))
    assert not outcome.trick_complete
    assert game.turn == 0 and game.trick == [] and len(game.hands[0]) == 3


def test_r22_winner_leads_next_trick() -> None:
    game = _table(HANDS)
    game.play(0, cards("AS"))
    game.play(1, cards("KS"))
    game.play(2, cards("3H"))  # void in spades: trumps (R23.3)
    outcome = game.play(3, cards("QS"))
    assert outcome.trick_complete
    assert outcome.winner == 2
    assert game.leader == game.turn == 2
    assert game.trick == [] and game.tricks_done == 1
    assert game.last_trick == (0, tuple(tuple(cards(p)) for p in ("AS", "KS", "3H", "QS")), 2)
    with pytest.raises(IllegalMoveError) as info:
        game.play(0, cards("3D"))
    assert info.value.code == "not-your-turn"
    game.play(2, cards("7D"))
    assert game.turn == 3


@pytest.mark.parametrize(
    ("leader", "first_seat_to_play"),
    [(0, 0), (1, 1), (2, 2), (3, 3)],
    ids=["R22-dealer-seat0-leads", "R22-seat1", "R22-seat2", "R22-seat3"],
)
def test_r22_leader_leads_first(leader: int, first_seat_to_play: int) -> None:
    game = _table("AS | KS | QS | JS", leader=leader)
    for offset in range(4):
        seat = (first_seat_to_play + offset) % 4
        assert game.turn == seat
        game.play(seat, game.hands[seat])
    assert game.finished


# R27: the attackers keep the points of the tricks they win, and only those
POINT_HANDS = "AS 5D | KS KD | 10S 3D | 5S 4D"


@pytest.mark.parametrize(
    ("attackers", "points"),
    [(1, 15), (0, 25)],
    ids=["R27-attackers-1-3-win-trick-2", "R27-attackers-0-2-win-trick-1"],
)
def test_r27_attackers_collect_only_tricks_they_win(attackers: int, points: int) -> None:
    game = _table(POINT_HANDS, attackers=attackers)
    first = [game.play(s, cards(c)) for s, c in [(0, "AS"), (1, "KS"), (2, "10S"), (3, "5S")]]
    assert (first[-1].winner, first[-1].points) == (0, 25)  # R26: 10S KS 5S
    second = [game.play(s, cards(c)) for s, c in [(0, "5D"), (1, "KD"), (2, "3D"), (3, "4D")]]
    assert (second[-1].winner, second[-1].points) == (1, 15)  # R26: 5D KD
    assert game.attacker_points == points
    assert game.finished and game.tricks_done == 2
    assert sorted(game.played) == sorted(cards(POINT_HANDS.replace("|", " ")))


def test_r27_defenders_points_count_for_nothing() -> None:
    game = _table("KS | 5S | 10S | KH", attackers=1)  # seat 3 trumps; attackers 1/3 win it all
    for seat in range(4):
        game.play(seat, game.hands[seat])
    assert game.attacker_points == 35
    game = _table("KS | 5S | 10S | KH", attackers=0)
    for seat in range(4):
        game.play(seat, game.hands[seat])
    assert game.attacker_points == 0


# R22: a failed throw is replaced by the forced component and recorded
THROW_HANDS = "KS QS 3D | AS 4D 5D | 3S 6D 7D | 4S 8D 9D"


def test_r22_failed_throw_plays_forced_cards() -> None:
    game = _table(THROW_HANDS)
    outcome = game.play(0, cards("KS QS"))
    assert format_cards(outcome.cards) == "QS"
    assert outcome.attempted is not None and format_cards(outcome.attempted) == "KS QS"
    assert game.failed_throws == [(0, tuple(cards("KS QS")))]
    assert sorted(game.hands[0]) == sorted(cards("KS 3D"))  # KS stays in hand
    assert game.lead_shape is not None and game.lead_shape.kind is ShapeKind.SINGLE
    assert game.trick == [tuple(cards("QS"))]
    # followers answer the forced single, not the attempted throw
    with pytest.raises(IllegalMoveError):
        game.play(1, cards("AS 4D"))
    game.play(1, cards("AS"))
    game.play(2, cards("3S"))
    last = game.play(3, cards("4S"))
    assert last.winner == 1
    assert game.turn == 1


def test_r22_valid_throw_is_played_whole() -> None:
    game = _table("AS KS 3D | QS 4D 5D | 3S 6D 7D | 4S 8D 9D")
    outcome = game.play(0, cards("AS KS"))
    assert outcome.attempted is None
    assert format_cards(outcome.cards) == "AS KS"
    assert game.failed_throws == []
    assert game.lead_shape is not None and game.lead_shape.kind is ShapeKind.THROW


def test_r22_throw_is_judged_against_partner_too() -> None:
    game = _table("KS QS 3D | 4S 4D 5D | AS 6D 7D | 3S 8D 9D")
    outcome = game.play(0, cards("KS QS"))
    assert format_cards(outcome.cards) == "QS"
    assert game.failed_throws == [(0, tuple(cards("KS QS")))]


@pytest.mark.parametrize(
    "play", [[54], [100], [53, 54]], ids=["R3-kind-54", "R3-kind-100", "R3-BJ-and-kind-54"]
)
def test_r3_non_card_kind_is_a_typed_error(play: list[int]) -> None:
    game = _table("BJ AS | 3S 4S | 5S 6S | 7S 8S")
    with pytest.raises(ShengjiError):
        game.check(0, play)
