"""Public summaries of matches and their rounds (nothing secret: R33).

:func:`list_item` is a match as ``GET /v1/matches`` lists it (the list is read from the
read models, :mod:`services.readmodels.lists`); :func:`match_summary` is one match —
rules (§10), seats, team levels (R5), dealer (R31), the current round, the results
(R29–R32) and whether and who won (R32);
:func:`round_summaries` lists the rounds with their recorded results.

A tournament table's results are withheld until its tournament round completes (R36,
:mod:`services.embargo`): its summary then names its rounds and their status, and leaves
out what tells how its deals went — the results, the levels and laps, the dealers (R31:
who deals next says who won the deal) and the winner — with ``embargo`` saying why.
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

import msgspec
from msgspec import Meta

from domain.game.match import Match
from domain.game.round import Round
from domain.rules.cards import RANKS
from services import field_docs
from services.embargo import Embargo
from services.view_types import (
    OriginView,
    RecordedView,
    RulesView,
    SeatKind,
    SeatPlayer,
    origin_view,
    recorded_view,
    rules_view,
)

Origin = Literal["played", "imported"]


class RoundSummary(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One round: ``playing``, ``scored`` (with its result) or ``abandoned`` (the match
    was finished while it was played, R32)."""

    number: Annotated[int, Meta(description="The round's number")]
    round_id: Annotated[
        str, Meta(description="The round's id (a UUID)", examples=[field_docs.EXAMPLE_ID])
    ]
    status: Annotated[
        Literal["playing", "scored", "abandoned"],
        Meta(description="playing, scored or abandoned (the match ended during it, R32)"),
    ]
    dealer: Annotated[
        int | None,
        Meta(
            description=(
                "The round's dealer; null before round 1's first declaration, and on a "
                "tournament table until its tournament round completes (`embargo`, R36)"
            )
        ),
    ]
    result: Annotated[
        RecordedView | None,
        Meta(
            description=(
                "The result the match recorded; null until scored, and on a tournament "
                "table until its tournament round completes (R36)"
            )
        ),
    ]


class MatchSummary(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A match as anyone may see it."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    name: Annotated[str, field_docs.NAME]
    preset: Annotated[str | None, field_docs.PRESET]
    created_at: Annotated[str, field_docs.CREATED_AT]
    version: Annotated[
        int,
        Meta(description="The match's version (events of the match and its rounds): the ETag."),
    ]
    rules: Annotated[RulesView, field_docs.RULES]
    seats: Annotated[list[SeatPlayer | None], field_docs.SEATS]
    team_levels: Annotated[
        list[str] | None,
        Meta(
            description=(
                "Levels of team {0,2} and team {1,3} now (R5, R30); null on a tournament "
                "table until its tournament round completes (`embargo`, R36)."
            )
        ),
    ]
    laps: Annotated[
        list[int] | None,
        Meta(
            description=("Times each team has gone past A (R32 wrap); null while `embargo` (R36).")
        ),
    ]
    dealer: Annotated[
        int | None,
        Meta(
            description=(
                "The dealer of the next round (R31); None before round 1 (抢报, R18), and "
                "while `embargo` (R36)."
            )
        ),
    ]
    round_number: Annotated[int, field_docs.ROUND_NUMBER]
    round_open: Annotated[bool, field_docs.ROUND_OPEN]
    finished: Annotated[bool, field_docs.FINISHED]
    winner: Annotated[
        int | None,
        Meta(
            description=(
                "The winning team (0 or 1) once finished; None for a tie (R32), and while "
                "`embargo` (R36)."
            )
        ),
    ]
    rounds: Annotated[list[RoundSummary], field_docs.ROUNDS]
    origin: Annotated[
        OriginView,
        Meta(
            description="`played` here, or `imported` from a record: when, and the record's digest."
        ),
    ]
    visibility: Annotated[
        Literal["public", "private"],
        Meta(description="`private`: never listed; seats by an invite code or the organiser."),
    ]
    rematch_of: Annotated[
        str | None, Meta(description="The finished match this one is the rematch of.")
    ]
    rematch: Annotated[
        str | None,
        Meta(
            description="The rematch asked for after this match (`POST /v1/matches/{id}/rematch`)."
        ),
    ]
    embargo: Annotated[
        str | None,
        Meta(
            description=(
                "Why the results, levels, dealers and winner are withheld: a tournament "
                "table whose tournament round is in play, another table of which may still "
                "be playing the same deals (R36); null otherwise."
            )
        ),
    ] = None


class MatchListItem(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A match in a list."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    name: Annotated[str, field_docs.NAME]
    preset: Annotated[str | None, field_docs.PRESET]
    created_at: Annotated[str, field_docs.CREATED_AT]
    seats_taken: Annotated[int, field_docs.SEATS_TAKEN]
    round_number: Annotated[int, field_docs.ROUND_NUMBER]
    finished: Annotated[bool, Meta(description="The match is over (R32)")]
    origin: Annotated[OriginView, Meta(description="Played here, or an imported record")]


class MatchList(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A page of matches, oldest first."""

    items: Annotated[list[MatchListItem], field_docs.ITEMS]
    next: Annotated[
        int,
        Meta(description="Pass as `after` for the next page (a position in the store's log)."),
    ]
    more: Annotated[bool, field_docs.MORE]


def list_item(match: Match) -> MatchListItem:
    """The match as ``GET /v1/matches`` lists it (:mod:`services.readmodels`)."""
    return MatchListItem(
        match_id=str(match.id),
        name=match.name,
        preset=match.preset,
        created_at=match.created_on.isoformat(),
        seats_taken=sum(s is not None for s in match.seats),
        round_number=match.round_number,
        finished=match.finished,
        origin=origin_view(match),
    )


def match_summary(match: Match, current: Round | None, *, embargo: Embargo | None) -> MatchSummary:
    """``match`` with its current round ``current`` (None before round 1); ``embargo``:
    the tournament embargo on its results (:func:`services.embargo.embargo_of`), None
    when there is none — every caller decides it (R36)."""
    hidden = embargo is not None
    return MatchSummary(
        match_id=str(match.id),
        name=match.name,
        preset=match.preset,
        created_at=match.created_on.isoformat(),
        version=match.sequence(0 if current is None else current.version),
        rules=rules_view(match.rules),
        seats=[
            None
            if info is None
            else SeatPlayer(
                seat=seat,
                name=info.name,
                kind=cast("SeatKind", info.kind),
                left=seat in match.left,
            )
            for seat, info in enumerate(match.seats)
        ],
        team_levels=None if hidden else [RANKS[lv] for lv in match.levels],
        laps=None if hidden else list(match.laps),
        dealer=None if hidden else match.dealer,
        round_number=match.round_number,
        round_open=match.round_open,
        finished=match.finished,
        winner=None if hidden else match.winner,
        rounds=round_summaries(match, current, embargo=embargo),
        origin=origin_view(match),
        visibility="private" if match.private else "public",
        rematch_of=None if match.rematch_of is None else str(match.rematch_of),
        rematch=None if match.rematch is None else str(match.rematch),
        embargo=None if embargo is None else embargo.reason,
    )


def round_summaries(
    match: Match, current: Round | None, *, embargo: Embargo | None
) -> list[RoundSummary]:
    """Every round so far: the recorded ones, then the one being played (if any); under
    a tournament ``embargo`` without their dealers and results (R31, R36)."""
    hidden = embargo is not None
    rounds = [
        RoundSummary(
            number=r.number,
            round_id=str(r.round_id),
            status="scored",
            dealer=None if hidden else r.dealer,
            result=None if hidden else recorded_view(r),
        )
        for r in match.results
    ]
    if match.round_open and current is not None:
        rounds.append(
            RoundSummary(
                number=current.number,
                round_id=str(current.id),
                status="abandoned" if match.finished else "playing",
                dealer=None if hidden else current.bidding.dealer,
                result=None,
            )
        )
    return rounds
