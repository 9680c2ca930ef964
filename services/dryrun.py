"""A round command checked without acting: the dry run's answer (docs/decisions.md
D-dry-run).

The dry run is the command pipeline with ``dry=True`` (:mod:`services.pipeline`,
:meth:`services.game.GameService.try_command`): the same preconditions, a passed deadline
claimed and a void deal dealt again on the copies, the same command run — and nothing
saved. It judges only what the acting seat can know: its own hand and the public table
(R33). So a **throw** (甩牌, R22) is judged by its shape — its cards in the hand, of one
suit category, several components — and is never tested against the other hands: that
test happens only when the throw is played, in front of the table, at the cost of the
penalty (§10) if it fails. The answer is the same whatever the other seats hold.

:func:`judgement` reads the answer off the command's pending events: the cards a play
would play, and for a throw what it is and what failing would cost.
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

import msgspec
from msgspec import Meta

from domain.game.round import Round
from domain.game.round_events import CardPlayed
from domain.rules.cards import card_names
from domain.rules.scoring import throw_penalty
from domain.rules.shapes import ShapeKind, decompose
from services import field_docs
from services.legal import Action


class ThrowCheck(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """R22: the cards form a legal throw from this hand. Whether another hand can beat one
    of its components is tested only when it is played, in front of the table; then the
    lowest such component is played instead and the penalty applies. A dry run never
    tests it: the other hands are hidden (R33)."""

    cards: Annotated[
        list[str], Meta(description="The throw as sent.", examples=[field_docs.EXAMPLE_CARDS])
    ]
    components: Annotated[
        int,
        Meta(
            description=(
                "How many components it is made of (singles, pairs, tractors; R15): each must hold."
            )
        ),
    ]
    penalty: Annotated[
        int,
        Meta(
            description=(
                "The §10 `throw_penalty_points` adjustment of the "
                "attackers' total it would cost if it fails (added when a "
                "defender throws, subtracted when an attacker does; 0 "
                "under the standard rules)."
            )
        ),
    ]
    tested: Annotated[
        Literal["when-played"],
        Meta(
            description="When the throw is tested against the other hands: only when played (R22)."
        ),
    ] = "when-played"


class DryRun(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="dryRun"
):
    """The command is legal now as far as the acting seat can tell; nothing was saved
    (the match stays at ``version``)."""

    legal: Annotated[
        bool,
        Meta(
            description=(
                "Always true in a 200 answer: an illegal command answers its problem instead."
            )
        ),
    ] = True
    version: Annotated[int, Meta(description="The match's version, unchanged by the dry run.")]
    seat: Annotated[int, Meta(description="The acting seat (the bearer token's).")]
    action: Annotated[Action, Meta(description="The command checked.")]
    played: Annotated[
        list[str] | None,
        Meta(
            description="play: the cards that would be played (a throw's cards if it holds, R22).",
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ] = None
    throw: Annotated[
        ThrowCheck | None,
        Meta(
            description=(
                "play: set when the cards are a throw (R22): tested "
                "against the other hands only when played."
            )
        ),
    ] = None


def judgement(version: int, seat: int, action: str, round_: Round) -> DryRun:
    """The dry run's answer from ``round_`` with the command's events pending."""
    played: list[str] | None = None
    throw: ThrowCheck | None = None
    for event in round_.collect_events():
        if not isinstance(event, CardPlayed):
            continue
        played = card_names(event.cards)
        play = round_.play
        if play is None or len(play.trick) != 1:  # not a lead: a follow is no throw
            continue
        shape = decompose(play.ctx, event.cards)
        if shape.kind is ShapeKind.THROW:
            defender = event.seat % 2 != play.attackers
            throw = ThrowCheck(
                cards=played,
                components=len(shape.components),
                penalty=throw_penalty(round_.rules, len(event.cards), defender),
            )
    return DryRun(
        version=version,
        seat=seat,
        action=cast("Action", action),
        played=played,
        throw=throw,
    )
