"""The replay's parts shared by match and round records (``services.records.replay``,
``services.records.replay_round``): its clock and seed source, where it is, and how a refusal
names the first bad move (RULES R34, R35)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import Pacing
from domain.game.timers import NO_TIMERS, Timers, check_timed_out, record_timeout
from domain.rules.board import Board
from domain.rules.cards import RANKS, SUITS, Card, parse_cards
from domain.rules.errors import IllegalMoveError, ShengjiError
from domain.rules.shuffle import seed_from_hex
from services.dealer import Dealing, Loader
from services.records.export import result_of
from services.records.format import (
    GameRecord,
    RecordAction,
    RecordBoard,
    RecordDeal,
    RecordRound,
    RecordTamperedError,
    format_time,
    parse_time,
    to_builtins,
)

RESULT_RULES: dict[str, str] = {
    "dealer": "R18",
    "trick_points": "R27",
    "bottom": "R21",
    "bottom_points": "R26",
    "multiplier": "R28",
    "bottom_bonus": "R28",
    "penalties": "R22",
    "attackers_total": "R29",
    "outcome": "R30",
    "band": "R30",
    "levels_gained": "R30",
    "defenders_keep": "R31",
    "next_dealer": "R31",
}


class ReplayClock:
    """The replay's clock: the time of the move being replayed; never moves back."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self.label = "started"

    def __call__(self) -> datetime:
        return self.now

    def set(self, text: str, label: str, ctx: Cursor) -> None:
        moment = parse_time(text, label)
        if moment < self.now:
            raise RecordTamperedError(
                f"{label} is at {format_time(moment)}, before the {self.label} "
                f"({format_time(self.now)}): the record is not in the order it was played (R34)",
                rule="R34",
                move=ctx.move,
                round_number=ctx.round_number,
                field="at",
            )
        self.now, self.label = moment, label


@dataclass(slots=True)
class Cursor:
    """Where the replay is: the move number (1-based over the record) and its round."""

    move: int | None = None
    round_number: int | None = None

    def where(self) -> str:
        if self.move is None:
            return "when the fourth seat was taken"
        return f"at move {self.move}"


def record_board(board: RecordBoard | None) -> Board | None:
    """A round's board as the record gives it (R36), for the replay to play."""
    if board is None:
        return None
    trump = None if board.trump is None else SUITS.index(board.trump)
    return Board(board.number, board.dealer, RANKS.index(board.level), trump)


def record_boards(record: GameRecord) -> Callable[[int], Board | None]:
    """Round number → its board in ``record``."""
    boards = {r.number: record_board(r.board) for r in record.rounds}
    return boards.get


class Deals:
    """The replay's deals: the record's in order, each checked against its commitment as
    it is dealt (R35), with the pacing and the first seat drawn the record gives (R16,
    R36); an abandoned round gets a stand-in seed (its deal stays secret, R33). A
    :class:`services.dealer.DealSource`, with the record's boards (R36)."""

    def __init__(self, record: GameRecord, ctx: Cursor) -> None:
        self.entries: list[tuple[int, int, RecordDeal | None]] = []
        for r in record.rounds:
            if r.abandoned is not None:
                self.entries.append((r.number, 1, None))
            self.entries += [(r.number, k + 1, d) for k, d in enumerate(r.deals)]
        self.next = 0
        self.ctx = ctx
        self.boards = record_boards(record)
        self.pacing = Pacing()

    def dealing(self, loader: Loader, match: Match, round_: Round) -> Dealing:
        """The record's next deal (R35), dealt as the record says it was (R16, R36)."""
        deal = self.entry()
        return Dealing(self(), self.pacing, None if deal is None else deal.first_seat)

    def board(self, loader: Loader, match: Match, number: int) -> Board | None:
        return self.boards(number)

    def entry(self) -> RecordDeal | None:
        """The record's deal the next seed is (None: an abandoned round's stand-in)."""
        if self.next >= len(self.entries):
            raise RecordTamperedError(
                f"{self.ctx.where()} the replay deals again, but the record has no more "
                "deals (R19)",
                rule="R19",
                move=self.ctx.move,
                round_number=self.ctx.round_number,
                field="deals",
            )
        return self.entries[self.next][2]

    def __call__(self) -> bytes:
        """The next seed, checked against its commitment (R35)."""
        self.entry()  # a deal the record does not have: refused
        number, k, deal = self.entries[self.next]
        self.next += 1
        if deal is None:
            return hashlib.sha256(f"shengji:record:abandoned:{number}".encode()).digest()
        seed = seed_from_hex(deal.seed)
        actual = hashlib.sha256(seed).hexdigest()
        if actual != deal.commitment:
            raise RecordTamperedError(
                f"round {number}, deal {k} (dealt {self.ctx.where()}): sha256 of its seed is "
                f"{actual}, but its commitment is {deal.commitment} (R35)",
                rule="R35",
                move=self.ctx.move,
                round_number=number,
                field="seed",
            )
        self.pacing = Pacing(deal.interval_ms, deal.declare_ms, deal.window_ms)
        return seed


def moves_of(record: GameRecord) -> Iterator[tuple[int, RecordRound, int, RecordAction]]:
    n = 0
    for r in record.rounds:
        for k, a in enumerate(r.actions):
            n += 1
            yield n, r, k, a


def count_moves(record: GameRecord) -> int:
    return sum(len(r.actions) for r in record.rounds)


def refused(e: ShengjiError, a: RecordAction, ctx: Cursor) -> RecordTamperedError:
    who = "claim" if a.seat is None else f"S{a.seat} {a.action} {' '.join(a.cards)}".rstrip()
    return RecordTamperedError(
        f"move {ctx.move} (round {ctx.round_number}, {who}) is refused by the rules: {e.detail}",
        rule=e.rule,
        move=ctx.move,
        round_number=ctx.round_number,
        field="action",
    )


def cards_of(a: RecordAction) -> tuple[Card, ...]:
    return tuple(parse_cards(a.cards))


def compare(
    expected: msgspec.Struct, actual: msgspec.Struct, path: str, ctx: Cursor, rules: dict[str, str]
) -> None:
    mine, theirs = msgspec.to_builtins(expected), msgspec.to_builtins(actual)
    for key in mine:
        if mine[key] != theirs[key]:
            name = next((f for f in rules if camel(f) == key), key)
            raise RecordTamperedError(
                f"{path}.{key}: the record says {mine[key]!r}, the replay gives "
                f"{theirs[key]!r} ({rules.get(name, 'R34')})",
                rule=rules.get(name, "R34"),
                move=ctx.move,
                round_number=ctx.round_number,
                field=f"{path}.{key}",
            )


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def check_scored(round_: Round, r: RecordRound, index: int, ctx: Cursor) -> None:
    if round_.result is None:
        raise RecordTamperedError(
            f"round {r.number} is not scored after its last move ({ctx.move}): moves are "
            "missing (R22)",
            rule="R22",
            move=ctx.move,
            round_number=r.number,
            field=f"rounds[{index}].actions",
        )
    if round_.deal_no != len(r.deals):
        raise RecordTamperedError(
            f"round {r.number} is dealt {round_.deal_no} time(s) in the replay; the record "
            f"lists {len(r.deals)} deal(s) (R19)",
            rule="R19",
            move=ctx.move,
            round_number=r.number,
            field=f"rounds[{index}].deals",
        )
    assert r.result is not None
    compare(r.result, result_of(round_.result), f"rounds[{index}].result", ctx, RESULT_RULES)


def difference(record: GameRecord, replayed: Any) -> RecordTamperedError:
    """The first place where the replay's own record differs from the record."""
    path = first_difference(to_builtins(record), replayed, "")
    return RecordTamperedError(
        f"the record differs from its replay at {path or 'the top'} (R34)",
        rule="R34",
        field=path or None,
    )


def first_difference(a: Any, b: Any, path: str) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}".lstrip("."))
        return path
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
        return f"{path}[{min(len(a), len(b))}]"
    return path


def timers_of(record: GameRecord) -> Timers:
    t = record.timers
    return NO_TIMERS if t is None else Timers(t.declare_ms, t.bury_ms, t.play_ms)


def timed_out(
    a: RecordAction, ctx: Cursor, timers: Timers | None = None
) -> Callable[[Match | None, Round, datetime], tuple[int, str, tuple[Card, ...]]]:
    """A timeout move (``TurnTimedOut``): the seat to act must be over its limit at the
    move's time and be the move's seat; the recorded move is then made for it."""

    def decide(
        match: Match | None, round_: Round, now: datetime
    ) -> tuple[int, str, tuple[Card, ...]]:
        limits = timers if match is None else match.timers
        assert limits is not None and a.seat is not None and a.timeout is not None
        clock = check_timed_out(limits, round_, now)
        if clock.seat != a.seat:
            raise IllegalMoveError(
                f"seat {clock.seat} is the seat over its time, not seat {a.seat}",
                rule="R22",
                code="not-timed-out",
            )
        record_timeout(round_, clock, now, a.timeout)
        return a.seat, a.action, cards_of(a)

    return decide
