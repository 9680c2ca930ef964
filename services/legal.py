"""What the service would accept from a seat right now: the legal-action hints of a view.

:func:`legal_actions` answers for one seat of a round at ``now``, from the same domain
checks the commands run (so an offered action is accepted, tests/services/test_views_legal.py):
the shows it may declare (R17, R18) or overcall with (R20), passing, the cards to bury
from (R21, and 炒底 re-burying, R20), what a lead may be (R22) and a few legal follows
(R23), and the weak-hand redeal (暴动, §10). Cards are in R4 notation, sorted by the
round's trump order (R7–R10).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import datetime
from itertools import islice
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from domain.game.match import Match
from domain.game.round import BOTTOM, DRAWS, Round, RoundPhase
from domain.rules.bidding import Phase
from domain.rules.cards import Card, card_names
from domain.rules.context import TrumpContext, trump_context
from domain.rules.errors import IllegalMoveError
from domain.rules.follow import legal_plays
from domain.rules.leads import lead_options
from domain.rules.play import TrickPlay

FOLLOW_HINTS = 5
"""How many legal follows (R23) a seat is offered as hints; the generator can be huge."""

LEAD_NOTE = (
    "lead any single, pair, tractor (拖拉机) or throw (甩牌) of one suit category (R12-R15, R22)"
)


Action = Literal["declare", "overcall", "pass", "bury", "play", "redeal"]
"""A round command (:data:`services.commands.ACTIONS`)."""


class LeadChoices(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """Every single, pair and tractor the leader may lead (R12–R14, R22), each a list of
    cards low to high; a throw (R15) is any several of them of one suit category, tested
    against the other hands only when played (R22; a dry run judges its shape alone)."""

    singles: Annotated[
        list[list[str]], Meta(description="Each kind of card held, once (R12).")
    ] = []
    pairs: Annotated[list[list[str]], Meta(description="Each pair held (R13).")] = []
    tractors: Annotated[
        list[list[str]],
        Meta(
            description=(
                "Every tractor held (R14), shortest first; the tractors inside a longer one too."
            )
        ),
    ] = []


class LegalActions(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """What the service accepts from this seat right now (validated by the domain)."""

    actions: Annotated[
        list[Action],
        Meta(description="Action names of `services.game.ACTIONS` this seat may send now."),
    ] = []
    shows: Annotated[
        list[list[str]],
        Meta(
            description=(
                "declare / overcall: every show this seat can make (R17, R20), weakest first."
            )
        ),
    ] = []
    bury_from: Annotated[
        list[str],
        Meta(description="bury: choose `bury_count` of these cards (hand + bottom, R21)."),
    ] = []
    bury_count: Annotated[int, Meta(description="How many cards to bury (8, R21)")] = 0
    lead: Annotated[
        str | None,
        Meta(description="play, leading: what a lead may be (R22), in words; `leads` lists them."),
    ] = None
    leads: Annotated[
        LeadChoices | None,
        Meta(
            description=(
                "play, leading: every single, pair and tractor this seat may lead (R12–R14, R22)."
            )
        ),
    ] = None
    follows: Annotated[
        list[list[str]],
        Meta(description="play, following: some legal plays (R23), at most `FOLLOW_HINTS`."),
    ] = []
    follow_count: Annotated[
        int, Meta(description="How many cards a follow has (as many as the lead, R23)")
    ] = 0
    more_follows: Annotated[
        bool, Meta(description="More legal follows exist than `follows` lists")
    ] = False


NO_ACTIONS = LegalActions()


def round_context(round_: Round | None) -> TrumpContext:
    """The trump order to sort by (R7–R10); no-trump order until trump is known."""
    if round_ is None:
        return trump_context(0, None)
    bidding = round_.bidding
    return trump_context(bidding.level, bidding.trump if bidding.trump_known else None)


_NAME_ORDER: dict[TrumpContext, tuple[int, ...]] = {}
"""Per trump context (cached, one per level and trump: at most 65): each card's sort key,
``(rank_key, card)`` packed in one int, so sorting needs no Python-level key function."""


def _name_order(ctx: TrumpContext) -> tuple[int, ...]:
    order = _NAME_ORDER.get(ctx)
    if order is None:
        order = _NAME_ORDER[ctx] = tuple(k * 64 + c for c, k in enumerate(ctx.rank_key))
    return order


def sorted_names(cards: Iterable[Card], ctx: TrumpContext) -> list[str]:
    """Cards in R4 notation, by trump order (suits S H C D low to high, then trump)."""
    return card_names(sorted(cards, key=_name_order(ctx).__getitem__))


def claimed(round_: Round, now: datetime) -> Round:
    """``round_`` as the next command would find it: a passed deadline (the end of the
    drawing R16/R17, the overcall window R20) claimed, on a copy (nothing is saved)."""
    if not round_.deadline_due(now):
        return round_  # nothing to claim: no copy
    r = copy.deepcopy(round_)
    r.claim_deadlines(now)
    return r


def legal_actions(
    match: Match, round_: Round | None, seat: int, now: datetime, ctx: TrumpContext
) -> LegalActions:
    """What the service would accept from ``seat`` now: computed on a copy of the round
    with any passed deadline claimed, as the next command would claim it (R16, R20)."""
    if round_ is None or round_.dealt is None or match.finished:
        return NO_ACTIONS
    r = claimed(round_, now)
    phase = r.phase
    actions: list[Action] = []
    shows: list[list[str]] = []
    if phase in (RoundPhase.DEALING, RoundPhase.DECLARING, RoundPhase.OVERCALLING):
        hand = r.hand_at(seat, now)
        found = r.bidding.legal_shows(seat, hand)
        shows = [card_names(s.cards) for s in found]
        if found:
            actions.append("overcall" if phase is RoundPhase.OVERCALLING else "declare")
        if phase is RoundPhase.DEALING:
            if r.drawn_at(now) >= DRAWS and seat not in r.deal_passes:
                actions.append("pass")
        elif r.bidding.to_speak == seat:
            actions.append("pass")
    if may_ask_redeal(r, seat):
        actions.append("redeal")
    if phase is RoundPhase.BURYING and r.bidding.burier == seat:
        full = [*r.hands[seat], *r.bottom]
        return LegalActions(
            actions=["bury", *actions], bury_from=sorted_names(full, ctx), bury_count=BOTTOM
        )
    play = r.play
    if phase is RoundPhase.PLAYING and play is not None and play.to_play == seat:
        if not play.trick:
            return LegalActions(actions=["play"], lead=LEAD_NOTE, leads=lead_choices(play, seat))
        lead = play.lead_shape
        assert lead is not None
        found_plays = list(islice(legal_plays(play.ctx, lead, play.hands[seat]), FOLLOW_HINTS + 1))
        return LegalActions(
            actions=["play"],
            follows=[sorted_names(p, ctx) for p in found_plays[:FOLLOW_HINTS]],
            follow_count=lead.size,
            more_follows=len(found_plays) > FOLLOW_HINTS,
        )
    if not (actions or shows):
        return NO_ACTIONS  # nothing offered: one value shared, no lists of its own (D-fan)
    return LegalActions(actions=actions, shows=shows)


def lead_choices(play: TrickPlay, seat: int) -> LeadChoices:
    """R12–R14: the singles, pairs and tractors in ``seat``'s hand, in trump order."""
    found = lead_options(play.ctx, play.hands[seat])
    return LeadChoices(
        singles=[card_names(c) for c in found.singles],
        pairs=[card_names(c) for c in found.pairs],
        tractors=[card_names(c) for c in found.tractors],
    )


def may_ask_redeal(round_: Round, seat: int) -> bool:
    """§10 暴动: after the deal, before the first bury, a hand under N points."""
    if round_.rules.weak_hand_redeal is None or round_.bidding.phase is Phase.DEALING:
        return False
    if round_.phase not in (RoundPhase.DECLARING, RoundPhase.OVERCALLING, RoundPhase.BURYING):
        return False
    try:
        round_.bidding.check_weak_hand_redeal(seat, round_.dealt_hand(seat))
    except IllegalMoveError:
        return False
    return True
