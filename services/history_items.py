"""One event of a match as a history item (RULES R4, R33): its fields in camelCase, cards in
R4 notation, ranks and suits as letters, and its secret fields left out unless the viewer
may see them (which ones, :mod:`services.history` decides)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any
from uuid import UUID

import msgspec
from eventsourcing.domain import Aggregate
from msgspec import Meta

from domain.rules.cards import RANKS, SUITS, card_name, card_names
from domain.rules.shows import Strength
from services import field_docs
from services.views import id_text

_IDENTITY = frozenset({"originator_id", "originator_version", "originator_topic", "timestamp"})
_CARD_LISTS = frozenset({"cards", "attempted", "forced", "bottom_cards"})


class HistoryItem(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """One event of a match, redacted for its viewer (R33)."""

    version: Annotated[
        int,
        Meta(description="The event's position in the match: the match version right after it."),
    ]
    aggregate: Annotated[str, Meta(description="`match` or `round`.")]
    round: Annotated[int | None, Meta(description="The round's number for a round's event.")]
    aggregate_id: Annotated[
        str, Meta(description="The id of the aggregate that recorded the event")
    ]
    aggregate_version: Annotated[int, Meta(description="The event's version in its aggregate")]
    type: Annotated[
        str, Meta(description="The event class name (`CardPlayed`, `RoundRecorded`, …).")
    ]
    timestamp: Annotated[
        str,
        Meta(description="When the event happened, ISO 8601", examples=[field_docs.EXAMPLE_TIME]),
    ]
    data: Annotated[
        dict[str, Any],
        Meta(
            description=(
                'The event\'s fields in camelCase: cards in R4 notation, ranks `"2"`..`"A"`.'
            )
        ),
    ]
    hidden: Annotated[
        list[str], Meta(description="Secret fields left out for this viewer (camelCase).")
    ]


def history_item(
    position: int,
    number: int,
    event: Aggregate.Event,
    visible: frozenset[str],
    withheld: tuple[str, ...] = (),
) -> HistoryItem:
    """``event`` without its secret fields ``viewer`` may not see, nor ``withheld``."""
    secret = (*getattr(type(event), "SECRET_FIELDS", ()), *withheld)
    data: dict[str, Any] = {}
    hidden: list[str] = []
    for name, value in vars(event).items():
        if name in _IDENTITY:
            continue
        if name in secret and name not in visible:
            hidden.append(_camel(name))
            continue
        data[_camel(name)] = _plain(type(event), name, value)
    return HistoryItem(
        version=position,
        aggregate="round" if number else "match",
        round=number or None,
        aggregate_id=id_text(event.originator_id),
        aggregate_version=event.originator_version,
        type=type(event).__name__,
        timestamp=event.timestamp.isoformat(),
        data=data,
        hidden=hidden,
    )


@lru_cache(maxsize=1024)
def _camel(name: str) -> str:
    """A field's name in camelCase (kept: the events' fields are few, and every live
    frame names them, docs/decisions.md D-fan)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


camel = _camel
"""A field's name on the wire."""

CARDS, CARD, SUIT, RANK, RANKS_, STRENGTH, RULES, TABLE, TABLES, TIMERS, PLAIN = (
    "cards",
    "card",
    "suit",
    "rank",
    "ranks",
    "strength",
    "rules",
    "table",
    "tables",
    "timers",
    "plain",
)
_FORMS: dict[str, str] = {
    **dict.fromkeys(_CARD_LISTS, CARDS),
    "fallback_card": CARD,
    "trump": SUIT,
    "level": RANK,
    "start_level": RANK,
    "levels": RANKS_,
    "strength": STRENGTH,
    "rules": RULES,
    "table": TABLE,
    "timers": TIMERS,
}


def wire_form(owner: type[Any] | None, name: str) -> str:
    """How field ``name`` of ``owner`` is written on the wire: cards in R4 notation,
    ranks and suits as letters, a strength by name — or as it is (``plain``). A class
    lists in ``COUNT_FIELDS`` the fields that are counts although their name says rank
    (a tournament result's ``levels``: levels gained, R30), and in ``TABLE_FIELDS`` the
    ones that are table numbers. A tournament's table numbers are served from 1, as the
    API counts them (stored from 0: the served form maps them, the events stay as they
    are); turn timers' names in camelCase, as every served field (docs/events.md,
    docs/decisions.md D-doors). :func:`history_item` and the feed's schemas
    (:mod:`services.feed_schema`) both read this one table."""
    if name in getattr(owner, "COUNT_FIELDS", ()):
        return PLAIN
    if name in getattr(owner, "TABLE_FIELDS", ()):
        return TABLES
    return _FORMS.get(name, PLAIN)


def _plain(owner: type[Any] | None, name: str, value: Any) -> Any:
    """A JSON-friendly value: cards in R4 notation, ranks and suits as letters."""
    if value is None:
        return None
    form = wire_form(owner, name)
    if form == CARDS:
        return card_names(value)
    if form == CARD:
        return card_name(value)
    if form == SUIT:
        return SUITS[value]
    if form == RANK:
        return RANKS[value]
    if form == RANKS_:
        return [RANKS[v] for v in value]
    if form == STRENGTH:
        return Strength(value).name.lower()
    if form in (RULES, TIMERS) and isinstance(value, dict):
        return {_camel(str(k)): v for k, v in value.items()}
    if form == TABLE:
        return value + 1
    if form == TABLES:
        return [t + 1 for t in value]
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if is_dataclass(value) and not isinstance(value, type):
        # a tournament's teams, tables and results (the feed, docs/events.md)
        kind = type(value)
        return {_camel(f.name): _plain(kind, f.name, getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(None, "", v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(None, "", v) for k, v in value.items()}
    return value
