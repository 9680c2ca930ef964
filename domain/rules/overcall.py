"""Whether one show may replace the standing one in the overcall window (RULES R17, R20, §10).

Pure judgement of two shows; the turn order and the phases live in
:class:`domain.rules.bidding.Bidding`. Reasoning in docs/bidding.md.
"""

from __future__ import annotations

from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import RuleSet
from domain.rules.shows import Show, Strength


def beats(show: Show, standing: Show) -> bool:
    """R20: strictly stronger (single < level pair < SJ SJ < BJ BJ); suits never matter."""
    return show.strength > standing.strength


def is_self_reinforcement(show: Show, standing: Show) -> bool:
    """§10 ``self_overcall``: the declarer turns a single into a level pair of the same suit
    (自保) or of another suit (自反). Nothing else counts: a pair stays locked (R17)."""
    return (
        show.seat == standing.seat
        and standing.strength is Strength.SINGLE
        and show.strength is Strength.LEVEL_PAIR
    )


def check_overcall_show(
    show: Show, standing: Show, rules: RuleSet, *, anyone_overcalled: bool
) -> None:
    """Raise IllegalMoveError unless ``show`` may overcall ``standing`` (R20).

    ``anyone_overcalled``: whether any overcall has been made since the first declaration.
    Codes: ``self-overcall-not-allowed`` (the current declarer overcalling themself, except
    自保/自反 under ``self_overcall``) and ``declaration-too-weak``.
    """
    if show.seat == standing.seat:
        if not rules.self_overcall:
            why = (
                "nobody overcalls their own standing declaration"
                if anyone_overcalled
                else "the declarer may overcall only after someone else has overcalled"
            )
            raise IllegalMoveError(
                f"seat {show.seat} already stands with {standing}: {why} (R20)",
                rule="R20",
                code="self-overcall-not-allowed",
            )
        if not is_self_reinforcement(show, standing):
            raise IllegalMoveError(
                f"seat {show.seat} stands with {standing}: the declarer may only turn a "
                f"single into a level pair, of the same suit (自保) or another (自反) "
                f"(R20, self_overcall)",
                rule="R20",
                code="self-overcall-not-allowed",
            )
        return
    if not beats(show, standing):
        lock = ""
        if standing.strength is Strength.LEVEL_PAIR:
            lock = " — it is locked (定主, R17): only a joker pair beats it"
        raise IllegalMoveError(
            f"{show} does not beat the standing {standing}{lock}; an overcall must be "
            f"strictly stronger: single < level pair < SJ SJ < BJ BJ (R20)",
            rule="R20",
            code="declaration-too-weak",
        )
