"""Typed errors of the rules engine.

Two families, after python-chess: *invalid* input (cannot be parsed or is not even a
well-formed request, e.g. the token ``11H``) and *illegal* moves (well-formed, but the
rules forbid them, e.g. not following suit, R23). Every error carries a stable ``code``
(which becomes the problem ``type`` at the API) and, for rule violations, the rule number
it enforces (the rule book, docs/rules/en.md).
"""

from __future__ import annotations


class ShengjiError(Exception):
    """Base of every error the domain raises on purpose."""

    code: str = "shengji-error"
    rule: str | None = None

    def __init__(self, detail: str, *, rule: str | None = None, code: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if rule is not None:
            self.rule = rule
        if code is not None:
            self.code = code


class InvalidInputError(ShengjiError, ValueError):
    """Input that cannot be understood at all (bad notation, impossible values)."""

    code = "invalid-input"


class InvalidCardError(InvalidInputError):
    """A card token that is not in RULES R4 notation."""

    code = "invalid-card"
    rule = "R4"

    def __init__(self, token: str) -> None:
        super().__init__(
            f"{token!r} is not a card in R4 notation (rank then suit, e.g. 10H, AS; jokers SJ, BJ)"
        )
        self.token = token


class InvalidRuleSetError(InvalidInputError):
    """An unknown preset or an impossible rule-set value (RULES §10)."""

    code = "invalid-rule-set"
    rule = "§10"


class IllegalMoveError(ShengjiError):
    """A well-formed action the rules forbid; ``rule`` names the R-number."""

    code = "illegal-move"
