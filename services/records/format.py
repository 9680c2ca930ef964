"""The portable game record (docs/records.md): its JSON document, canonical encoding and errors.

A record is everything needed to replay a finished match (or one scored round) with the
rules engine and nothing else: the rule set (§10), the seats, every deal's seed with its
commitment (R35) and pacing, every action in order with its time, and the results the
replay must reproduce (R26–R32). See docs/records.md for the format and its grammar.

**Canonical JSON** (:func:`encode`): msgspec Structs in camelCase, fields in the fixed
order they are declared here, the rule set's keys sorted, integers and strings only (no
floats), UTF-8, no insignificant whitespace. Times are UTC, ``YYYY-MM-DDTHH:MM:SS.ffffffZ``.
:func:`decode` reads a record (unknown fields refused) and
:func:`services.records.canonical.canonical` rewrites it in canonical form (``10h`` →
``10H``, times with microseconds), so export → import → export is byte-identical.

Errors: :class:`RecordInvalidError` (422 ``record-invalid``: the document cannot be read),
:class:`RecordTamperedError` (422 ``record-tampered``: it reads, but its replay refuses it —
naming the first bad move), :class:`RecordUnavailableError` (409 ``record-unavailable``: the
match or round is not finished, and a record reveals every card, R33).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, ClassVar, Final, Literal

import msgspec

from domain.rules.errors import IllegalMoveError, InvalidInputError, ShengjiError

FORMAT: Final = "shengji-record/1"
SEAT_ACTIONS: Final = ("declare", "overcall", "pass", "bury", "play", "redeal")
"""The seat commands of ``GameService.act`` a move replays."""
CLAIM: Final = "claim"
"""A move with no seat: a passed deadline was claimed (the end of a paced drawing, R16/R17;
the overcall window, R20)."""
ACTIONS: Final = (*SEAT_ACTIONS, CLAIM)

Hex64 = Annotated[str, msgspec.Meta(pattern="^[0-9a-fA-F]{64}$")]
Time = Annotated[str, msgspec.Meta(max_length=40)]
Seat = Annotated[int, msgspec.Meta(ge=0, le=3)]
Count = Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]
Ms = Annotated[int, msgspec.Meta(ge=0, le=3_600_000)]
Token = Annotated[str, msgspec.Meta(max_length=3)]
Rank = Literal["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
Text = Annotated[str, msgspec.Meta(max_length=200)]


class _Part(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Base of the record's parts: camelCase, unknown fields refused."""


class RecordSeat(_Part, kw_only=True):
    """A seat as it was taken (R1): the list is in the order the seats were taken."""

    seat: Seat
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    kind: Literal["human", "random", "heuristic", "strong"]
    at: Time


class RecordDeal(_Part, kw_only=True):
    """One deal of a round (a redeal adds another, R19, 暴动): the revealed seed, its
    commitment (R35), the first seat drawn (R16) and the pacing recorded in ``Dealt``."""

    at: Time
    first_seat: Seat
    interval_ms: Ms
    declare_ms: Ms
    window_ms: Ms
    seed: Hex64
    commitment: Hex64


class RecordAction(_Part, kw_only=True):
    """One move: a seat's command (``SEAT_ACTIONS``, cards in R4 notation — for a throw
    the cards attempted, R22) or a deadline ``claim`` (no seat, no cards)."""

    at: Time
    seat: Seat | None
    action: Literal["declare", "overcall", "pass", "bury", "play", "redeal", "claim"]
    cards: Annotated[list[Token], msgspec.Meta(max_length=108)]
    timeout: Annotated[str, msgspec.Meta(min_length=1, max_length=40)] | None
    """Who claimed the seat's turn timeout (``seat N``, ``organiser``, ``sweeper``) when this
    is the move the heuristic bot made for a seat over its time (``TurnTimedOut``)."""


class RecordTimers(_Part, kw_only=True):
    """The match's turn time limits in ms, 0 = none (``domain.game.timers``)."""

    declare_ms: Annotated[int, msgspec.Meta(ge=0, le=86_400_000)]
    bury_ms: Annotated[int, msgspec.Meta(ge=0, le=86_400_000)]
    play_ms: Annotated[int, msgspec.Meta(ge=0, le=86_400_000)]


class RecordResult(_Part, kw_only=True):
    """``RoundScored`` as the replay must reproduce it (R26–R31)."""

    dealer: Seat
    trick_points: Count
    bottom: Annotated[list[Token], msgspec.Meta(max_length=8)]
    bottom_points: Count
    multiplier: Count
    bottom_bonus: Count
    penalties: Annotated[list[int], msgspec.Meta(max_length=1000)]
    attackers_total: int
    outcome: Text
    band: Text
    levels_gained: Count
    defenders_keep: bool
    next_dealer: Seat


class RecordAbandoned(_Part, kw_only=True):
    """R32: the organiser ended the match during this round; it was never scored, so its
    deals and moves stay secret (R33) and are left out."""

    at: Time
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class RecordBoard(_Part, kw_only=True):
    """The board a round played in a duplicate event of boards (R36, docs/tournaments.md,
    "Boards"): its dealer, level rank and trump (None: no-trump, R9), fixed before the deal."""

    number: Annotated[int, msgspec.Meta(ge=1, le=100_000)]
    dealer: Seat
    level: Rank
    trump: Literal["S", "H", "C", "D"] | None


class RecordRound(_Part, kw_only=True, omit_defaults=True):
    number: Annotated[int, msgspec.Meta(ge=1, le=100_000)]
    dealer: Seat | None
    """The dealer fixed before the deal (None in round 1: 抢报 chooses it, R18)."""
    levels: Annotated[list[Rank], msgspec.Meta(min_length=2, max_length=2)]
    """Team levels {0,2} and {1,3} when the round began (R5)."""
    deals: Annotated[list[RecordDeal], msgspec.Meta(max_length=1000)]
    actions: Annotated[list[RecordAction], msgspec.Meta(max_length=100_000)]
    result: RecordResult | None
    abandoned: RecordAbandoned | None
    board: RecordBoard | None = None
    """The round's board (R36); absent for a round of an ordinary match (so the records of
    ordinary matches, and their digests, are as they were)."""


class RecordEnd(_Part, kw_only=True):
    """R32: how the match ended."""

    at: Time
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    winner: Annotated[int, msgspec.Meta(ge=0, le=1)] | None
    levels: Annotated[list[Rank], msgspec.Meta(min_length=2, max_length=2)]
    laps: Annotated[list[Count], msgspec.Meta(min_length=2, max_length=2)]


class RecordOrigin(_Part, kw_only=True):
    """Where the exporting server's match came from, when it was not played there: a
    record imported at ``imported_at`` whose digest was ``digest`` (its seeds and moves are
    the importer's, R35). The server's word, not the record's: import drops it, so the
    digest of an export is the digest of the record imported."""

    kind: Literal["imported"]
    imported_at: Time
    digest: Annotated[str, msgspec.Meta(max_length=80)]


class GameRecord(_Part, kw_only=True, omit_defaults=True):
    """A whole finished match (``kind`` ``match``) or one scored round (``round``)."""

    format: Literal["shengji-record/1"]
    kind: Literal["match", "round"]
    name: Annotated[str, msgspec.Meta(max_length=200)]
    preset: Annotated[str, msgspec.Meta(max_length=100)] | None
    rules: dict[str, bool | int | str | None]
    """The canonical rule set (``RuleSet.to_mapping``, RULES §10 field names)."""
    timers: RecordTimers | None
    """Turn time limits; None when the match had none."""
    started: Time
    """When the match was created."""
    seats: Annotated[list[RecordSeat], msgspec.Meta(max_length=4)]
    rounds: Annotated[list[RecordRound], msgspec.Meta(max_length=100_000)]
    end: RecordEnd | None
    """Match records: how it ended; round records: None."""
    origin: RecordOrigin | None = None
    """Left out for a match played on the exporting server; see :class:`RecordOrigin`."""


# -- errors -----------------------------------------------------------------------------------


class RecordInvalidError(InvalidInputError):
    """The document cannot be read as a record (syntax, a field, card notation)."""

    code = "record-invalid"


class RecordTamperedError(ShengjiError):
    """The record reads, but its replay through the rules engine refuses it: a move the
    rules forbid, a seed that is not its commitment's, a result the replay does not give.
    ``move`` is the first bad move's number (1-based over the whole record, as in the
    text notation; None when the fault comes before any move)."""

    code = "record-tampered"
    status: ClassVar[int] = 422

    def __init__(
        self,
        detail: str,
        *,
        rule: str | None = None,
        move: int | None = None,
        round_number: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(detail, rule=rule)
        self.move = move
        self.round_number = round_number
        self.field = field

    def facts(self) -> dict[str, Any]:
        """What the problem's ``errors`` entry names (the first bad move)."""
        return {
            k: v
            for k, v in (
                ("move", self.move),
                ("round", self.round_number),
                ("field", self.field),
                ("rule", self.rule),
            )
            if v is not None
        }


class RecordUnavailableError(IllegalMoveError):
    """R33: a record reveals every hand and seed, so only a finished match (or a scored
    round) has one."""

    code = "record-unavailable"
    rule = "R33"


# -- times ------------------------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """UTC, microseconds, ``Z``: ``2026-01-01T12:00:00.000000Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str, where: str) -> datetime:
    """An ISO 8601 time with a zone (``Z`` or an offset); RecordInvalidError otherwise."""
    try:
        moment = datetime.fromisoformat(
            text.replace("Z", "+00:00", 1) if text[-1:] == "Z" else text
        )
    except ValueError:
        raise RecordInvalidError(f"{where}: {text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise RecordInvalidError(f"{where}: {text!r} has no time zone (use Z for UTC)")
    if not 2000 <= moment.year <= 9998:
        raise RecordInvalidError(f"{where}: {text!r} is not a time of this service (2000..9998)")
    return moment.astimezone(UTC)


def offset_text(moment: datetime, start: datetime) -> str:
    """Seconds since ``start``, signed, trailing zeros dropped: ``+3.25``, ``+0``."""
    micros = (moment - start) // timedelta(microseconds=1)
    sign = "-" if micros < 0 else "+"
    whole, frac = divmod(abs(micros), 1_000_000)
    return f"{sign}{whole}" + (f".{frac:06d}".rstrip("0") if frac else "")


# -- encoding ---------------------------------------------------------------------------------

_ENCODER = msgspec.json.Encoder(order="deterministic")
_DECODER = msgspec.json.Decoder(GameRecord)


def encode(record: GameRecord) -> bytes:
    """The canonical JSON bytes of a record."""
    return _ENCODER.encode(record)


def digest(data: bytes) -> str:
    """``sha256:<hex>`` of a record's canonical bytes: the record's identity."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def decode(data: bytes | str) -> GameRecord:
    """Read a record's JSON (not yet canonical); RecordInvalidError naming the field."""
    try:
        return _DECODER.decode(data)
    except msgspec.ValidationError as e:
        raise RecordInvalidError(f"the record's JSON does not fit the format: {e}") from None
    except msgspec.DecodeError as e:
        raise RecordInvalidError(f"the record is not JSON: {e}") from None


def to_builtins(record: GameRecord) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(record, order="deterministic")
    return out
