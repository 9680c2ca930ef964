"""The text notation of a game record, in the spirit of chess's PGN (docs/records.md).

Tag pairs ``[Name "value"]`` (the value a JSON string) carry the header, each round's
header, deals and result, and the end; moves are numbered lines in RULES R4 card
notation, ``12. S1 play 10H 10H {+3.25}``, the brace giving the move's time in seconds
since ``Started`` whenever it differs from the move before. The notation holds exactly
what the JSON record holds: :func:`write_text` and :func:`read_text` convert losslessly,
so a text record imports to the same canonical JSON (and the same digest).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Final

import msgspec

from services.records.canonical import canonical
from services.records.format import (
    CLAIM,
    GameRecord,
    RecordInvalidError,
    RecordResult,
    format_time,
    offset_text,
    parse_time,
)

_TAG: Final = re.compile(r'^\[([A-Za-z]+) ("(?:[^"\\]|\\.)*")\]$')
_MOVE: Final = re.compile(
    r"^(\d{1,7})\.\s+(?:S([0-3])\s+)?([a-z]+)((?:\s+[0-9A-Za-z]{2,3})*)"
    r"(?:\s+\(timeout: ([^()]{1,40})\))?(?:\s+\{([+-]\d{1,10}(?:\.\d{1,6})?)\})?$"
)
_OFFSET: Final = re.compile(r"^[+-]\d{1,10}(?:\.\d{1,6})?$")
"""Seconds since ``Started``: at most ten digits (about 300 years) and six decimals."""
_RESULT_FIELDS: Final = tuple(RecordResult.__struct_encode_fields__)
_CARD_LISTS: Final = frozenset({"bottom"})
_INT_LISTS: Final = frozenset({"penalties"})
_TEXT_FIELDS: Final = frozenset({"outcome", "band"})
"""Result fields that are text even when they read like a number (a band "0", R30)."""


def _tag(name: str, value: str) -> str:
    return f"[{name} {msgspec.json.encode(value).decode()}]"


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- writing ----------------------------------------------------------------------------------


def write_text(record: GameRecord) -> str:
    """The text notation of a canonical record."""
    start = parse_time(record.started, "started")
    lines = [
        "% Shengji game record: docs/records.md",
        _tag("Format", record.format),
        _tag("Kind", record.kind),
        _tag("Name", record.name),
    ]
    if record.preset is not None:
        lines.append(_tag("Preset", record.preset))
    lines.append(_tag("Started", record.started))
    if record.origin is not None:  # the exporting server's word: import ignores it
        lines.append(_tag("Origin", f"imported {record.origin.imported_at} {record.origin.digest}"))
    lines.append(
        _tag("Rules", " ".join(f"{k}={_scalar(v)}" for k, v in sorted(record.rules.items())))
    )
    if record.timers is not None:
        t = record.timers
        lines.append(_tag("Timers", f"declare={t.declare_ms} bury={t.bury_ms} play={t.play_ms}"))
    for s in record.seats:
        at = offset_text(parse_time(s.at, "seat"), start)
        lines.append(_tag("Seat", f"{s.seat} {s.kind} {at} {s.name}"))
    previous = start
    move = 0
    for r in record.rounds:
        lines += ["", _tag("Round", str(r.number))]
        lines.append(_tag("Dealer", "-" if r.dealer is None else str(r.dealer)))
        lines.append(_tag("Levels", " ".join(r.levels)))
        if r.board is not None:  # R36: number, dealer, level, trump ("-": no-trump)
            b = r.board
            lines.append(_tag("Board", f"{b.number} {b.dealer} {b.level} {b.trump or '-'}"))
        for d in r.deals:
            at = offset_text(parse_time(d.at, "deal"), start)
            fields = (
                at,
                d.first_seat,
                d.interval_ms,
                d.declare_ms,
                d.window_ms,
                d.seed,
                d.commitment,
            )
            lines.append(_tag("Deal", " ".join(str(f) for f in fields)))
        for a in r.actions:
            move += 1
            moment = parse_time(a.at, "move")
            who = CLAIM if a.seat is None else " ".join([f"S{a.seat}", a.action, *a.cards])
            if a.timeout is not None:
                who += f" (timeout: {a.timeout})"
            clock = "" if moment == previous else f" {{{offset_text(moment, start)}}}"
            lines.append(f"{move}. {who}{clock}")
            previous = moment
        if r.result is not None:
            lines.append(_tag("Result", _result_text(r.result)))
        if r.abandoned is not None:
            at = offset_text(parse_time(r.abandoned.at, "abandoned"), start)
            lines.append(_tag("Abandoned", f"{at} {r.abandoned.reason}"))
    if record.end is not None:
        e = record.end
        at = offset_text(parse_time(e.at, "end"), start)
        winner = "-" if e.winner is None else str(e.winner)
        parts = [at, winner, *e.levels, *(str(x) for x in e.laps), e.reason]
        lines += ["", _tag("End", " ".join(parts))]
    return "\n".join(lines) + "\n"


def _result_text(result: RecordResult) -> str:
    values = msgspec.to_builtins(result)
    parts = []
    for key in _RESULT_FIELDS:
        value = values[key]
        text = ",".join(str(v) for v in value) if isinstance(value, list) else _scalar(value)
        parts.append(f"{key}={text}")
    return " ".join(parts)


# -- reading ----------------------------------------------------------------------------------


class _Reader:
    def __init__(self) -> None:
        self.doc: dict[str, Any] = {
            "seats": [],
            "rounds": [],
            "end": None,
            "preset": None,
            "timers": None,
        }
        self.start: datetime | None = None
        self.previous: datetime | None = None
        self.moves = 0
        self.line = 0

    def fail(self, message: str) -> RecordInvalidError:
        return RecordInvalidError(f"line {self.line}: {message}")

    def time(self, text: str) -> str:
        if self.start is None:
            raise self.fail("a time comes before the Started tag")
        if not _OFFSET.match(text):
            raise self.fail(f"{text!r} is not a time in seconds since Started (+3.25)")
        sign = -1 if text[0] == "-" else 1
        whole, _, frac = text[1:].partition(".")
        micros = int(whole) * 1_000_000 + int((frac + "000000")[:6])
        try:
            return format_time(self.start + timedelta(microseconds=sign * micros))
        except OverflowError:
            raise self.fail(f"{text!r} is too far from Started") from None

    def round(self) -> dict[str, Any]:
        if not self.doc["rounds"]:
            raise self.fail("a round's tag or move comes before its Round tag")
        current: dict[str, Any] = self.doc["rounds"][-1]
        return current

    def tag(self, name: str, value: str) -> None:
        doc = self.doc
        header = {"Format": "format", "Kind": "kind", "Name": "name", "Preset": "preset"}
        if name in header:
            doc[header[name]] = value
        elif name == "Started":
            doc["started"] = value
            self.start = self.previous = parse_time(value, f"line {self.line}: Started")
        elif name == "Origin":
            pass  # where the exporting server got the match: not part of the record
        elif name == "Rules":
            doc["rules"] = dict(self.rule(item) for item in value.split())
        elif name == "Timers":
            limits = dict(item.partition("=")[::2] for item in value.split())
            if sorted(limits) != ["bury", "declare", "play"]:
                raise self.fail(f"Timers {value!r}: expected declare=MS bury=MS play=MS")
            doc["timers"] = {f"{k}Ms": self.int(v) for k, v in limits.items()}
        elif name == "Seat":
            seat, kind, at, player = self.split(value, 4, "seat kind time name")
            doc["seats"].append(
                {"seat": self.int(seat), "kind": kind, "at": self.time(at), "name": player}
            )
        elif name == "Round":
            doc["rounds"].append(
                {
                    "number": self.int(value),
                    "deals": [],
                    "actions": [],
                    "result": None,
                    "abandoned": None,
                }
            )
        elif name == "Dealer":
            self.round()["dealer"] = None if value == "-" else self.int(value)
        elif name == "Levels":
            self.round()["levels"] = value.split()
        elif name == "Board":
            number, dealer, level, trump = self.split(value, 4, "board")
            self.round()["board"] = {
                "number": self.int(number),
                "dealer": self.int(dealer),
                "level": level,
                "trump": None if trump == "-" else trump,
            }
        elif name == "Deal":
            at, first, interval, declare, window, seed, commitment = self.split(value, 7, "deal")
            self.round()["deals"].append(
                {
                    "at": self.time(at),
                    "firstSeat": self.int(first),
                    "intervalMs": self.int(interval),
                    "declareMs": self.int(declare),
                    "windowMs": self.int(window),
                    "seed": seed,
                    "commitment": commitment,
                }
            )
        elif name == "Result":
            self.round()["result"] = self.result(value)
        elif name == "Abandoned":
            at, reason = self.split(value, 2, "time reason")
            self.round()["abandoned"] = {"at": self.time(at), "reason": reason}
        elif name == "End":
            at, winner, level0, level1, laps0, laps1, reason = self.split(value, 7, "end")
            doc["end"] = {
                "at": self.time(at),
                "winner": None if winner == "-" else self.int(winner),
                "levels": [level0, level1],
                "laps": [self.int(laps0), self.int(laps1)],
                "reason": reason,
            }
        else:
            raise self.fail(f"unknown tag {name!r}")

    def split(self, value: str, n: int, what: str) -> list[str]:
        parts = value.split(" ", n - 1)
        if len(parts) != n or not all(parts):
            raise self.fail(f"{value!r}: expected {n} fields ({what})")
        return parts

    def int(self, text: str) -> int:
        if not re.fullmatch(r"-?\d{1,12}", text):
            raise self.fail(f"{text!r} is not an integer")
        return int(text)

    def rule(self, item: str) -> tuple[str, object]:
        key, sep, text = item.partition("=")
        if not sep:
            raise self.fail(f"rule {item!r} is not name=value")
        value: object = text
        if text in ("true", "false"):
            value = text == "true"
        elif text == "null":
            value = None
        elif re.fullmatch(r"-?\d{1,12}", text):
            value = int(text)
        return key, value

    def result(self, value: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in value.split():
            key, sep, text = item.partition("=")
            if not sep or key not in _RESULT_FIELDS:
                raise self.fail(f"{item!r}: a result field is one of {', '.join(_RESULT_FIELDS)}")
            if key in _CARD_LISTS:
                out[key] = [c for c in text.split(",") if c]
            elif key in _INT_LISTS:
                out[key] = [self.int(x) for x in text.split(",") if x]
            elif key in _TEXT_FIELDS:
                out[key] = text  # a band such as "80" is text, not a number
            elif text in ("true", "false"):
                out[key] = text == "true"
            else:
                out[key] = self.int(text) if re.fullmatch(r"-?\d{1,12}", text) else text
        return out

    def move(self, text: str) -> None:
        m = _MOVE.match(text)
        if m is None:
            raise self.fail(f"{text!r} is neither a tag nor a move ('12. S1 play 10H {{+3.25}}')")
        number, seat, action, cards, timeout, clock = m.groups()
        self.moves += 1
        if int(number) != self.moves:
            raise self.fail(f"move {self.moves} expected, got {number}")
        if clock is not None:
            at = self.time(clock)
        elif self.previous is not None:
            at = format_time(self.previous)
        else:
            raise self.fail("a move comes before the Started tag")
        self.previous = parse_time(at, f"line {self.line}")
        self.round()["actions"].append(
            {
                "at": at,
                "seat": None if seat is None else int(seat),
                "action": action,
                "cards": cards.split(),
                "timeout": timeout,
            }
        )


def read_text(text: str) -> GameRecord:
    """A record from its text notation, in canonical form; RecordInvalidError naming the
    line that cannot be read."""
    reader = _Reader()
    for number, raw in enumerate(text.splitlines(), start=1):
        reader.line = number
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if line.startswith("["):
            m = _TAG.match(line)
            if m is None:
                raise reader.fail(f'{line!r} is not a tag pair [Name "value"]')
            try:
                value = msgspec.json.decode(m.group(2), type=str)
            except msgspec.DecodeError:
                raise reader.fail(f"{m.group(2)} is not a quoted string") from None
            reader.tag(m.group(1), value)
        else:
            reader.move(line)
    reader.line = 0
    try:
        record = msgspec.convert(reader.doc, GameRecord)
    except msgspec.ValidationError as e:
        raise RecordInvalidError(f"the text record does not fit the format: {e}") from None
    return canonical(record)
