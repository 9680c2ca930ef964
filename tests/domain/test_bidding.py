"""The bidding state machine: declaring, overcalling, R19, 暴动 (RULES R16–R21, §10)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from domain.rules.bidding import Bidding, Phase, RedealReason
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import NoDeclaration, RuleSet
from domain.rules.shows import Strength
from tests.domain.bidding_cases import (
    ALL,
    ALL5,
    BOTTOM,
    JOKER,
    L2,
    L5,
    SELF,
    STD,
    C,
    D,
    H,
    S,
    c,
    late_declaring,
    later,
    later_window,
    passes,
    r1_window,
)

# -- round 1 (R17, R18, R20 反主反打) ------------------------------------------------------


def test_r18_round_one_first_declarer_becomes_dealer() -> None:
    """R17/R18: declaring from the cards drawn so far; the declarer deals."""
    b = Bidding.round_one(STD)
    assert b.dealer is None and not b.trump_known
    with pytest.raises(ValueError, match="not decided"):
        _ = b.trump
    b = b.declare(2, c("2H"), c("2H 7S"))
    assert (b.phase, b.dealer, b.declarer, b.trump) == (Phase.DEALING, 2, 2, H)
    assert b.standing is not None and b.standing.strength is Strength.SINGLE


def test_r20_round_one_window_closes_after_four_passes_in_turn() -> None:
    """R20: opportunities go round from the dealer; four passes in a row close the window;
    then the dealer takes the bottom (R21) and the round is settled."""
    b = r1_window()
    assert (b.phase, b.to_speak, b.passes) == (Phase.OVERCALL, 2, 0)
    b = passes(b, 2, 3, 0)
    assert (b.phase, b.to_speak, b.passes) == (Phase.OVERCALL, 1, 3)
    b = b.pass_(1)
    assert (b.phase, b.burier, b.to_speak) == (Phase.BURY, 2, None)
    assert b.bury_takes_bottom
    b = b.bury(2)
    assert (b.phase, b.dealer, b.trump, b.buries) == (Phase.DONE, 2, H, 1)


def test_r20_round_one_last_overcaller_becomes_dealer() -> None:
    """R20 反主反打: each overcaller deals; the passes start again after an overcall."""
    b = r1_window().pass_(2).overcall(3, c("2S 2S"), ALL)
    assert (b.phase, b.dealer, b.declarer, b.to_speak, b.passes) == (Phase.OVERCALL, 3, 3, 0, 0)
    b = passes(b, 0, 1, 2)
    assert b.phase is Phase.OVERCALL and b.to_speak == 3
    b = b.pass_(3)
    assert (b.phase, b.burier, b.dealer, b.trump) == (Phase.BURY, 3, 3, S)
    assert [s.seat for s in b.shows] == [2, 3]


def test_r20_declarer_overcalls_only_after_someone_else() -> None:
    """R20: the original declarer may overcall only after someone else has overcalled."""
    b = r1_window()
    with pytest.raises(IllegalMoveError, match="only after someone else") as err:
        b.overcall(2, c("2S 2S"), ALL)
    assert (err.value.code, err.value.rule) == ("self-overcall-not-allowed", "R20")
    b = passes(b.pass_(2).overcall(3, c("2S 2S"), ALL), 0, 1)
    b = b.overcall(2, c("SJ SJ"), ALL)
    assert (b.dealer, b.declarer, b.trump) == (2, 2, None)
    b = passes(b, 3, 0, 1)
    with pytest.raises(IllegalMoveError, match="own standing") as err:
        b.overcall(2, c("BJ BJ"), ALL)
    assert err.value.code == "self-overcall-not-allowed"


STRONGER = [
    pytest.param("2H", "2S", False, id="R20-single-does-not-beat-single"),
    pytest.param("2H", "2S 2S", True, id="R20-level-pair-beats-single"),
    pytest.param("2H", "2H 2H", True, id="R20-pair-of-the-same-suit-by-another-seat"),
    pytest.param("2H 2H", "2S 2S", False, id="R17-level-pair-locks-against-pair"),
    pytest.param("2H 2H", "SJ SJ", True, id="R17-only-a-joker-pair-beats-the-lock"),
    pytest.param("2H", "BJ BJ", True, id="R20-BJ-pair-beats-single"),
]


@pytest.mark.parametrize(("declared", "overcall", "ok"), STRONGER)
def test_r20_overcall_must_be_strictly_stronger(declared: str, overcall: str, ok: bool) -> None:
    b = r1_window(cards=declared).pass_(2)
    if ok:
        assert b.overcall(3, c(overcall), ALL).standing == b.check_overcall(3, c(overcall), ALL)
        return
    with pytest.raises(IllegalMoveError) as err:
        b.overcall(3, c(overcall), ALL)
    assert (err.value.code, err.value.rule) == ("declaration-too-weak", "R20")
    if "2H 2H" in declared:
        assert "locked" in err.value.detail


def test_r20_joker_pairs_in_order() -> None:
    """R20: SJ SJ beats any level pair, BJ BJ beats SJ SJ; a joker pair makes no-trump."""
    b = r1_window().pass_(2).overcall(3, c("2D 2D"), ALL).overcall(0, c("SJ SJ"), ALL)
    with pytest.raises(IllegalMoveError) as err:
        b.overcall(1, c("SJ SJ"), ALL)
    assert err.value.code == "declaration-too-weak"
    b = b.overcall(1, c("BJ BJ"), ALL)
    assert (b.trump, b.dealer, b.standing and b.standing.strength) == (None, 1, Strength.BJ_PAIR)


SELF_OVERCALL = [
    pytest.param(SELF, "2H", "2H 2H", H, None, id="R20-self_overcall-自保-same-suit"),
    pytest.param(SELF, "2H", "2S 2S", S, None, id="R20-self_overcall-自反-other-suit"),
    pytest.param(SELF, "2H", "SJ SJ", None, "self-overcall-not-allowed", id="R20-self-joker"),
    pytest.param(SELF, "2H 2H", "2S 2S", None, "self-overcall-not-allowed", id="R17-pair-lock"),
    pytest.param(STD, "2H", "2H 2H", None, "self-overcall-not-allowed", id="R20-default-off"),
]


@pytest.mark.parametrize(("rules", "declared", "shown", "trump", "code"), SELF_OVERCALL)
def test_r20_self_overcall_variant(
    rules: RuleSet, declared: str, shown: str, trump: int | None, code: str | None
) -> None:
    """§10 self_overcall: the declarer turns a single into a pair (自保 / 自反)."""
    b = r1_window(rules, cards=declared)
    if code is None:
        b = b.overcall(2, c(shown), ALL)
        assert (b.declarer, b.dealer, b.trump, b.to_speak) == (2, 2, trump, 3)
        assert b.standing is not None and b.standing.strength is Strength.LEVEL_PAIR
        return
    with pytest.raises(IllegalMoveError) as err:
        b.overcall(2, c(shown), ALL)
    assert err.value.code == code


def test_r20_self_overcall_variant_in_a_later_round_rebury() -> None:
    """§10 self_overcall + R20 炒底: a 自保 is an overcall, so the declarer re-buries."""
    b = later(SELF, dealer=1).declare(1, c("2H"), ALL).end_deal(BOTTOM).bury(1)
    b = b.overcall(1, c("2H 2H"), ALL)
    assert (b.phase, b.burier, b.bury_takes_bottom) == (Phase.BURY, 1, False)


# -- later rounds (R18, R20 炒底) ---------------------------------------------------------


def test_r18_later_round_declaring_picks_the_suit_only() -> None:
    """R18: the dealer is fixed; any seat declares with the dealer team's level (R5)."""
    b = later(dealer=1, levels=(L2, L5))
    assert b.level == L5
    with pytest.raises(IllegalMoveError) as err:
        b.declare(0, c("2H"), ALL)
    assert err.value.code == "not-a-level-card"
    b = b.declare(0, c("5H"), ALL5)
    assert (b.dealer, b.declarer, b.trump) == (1, 0, H)


def test_r20_later_round_chaodi_flow() -> None:
    """R20 炒底: the window opens after the dealer buries; each overcaller re-buries and
    the window goes on from the next seat; the dealer never changes."""
    b = later(dealer=1).declare(0, c("2H"), ALL).end_deal(BOTTOM)
    assert (b.phase, b.burier, b.bury_takes_bottom) == (Phase.BURY, 1, True)
    with pytest.raises(IllegalMoveError) as err:
        b.overcall(2, c("2S 2S"), ALL)
    assert err.value.code == "overcall-window-closed"
    b = b.bury(1)
    assert (b.phase, b.to_speak) == (Phase.OVERCALL, 1)
    b = b.pass_(1).overcall(2, c("2S 2S"), ALL)
    assert (b.phase, b.burier, b.dealer, b.bury_takes_bottom) == (Phase.BURY, 2, 1, False)
    b = b.bury(2)
    assert (b.phase, b.to_speak, b.passes) == (Phase.OVERCALL, 3, 0)
    b = b.pass_(3).overcall(0, c("SJ SJ"), ALL)  # the original declarer, after seat 2
    assert (b.burier, b.dealer) == (0, 1)
    b = passes(b.bury(0), 1, 2, 3)
    assert b.phase is Phase.OVERCALL
    b = b.pass_(0)
    assert (b.phase, b.dealer, b.trump, b.buries) == (Phase.DONE, 1, None, 3)


# -- R19: nobody declared ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("bottom", "trump"),
    [
        pytest.param("3S 4S 7C 6H 8D 9D JS QS", C, id="R19-bottom-third-card-suit"),
        pytest.param("BJ SJ 7C 6H 8D 9D JS QS", C, id="R19-only-the-third-card-counts"),
        pytest.param("3S 4S 2D 6H 8D 9D JS QS", D, id="R19-level-card-gives-its-suit"),
        pytest.param("3S 4S SJ 6H 8D 9D JS QS", None, id="R19-small-joker-no-trump"),
        pytest.param("3S 4S BJ 6H 8D 9D JS QS", None, id="R19-big-joker-no-trump"),
    ],
)
def test_r19_bottom_third_card(bottom: str, trump: int | None) -> None:
    """R19 after round 1: bottom[2] names trump; the dealer buries; no overcall window."""
    b = later(dealer=3).end_deal(c(bottom))
    assert (b.phase, b.burier, b.fallback, b.trump_known) == (Phase.BURY, 3, True, True)
    assert b.trump == trump and b.declarer is None
    b = b.bury(3)
    assert (b.phase, b.trump, b.dealer) == (Phase.DONE, trump, 3)


@pytest.mark.parametrize(
    "start",
    [
        pytest.param(lambda: Bidding.round_one(STD), id="R19-round-one-redeal"),
        pytest.param(
            lambda: later(RuleSet(no_declaration=NoDeclaration.REDEAL)),
            id="R19-variant-no_declaration-redeal",
        ),
    ],
)
def test_r19_redeal(start: Callable[[], Bidding]) -> None:
    b = start().end_deal(BOTTOM)
    assert (b.phase, b.redeal_reason) == (Phase.REDEAL, RedealReason.NO_DECLARATION)
    assert not b.trump_known


# -- variant declare_with_joker (R17, R18) ------------------------------------------------


def test_r17_joker_variant_round_one_anybody_declares() -> None:
    b = Bidding.round_one(JOKER)
    with pytest.raises(IllegalMoveError) as err:
        b.declare(1, c("2H SJ"), ALL)
    assert err.value.code == "no-joker-of-matching-colour"
    b = b.declare(1, c("2H BJ"), ALL)
    assert (b.dealer, b.trump) == (1, H)


def test_r18_joker_variant_only_the_dealer_team_declares_during_the_deal() -> None:
    b = later(JOKER, dealer=0)
    with pytest.raises(IllegalMoveError) as err:
        b.declare(1, c("2H BJ"), ALL)
    assert (err.value.code, err.value.rule) == ("not-eligible-to-declare", "R18")
    b = b.declare(2, c("2S 2S SJ"), ALL)
    assert (b.dealer, b.declarer, b.trump) == (0, 2, S)


def test_r18_joker_variant_dealer_team_able_but_silent_falls_back_to_r19() -> None:
    hands = [c("2H BJ"), ALL, c("3S"), ALL]
    b = later(JOKER, dealer=0).end_deal(BOTTOM, hands)
    assert (b.phase, b.fallback, b.trump) == (Phase.BURY, True, C)


def test_r18_joker_variant_other_team_declares_and_takes_the_deal() -> None:
    """R18 variant: the dealer's team cannot declare → the other team may, in play order
    from the dealer's next player, with its own level; its declarer deals."""
    b = late_declaring()
    assert (b.phase, b.to_speak, b.dealer) == (Phase.LATE_DECLARING, 1, 0)
    with pytest.raises(IllegalMoveError) as err:
        b.declare(3, c("5S SJ"), ALL5)
    assert err.value.code == "not-your-turn-to-declare"
    with pytest.raises(IllegalMoveError) as err:
        b.declare(1, c("2H BJ"), ALL)
    assert err.value.code == "not-a-level-card"  # the attackers' level is 5
    assert [s.cards for s in b.legal_shows(1, ALL5)] == [
        tuple(c(x)) for x in ("5S SJ", "5H BJ", "5C SJ", "5D BJ")
    ] + [tuple(sorted(c(x))) for x in ("5S 5S SJ", "5H 5H BJ", "5C 5C SJ", "5D 5D BJ")]
    b = b.pass_(1)
    assert b.to_speak == 3
    b = b.declare(3, c("5S SJ"), ALL5)
    assert (b.phase, b.dealer, b.burier, b.level, b.trump) == (Phase.BURY, 3, 3, L5, S)
    b = b.bury(3)
    assert (b.phase, b.to_speak) == (Phase.OVERCALL, 3)
    b = b.pass_(3).overcall(0, c("5C 5C SJ"), ALL5)
    assert (b.dealer, b.declarer, b.burier) == (3, 0, 0)


@pytest.mark.parametrize(
    ("rules", "phase"),
    [
        pytest.param(JOKER, Phase.BURY, id="R19-late-declaring-nobody-then-bottom-card"),
        pytest.param(
            RuleSet(declare_with_joker=True, no_declaration=NoDeclaration.REDEAL),
            Phase.REDEAL,
            id="R19-late-declaring-nobody-then-redeal",
        ),
    ],
)
def test_r18_joker_variant_other_team_passes_too(rules: RuleSet, phase: Phase) -> None:
    b = late_declaring(rules).pass_(1).pass_(3)
    assert b.phase is phase and b.dealer == 0
    if phase is Phase.BURY:
        assert (b.fallback, b.trump, b.burier) == (True, C, 0)


def test_r20_joker_variant_overcall_needs_pair_plus_joker() -> None:
    b = later_window(JOKER, dealer=1, declarer=3, cards="2H BJ").pass_(1).pass_(2)
    with pytest.raises(IllegalMoveError) as err:
        b.overcall(3, c("2S 2S SJ"), ALL)
    assert err.value.code == "self-overcall-not-allowed"
    b = b.pass_(3)
    with pytest.raises(IllegalMoveError) as err:
        b.overcall(0, c("2S 2S"), ALL)
    assert err.value.code == "no-joker-of-matching-colour"
    b = b.overcall(0, c("2S 2S SJ"), ALL)
    assert (b.phase, b.burier, b.trump) == (Phase.BURY, 0, S)


def test_r18_joker_variant_end_deal_needs_the_hands() -> None:
    with pytest.raises(InvalidInputError):
        later(JOKER).end_deal(BOTTOM)
