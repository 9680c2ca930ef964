"""The live streams' RFC 6902 diff (docs/decisions.md D-light-frames): over thousands of
random JSON documents and edits of them, the ``jsonpatch`` library applying
:func:`services.json_patch.diff`'s operations turns the one into the other exactly; and a
view's usual changes are small (a card dealt into a sorted hand: one ``add``; cards played
from it: a ``remove`` each; a trick won: one ``add`` at the end)."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonpatch
import msgspec
import pytest

from services.json_patch import diff, pointer

SCALARS: list[Any] = [2, 3, 2.5, True, False, None, "a", "b~/"]
"""No 0/1 beside False/True: a view's field holds one JSON type (the module's docstring)."""


def document(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice(SCALARS)
    if r < 0.6:
        return [document(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {rng.choice(["a", "b", "c/", "~d", ""]): document(rng, depth + 1) for _ in range(4)}


def edited(rng: random.Random, value: Any, depth: int = 0) -> Any:
    if isinstance(value, list):
        out = list(value)
        for _ in range(rng.randint(0, 3)):
            r = rng.random()
            if r < 0.3 and out:
                del out[rng.randrange(len(out))]
            elif r < 0.6:
                out.insert(rng.randint(0, len(out)), document(rng, depth + 1))
            elif out:
                i = rng.randrange(len(out))
                out[i] = edited(rng, out[i], depth + 1)
        return out
    if isinstance(value, dict):
        out2 = {}
        for key, item in value.items():
            r = rng.random()
            if r < 0.1:
                continue
            out2[key] = edited(rng, item, depth + 1) if r < 0.4 else item
        if rng.random() < 0.3:
            out2[rng.choice(["x", "a", "~1", "/"])] = document(rng, depth + 1)
        return out2
    return document(rng, depth) if rng.random() < 0.5 else value


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("seed", range(4))
def test_the_patch_turns_one_document_into_the_other(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2500):
        old = document(rng)
        new = edited(rng, old)
        ops = msgspec.to_builtins(diff(old, new))
        assert canonical(jsonpatch.apply_patch(old, ops)) == canonical(new), (old, new, ops)
        if canonical(old) == canonical(new):
            assert ops == []


def test_a_views_usual_changes_are_small() -> None:
    hand = [f"{rank}{suit}" for suit in "SHCD" for rank in "2345679"]  # 28 cards, sorted
    dealt = diff({"hand": hand}, {"hand": [*hand[:4], "8S", *hand[4:]]})
    assert msgspec.to_builtins(dealt) == [{"op": "add", "path": "/hand/4", "value": "8S"}]
    played = diff({"hand": hand}, {"hand": [c for c in hand if c not in ("3S", "6H")]})
    assert msgspec.to_builtins(played) == [
        {"op": "remove", "path": "/hand/11"},
        {"op": "remove", "path": "/hand/1"},
    ]
    won = diff({"wonTricks": [{"n": 1}]}, {"wonTricks": [{"n": 1}, {"n": 2}]})
    assert msgspec.to_builtins(won) == [{"op": "add", "path": "/wonTricks/-", "value": {"n": 2}}]
    assert msgspec.to_builtins(diff({"trick": 1}, {"trick": None})) == [
        {"op": "replace", "path": "/trick", "value": None}
    ]
    # four sizes that all changed: one replace of the array is shorter than four
    sizes = diff({"handSizes": [25, 25, 24, 24]}, {"handSizes": [24, 24, 23, 23]})
    assert msgspec.to_builtins(sizes) == [
        {"op": "replace", "path": "/handSizes", "value": [24, 24, 23, 23]}
    ]
    assert diff(True, 1) != []  # true is not 1 in JSON


def test_pointers_escape_tilde_and_slash() -> None:
    assert pointer("", "a/b~c") == "/a~1b~0c"
    assert pointer("/x", 3) == "/x/3"
