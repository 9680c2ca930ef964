"""Tiny helpers that keep the rule tables readable: cards in R4 notation, contexts by name."""

from __future__ import annotations

from domain.rules.cards import Card, parse_cards, parse_rank, parse_suit
from domain.rules.context import TrumpContext, trump_context


def cards(text: str) -> list[Card]:
    """``cards("5C 5C 7C 7C")`` → the kinds, in order (R4 notation)."""
    return parse_cards(text)


def ctx(level: str, trump: str | None) -> TrumpContext:
    """``ctx("6", "C")``: level rank 6, trump clubs; ``"NT"`` or None for no-trump (R9)."""
    return trump_context(parse_rank(level), parse_suit(trump))
