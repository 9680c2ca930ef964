"""Deal verification (RULES R35): a revealed seed recomputes the committed deal; any
changed seed, commitment or card fails, naming the first mismatch; the CLI's exit codes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import pytest

from domain.game.round import round_id
from domain.game.round_events import BottomBuried, CardPlayed, Dealt, RoundScored
from domain.rules.cards import card_names
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import RuleSet
from domain.rules.shuffle import commitment, deal, shuffle_deck
from infra.cli_verify import INVALID, MISMATCH, OK, main
from services.errors import NotFoundError, VerificationError
from services.verify import verify_deal, verify_round
from services.views import table_view
from tests.commands import act
from tests.services.views_drive import T0, Drive, drive

SEED = bytes(range(32))
SEED_HEX = SEED.hex()
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
OTHER_HEX = bytes(32).hex()


def dealt(first_seat: int = 0) -> tuple[list[list[int]], list[int]]:
    d = deal(shuffle_deck(SEED), first_seat)
    return [list(h) for h in d.hands], list(d.bottom)


def test_the_vector_commitment() -> None:
    assert commitment(SEED) == COMMITMENT


@pytest.mark.parametrize("first_seat", [0, 1, 2, 3])
def test_a_good_seed_passes_and_recomputes_the_deal(first_seat: int) -> None:
    hands, bottom = dealt(first_seat)
    shuffled = [list(reversed(h)) for h in hands]  # any order: hands are multisets
    check = verify_deal(SEED_HEX, COMMITMENT.upper(), first_seat, shuffled, bottom)
    assert check.hands == [card_names(h) for h in hands]
    assert check.bottom == card_names(bottom)


def _mismatch(**kwargs: Any) -> str:
    args: dict[str, Any] = {"seed_hex": SEED_HEX, "commitment": COMMITMENT} | kwargs
    with pytest.raises(VerificationError) as e:
        verify_deal(**args)
    assert e.value.code == "verification-failed" and e.value.rule == "R35"
    return e.value.detail


def _swap(cards: list[int], old: int, new: int) -> list[int]:
    out = list(cards)
    out[out.index(old)] = new
    return out


def test_a_changed_seed_fails() -> None:
    detail = _mismatch(seed_hex=OTHER_HEX)
    assert detail.startswith("commitment mismatch") and commitment(bytes(32)) in detail


def test_a_changed_commitment_fails() -> None:
    detail = _mismatch(commitment="0" * 64)
    assert "commitment mismatch" in detail and COMMITMENT in detail


def test_a_changed_card_is_named() -> None:
    hands, _ = dealt()
    old = hands[2][0]
    new = next(c for c in range(54) if c not in hands[2])
    hands[2] = _swap(hands[2], old, new)
    detail = _mismatch(hands=hands)
    assert detail.startswith("seat 2's hand does not match the deal")
    assert f"recorded {card_names([new])[0]}" in detail
    assert f"the deal gives {card_names([old])[0]}" in detail


def test_a_missing_card_is_counted() -> None:
    hands, _ = dealt()
    hands[1] = hands[1][1:]
    assert "24 cards recorded, 25 dealt" in _mismatch(hands=hands)


def test_a_changed_bottom_fails() -> None:
    _, bottom = dealt()
    new = next(c for c in range(54) if c not in bottom)
    assert _mismatch(bottom=_swap(bottom, bottom[0], new)).startswith("the bottom")


def test_the_wrong_first_seat_fails() -> None:
    hands, _ = dealt(first_seat=1)
    assert _mismatch(hands=hands, first_seat=0).startswith("seat 0's hand")


@pytest.mark.parametrize(
    "kwargs",
    [{"seed_hex": "xyz"}, {"seed_hex": SEED_HEX[:-2]}, {"commitment": "abc"}, {"first_seat": 4}],
)
def test_malformed_input_is_invalid_not_a_mismatch(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        verify_deal(**({"seed_hex": SEED_HEX, "commitment": COMMITMENT} | kwargs))


# -- rounds in the store ------------------------------------------------------------------


@pytest.fixture(scope="module")
def played() -> Drive:
    return drive(rounds=2)


def test_scored_rounds_verify(played: Drive) -> None:
    for n in (1, 2):
        check = verify_round(played.service, round_id(played.match_id, n))
        assert (check.number, check.deals) == (n, 1)
        assert commitment(bytes.fromhex(check.seed)) == check.commitment


def test_a_redealt_round_verifies_every_deal() -> None:
    """§10 暴动: the round's first deal is checked against its own commitment too."""
    asked: list[int] = []

    def ask_once(d: Drive) -> None:
        match = d.match()
        round_ = d.service.current_round(match)
        for seat in range(4):
            if not asked and "redeal" in table_view(match, round_, seat, T0).legal.actions:
                act(d.service, d.match_id, seat, "redeal")
                asked.append(seat)

    d = drive(6, rounds=1, rules=RuleSet(weak_hand_redeal=40), before=ask_once)
    assert asked
    assert verify_round(d.service, round_id(d.match_id, 1)).deals == 2


def test_an_unscored_round_keeps_its_seed(played: Drive) -> None:
    with pytest.raises(IllegalMoveError) as e:
        verify_round(played.service, round_id(played.match_id, 3))
    assert e.value.code == "round-not-scored"
    seed = played.service.get_round(round_id(played.match_id, 3)).seed_hex
    assert seed not in e.value.detail


def test_an_unknown_round_is_not_found(played: Drive) -> None:
    with pytest.raises(NotFoundError):
        verify_round(played.service, round_id(played.match_id, 9))


Tamper = Callable[[list[Any]], list[Any]]


def _replace_first(kind: type[Any], **changes: Any) -> Tamper:
    def tamper(events: list[Any]) -> list[Any]:
        k = next(i for i, e in enumerate(events) if isinstance(e, kind))
        return [*events[:k], dataclasses.replace(events[k], **changes), *events[k + 1 :]]

    return tamper


def _other_card(events: list[Any]) -> list[Any]:
    k = next(i for i, e in enumerate(events) if isinstance(e, CardPlayed))
    played = events[k]
    held = {
        c for e in events if isinstance(e, CardPlayed) and e.seat == played.seat for c in e.cards
    }
    stranger = next(c for c in range(54) if c not in held)
    return [*events[:k], dataclasses.replace(played, cards=(stranger,)), *events[k + 1 :]]


def _next_burier(events: list[Any]) -> list[Any]:
    """The bury credited to the next seat, which never took that bottom (R21)."""
    k = next(i for i, e in enumerate(events) if isinstance(e, BottomBuried))
    moved = dataclasses.replace(events[k], seat=(events[k].seat + 1) % 4)
    return [*events[:k], moved, *events[k + 1 :]]


TAMPERED = [
    pytest.param(_replace_first(Dealt, seed=OTHER_HEX), "deal v2: commitment mismatch", id="seed"),
    pytest.param(_replace_first(Dealt, commitment="0" * 64), "commitment mismatch", id="commit"),
    pytest.param(
        _replace_first(RoundScored, seed=OTHER_HEX), "RoundScored reveals seed", id="reveal"
    ),
    pytest.param(_other_card, "did not give it", id="card"),
    pytest.param(_replace_first(RoundScored, trick_points=5), "trick points", id="points"),
    pytest.param(
        _replace_first(RoundScored, bottom_cards=(0,) * 8), "was buried last", id="bottom"
    ),
    pytest.param(_next_burier, "buried", id="bury-seat"),
]


@pytest.mark.parametrize(("tamper", "message"), TAMPERED)
def test_tampered_events_fail(
    played: Drive, monkeypatch: pytest.MonkeyPatch, tamper: Tamper, message: str
) -> None:
    rid = round_id(played.match_id, 1)
    events = tamper(list(played.service.events.get(rid)))
    real_get = played.service.events.get

    def get(originator_id: UUID, **kwargs: Any) -> Iterator[Any]:
        return iter(events) if originator_id == rid else real_get(originator_id, **kwargs)

    monkeypatch.setattr(played.service.events, "get", get)
    with pytest.raises(VerificationError) as e:
        verify_round(played.service, rid)
    assert message in e.value.detail
    assert e.value.detail.startswith("round 1")


# -- the CLI ------------------------------------------------------------------------------


def _hands_args(first_seat: int = 0) -> list[str]:
    hands, _ = dealt(first_seat)
    return ["--hands", *(" ".join(card_names(h)) for h in hands)]


CLI_CASES = [
    pytest.param([], OK, "OK", id="ok"),
    pytest.param(["--first-seat", "3", *_hands_args(3)], OK, "recorded hands match", id="hands"),
    pytest.param(["--commitment", "1" * 64], MISMATCH, "MISMATCH: commitment", id="commitment"),
    pytest.param(["--seed", OTHER_HEX], MISMATCH, "MISMATCH: commitment", id="seed"),
    pytest.param(_hands_args(1), MISMATCH, "MISMATCH: seat 0's hand", id="first-seat"),
    pytest.param(["--seed", "12"], INVALID, "invalid input", id="short-seed"),
    pytest.param(["--bottom", "AS 11H"], INVALID, "invalid input", id="bad-card"),
]


@pytest.mark.parametrize(("extra", "code", "text"), CLI_CASES)
def test_cli_exit_codes(
    capsys: pytest.CaptureFixture[str], extra: list[str], code: int, text: str
) -> None:
    args = ["verify", "--seed", SEED_HEX, "--commitment", COMMITMENT]
    assert main([*args, *extra]) == code
    out = capsys.readouterr()
    assert text in out.out + out.err
    if code == OK:
        first_seat = int(extra[1]) if extra else 0
        hand = " ".join(card_names(dealt(first_seat)[0][0]))
        assert f"seat 0: {hand}\n" in out.out
    else:
        assert out.out == ""
