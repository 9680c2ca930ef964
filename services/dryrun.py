"""A round command checked without acting (the action route's dry run): the same checks a
real command makes, on copies, and nothing saved (RULES R17–R25, R34).

:func:`dry_run` answers what the command would do — the cards it would play, and for a
throw that would fail (R22) the attempted cards, the forced component played instead and
the penalty (§10) — or raises exactly the error the real command would raise (the same
problem+json). A deadline that has passed is claimed on the copy, as the real command
would claim it first (R16, R20); the store is not touched.
"""

from __future__ import annotations

import copy
from typing import cast
from uuid import UUID

import msgspec

from domain.game.round_events import CardPlayed, ThrowFailed
from domain.rules.cards import card_names
from domain.rules.errors import IllegalMoveError
from services.commands import Authorize, dispatch
from services.errors import PreconditionFailedError
from services.game import GameService
from services.legal import Action


class ThrowCheck(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """R22: the throw could be beaten; a real play would play ``forced`` instead."""

    attempted: list[str]
    """The throw as sent (shown to the table when played, R22)."""
    forced: list[str]
    """The failing component that is lowest: what would be played instead (R22)."""
    penalty: int
    """The §10 ``throw_penalty_points`` it would cost (0 under the standard rules)."""


class DryRun(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="dryRun"
):
    """The command is legal now; nothing was saved (the match stays at ``version``)."""

    legal: bool = True
    """Always true in a 200 answer: an illegal command answers its problem instead."""
    version: int
    """The match's version, unchanged by the dry run."""
    seat: int
    """The acting seat (the bearer token's)."""
    action: Action
    """The command checked."""
    played: list[str] | None = None
    """play: the cards that would be played (the forced component when a throw fails)."""
    failed_throw: ThrowCheck | None = None
    """play: set when the cards are a throw that would fail (R22)."""


def dry_run(service: GameService, match_id: UUID, action: str, authorize: Authorize) -> DryRun:
    """Check ``action`` as :meth:`GameService.act` would, on copies; save nothing."""
    match = service.get_match(match_id)
    seat, expected_version, cards = authorize(match)
    if match.finished:
        raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
    round_ = service.current_round(match)
    if round_ is None:
        raise IllegalMoveError(
            "the match has no round in play yet: four seats are needed",
            rule="R1",
            code="no-round",
        )
    version = match.sequence(round_.version)
    if expected_version is not None and expected_version != version:
        raise PreconditionFailedError(f"the match is at version {version}, not {expected_version}")
    r = copy.deepcopy(round_)  # the loads are copies already; this one is never saved
    now = service.clock()
    if r.dealt is not None:
        r.claim_deadlines(now)
    dispatch(r, seat, action, cards, now)
    played: list[str] | None = None
    failed: ThrowCheck | None = None
    for event in r.collect_events():
        if isinstance(event, ThrowFailed):
            failed = ThrowCheck(
                attempted=card_names(event.attempted),
                forced=card_names(event.forced),
                penalty=event.penalty,
            )
        elif isinstance(event, CardPlayed):
            played = card_names(event.cards)
    return DryRun(
        version=version,
        seat=seat,
        action=cast("Action", action),
        played=played,
        failed_throw=failed,
    )
