"""RFC 6902 JSON Patches between two JSON documents (the live streams' patch frames,
docs/decisions.md D-light-frames).

:func:`diff` turns one document into the next with ``add``, ``remove`` and ``replace``
operations only (no ``move``/``copy``/``test``), paths as RFC 6901 JSON Pointers. It knows
nothing of a view's fields; it works on what :func:`msgspec.to_builtins` makes of one
(dicts, lists, strings, numbers, booleans, None) and is small because a view between two
versions changes in small ways:

- an object: keys gone are removed, keys new are added, keys in both are compared;
- an array: the common head and tail are kept; when what is left of one is the other's
  with items inserted (or taken out), those are added (at the end with ``-``, RFC 6902
  §4.1) or removed — so cards leaving the hand are a ``remove`` each, a trick won one
  ``add``, a card dealt into the sorted hand one ``add``; else the two are compared item
  by item and the surplus added or removed;
- anything else that differs (a number, a string, ``null`` to an object, an object to an
  array) is one ``replace`` of the value;
- an object or array (not the document) with several changes inside is replaced whole
  when that is shorter (the four hand sizes, a trick that moved on).

Values are compared with ``==`` where their types agree, so a boolean never equals a number
(``True == 1`` in Python, not in JSON); inside two arrays or objects found equal, Python's
``==`` decides, which a view's schema makes safe (a field holds one JSON type).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

Json = Any
"""A JSON value as :func:`msgspec.to_builtins` makes it."""
_encode = msgspec.json.Encoder().encode


class PatchOperation(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One RFC 6902 operation: ``add``, ``remove`` or ``replace`` at ``path``."""

    op: Annotated[
        Literal["add", "remove", "replace"],
        Meta(description="RFC 6902 §4.1 add, §4.2 remove, §4.3 replace (no other is sent)."),
    ]
    path: Annotated[
        str,
        Meta(
            description="An RFC 6901 JSON Pointer into the view (`/hand/3`, `/wonTricks/-`: "
            "after the array's last item)."
        ),
    ]
    value: Annotated[
        Json | UnsetType,
        Meta(description="The value to add or replace with (absent for `remove`)."),
    ] = UNSET


def pointer(parent: str, key: str | int) -> str:
    """``parent`` extended by one reference token (RFC 6901 §3: ``~`` → ``~0``, ``/`` →
    ``~1``)."""
    if isinstance(key, int):
        return f"{parent}/{key}"
    return parent + "/" + key.replace("~", "~0").replace("/", "~1")


def diff(old: Json, new: Json, path: str = "") -> list[PatchOperation]:
    """The operations that turn ``old`` into ``new`` (none when they are equal)."""
    ops: list[PatchOperation] = []
    _diff(old, new, path, ops)
    return ops


def _same(a: Json, b: Json) -> bool:
    return type(a) is type(b) and a == b


def _diff(old: Json, new: Json, path: str, ops: list[PatchOperation]) -> None:
    if _same(old, new):
        return
    start = len(ops)
    if type(old) is dict and type(new) is dict:
        for key in old:
            if key not in new:
                ops.append(PatchOperation(op="remove", path=pointer(path, key)))
        for key, value in new.items():
            if key in old:
                _diff(old[key], value, pointer(path, key), ops)
            else:
                ops.append(PatchOperation(op="add", path=pointer(path, key), value=value))
    elif type(old) is list and type(new) is list:
        _diff_list(old, new, path, ops)
    else:
        ops.append(PatchOperation(op="replace", path=path, value=new))
        return
    if path and len(ops) - start > 1:  # several changes inside: one replace if shorter
        whole = PatchOperation(op="replace", path=path, value=new)
        if len(_encode(whole)) < len(_encode(ops[start:])):
            del ops[start:]
            ops.append(whole)


def _diff_list(old: list[Json], new: list[Json], path: str, ops: list[PatchOperation]) -> None:
    end = min(len(old), len(new))
    head = 0
    while head < end and _same(old[head], new[head]):
        head += 1
    tail = 0
    while tail < end - head and _same(old[-1 - tail], new[-1 - tail]):
        tail += 1
    old_mid = old[head : len(old) - tail]
    new_mid = new[head : len(new) - tail]
    if len(old_mid) < len(new_mid):
        extra = _left_over(old_mid, new_mid)
        if extra is not None:  # items inserted (cards dealt into a sorted hand)
            size = len(old)
            for i in extra:
                at = head + i
                where = "-" if at == size else str(at)
                ops.append(PatchOperation(op="add", path=f"{path}/{where}", value=new[at]))
                size += 1
            return
    elif len(old_mid) > len(new_mid):
        extra = _left_over(new_mid, old_mid)
        if extra is not None:  # items taken out (cards played from the hand)
            for i in reversed(extra):
                ops.append(PatchOperation(op="remove", path=pointer(path, head + i)))
            return
    both = min(len(old_mid), len(new_mid))
    for i in range(head, head + both):
        _diff(old[i], new[i], pointer(path, i), ops)
    at = head + both
    if len(new_mid) > len(old_mid):  # items added before the kept tail (at the end: "-")
        for i in range(at, at + len(new_mid) - len(old_mid)):
            where = "-" if tail == 0 else str(i)
            ops.append(PatchOperation(op="add", path=f"{path}/{where}", value=new[i]))
    else:  # items removed: each removal shifts the next one to the same index
        for _ in range(len(old_mid) - len(new_mid)):
            ops.append(PatchOperation(op="remove", path=pointer(path, at)))


def _left_over(short: list[Json], long: list[Json]) -> list[int] | None:
    """The indices of ``long`` left over when ``short`` is matched in it in order, or None
    when ``short`` is not a subsequence of ``long``."""
    extra: list[int] = []
    j = 0
    for i, item in enumerate(long):
        if j < len(short) and _same(short[j], item):
            j += 1
        else:
            extra.append(i)
    return extra if j == len(short) else None
