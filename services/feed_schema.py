"""The feed's own contract: the JSON Schema of each feed item *as served*
(docs/events.md, docs/decisions.md D-integrity).

A feed item's ``data`` is its event's fields as :func:`services.history_items.history_item`
writes them — camelCase, cards in R4 notation, ranks and suits as letters, a show's
strength by name, levels gained as integers — so its schema is generated from the same
two things: the event class's field types (``msgspec.inspect``) and the one table of
wire forms (:func:`services.history_items.wire_form`). Nothing is written twice, so a
served item cannot drift from its schema without a test seeing it
(``tests/integrity/test_feed_items.py`` validates every item of a generated population).

:func:`feed_item_schemas` answers one schema per event type the feed may carry: the
item with ``type`` fixed to that type and ``data`` that type's fields. Secret fields
(``SECRET_FIELDS``) may be absent from ``data`` (they are listed in ``hidden`` instead);
every other field is required, but for a field a later class version added (one with a
default, which its upcaster fills): an item stored by a consumer before it was added lacks
it, and ``classVersion`` is any version up to the current one — the feed's changes are
additive (docs/events.md, the feed format policy). A withheld item (a tournament table in
play, R36) has an empty ``data``. The stored format (snake_case, integer cards) stays
documented beside it, as ``events`` of ``GET /v1/events/schema``.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import textwrap
from functools import cache
from typing import Annotated, Any

import msgspec
import msgspec.inspect as mi
from msgspec import Meta

from domain.rules.cards import RANKS, SUITS, card_names
from domain.rules.shows import Strength
from services.event_schema import EVENT_CLASSES, EventType, event_schemas
from services.history_items import (
    CARD,
    CARDS,
    RANK,
    RANKS_,
    RULES,
    STRENGTH,
    SUIT,
    TABLE,
    TABLES,
    TIMERS,
    camel,
    wire_form,
)

FEED_STREAMS = frozenset(stream for stream, _ in EVENT_CLASSES) - {"outbox"}
"""The streams of the game's store: the feed's (the outbox has a store of its own)."""
_IDENTITY = frozenset({"originator_id", "originator_version", "originator_topic", "timestamp"})
SHARED: dict[str, dict[str, Any]] = {
    "FeedCard": {
        "type": "string",
        "enum": card_names(range(54)),
        "description": "A card in R4 notation (`10H`, `AS`, `SJ`, `BJ`)",
    },
    "FeedRank": {"type": "string", "enum": list(RANKS), "description": "A rank (R5)"},
    "FeedSuit": {"type": "string", "enum": list(SUITS), "description": "A suit (R4)"},
    "FeedStrength": {
        "type": "string",
        "enum": [s.name.lower() for s in Strength],
        "description": "A show's strength (R20)",
    },
}
"""The shapes items share (components of a document, ``$defs`` of a served schema)."""
CARD_SCHEMA: dict[str, Any] = {"$ref": "FeedCard"}
RANK_SCHEMA: dict[str, Any] = {"$ref": "FeedRank"}
SUIT_SCHEMA: dict[str, Any] = {"$ref": "FeedSuit"}
STRENGTH_SCHEMA: dict[str, Any] = {"$ref": "FeedStrength"}
TABLE_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 1}
"""A tournament table's number: from 1, as the API counts them."""


def _of_type(t: mi.Type) -> dict[str, Any]:
    """The JSON a plain value of type ``t`` is served as (history_items._plain)."""
    if isinstance(t, mi.NoneType):
        return {"type": "null"}
    if isinstance(t, mi.BoolType):
        return {"type": "boolean"}
    if isinstance(t, mi.EnumType):
        return {"enum": [m.value for m in t.cls]}
    if isinstance(t, mi.IntType):
        return {"type": "integer"}
    if isinstance(t, mi.FloatType):
        return {"type": "number"}
    if isinstance(t, mi.StrType):
        return {"type": "string"}
    if isinstance(t, mi.UUIDType):
        return {"type": "string", "format": "uuid"}
    if isinstance(t, mi.DateTimeType):
        return {"type": "string", "format": "date-time"}
    if isinstance(t, mi.LiteralType):
        return {"enum": list(t.values)}
    if isinstance(t, mi.UnionType):
        return {"anyOf": [_of_type(u) for u in t.types]}
    if isinstance(t, mi.TupleType):
        items = [_of_type(u) for u in t.item_types]
        n = len(items)
        return {"type": "array", "prefixItems": items, "minItems": n, "maxItems": n}
    if isinstance(t, mi.VarTupleType | mi.ListType | mi.SetType | mi.FrozenSetType):
        return {"type": "array", "items": _of_type(t.item_type)}
    if isinstance(t, mi.DictType):
        return {"type": "object", "additionalProperties": _of_type(t.value_type)}
    if isinstance(t, mi.DataclassType | mi.StructType):
        return _object(t.cls, t.fields, required=True)
    return {}  # Any: whatever it holds


def _field(owner: type[Any], name: str, t: mi.Type) -> dict[str, Any]:
    """Field ``name`` of ``owner`` as served: its wire form, else its plain type."""
    form = wire_form(owner, name)
    nullable = isinstance(t, mi.UnionType) and any(isinstance(u, mi.NoneType) for u in t.types)
    shape: dict[str, Any]
    if form == CARDS:
        shape = {"type": "array", "items": CARD_SCHEMA}
    elif form == CARD:
        shape = CARD_SCHEMA
    elif form == SUIT:
        shape = SUIT_SCHEMA
    elif form == RANK:
        shape = RANK_SCHEMA
    elif form == RANKS_:
        shape = {"type": "array", "items": RANK_SCHEMA}
    elif form == STRENGTH:
        shape = STRENGTH_SCHEMA
    elif form == RULES:
        shape = {"type": "object", "additionalProperties": True}
    elif form == TABLE:
        shape = TABLE_SCHEMA
    elif form == TABLES:
        shape = {"type": "array", "items": TABLE_SCHEMA}
    elif form == TIMERS:
        shape = {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z][A-Za-z0-9]*$"},
            "additionalProperties": {"type": "integer"},
        }
    else:
        return _of_type(t)
    return {"anyOf": [shape, {"type": "null"}]} if nullable else dict(shape)


def _object(
    owner: type[Any],
    fields: tuple[mi.Field, ...],
    *,
    required: bool,
    optional: frozenset[str] = frozenset(),
    event: bool = False,
) -> dict[str, Any]:
    """The object of ``owner``'s ``fields``, each described by the docstring under it in
    ``owner``'s source (an ``event``'s field without one is named for what it is; a value
    class's must have one: a test walks the schemas)."""
    docs: dict[str, str] = {}
    for klass in reversed(owner.__mro__):
        docs.update(_field_docstrings(klass))
    props: dict[str, Any] = {}
    for f in fields:
        if f.name in _IDENTITY:
            continue
        prop = _field(owner, f.name, f.type)
        text = docs.get(f.name)
        if text is None and event:
            text = f"The event's `{camel(f.name)}` (docs/events.md)"
        if text is not None:
            prop = {**prop, "description": text}
        props[camel(f.name)] = prop
    needed = [
        camel(f.name)
        for f in fields
        if f.name not in _IDENTITY and f.name not in optional and required and f.required
    ]
    return {
        "type": "object",
        "properties": props,
        "required": needed,
        "additionalProperties": False,
    }


def data_schema(cls: type[Any], *, strict: bool = True) -> dict[str, Any]:
    """The JSON Schema of a feed item's ``data`` for event class ``cls`` (not withheld);
    without ``strict`` (the API documents) every field is optional and more are allowed —
    a withheld item's empty ``data`` fits it, and client generators read it (the strict
    contract is the published one, ``GET /v1/events/schema``)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.DataclassType), cls
    secret = frozenset(getattr(cls, "SECRET_FIELDS", ())) | frozenset(
        getattr(cls, "SHOWN_TO_NOBODY", ())
    )
    shape = _object(cls, info.fields, required=strict, optional=secret, event=True)
    if not strict:
        del shape["additionalProperties"]
    return shape


_STREAM: dict[str, Any] = {
    "type": "object",
    "description": "The stream (aggregate) an event belongs to",
    "properties": {
        "kind": {
            "enum": ["match", "round", "tournament", "other"],
            "description": "The kind of stream (`other`: the operator's only)",
        },
        "id": {"type": "string", "format": "uuid", "description": "The aggregate's id"},
        "matchId": {
            "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}],
            "description": "A round's match",
        },
        "round": {
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
            "description": "A round's number in its match",
        },
    },
    "required": ["kind", "id", "matchId", "round"],
    "additionalProperties": False,
}
EXAMPLE_ITEM: dict[str, Any] = {
    "position": 1234,
    "stream": {
        "kind": "round",
        "id": "5f0c8a52-2f7e-5d4b-9a7e-3c2d1b0a9f8e",
        "matchId": "0b5c3a6e-8d5f-4f39-9a41-2f1c6f0e7d21",
        "round": 1,
    },
    "version": 12,
    "type": "CardPlayed",
    "classVersion": 1,
    "time": "2026-12-01T20:00:00+00:00",
    "data": {"seat": 2, "cards": ["10H"]},
    "hidden": [],
    "withheld": None,
}
"""A feed item as served (the documents' example)."""
_EMPTY: dict[str, Any] = {
    "type": "object",
    "maxProperties": 0,
    "description": "No fields: the item is withheld (R36)",
}


def item_schema(cls: type[Any], *, strict: bool = True) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a whole feed item of event class ``cls`` as served;
    its ``$ref`` name other schemas (``FeedData<Type>``, ``FeedDataWithheld``, ``FeedCard``,
    …) by bare name. ``strict``: also tie ``data`` to ``withheld`` (``if``/``then``/
    ``else``: the published schema); without it (the API documents) the item says only that
    ``data`` is the type's fields or empty, which client generators can read."""
    data = {"$ref": f"FeedData{cls.__name__}"}
    names = sorted(data_schema(cls)["properties"])
    return {
        "type": "object",
        "title": f"FeedItem{cls.__name__}",
        "description": f"A `{cls.__name__}` event as the feed serves it",
        "properties": {
            "position": {
                "type": "integer",
                "minimum": 1,
                "description": "The event's place in the whole log (gap-free, commit order)",
            },
            "stream": {"$ref": "FeedItemStream", "description": "The stream it belongs to"},
            "version": {
                "type": "integer",
                "minimum": 1,
                "description": "The event's version in its stream",
            },
            "type": {"type": "string", "const": cls.__name__, "description": "The event type"},
            "classVersion": {
                "type": "integer",
                "minimum": 1,
                "maximum": getattr(cls, "class_version", 1),
                "description": "The event class's version (served: the current one; an item "
                "kept from before a version was added has an earlier one)",
            },
            "time": {
                "type": "string",
                "format": "date-time",
                "description": "When it happened (ISO 8601, UTC)",
            },
            "data": {
                **(
                    {"anyOf": [data, {"$ref": "FeedDataWithheld"}]}
                    if strict
                    else {"$ref": data["$ref"]}
                ),
                "description": "The event's fields as served; empty when `withheld` (R36)",
            },
            "hidden": {
                "type": "array",
                "items": {"enum": names} if names else {"type": "string"},
                **({} if names else {"maxItems": 0}),
                "uniqueItems": True,
                "description": "Secret fields left out for this reader (R33, R36)",
            },
            "withheld": {
                "anyOf": [{"type": "null"}, {"type": "string"}],
                "description": "Why the whole payload is withheld (R36)",
            },
        },
        "required": [
            "position",
            "stream",
            "version",
            "type",
            "classVersion",
            "time",
            "data",
            "hidden",
        ],
        "additionalProperties": False,
        **(
            {
                "if": {"properties": {"withheld": {"type": "null"}}},
                "then": {"properties": {"data": data}},
                "else": {"properties": {"data": {"$ref": "FeedDataWithheld"}}},
            }
            if strict
            else {}
        ),
    }


def _resolve(schema: Any, template: str) -> Any:
    """``schema`` with every bare-name ``$ref`` written with ``template``."""
    if isinstance(schema, dict):
        return {
            k: template.format(name=v) if k == "$ref" else _resolve(v, template)
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_resolve(v, template) for v in schema]
    return schema


def feed_classes() -> list[type[Any]]:
    """The event classes the feed may serve (the game's store's)."""
    return [cls for stream, cls in EVENT_CLASSES if stream in FEED_STREAMS]


@cache
def feed_item_schemas() -> dict[str, dict[str, Any]]:
    """Event type → the self-contained JSON Schema (2020-12) of its feed items, for every
    type the feed serves (the shared shapes in its ``$defs``)."""
    out: dict[str, dict[str, Any]] = {}
    for cls in feed_classes():
        name = cls.__name__
        defs = {
            **SHARED,
            "FeedItemStream": _STREAM,
            "FeedDataWithheld": _EMPTY,
            f"FeedData{name}": data_schema(cls),
        }
        out[name] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **_resolve(item_schema(cls), "#/$defs/{name}"),
            "$defs": _resolve(defs, "#/$defs/{name}"),
        }
    return out


def _described(cls: type[Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` of event class ``cls``'s data described from the class's docstring (its
    fields are, by :func:`_object`, from the docstrings under them in its source: the
    domain imports no msgspec, so its events cannot carry ``Meta``)."""
    own = cls.__doc__ if "__doc__" in vars(cls) else None
    schema["description"] = _clean(own) if own else f"The fields of a `{cls.__name__}`"
    return schema


def _clean(text: str) -> str:
    """A docstring as prose: reST roles and literals made plain, on one line."""
    text = re.sub(
        r":(?:class|func|meth|mod|data|attr):`~?([^`]+)`", r"`\1`", inspect.cleandoc(text)
    )
    return re.sub(r"\s*\n\s*", " ", text.replace("``", "`"))


@cache
def _field_docstrings(cls: type[Any]) -> dict[str, str]:
    """The docstrings under ``cls``'s own annotated fields, by field name."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    return {
        this.target.id: _clean(after.value.value)
        for this, after in itertools.pairwise(body)
        if isinstance(this, ast.AnnAssign)
        and isinstance(this.target, ast.Name)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }


def feed_item_components(ref_template: str) -> dict[str, dict[str, Any]]:
    """Component schemas for an API document: ``FeedItem`` as a ``oneOf`` of one
    ``FeedItem<Type>`` per event type, with a discriminator on ``type``, those types, their
    ``FeedData<Type>`` and the shapes they share. ``ref_template``: how the document
    refers to a component (``{name}`` in it)."""
    classes = feed_classes()
    refs = {cls.__name__: ref_template.format(name=f"FeedItem{cls.__name__}") for cls in classes}
    union = {
        "title": "FeedItem",
        "description": "One event of the log, redacted for its reader (R33, R36): one "
        "schema per event `type` (`GET /v1/events/schema`, `feed`).",
        "oneOf": [{"$ref": ref} for ref in refs.values()],
        "examples": [EXAMPLE_ITEM],
        "discriminator": {"propertyName": "type", "mapping": refs},
    }
    parts: dict[str, Any] = {**SHARED, "FeedItemStream": _STREAM}
    for cls in classes:
        parts[f"FeedItem{cls.__name__}"] = item_schema(cls, strict=False)
        parts[f"FeedData{cls.__name__}"] = _described(cls, data_schema(cls, strict=False))
    resolved: dict[str, dict[str, Any]] = _resolve(parts, ref_template)
    return {"FeedItem": union, **resolved}


class PublishedSchemas(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The feed items' schemas as served (``feed``), and the stored events' (``events``)."""

    feed: Annotated[
        dict[str, dict[str, Any]],
        Meta(
            description=(
                "Event type → the JSON Schema (2020-12) of a feed item of "
                "that type as `GET /v1/events` and `/v1/events/stream` "
                "serve it: `data` in camelCase, cards and ranks as the "
                "API writes them, secret fields absent (named in "
                "`hidden`). The contract of a feed reader."
            )
        ),
    ]
    events: Annotated[
        list[EventType],
        Meta(
            description=(
                "The events *as stored* (snake_case, integer cards and "
                "ranks, every version the store may hold): the contract "
                "of the store's upcasters and of a rebuild, not of the "
                "feed."
            )
        ),
    ]


@cache
def published_schemas() -> PublishedSchemas:
    """What ``GET /v1/events/schema`` serves."""
    return PublishedSchemas(feed=feed_item_schemas(), events=event_schemas().events)


__all__ = [
    "FEED_STREAMS",
    "PublishedSchemas",
    "data_schema",
    "feed_item_components",
    "feed_item_schemas",
    "item_schema",
    "published_schemas",
]
