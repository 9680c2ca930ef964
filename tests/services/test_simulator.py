"""The simulator (services/simulator.py) and its command line (infra/cli.py), RULES R16–R32."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from collections.abc import Sequence

import pytest

from domain.bots import BidView, RandomPlayer
from domain.rules.cards import full_deck, points_of
from domain.rules.ruleset import PRESETS, NoDeclaration, RuleSet
from domain.rules.scoring import TOTAL_POINTS
from domain.rules.shows import Show
from infra.cli import main, render_summary
from services import simulator
from services.simulator import SimulationSummary, simulate

PLAYERS = ("heuristic", "random", "heuristic", "random")


def _figures(summary: SimulationSummary) -> dict[str, object]:
    """Every field but the times."""
    fields = dataclasses.asdict(summary)
    fields.pop("elapsed")
    fields.pop("cpu")
    return fields


def test_a_run_is_reproducible_by_seed() -> None:
    first = simulate(20, players=PLAYERS, seed=42, keep_records=True)
    again = simulate(20, players=PLAYERS, seed=42, keep_records=True)
    other = simulate(20, players=PLAYERS, seed=43, keep_records=True)
    assert first.rounds == 20
    assert _figures(first) == _figures(again)
    assert first.records != other.records
    assert render_summary(first)[:-1] == render_summary(again)[:-1]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_round_conserves_cards_and_points(preset: str) -> None:
    summary = simulate(20, rules=PRESETS[preset], players=PLAYERS, seed=7, keep_records=True)
    deck = Counter(full_deck())
    for r in summary.records:
        assert Counter(r.played + r.bottom) == deck  # R3: 108 cards, none lost or made up
        assert len(r.bottom) == 8  # R21
        assert r.played_points + r.bottom_points == TOTAL_POINTS  # R26
        assert points_of(r.played) == r.played_points
        assert 0 <= r.trick_points <= r.played_points  # R27
        assert r.bonus == (r.bottom_points * r.multiplier if r.won_last else 0)  # R28
        assert r.total == max(0, r.trick_points + r.bonus + sum(r.penalties))  # R29
        assert r.attackers == (r.dealer + 1) % 2  # R6
        assert r.plays >= 100 // 4  # every card played, at most 25 tricks x 4
    assert sum(summary.bands.values()) == summary.rounds


def test_the_match_carries_dealer_and_levels_from_round_to_round() -> None:
    summary = simulate(20, players=PLAYERS, seed=3, keep_records=True)
    records = summary.records
    for before, after in itertools.pairwise(records):
        if after.first_round:  # a new match (R32)
            continue
        keep = before.settlement.defenders_keep
        assert after.dealer == (before.dealer + (2 if keep else 1)) % 4  # R31


VARIANTS = [
    RuleSet(throw_penalty_points=10),
    RuleSet(declare_with_joker=True, no_declaration=NoDeclaration.REDEAL),
    RuleSet(weak_hand_redeal=50, self_overcall=True),
    RuleSet.from_mapping({"match_end": "rounds:3", "level_cap": None}),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=["penalty", "joker", "weak-hand", "rounds"])
@pytest.mark.parametrize("players", [PLAYERS, ("random",) * 4], ids=["mixed", "random"])
def test_rule_variants_play_through(rules: RuleSet, players: tuple[str, ...]) -> None:
    summary = simulate(12, rules=rules, players=players, seed=11, keep_records=True)
    assert summary.rounds == 12
    for r in summary.records:
        assert r.played_points + r.bottom_points == TOTAL_POINTS
    if rules.match_end.rounds == 3:
        assert summary.matches_finished == 4
    if rules.weak_hand_redeal == 50:
        assert summary.redeals > 0


class _Mute(RandomPlayer):
    """Never declares: round 1 is redealt for ever (R19)."""

    def declare(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        return None


def test_a_run_gives_up_when_nobody_ever_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulator, "MAX_REDEALS", 5)
    with pytest.raises(RuntimeError, match="5 redeals in a row"):
        simulate(1, players=[_Mute()] * 4, seed=1)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="four players"):
        simulate(1, players=("random",) * 3)
    with pytest.raises(ValueError, match="unknown player"):
        simulate(1, players=("random", "random", "random", "genius"))


def test_cli_prints_the_same_table_for_the_same_seed(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--rounds", "6", "--seed", "9", "--players", ",".join(PLAYERS)]
    main(argv)
    first = capsys.readouterr().out.splitlines()
    main(argv)
    again = capsys.readouterr().out.splitlines()
    assert first[:-1] == again[:-1]
    assert first[0].startswith("Shengji simulation: 6 rounds, preset standard")
    assert first[-1].startswith("Speed: ")
    assert any(line.startswith("Level change (R30)") for line in first)


def test_cli_rejects_a_bad_player_list() -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--players", "random,random"])


def test_the_simulator_seats_the_strong_bot(capsys: pytest.CaptureFixture[str]) -> None:
    """``--players strong,…`` with ``--strong-budget`` (docs/bots.md): same seed, same table."""
    argv = ["simulate", "--rounds", "2", "--seed", "3", "--strong-budget", "200"]
    argv += ["--players", "strong,random,strong,random"]
    main(argv)
    first = capsys.readouterr().out.splitlines()
    main(argv)
    second = capsys.readouterr().out.splitlines()
    assert first[:-1] == second[:-1]
    assert "strong" in "\n".join(first)
