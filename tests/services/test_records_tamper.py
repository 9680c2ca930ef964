"""Tampered records are refused, naming the first bad move and the rule (docs/records.md).

One two-round bot match is played and exported; each case changes one thing in the
record (JSON as a dict) and the import must answer ``record-tampered`` naming that move
(or the deal, or the result field) and the R-number the replay refused.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from services.game import GameService
from services.records.export import export_match, export_round
from services.records.format import GameRecord, RecordInvalidError, RecordTamperedError, decode
from services.records.text import read_text, write_text
from tests.commands import import_record
from tests.services.test_records_play import POPO, play_match, rules_of

Doc = dict[str, Any]


@pytest.fixture(scope="module")
def record() -> Doc:
    svc, match_id = play_match(21, rules=rules_of(2))
    doc: Doc = msgspec.to_builtins(export_match(svc, match_id))
    return doc


def refused(doc: Doc) -> RecordTamperedError:
    with pytest.raises(RecordTamperedError) as info:
        import_record(GameService(POPO), decode(msgspec.json.encode(doc)), store=False)
    return info.value


def moves(doc: Doc) -> list[tuple[int, int, int, Doc]]:
    """(move number, round index, index in round, move) over the record."""
    out, n = [], 0
    for i, r in enumerate(doc["rounds"]):
        for k, a in enumerate(r["actions"]):
            n += 1
            out.append((n, i, k, a))
    return out


def first_play(doc: Doc, round_index: int = 0) -> tuple[int, Doc]:
    return next((n, a) for n, i, _, a in moves(doc) if i == round_index and a["action"] == "play")


def scoring_move(doc: Doc, round_index: int) -> int:
    return max(n for n, i, _, _ in moves(doc) if i == round_index)


def a_card_the_seat_never_holds(doc: Doc, round_index: int, seat: int) -> str:
    """A seat plays exactly the cards it holds (R22), so a card absent from all its
    plays of the round was never in its hand then (the engine refuses it citing R3)."""
    r = doc["rounds"][round_index]
    held = {c for a in r["actions"] if a["seat"] == seat for c in a["cards"]}
    return next(c for c in ("BJ", "SJ", "AS", "AH", "AC", "AD", "2S", "3H") if c not in held)


@dataclass(frozen=True)
class Case:
    name: str
    tamper: Callable[[Doc], int | None]
    """Changes the record; returns the move the problem must name."""
    rule: str | None
    field: str | None = None


def changed_card(doc: Doc) -> int:
    n, a = first_play(doc, 1)
    a["cards"] = [a_card_the_seat_never_holds(doc, 1, a["seat"])]
    return n


def reordered(doc: Doc) -> int:
    ms = [(n, i, k, a) for n, i, k, a in moves(doc) if a["action"] == "play"]
    n, i, k, _ = ms[5]
    actions = doc["rounds"][i]["actions"]
    actions[k], actions[k + 1] = actions[k + 1], actions[k]
    return n


def reassigned(doc: Doc) -> int:
    n, a = first_play(doc, 0)
    a["seat"] = (a["seat"] + 1) % 4
    return n


def seed_of_round_two(doc: Doc) -> int:
    deal = doc["rounds"][1]["deals"][0]
    deal["seed"] = ("1" if deal["seed"][0] != "1" else "2") + deal["seed"][1:]
    return scoring_move(doc, 0)  # round 2 is dealt by the move that scores round 1


def commitment_of_round_one(doc: Doc) -> None:
    deal = doc["rounds"][0]["deals"][0]
    deal["commitment"] = "0" * 64


def result_field(name: str, change: Callable[[Any], Any]) -> Callable[[Doc], int]:
    def tamper(doc: Doc) -> int:
        result = doc["rounds"][0]["result"]
        result[name] = change(result[name])
        return scoring_move(doc, 0)

    return tamper


def winner(doc: Doc) -> int:
    end = doc["end"]
    end["winner"] = 1 - end["winner"] if end["winner"] is not None else 0
    return scoring_move(doc, 1)


def levels_of_round_two(doc: Doc) -> int:
    levels = doc["rounds"][1]["levels"]
    levels[0] = "K" if levels[0] != "K" else "Q"
    return scoring_move(doc, 0)


def time_goes_back(doc: Doc) -> int:
    n, _, _, a = moves(doc)[30]
    a["at"] = doc["started"].replace("12:00:00", "11:59:59")
    return n


def last_move_dropped(doc: Doc) -> int:
    doc["rounds"][0]["actions"].pop()
    return scoring_move(doc, 0)


def move_after_the_score(doc: Doc) -> int:
    actions = doc["rounds"][0]["actions"]
    actions.append(copy.deepcopy(actions[-1]))
    return scoring_move(doc, 0)


def claim_without_deadline(doc: Doc) -> int:
    n, i, k, a = moves(doc)[10]
    doc["rounds"][i]["actions"].insert(
        k, {"at": a["at"], "seat": None, "action": "claim", "cards": [], "timeout": None}
    )
    return n


def extra_deal(doc: Doc) -> int:
    deals = doc["rounds"][0]["deals"]
    deals.append(copy.deepcopy(deals[0]))
    return scoring_move(doc, 0)


CASES = [
    Case("a changed card (R3: not in the seat's hand)", changed_card, "R3", "action"),
    Case("two moves swapped (R22: not its turn)", reordered, "R22", "action"),
    Case("a move given to another seat", reassigned, "R22", "action"),
    Case("a seed that is not its commitment's (R35)", seed_of_round_two, "R35", "seed"),
    Case("a commitment changed (R35)", commitment_of_round_one, "R35", "seed"),
    Case("attackers' total (R29)", result_field("attackersTotal", lambda v: v + 5), "R29",
         "rounds[0].result.attackersTotal"),
    Case("next dealer (R31)", result_field("nextDealer", lambda v: (v + 1) % 4), "R31",
         "rounds[0].result.nextDealer"),
    Case("the bottom (R21)", result_field("bottom", lambda v: ["BJ", *v[1:]]), "R21",
         "rounds[0].result.bottom"),
    Case("trick points (R27)", result_field("trickPoints", lambda v: v + 10), "R27",
         "rounds[0].result.trickPoints"),
    Case("the match's winner (R32)", winner, "R32", "end.winner"),
    Case("round 2's levels (R30, R31)", levels_of_round_two, "R31", "rounds[1].levels"),
    Case("a move earlier than the one before (R34)", time_goes_back, "R34", "at"),
    Case("the scoring move dropped (R22)", last_move_dropped, "R22", "rounds[0].actions"),
    Case("a move after the score (R28)", move_after_the_score, "R28", "rounds[0].actions[81]"),
    Case("a claim when no deadline passed (R20)", claim_without_deadline, "R20", None),
    Case("a deal the round never uses (R19)", extra_deal, "R19", "rounds[0].deals"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tampering_is_refused_at_the_first_bad_move(record: Doc, case: Case) -> None:
    doc = copy.deepcopy(record)
    move = case.tamper(doc)
    problem = refused(doc)
    assert problem.code == "record-tampered"
    assert problem.rule == case.rule, problem.detail
    assert problem.move == move, problem.detail
    if case.field is not None and case.field.startswith("rounds[0].actions["):
        assert problem.field is not None and problem.field.startswith("rounds[0].actions")
    elif case.field is not None:
        assert problem.field is not None and problem.field.endswith(case.field), problem.field
    if move is not None:
        assert f"move {move}" in problem.detail or problem.field, problem.detail


def test_a_changed_card_is_named_with_the_seat_and_the_cards(record: Doc) -> None:
    doc = copy.deepcopy(record)
    n = changed_card(doc)
    _, a = first_play(doc, 1)
    problem = refused(doc)
    assert f"move {n} (round 2, S{a['seat']} play {a['cards'][0]})" in problem.detail
    assert problem.facts() == {"move": n, "round": 2, "field": "action", "rule": "R3"}


def test_the_first_of_two_changes_is_named(record: Doc) -> None:
    doc = copy.deepcopy(record)
    later = changed_card(doc)  # round 2
    earlier = reassigned(doc)  # round 1
    assert refused(doc).move == earlier < later


def test_a_tampered_text_record_is_refused_like_its_json(record: Doc) -> None:
    doc = copy.deepcopy(record)
    n = changed_card(doc)
    text = write_text(decode(msgspec.json.encode(doc)))
    with pytest.raises(RecordTamperedError) as info:
        import_record(GameService(POPO), read_text(text), store=False)
    assert (info.value.move, info.value.rule) == (n, "R3")


def test_an_untouched_record_replays(record: Doc) -> None:
    imported = import_record(GameService(POPO), decode(msgspec.json.encode(record)), store=False)
    assert (imported.kind, imported.rounds, imported.match_id) == ("match", 2, None)
    assert imported.moves == len(moves(record))


# -- round records ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def round_two() -> GameRecord:
    svc, match_id = play_match(22, rules=rules_of(2))
    return export_round(svc, match_id, 2)


def test_a_round_record_replays_on_its_own(round_two: GameRecord) -> None:
    assert round_two.rounds[0].dealer is not None  # round 2: the dealer is fixed (R31)
    imported = import_record(GameService(POPO), round_two, store=False)
    assert (imported.kind, imported.rounds) == ("round", 1)


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ("card", "R3"),
        ("seed", "R35"),
        ("total", "R29"),
        ("dealer", None),
    ],
)
def test_a_tampered_round_record_is_refused(
    round_two: GameRecord, change: str, rule: str | None
) -> None:
    doc: Doc = msgspec.to_builtins(round_two)
    r = doc["rounds"][0]
    if change == "card":
        _, a = first_play(doc, 0)
        a["cards"] = [a_card_the_seat_never_holds(doc, 0, a["seat"])]
    elif change == "seed":
        r["deals"][0]["seed"] = "f" * 64
    elif change == "total":
        r["result"]["attackersTotal"] += 40
    else:  # another dealer: another level rank, another seat to lead (R5, R22)
        r["dealer"] = (r["dealer"] + 1) % 4
    with pytest.raises(RecordTamperedError) as info:
        import_record(GameService(POPO), decode(msgspec.json.encode(doc)), store=False)
    if rule is None:  # refused at a move, whichever rule that move breaks first
        assert info.value.move is not None and info.value.rule, info.value.detail
    else:
        assert info.value.rule == rule, info.value.detail


def test_a_round_record_is_not_stored(round_two: GameRecord) -> None:
    with pytest.raises(RecordInvalidError, match="only a whole match is archived"):
        import_record(GameService(POPO), round_two, store=True)
