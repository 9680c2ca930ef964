"""A record's canonical form (docs/records.md): :func:`canonical` checks a decoded record's
shape and rewrites it the one way it is encoded — cards in R4 notation, times in UTC with
microseconds, hex in lowercase, the rule set through ``RuleSet`` (§10) — so that
export → import → export is byte-identical. A record's ``origin`` (the exporting server's
provenance, :class:`~services.records.format.RecordOrigin`) is not part of the record: it is
dropped here, so an export's digest is the digest of the record that was imported.
"""

from __future__ import annotations

import msgspec

from domain.game.timers import Timers
from domain.rules.cards import card_names, parse_cards
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from services.records.format import (
    CLAIM,
    GameRecord,
    RecordAbandoned,
    RecordAction,
    RecordEnd,
    RecordInvalidError,
    RecordRound,
    RecordSeat,
    RecordTimers,
    format_time,
    parse_time,
)


def canonical(record: GameRecord) -> GameRecord:
    """The record in canonical form, its shape checked (RecordInvalidError naming the
    field): cards in R4 notation, times in UTC with microseconds, hex in lowercase, the
    rule set through ``RuleSet`` (§10), rounds numbered in order, moves well-formed."""
    try:
        rules = RuleSet.from_mapping(record.rules).to_mapping()
    except InvalidInputError as e:
        raise RecordInvalidError(f"rules: {e.detail}", rule="§10") from None
    if record.timers is not None:
        try:
            Timers(record.timers.declare_ms, record.timers.bury_ms, record.timers.play_ms)
        except InvalidInputError as e:
            raise RecordInvalidError(f"timers: {e.detail}") from None
    if record.kind == "match" and record.end is None:
        raise RecordInvalidError("end: a match record says how the match ended (R32)")
    if record.kind == "round" and (record.end is not None or len(record.rounds) != 1):
        raise RecordInvalidError("a round record holds exactly one round and no end")
    taken = [s.seat for s in record.seats]
    if len(set(taken)) != len(taken):
        raise RecordInvalidError(f"seats: a seat is taken twice ({taken}, R1)", rule="R1")
    if record.kind == "round" and len(taken) != 4:
        raise RecordInvalidError("seats: a round is played by four seats (R1)", rule="R1")
    return GameRecord(
        format=record.format,
        kind=record.kind,
        name=record.name,
        preset=record.preset,
        rules=rules,
        timers=record.timers if record.timers is None or _any(record.timers) else None,
        started=_time(record.started, "started"),
        seats=[
            RecordSeat(seat=s.seat, name=s.name, kind=s.kind, at=_time(s.at, f"seats[{i}].at"))
            for i, s in enumerate(record.seats)
        ],
        rounds=[_round(r, i, record) for i, r in enumerate(record.rounds)],
        end=None
        if record.end is None
        else RecordEnd(
            at=_time(record.end.at, "end.at"),
            reason=record.end.reason,
            winner=record.end.winner,
            levels=list(record.end.levels),
            laps=list(record.end.laps),
        ),
    )


def _any(timers: RecordTimers) -> bool:
    return bool(timers.declare_ms or timers.bury_ms or timers.play_ms)


def _time(text: str, where: str) -> str:
    return format_time(parse_time(text, where))


def _cards(tokens: list[str], where: str) -> list[str]:
    try:
        return card_names(parse_cards(tokens))
    except InvalidInputError as e:
        raise RecordInvalidError(f"{where}: {e.detail}", rule="R4") from None


def _round(r: RecordRound, i: int, record: GameRecord) -> RecordRound:
    where = f"rounds[{i}]"
    if record.kind == "match" and r.number != i + 1:
        raise RecordInvalidError(f"{where}.number: round {i + 1} expected, got {r.number}")
    last = i == len(record.rounds) - 1
    if r.result is None and r.abandoned is None:
        raise RecordInvalidError(f"{where}: a finished match's round is scored or abandoned")
    if r.result is not None and r.abandoned is not None:
        raise RecordInvalidError(f"{where}: a round is scored or abandoned, not both")
    if r.abandoned is not None and (r.deals or r.actions or not last):
        raise RecordInvalidError(
            f"{where}: only the last round can be abandoned, and its deals and moves stay "
            "secret (R33): leave them out"
        )
    if record.kind == "round" and r.result is None:
        raise RecordInvalidError(f"{where}: a round record is of a scored round (R33)")
    if r.board is not None and (r.board.number, r.board.dealer) != (r.number, r.dealer):
        raise RecordInvalidError(
            f"{where}.board: board {r.board.number} dealt by seat {r.board.dealer} is not round "
            f"{r.number} dealt by seat {r.dealer} (R36)"
        )
    actions = []
    for k, a in enumerate(r.actions):
        at = f"{where}.actions[{k}]"
        if (a.action == CLAIM) != (a.seat is None):
            raise RecordInvalidError(f"{at}: a seat's move names its seat; a claim has none")
        if a.action in ("pass", "redeal", CLAIM) and a.cards:
            raise RecordInvalidError(f"{at}: {a.action} takes no cards")
        if a.action in ("declare", "overcall", "bury", "play") and not a.cards:
            raise RecordInvalidError(f"{at}: {a.action} needs cards")
        if a.timeout is not None and (a.seat is None or record.timers is None):
            raise RecordInvalidError(
                f"{at}: a timeout is a seat's move in a match with turn timers"
            )
        actions.append(
            RecordAction(
                at=_time(a.at, f"{at}.at"),
                seat=a.seat,
                action=a.action,
                cards=_cards(a.cards, f"{at}.cards"),
                timeout=a.timeout,
            )
        )
    result = r.result
    if result is not None:
        result = msgspec.structs.replace(
            result, bottom=_cards(result.bottom, f"{where}.result.bottom")
        )
    return RecordRound(
        number=r.number,
        dealer=r.dealer,
        board=r.board,
        levels=list(r.levels),
        deals=[
            msgspec.structs.replace(
                d,
                at=_time(d.at, f"{where}.deals[{k}].at"),
                seed=d.seed.lower(),
                commitment=d.commitment.lower(),
            )
            for k, d in enumerate(r.deals)
        ],
        actions=actions,
        result=result,
        abandoned=None
        if r.abandoned is None
        else RecordAbandoned(
            at=_time(r.abandoned.at, f"{where}.abandoned.at"), reason=r.abandoned.reason
        ),
    )
