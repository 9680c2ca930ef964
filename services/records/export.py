"""Export a finished match (or one scored round) as a portable record
(docs/records.md).

The record is read off the events (R34), never re-derived by the rules: each seat command
left one event that names it (``TrumpDeclared`` → declare, ``Overcalled`` → overcall,
``Passed`` → pass, ``BottomBuried`` → bury, ``Redealt`` → redeal, ``CardPlayed`` → play —
or ``ThrowFailed`` + ``CardPlayed`` → play of the cards attempted, R22), and a deadline
claimed on its own (``DrawingEnded`` not caused by the fourth pass, ``WindowClosed``) is a
``claim`` move. Everything else (``Dealt``, ``TrickWon``, ``RoundScored``, the match's
policy events) is a consequence the replay must reproduce. :func:`round_moves` is that
table; an event it does not know fails the export loudly rather than dropping a move.

Only finished matches and scored rounds are exported: a record reveals every seed, hand
and bottom (R33, R35). A round the organiser abandoned (R32) stays secret: the match
record names it with its time and reason only. A tournament table's records wait until
its tournament round completes (409 ``deal-embargoed``, R36, :mod:`services.embargo`).

:mod:`services.records.replay` imports records; :mod:`services.records.text` writes and reads
the text notation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from domain.game.match_events import (
    MatchCreated,
    MatchFinished,
    MatchImported,
    RoundBegun,
    RoundRecorded,
    SeatTaken,
)
from domain.game.round import round_id
from domain.game.round_events import (
    BOARD_WEAK_HAND,
    BottomBuried,
    CardPlayed,
    Dealt,
    DrawingEnded,
    Overcalled,
    Passed,
    Redealt,
    RoundAbandoned,
    RoundScored,
    RoundStarted,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
    TurnTimedOut,
    WindowClosed,
)
from domain.game.timers import Timers
from domain.rules.board import Board
from domain.rules.cards import RANKS, SUITS, card_names
from services.embargo import check_released
from services.errors import NotFoundError
from services.game import GameService
from services.records.format import (
    CLAIM,
    FORMAT,
    GameRecord,
    RecordAbandoned,
    RecordAction,
    RecordBoard,
    RecordDeal,
    RecordEnd,
    RecordOrigin,
    RecordResult,
    RecordRound,
    RecordSeat,
    RecordTimers,
    RecordUnavailableError,
    format_time,
)

CONSEQUENCES: tuple[type[Any], ...] = (
    RoundStarted,
    Dealt,
    TrickWon,
    RoundScored,
    RoundAbandoned,
)
"""Round events no move names: the replay reproduces them."""
MOVE_EVENTS: tuple[type[Any], ...] = (
    TrumpDeclared,
    Overcalled,
    Passed,
    BottomBuried,
    Redealt,
    ThrowFailed,
    CardPlayed,
    DrawingEnded,
    WindowClosed,
    TurnTimedOut,
)
"""Round events that are (or, for ``DrawingEnded``, may be) a move."""


class UnknownEventError(RuntimeError):
    """An event the record format does not cover: the export refuses to drop it."""


# -- events → record (pure) -------------------------------------------------------------------


def deal_of(e: Dealt) -> RecordDeal:
    return RecordDeal(
        at=format_time(e.timestamp),
        first_seat=e.first_seat,
        interval_ms=e.interval_ms,
        declare_ms=e.declare_ms,
        window_ms=e.window_ms,
        seed=e.seed,
        commitment=e.commitment,
    )


def board_of(board: Board | None) -> RecordBoard | None:
    """A round's board (R36) as the record holds it."""
    if board is None:
        return None
    return RecordBoard(
        number=board.number,
        dealer=board.dealer,
        level=RANKS[board.level],  # type: ignore[arg-type]
        trump=None if board.trump is None else SUITS[board.trump],  # type: ignore[arg-type]
    )


def result_of(e: RoundScored) -> RecordResult:
    return RecordResult(
        dealer=e.dealer,
        trick_points=e.trick_points,
        bottom=card_names(e.bottom_cards),
        bottom_points=e.bottom_points,
        multiplier=e.multiplier,
        bottom_bonus=e.bottom_bonus,
        penalties=list(e.penalties),
        attackers_total=e.attackers_total,
        outcome=e.outcome,
        band=e.band,
        levels_gained=e.levels_gained,
        defenders_keep=e.defenders_keep,
        next_dealer=e.next_dealer,
    )


def round_moves(events: Sequence[Any]) -> tuple[list[RecordDeal], list[RecordAction]]:
    """A round's deals and moves, in order, from its events (``RoundStarted`` first)."""
    deals: list[RecordDeal] = []
    moves: list[RecordAction] = []
    dealing_passes = 0
    throw_pending = False
    timed_out: str | None = None
    previous: Any = None

    def add(at: str, seat: int | None, action: str, cards: list[str]) -> None:
        nonlocal timed_out
        moves.append(_move(at, seat, action, cards, timed_out))
        timed_out = None

    for e in events:
        at = format_time(e.timestamp)
        if isinstance(e, Dealt):
            deals.append(deal_of(e))
            dealing_passes = 0
        elif isinstance(e, TurnTimedOut):
            timed_out = e.claimed_by  # the move that follows is the bot's, for e.seat
        elif isinstance(e, TrumpDeclared | Overcalled | BottomBuried):
            name = {TrumpDeclared: "declare", Overcalled: "overcall", BottomBuried: "bury"}
            add(at, e.seat, name[type(e)], card_names(e.cards))
        elif isinstance(e, Passed):
            dealing_passes += 1
            add(at, e.seat, "pass", [])
        elif isinstance(e, Redealt) and e.reason == BOARD_WEAK_HAND:
            pass  # a board's shared redeal follows from its cards, no one's move (R36)
        elif isinstance(e, Redealt):
            add(at, e.seat, "redeal", [])
        elif isinstance(e, ThrowFailed):
            add(at, e.seat, "play", card_names(e.attempted))
            throw_pending = True
        elif isinstance(e, CardPlayed):
            if not throw_pending:
                add(at, e.seat, "play", card_names(e.cards))
            throw_pending = False
        elif isinstance(e, DrawingEnded | WindowClosed):
            by_passes = (
                isinstance(e, DrawingEnded) and isinstance(previous, Passed) and dealing_passes == 4
            )
            if not by_passes:
                moves.append(RecordAction(at=at, seat=None, action=CLAIM, cards=[], timeout=None))
        elif not isinstance(e, CONSEQUENCES):
            raise UnknownEventError(
                f"the record format does not cover {type(e).__name__} events yet "
                "(services/records/export.py round_moves)"
            )
        if isinstance(e, DrawingEnded):
            dealing_passes = 0
        previous = e
    return deals, moves


def _move(
    at: str, seat: int | None, action: str, cards: list[str], timeout: str | None = None
) -> RecordAction:
    return RecordAction(at=at, seat=seat, action=action, cards=cards, timeout=timeout)  # type: ignore[arg-type]


def round_record(events: Sequence[Any]) -> RecordRound:
    """A round (its events, ``RoundStarted`` first) as the record holds it."""
    started = events[0]
    assert isinstance(started, RoundStarted)
    last = events[-1]
    levels = [RANKS[started.levels[0]], RANKS[started.levels[1]]]
    if isinstance(last, RoundAbandoned):
        return RecordRound(
            number=started.number,
            dealer=started.dealer,
            board=board_of(started.board),
            levels=levels,  # type: ignore[arg-type]
            deals=[],
            actions=[],
            result=None,
            abandoned=RecordAbandoned(at=format_time(last.timestamp), reason=last.reason),
        )
    deals, moves = round_moves(events)
    return RecordRound(
        number=started.number,
        dealer=started.dealer,
        board=board_of(started.board),
        levels=levels,  # type: ignore[arg-type]
        deals=deals,
        actions=moves,
        result=result_of(last) if isinstance(last, RoundScored) else None,
        abandoned=None,
    )


def match_record(
    match_events: Sequence[Any], rounds: Sequence[Sequence[Any]], *, kind: str = "match"
) -> GameRecord:
    """The record of a match from its events and its rounds' events (``rounds``: all of
    them for a match record, the one round for a round record)."""
    created = match_events[0]
    assert isinstance(created, MatchCreated)
    seats = [
        RecordSeat(seat=e.seat, name=e.player, kind=e.kind, at=format_time(e.timestamp))  # type: ignore[arg-type]
        for e in match_events
        if isinstance(e, SeatTaken)
    ]
    end = None
    if kind == "match":
        finished = next(e for e in match_events if isinstance(e, MatchFinished))
        recorded = [e for e in match_events if isinstance(e, RoundRecorded)]
        levels = recorded[-1].levels if recorded else (created.start_level, created.start_level)
        laps = recorded[-1].laps if recorded else (0, 0)
        end = RecordEnd(
            at=format_time(finished.timestamp),
            reason=finished.reason,
            winner=finished.winner,
            levels=[RANKS[levels[0]], RANKS[levels[1]]],  # type: ignore[list-item]
            laps=[laps[0], laps[1]],
        )
    return GameRecord(
        format=FORMAT,
        kind=kind,  # type: ignore[arg-type]
        name=created.name,
        preset=created.preset,
        rules=dict(created.rules),
        timers=_timers(getattr(created, "timers", None)),
        started=format_time(created.timestamp),
        seats=seats,
        rounds=[round_record(r) for r in rounds],
        end=end,
        origin=_origin(match_events),
    )


def _origin(match_events: Sequence[Any]) -> RecordOrigin | None:
    """An imported match's export says so (the server's word; import drops it)."""
    imported = next((e for e in match_events if isinstance(e, MatchImported)), None)
    if imported is None:
        return None
    return RecordOrigin(
        kind="imported", imported_at=format_time(imported.timestamp), digest=imported.digest
    )


def _timers(mapping: dict[str, int] | None) -> RecordTimers | None:
    timers = Timers.from_mapping(mapping)
    if not timers.any:
        return None
    return RecordTimers(
        declare_ms=timers.declare_ms, bury_ms=timers.bury_ms, play_ms=timers.play_ms
    )


# -- from the store ---------------------------------------------------------------------------


def _match_events(service: GameService, match_id: UUID) -> list[Any]:
    events = list(service.events.get(match_id))
    if not events or not isinstance(events[0], MatchCreated):
        raise NotFoundError(f"no match {match_id}")
    return events


def _released(service: GameService, created: MatchCreated, what: str) -> None:
    """R36: a tournament table's record waits for its tournament round to complete."""
    check_released(service, created.tournament_id, created.tournament_round, what)


def export_match(service: GameService, match_id: UUID) -> GameRecord:
    """The record of finished match ``match_id``; RecordUnavailableError while it is
    played (a record reveals every card, R33)."""
    events = _match_events(service, match_id)
    if not any(isinstance(e, MatchFinished) for e in events):
        raise RecordUnavailableError(
            f"match {match_id} is not finished: a record reveals every hand and seed, so it "
            "is exported once the match is over (R33); a scored round has its own record"
        )
    _released(service, events[0], f"the record of tournament table {match_id}")
    rounds = [list(service.events.get(e.round_id)) for e in events if isinstance(e, RoundBegun)]
    return match_record(events, rounds)


def export_round(service: GameService, match_id: UUID, number: int) -> GameRecord:
    """The record of round ``number`` once it is scored (R33, R35)."""
    events = _match_events(service, match_id)
    if not any(isinstance(e, RoundBegun) and e.number == number for e in events):
        raise NotFoundError(f"match {match_id} has no round {number}")
    round_events = list(service.events.get(round_id(match_id, number)))
    if round_events and isinstance(round_events[-1], RoundAbandoned):
        raise RecordUnavailableError(
            f"round {number} was abandoned when the match ended (R32): it was never scored, "
            "so its hands and seed stay secret for good (R33)"
        )
    if not round_events or not isinstance(round_events[-1], RoundScored):
        raise RecordUnavailableError(
            f"round {number} is not scored: its hands and seed stay secret until then (R33, R35)"
        )
    _released(service, events[0], f"the record of round {number} of tournament table {match_id}")
    return match_record(events, [round_events], kind="round")


__all__ = [
    "UnknownEventError",
    "export_match",
    "export_round",
    "match_record",
    "round_moves",
    "round_record",
]
