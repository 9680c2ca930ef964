"""The bidding state machine's refusals: every error code with its rule, the weak-hand
redeal's timing (暴动, §10), the legal shows bots and the simulator read, invalid input.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from domain.rules.bidding import Bidding, Phase, RedealReason
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import RuleSet
from tests.domain.bidding_cases import (
    ALL,
    BOTTOM,
    JOKER,
    L2,
    POOR,
    RICH,
    STD,
    WEAK,
    c,
    late_declaring,
    later,
    later_window,
    passes,
    r1_declared,
    r1_window,
)

# -- every error code ---------------------------------------------------------------------

Action = Callable[[Bidding], object]

ERRORS: list[object] = [
    pytest.param(
        r1_declared,
        lambda b: b.declare(3, c("2S 2S"), ALL),
        "already-declared",
        "R17",
        id="R17-first-declaration-stands-during-the-deal",
    ),
    pytest.param(
        r1_window,
        lambda b: b.declare(3, c("2S"), ALL),
        "declaring-closed",
        "R17",
        id="R17-declaring-closed-after-the-deal",
    ),
    pytest.param(
        lambda: Bidding.round_one(STD),
        lambda b: b.declare(0, c("SJ SJ"), ALL),
        "jokers-cannot-declare",
        "R17",
        id="R17-joker-pair-never-declares",
    ),
    pytest.param(
        lambda: Bidding.round_one(STD),
        lambda b: b.declare(0, c("2H"), c("2S 3H")),
        "cards-not-in-hand",
        "R17",
        id="R17-only-cards-already-drawn",
    ),
    pytest.param(
        lambda: Bidding.round_one(STD),
        lambda b: b.declare(0, c("3H"), c("3H")),
        "not-a-level-card",
        "R17",
        id="R17-not-a-level-card",
    ),
    pytest.param(
        r1_declared,
        lambda b: b.overcall(3, c("2S 2S"), ALL),
        "overcall-window-closed",
        "R20",
        id="R20-no-overcall-during-the-deal",
    ),
    pytest.param(
        r1_declared,
        lambda b: b.pass_(3),
        "overcall-window-closed",
        "R20",
        id="R20-no-pass-during-the-deal",
    ),
    pytest.param(
        r1_window,
        lambda b: b.overcall(3, c("2S 2S"), ALL),
        "not-your-turn-to-overcall",
        "R20",
        id="R20-overcall-out-of-turn",
    ),
    pytest.param(
        r1_window,
        lambda b: b.pass_(0),
        "not-your-turn-to-overcall",
        "R20",
        id="R20-pass-out-of-turn",
    ),
    pytest.param(
        lambda: r1_window().pass_(2),
        lambda b: b.overcall(3, c("2S"), ALL),
        "declaration-too-weak",
        "R20",
        id="R20-single-cannot-overcall",
    ),
    pytest.param(
        r1_window,
        lambda b: b.overcall(2, c("2S 2S"), ALL),
        "self-overcall-not-allowed",
        "R20",
        id="R20-declarer-first",
    ),
    pytest.param(
        lambda: r1_window().pass_(2),
        lambda b: b.overcall(3, c("2S 2S"), c("2S")),
        "cards-not-in-hand",
        "R20",
        id="R20-cards-not-in-hand",
    ),
    pytest.param(
        lambda: passes(r1_window(), 2, 3, 0, 1),
        lambda b: b.overcall(2, c("BJ BJ"), ALL),
        "overcall-window-closed",
        "R20",
        id="R20-window-closed-after-four-passes",
    ),
    pytest.param(
        r1_window,
        lambda b: b.end_deal(BOTTOM),
        "deal-already-ended",
        "R16",
        id="R16-deal-ends-once",
    ),
    pytest.param(
        r1_window,
        lambda b: b.bury(2),
        "not-burying-now",
        "R21",
        id="R21-no-bury-in-window",
    ),
    pytest.param(
        lambda: passes(r1_window(), 2, 3, 0, 1),
        lambda b: b.bury(3),
        "not-your-turn-to-bury",
        "R21",
        id="R21-only-the-dealer-buries",
    ),
    pytest.param(
        lambda: later(JOKER, dealer=0),
        lambda b: b.declare(1, c("2H BJ"), ALL),
        "not-eligible-to-declare",
        "R18",
        id="R18-joker-variant-dealer-team-only",
    ),
    pytest.param(
        late_declaring,
        lambda b: b.pass_(3),
        "not-your-turn-to-declare",
        "R18",
        id="R18-joker-variant-late-declaring-in-turn",
    ),
    pytest.param(
        lambda: Bidding.round_one(JOKER),
        lambda b: b.declare(0, c("2S BJ"), ALL),
        "no-joker-of-matching-colour",
        "R17",
        id="R17-joker-variant-matching-colour",
    ),
    pytest.param(
        lambda: Bidding.round_one(WEAK),
        lambda b: b.request_redeal(0, POOR),
        "redeal-request-closed",
        "§10",
        id="§10-no-weak-hand-redeal-during-the-deal",
    ),
    pytest.param(
        lambda: r1_window(WEAK),
        lambda b: b.request_redeal(0, RICH),
        "weak-hand-too-strong",
        "§10",
        id="§10-weak-hand-too-strong",
    ),
    pytest.param(
        r1_window,
        lambda b: b.request_redeal(0, POOR),
        "weak-hand-redeal-off",
        "§10",
        id="§10-weak-hand-redeal-off",
    ),
]


@pytest.mark.parametrize(("start", "action", "code", "rule"), ERRORS)
def test_error_codes(start: Callable[[], Bidding], action: Action, code: str, rule: str) -> None:
    b = start()
    with pytest.raises(IllegalMoveError) as err:
        action(b)
    assert (err.value.code, err.value.rule) == (code, rule)
    assert start() == b  # nothing changed: states are immutable


# -- weak-hand redeal timing (暴动, §10) ---------------------------------------------------


@pytest.mark.parametrize(
    ("start", "ok"),
    [
        pytest.param(lambda: r1_window(WEAK), True, id="§10-round-one-window-before-bury"),
        pytest.param(
            lambda: passes(r1_window(WEAK), 2, 3, 0, 1), True, id="§10-dealer-about-to-bury"
        ),
        pytest.param(
            lambda: passes(r1_window(WEAK), 2, 3, 0, 1).bury(2), False, id="§10-after-the-bury"
        ),
        pytest.param(
            lambda: later(WEAK).declare(0, c("2H"), ALL).end_deal(BOTTOM),
            True,
            id="§10-later-round-before-the-dealer-buries",
        ),
        pytest.param(lambda: later_window(WEAK), False, id="§10-later-round-window-after-bury"),
        pytest.param(
            lambda: late_declaring(RuleSet(declare_with_joker=True, weak_hand_redeal=15)),
            True,
            id="§10-late-declaring",
        ),
    ],
)
def test_weak_hand_redeal_timing(start: Callable[[], Bidding], ok: bool) -> None:
    b = start()
    assert b.redeal_requests_open is ok
    if ok:
        b = b.request_redeal(1, POOR)
        assert (b.phase, b.redeal_reason, b.redeal_seat) == (
            Phase.REDEAL,
            RedealReason.WEAK_HAND,
            1,
        )
        return
    with pytest.raises(IllegalMoveError) as err:
        b.request_redeal(1, POOR)
    assert err.value.code == "redeal-request-closed"


# -- helpers for bots and the simulator -------------------------------------------------


def test_legal_shows_follow_the_phase() -> None:
    """R17/R20: what a seat may show now; nothing when it may not speak."""
    hand = c("2H 2H 2S SJ SJ 7C")
    assert [str(s) for s in Bidding.round_one(STD).legal_shows(0, hand)] == [
        "2S (single, spades trump)",
        "2H (single, hearts trump)",
        "2H 2H (level_pair, hearts trump)",
    ]
    assert r1_declared().legal_shows(0, hand) == []
    w = r1_window(cards="2D").pass_(2)
    assert [s.cards for s in w.legal_shows(3, hand)] == [tuple(c(x)) for x in ("2H 2H", "SJ SJ")]
    assert w.legal_shows(0, hand) == []  # not its turn
    assert r1_window().legal_shows(2, hand) == []  # the declarer may not overcall first
    assert passes(r1_window(), 2, 3, 0, 1).legal_shows(2, hand) == []


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: Bidding.round_one(STD, 13), id="R5-level-out-of-range"),
        pytest.param(lambda: later(dealer=4), id="R1-dealer-out-of-range"),
        pytest.param(lambda: later(levels=(L2, -1)), id="R5-team-level-out-of-range"),
        pytest.param(lambda: Bidding.round_one(STD).declare(5, c("2H"), ALL), id="R1-seat"),
        pytest.param(lambda: later().end_deal(BOTTOM[:7]), id="R16-bottom-of-8"),
    ],
)
def test_invalid_input(make: Callable[[], object]) -> None:
    with pytest.raises(InvalidInputError):
        make()
