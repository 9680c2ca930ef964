"""RULES §10 rule sets: fields, defaults, mapping round trip, validation, presets."""

from __future__ import annotations

import dataclasses
import json

import pytest

from domain.rules.errors import InvalidRuleSetError
from domain.rules.ruleset import (
    FIELDS,
    FINISH_AT_A,
    PRESETS,
    WRAP,
    BottomMultiplier,
    MatchEnd,
    MatchEndKind,
    NoDeclaration,
    RuleSet,
    preset,
)


def test_s10_fields_and_defaults() -> None:
    assert tuple(f.name for f in dataclasses.fields(RuleSet)) == FIELDS
    r = RuleSet()
    assert r.declare_with_joker is False
    assert r.self_overcall is False
    assert r.bottom_multiplier is BottomMultiplier.LINEAR
    assert r.no_declaration is NoDeclaration.BOTTOM_THIRD_CARD
    assert r.throw_penalty_points == 0
    assert r.level_cap == 6
    assert r.match_end == WRAP
    assert r.weak_hand_redeal is None


def test_s10_rule_set_is_frozen_and_hashable() -> None:
    r = RuleSet()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.level_cap = 3  # type: ignore[misc]
    assert hash(r) == hash(RuleSet())
    assert r == RuleSet.from_mapping({})


def test_s10_canonical_mapping_of_the_defaults() -> None:
    assert RuleSet().to_mapping() == {
        "declare_with_joker": False,
        "self_overcall": False,
        "bottom_multiplier": "linear",
        "no_declaration": "bottom_third_card",
        "throw_penalty_points": 0,
        "level_cap": 6,
        "match_end": "wrap",
        "weak_hand_redeal": None,
    }


ROUND_TRIPS = [
    pytest.param(RuleSet(), id="s10-defaults"),
    pytest.param(
        RuleSet(
            declare_with_joker=True,
            self_overcall=True,
            bottom_multiplier=BottomMultiplier.EXPONENTIAL,
            no_declaration=NoDeclaration.REDEAL,
            throw_penalty_points=10,
            level_cap=None,
            match_end=MatchEnd(MatchEndKind.ROUNDS, 12),
            weak_hand_redeal=15,
        ),
        id="s10-every-field-changed",
    ),
    pytest.param(RuleSet(match_end=FINISH_AT_A, level_cap=1), id="s10-finish-at-A"),
    *(pytest.param(r, id=f"s10-preset-{name}") for name, r in PRESETS.items()),
]


@pytest.mark.parametrize("rules", ROUND_TRIPS)
def test_s10_round_trip_through_json(rules: RuleSet) -> None:
    data = json.loads(json.dumps(rules.to_mapping()))
    assert RuleSet.from_mapping(data) == rules
    assert all(type(v) in (bool, int, str, type(None)) for v in data.values())


def test_s10_camel_case_names() -> None:
    r = RuleSet.from_mapping(
        {
            "declareWithJoker": True,
            "selfOvercall": True,
            "bottomMultiplier": "exponential",
            "noDeclaration": "redeal",
            "throwPenaltyPoints": 5,
            "levelCap": 4,
            "matchEnd": "rounds:8",
            "weakHandRedeal": 15,
        }
    )
    assert r == RuleSet(
        declare_with_joker=True,
        self_overcall=True,
        bottom_multiplier=BottomMultiplier.EXPONENTIAL,
        no_declaration=NoDeclaration.REDEAL,
        throw_penalty_points=5,
        level_cap=4,
        match_end=MatchEnd(MatchEndKind.ROUNDS, 8),
        weak_hand_redeal=15,
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({"level_cap": "none"}, RuleSet(level_cap=None), id="s10-level-cap-none-str"),
        pytest.param({"level_cap": None}, RuleSet(level_cap=None), id="s10-level-cap-null"),
        pytest.param({"weak_hand_redeal": "off"}, RuleSet(), id="s10-weak-hand-off-str"),
        pytest.param({"weak_hand_redeal": None}, RuleSet(), id="s10-weak-hand-null"),
        pytest.param({"match_end": "finish_at_A"}, RuleSet(match_end=FINISH_AT_A), id="R32-A"),
        pytest.param(
            {"bottom_multiplier": BottomMultiplier.EXPONENTIAL},
            RuleSet(bottom_multiplier=BottomMultiplier.EXPONENTIAL),
            id="R28-enum-member",
        ),
        pytest.param(
            {"match_end": "rounds:007"},
            RuleSet(match_end=MatchEnd(MatchEndKind.ROUNDS, 7)),
            id="R32-rounds-leading-zeros",
        ),
    ],
)
def test_s10_accepted_spellings(data: dict[str, object], expected: RuleSet) -> None:
    assert RuleSet.from_mapping(data) == expected


@pytest.mark.parametrize(
    ("data", "field"),
    [
        pytest.param({"colour": "red"}, "colour", id="s10-unknown-field"),
        pytest.param({"level_cap": 3, "levelCap": 3}, "level_cap", id="s10-both-spellings"),
        pytest.param({"declare_with_joker": 1}, "declare_with_joker", id="R17-int-not-bool"),
        pytest.param({"self_overcall": "true"}, "self_overcall", id="R20-str-not-bool"),
        pytest.param({"bottom_multiplier": "cubic"}, "bottom_multiplier", id="R28-unknown"),
        pytest.param({"bottom_multiplier": "LINEAR"}, "bottom_multiplier", id="R28-case"),
        pytest.param({"no_declaration": "bottom_third_card "}, "no_declaration", id="R19-space"),
        pytest.param({"no_declaration": "linear"}, "no_declaration", id="R19-wrong-enum"),
        pytest.param({"throw_penalty_points": -5}, "throw_penalty_points", id="R22-negative"),
        pytest.param({"throw_penalty_points": True}, "throw_penalty_points", id="R22-bool"),
        pytest.param({"throw_penalty_points": 2.5}, "throw_penalty_points", id="R22-float"),
        pytest.param({"throwPenaltyPoints": "10"}, "throw_penalty_points", id="R22-str"),
        pytest.param({"level_cap": 0}, "level_cap", id="R30-cap-zero"),
        pytest.param({"level_cap": -1}, "level_cap", id="R30-cap-negative"),
        pytest.param({"level_cap": True}, "level_cap", id="R30-cap-bool"),
        pytest.param({"level_cap": "off"}, "level_cap", id="R30-cap-off-is-not-none"),
        pytest.param({"level_cap": 6.0}, "level_cap", id="R30-cap-float"),
        pytest.param({"match_end": "rounds:0"}, "match_end", id="R32-rounds-zero"),
        pytest.param({"match_end": "rounds:-1"}, "match_end", id="R32-rounds-negative"),
        pytest.param({"match_end": "rounds:"}, "match_end", id="R32-rounds-missing"),
        pytest.param({"match_end": "rounds: 3"}, "match_end", id="R32-rounds-space"),
        pytest.param({"match_end": "rounds:３"}, "match_end", id="R32-rounds-non-ascii"),
        pytest.param({"match_end": "finish_at_a"}, "match_end", id="R32-case"),
        pytest.param({"match_end": "forever"}, "match_end", id="R32-unknown"),
        pytest.param({"matchEnd": 5}, "match_end", id="R32-int"),
        pytest.param({"weak_hand_redeal": 0}, "weak_hand_redeal", id="s10-weak-zero"),
        pytest.param({"weak_hand_redeal": -15}, "weak_hand_redeal", id="s10-weak-negative"),
        pytest.param({"weak_hand_redeal": 51}, "weak_hand_redeal", id="s10-weak-above-50"),
        pytest.param({"weak_hand_redeal": False}, "weak_hand_redeal", id="s10-weak-bool"),
        pytest.param({"weak_hand_redeal": "none"}, "weak_hand_redeal", id="s10-weak-none-str"),
    ],
)
def test_s10_rejects_impossible_values_naming_the_field(
    data: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidRuleSetError) as info:
        RuleSet.from_mapping(data)
    assert field in info.value.detail
    assert info.value.code == "invalid-rule-set"


def test_s10_unknown_field_lists_the_known_ones() -> None:
    with pytest.raises(InvalidRuleSetError) as info:
        RuleSet.from_mapping({"levelcap": 3})
    assert "level_cap" in info.value.detail


def test_s10_rejects_a_non_mapping() -> None:
    with pytest.raises(InvalidRuleSetError):
        RuleSet.from_mapping(["level_cap"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"level_cap": 0}, id="R30-cap-zero"),
        pytest.param({"throw_penalty_points": -1}, id="R22-negative"),
        pytest.param({"declare_with_joker": 1}, id="R17-int"),
        pytest.param({"bottom_multiplier": "linear"}, id="R28-plain-str"),
        pytest.param({"match_end": "wrap"}, id="R32-plain-str"),
        pytest.param({"weak_hand_redeal": 0}, id="s10-weak-zero"),
    ],
)
def test_s10_constructor_validates_too(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidRuleSetError):
        RuleSet(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("wrap", MatchEnd(), id="R32-wrap"),
        pytest.param("finish_at_A", MatchEnd(MatchEndKind.FINISH_AT_A), id="R32-finish-at-A"),
        pytest.param("rounds:1", MatchEnd(MatchEndKind.ROUNDS, 1), id="R32-rounds-1"),
        pytest.param("rounds:16", MatchEnd(MatchEndKind.ROUNDS, 16), id="R32-rounds-16"),
    ],
)
def test_r32_match_end_string_form(text: str, value: MatchEnd) -> None:
    assert MatchEnd.parse(text) == value
    assert str(value) == text


@pytest.mark.parametrize(
    ("kind", "rounds"),
    [
        pytest.param(MatchEndKind.ROUNDS, None, id="R32-rounds-without-count"),
        pytest.param(MatchEndKind.ROUNDS, 0, id="R32-rounds-zero"),
        pytest.param(MatchEndKind.WRAP, 3, id="R32-wrap-with-count"),
    ],
)
def test_r32_match_end_invariants(kind: MatchEndKind, rounds: int | None) -> None:
    with pytest.raises(InvalidRuleSetError):
        MatchEnd(kind, rounds)


# -- presets ----------------------------------------------------------------------------


def test_s10_standard_preset_is_the_defaults() -> None:
    assert preset("standard") == RuleSet()


def test_s10_tuolaji_preset_seed_001() -> None:
    r = preset("tuolaji")
    assert r.self_overcall is True  # 自保 / 自反
    assert r.bottom_multiplier is BottomMultiplier.EXPONENTIAL  # ×8 for 二拖, ×16 for 三拖
    assert r.level_cap is None  # 依此类推: no cap
    assert r.match_end == WRAP
    assert r.declare_with_joker is False
    assert r.throw_penalty_points == 0
    assert r.weak_hand_redeal is None


def test_s10_duijia_preset_seed_003() -> None:
    r = preset("duijia")
    assert r.bottom_multiplier is BottomMultiplier.EXPONENTIAL  # 2^(n+1)
    assert r.match_end == FINISH_AT_A  # 打A … 必须通关
    assert r.level_cap == 6
    assert r.self_overcall is False
    assert r.declare_with_joker is False
    assert r.throw_penalty_points == 0


def test_s10_presets_mapping_is_read_only() -> None:
    assert set(PRESETS) == {"standard", "tuolaji", "duijia"}
    with pytest.raises(TypeError):
        PRESETS["mine"] = RuleSet()  # type: ignore[index]


@pytest.mark.parametrize("name", ["Standard", "", "seed000", "tractor"])
def test_s10_unknown_preset_lists_the_known_ones(name: str) -> None:
    with pytest.raises(InvalidRuleSetError) as info:
        preset(name)
    for known in ("standard", "tuolaji", "duijia"):
        assert known in info.value.detail
