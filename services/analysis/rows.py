"""A finished match's events as rows of the tidy tables (docs/analysis.md), redacted for
their reader (R33, R35, R36). Pure: events in, rows out; :mod:`services.analysis.dump`
reads the store and writes the files.

The rows are read off the events as the record export reads them (R34): every show is a
``TrumpDeclared`` or ``Overcalled``, every play a ``CardPlayed`` (after a failed throw,
``ThrowFailed`` names what was attempted, R22), every trick a ``TrickWon``, every result a
``RoundScored`` and the team that went up the match's ``RoundRecorded``; a rated match's
rating moves are the ratings' read model's (docs/decisions.md D-ratings), given by the
caller.

**Redaction** (the reader is ``public`` or ``operator``): for the public a round's
``seed`` and ``bottom`` are null unless the round was scored (R21, R33, R35) — a round
abandoned when the match ended keeps them for good (R32) — and the seats' accounts are
always null (they link a person's matches), in ``matches`` and ``ratings`` alike. A
tournament table whose tournament round is not complete is not given to the public at all
(R36): the caller leaves it out. An erased player's rating moves are gone from the ratings
(docs/players.md), so from the dump.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Final, Literal
from uuid import UUID

from domain.game.match_events import (
    MatchCreated,
    MatchFinished,
    MatchImported,
    RoundRecorded,
    SeatTaken,
)
from domain.game.round_events import (
    BottomBuried,
    CardPlayed,
    Dealt,
    DrawingEnded,
    Overcalled,
    RoundAbandoned,
    RoundScored,
    RoundStarted,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
)
from domain.rules.cards import RANKS, SUITS, card_names, points_of, suit_of
from domain.rules.context import trump_context
from domain.rules.shapes import ShapeKind, decompose
from domain.rules.shows import Strength
from services.ratings.model import Rating

Reader = Literal["public", "operator"]
READERS: Final[tuple[Reader, ...]] = ("public", "operator")
Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TableFacts:
    """A tournament table as its tournament holds it (for ``tournament_tables``)."""

    tournament_id: UUID
    tournament: str
    format: str
    round: int
    table: int
    team_first: str
    team_second: str
    winner: str | None
    points: tuple[int, int] | None
    deals: int | None
    corrected: bool
    completed: datetime | None


@dataclass(frozen=True, slots=True)
class RatedSeat:
    """A seat's rating move in a rated match (the ratings' history row, D-ratings)."""

    seat: int
    account: UUID
    family: str
    model: str
    weight: float
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float


@dataclass(slots=True)
class Rows:
    """Rows of each table, in the order the tables are declared."""

    tables: dict[str, list[Row]] = field(
        default_factory=lambda: {
            t: []
            for t in (
                "matches",
                "rounds",
                "declarations",
                "tricks",
                "plays",
                "results",
                "tournament_tables",
                "ratings",
            )
        }
    )

    def add(self, table: str, row: Row) -> None:
        self.tables[table].append(row)

    def extend(self, other: Rows) -> None:
        for name, rows in other.tables.items():
            self.tables[name].extend(rows)

    def count(self) -> int:
        return sum(len(rows) for rows in self.tables.values())

    def clear(self) -> None:
        for rows in self.tables.values():
            rows.clear()


def _cards(cards: Sequence[int]) -> str:
    return " ".join(card_names(cards))


def _suit(trump: int | None) -> str:
    return "NT" if trump is None else SUITS[trump]


def match_rows(
    match_events: Sequence[Any],
    rounds: Sequence[Sequence[Any]],
    reader: Reader,
    day: date,
    table: TableFacts | None = None,
    rated: Sequence[RatedSeat] = (),
) -> Rows:
    """The rows of one finished match (``rounds``: each round's events, ``RoundStarted``
    first; ``rated``: its seats' rating moves), redacted for ``reader``, every row
    carrying ``day``."""
    out = Rows()
    created = match_events[0]
    assert isinstance(created, MatchCreated)
    mid = str(created.originator_id)
    finished = next(e for e in match_events if isinstance(e, MatchFinished))
    seats: dict[int, SeatTaken] = {e.seat: e for e in match_events if isinstance(e, SeatTaken)}
    recorded = {e.number: e for e in match_events if isinstance(e, RoundRecorded)}
    last = max(recorded.values(), key=lambda e: e.number, default=None)
    levels = last.levels if last else (created.start_level, created.start_level)
    laps = last.laps if last else (0, 0)
    kinds = [seats[s].kind if s in seats else "" for s in range(4)]
    scored = sum(1 for r in rounds if isinstance(r[-1], RoundScored))
    row: Row = {
        "day": day,
        "match_id": mid,
        "name": created.name,
        "preset": created.preset,
        "rules": json.dumps(dict(created.rules), sort_keys=True, separators=(",", ":")),
        "origin": "imported"
        if any(isinstance(e, MatchImported) for e in match_events)
        else "played",
        "tournament_id": None if created.tournament_id is None else str(created.tournament_id),
        "tournament_round": created.tournament_round,
        "started": created.timestamp,
        "finished": finished.timestamp,
        "end_reason": finished.reason,
        "winner": finished.winner,
        "rounds": scored,
        "abandoned_rounds": sum(1 for r in rounds if isinstance(r[-1], RoundAbandoned)),
        "level_0": RANKS[levels[0]],
        "level_1": RANKS[levels[1]],
        "laps_0": laps[0],
        "laps_1": laps[1],
    }
    for s in range(4):
        taken = seats.get(s)
        row[f"kind_{s}"] = kinds[s]
        row[f"player_{s}"] = taken.player if taken else ""
        account = taken.account_id if taken else None
        row[f"account_{s}"] = str(account) if reader == "operator" and account else None
    out.add("matches", row)
    for events in rounds:
        _round_rows(out, mid, day, events, reader, kinds, recorded)
    for r in rated:
        before, after = Rating(r.mu_before, r.sigma_before), Rating(r.mu_after, r.sigma_after)
        out.add(
            "ratings",
            {
                "day": day,
                "match_id": mid,
                "seat": r.seat,
                "player": row[f"player_{r.seat}"],
                "account": str(r.account) if reader == "operator" else None,
                "family": r.family,
                "model": r.model,
                "rated_at": finished.timestamp,
                "weight": r.weight,
                "mu_before": r.mu_before,
                "sigma_before": r.sigma_before,
                "mu_after": r.mu_after,
                "sigma_after": r.sigma_after,
                "rating_before": before.shown,
                "rating_after": after.shown,
                "deviation_after": after.deviation,
            },
        )
    if table is not None:
        out.add(
            "tournament_tables",
            {
                "day": day,
                "match_id": mid,
                "tournament_id": str(table.tournament_id),
                "tournament": table.tournament,
                "format": table.format,
                "tournament_round": table.round,
                "table": table.table,
                "team_first": table.team_first,
                "team_second": table.team_second,
                "winner": table.winner,
                "points_first": None if table.points is None else table.points[0],
                "points_second": None if table.points is None else table.points[1],
                "deals": table.deals,
                "corrected": table.corrected,
                "completed": table.completed,
            },
        )
    return out


def _round_rows(
    out: Rows,
    mid: str,
    day: date,
    events: Sequence[Any],
    reader: Reader,
    kinds: list[str],
    recorded: dict[int, RoundRecorded],
) -> None:
    started = events[0]
    assert isinstance(started, RoundStarted)
    number = started.number
    base: Row = {"day": day, "match_id": mid, "round": number}
    end = events[-1]
    result = end if isinstance(end, RoundScored) else None
    deal: Dealt | None = None
    deals = 0
    trump: int | None = None
    trump_fixed = False
    declarer: int | None = None
    buried: tuple[int, ...] | None = None
    shows = 0
    trick = 1
    turn = 0
    leader: int | None = None
    led = ""
    threw = failed = False
    failed_attempt: ThrowFailed | None = None
    tricks = 0
    for e in events:
        if isinstance(e, Dealt):
            deal, deals = e, deals + 1
            trump, trump_fixed, declarer, shows = None, False, None, 0
        elif isinstance(e, TrumpDeclared | Overcalled):
            shows += 1
            trump, trump_fixed, declarer = e.trump, True, e.seat
            out.add(
                "declarations",
                {
                    **base,
                    "seq": shows,
                    "seat": e.seat,
                    "action": "declare" if isinstance(e, TrumpDeclared) else "overcall",
                    "cards": _cards(e.cards),
                    "trump": _suit(e.trump),
                    "strength": Strength(e.strength).name.lower(),
                    "at": e.timestamp,
                },
            )
        elif isinstance(e, DrawingEnded) and e.fallback_card is not None:
            trump, trump_fixed, declarer = suit_of(e.fallback_card), True, None  # R19
        elif isinstance(e, BottomBuried):
            buried = tuple(e.cards)
        elif isinstance(e, ThrowFailed):
            failed_attempt = e
        elif isinstance(e, CardPlayed):
            assert deal is not None
            attempted = failed_attempt.attempted if failed_attempt else e.cards
            is_lead = turn == 0
            is_throw = is_lead and _is_throw(deal.level, trump, attempted)
            if is_lead:
                leader, led = e.seat, _cards(e.cards)
                threw, failed = is_throw, failed_attempt is not None
            out.add(
                "plays",
                {
                    **base,
                    "trick": trick,
                    "turn": turn,
                    "seat": e.seat,
                    "cards": _cards(e.cards),
                    "count": len(e.cards),
                    "led": is_lead,
                    "followed": not is_lead,
                    "threw": is_throw,
                    "failed_throw": failed_attempt is not None,
                    "attempted": _cards(failed_attempt.attempted) if failed_attempt else None,
                    "penalty": failed_attempt.penalty if failed_attempt else 0,
                    "points": points_of(e.cards),
                    "at": e.timestamp,
                },
            )
            failed_attempt = None
            turn += 1
        elif isinstance(e, TrickWon):
            tricks += 1
            out.add(
                "tricks",
                {
                    **base,
                    "trick": trick,
                    "leader": leader,
                    "winner": e.winner,
                    "points": e.points,
                    "led": led,
                    "threw": threw,
                    "failed_throw": failed,
                    "at": e.timestamp,
                },
            )
            trick, turn = trick + 1, 0
    revealed = result is not None or reader == "operator"
    if result is not None:
        bottom: tuple[int, ...] | None = tuple(result.bottom_cards)
    else:
        bottom = buried
    dealer = result.dealer if result is not None else started.dealer
    level = deal.level if deal is not None else started.levels[0]
    out.add(
        "rounds",
        {
            **base,
            "dealer": dealer,
            "defenders": None if dealer is None else dealer % 2,
            "level": RANKS[level],
            "level_0": RANKS[started.levels[0]],
            "level_1": RANKS[started.levels[1]],
            "trump": _suit(trump) if trump_fixed else None,
            "declarer": declarer,
            "deals": deals,
            "commitment": deal.commitment if deal is not None else "",
            "seed": deal.seed if deal is not None and revealed else None,
            "bottom": _cards(bottom) if bottom is not None and revealed else None,
            "tricks": tricks,
            "trick_points": result.trick_points if result else None,
            "bottom_points": result.bottom_points if result else None,
            "multiplier": result.multiplier if result else None,
            "bottom_bonus": result.bottom_bonus if result else None,
            "penalty_points": sum(result.penalties) if result else None,
            "attackers_total": result.attackers_total if result else None,
            "outcome": result.outcome if result else None,
            "band": result.band if result else None,
            "levels_gained": result.levels_gained if result else None,
            "defenders_keep": result.defenders_keep if result else None,
            "next_dealer": result.next_dealer if result else None,
            "abandoned": isinstance(events[-1], RoundAbandoned),
            "started": started.timestamp,
            "ended": events[-1].timestamp,
        },
    )
    carried = recorded.get(number)
    if result is None or carried is None:
        return
    defenders = result.dealer % 2
    for team in (0, 1):
        pair = [kinds[team], kinds[team + 2]]
        up = carried.team_up == team
        out.add(
            "results",
            {
                **base,
                "team": team,
                "role": "defenders" if team == defenders else "attackers",
                "kind": pair[0] if pair[0] == pair[1] else "mixed",
                "kinds": " ".join(pair),
                "level_before": RANKS[started.levels[team]],
                "levels_gained": carried.levels_gained if up else 0,
                "points": result.attackers_total if team != defenders else None,
                "went_up": up,
            },
        )


def _is_throw(level: int, trump: int | None, cards: Sequence[int]) -> bool:
    """A lead of several units (R15): what the trump context decomposes as a throw."""
    if len(cards) < 2:
        return False
    return decompose(trump_context(level, trump), cards).kind is ShapeKind.THROW
