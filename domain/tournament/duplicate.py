"""Duplicate deals (RULES R35, R36): the seeds of a tournament round and the seating.

**Seeds.** For each tournament round the service draws a 32-byte secret and the
tournament publishes ``sha256(secret)`` when the round is scheduled. Every deal of every
table of that round takes its seed from the secret::

    seed(deal, deal_no) = HMAC-SHA256(key=secret, msg=f"shengji-duplicate:{deal}:{deal_no}")

``deal`` is the match round (1, 2, …), ``deal_no`` the deal of that round (1, then 2, …
after a redeal, R19 / 暴动). So table 1's third deal holds the same cards as table 4's.
Each ``Dealt`` publishes ``sha256(seed)`` (R35); when the tournament round ends the
secret is revealed, and anyone can recompute every seed and check every commitment.

**Seating.** Table ``i`` (0-based) seats its pairing's first team at seats 0/2 when
``i`` is even and at 1/3 when it is odd, so with two tables or more every seed's hands
are held by both sides of some pairing: the seats 0/2 hands by a "first" team at one
table and by a "second" team at the next. Every deal of a tournament table is drawn
from seat 0 whoever deals (R16 draws from the dealer; for R36 the service draws from
seat 0, ``first_seat``), so a seed's hands are identical seat for seat at every table.

**Boards** (docs/decisions.md D-boards). In a duplicate event of boards, deal ``d`` is
also the same *deal* at every table: :func:`board` draws its dealer, level rank and trump
from the secret (message ``shengji-board:{d}``), and the round is drawn from that dealer,
so every table holds the same hands seat for seat under the same trump.
"""

from __future__ import annotations

import hashlib
import hmac

from domain.rules.board import Board
from domain.rules.errors import InvalidInputError

SECRET_BYTES = 32


def check_secret(secret: bytes) -> bytes:
    if not isinstance(secret, bytes) or len(secret) != SECRET_BYTES:
        raise InvalidInputError(f"a tournament round's secret is {SECRET_BYTES} bytes", rule="R35")
    return secret


def secret_commitment(secret: bytes) -> str:
    """R35: the published commitment of a tournament round's secret (sha256, hex)."""
    return hashlib.sha256(check_secret(secret)).hexdigest()


def deal_seed(secret: bytes, deal: int, deal_no: int = 1) -> bytes:
    """R36: the seed of deal ``deal`` (its ``deal_no``-th dealing) at every table."""
    if type(deal) is not int or type(deal_no) is not int or deal < 1 or deal_no < 1:
        raise InvalidInputError(f"deal and deal_no are >= 1, got {deal!r}, {deal_no!r}")
    message = f"shengji-duplicate:{deal}:{deal_no}".encode()
    return hmac.new(check_secret(secret), message, hashlib.sha256).digest()


def first_team_parity(table: int) -> int:
    """The seat parity of a table's first team: 0 (seats 0/2) on even tables, else 1."""
    if type(table) is not int or table < 0:
        raise InvalidInputError(f"a table index is >= 0, got {table!r}")
    return table % 2


def seat_teams(table: int, first: int, second: int) -> tuple[int, int, int, int]:
    """The team at each seat 0..3 of ``table`` (R2: partners sit opposite)."""
    if first_team_parity(table) == 0:
        return (first, second, first, second)
    return (second, first, second, first)


def board(secret: bytes, deal: int) -> Board:
    """R36, docs/decisions.md D-boards: board ``deal`` of a duplicate event of boards — its
    dealer seat, level rank and trump suit (or no-trump, R9), the same at every table::

        digest = HMAC-SHA256(key=secret, msg=f"shengji-board:{deal}")
        dealer = int(digest[0:8]) mod 4; level = int(digest[8:16]) mod 13;
        trump = int(digest[16:24]) mod 5   (4: no-trump)

    (each ``int`` big-endian). Its cards are :func:`deal_seed` ``(secret, deal, deal_no)``,
    drawn from the dealer (R16)."""
    if type(deal) is not int or deal < 1:
        raise InvalidInputError(f"a board's deal is >= 1, got {deal!r}")
    message = f"shengji-board:{deal}".encode()
    digest = hmac.new(check_secret(secret), message, hashlib.sha256).digest()
    dealer, level, trump = (int.from_bytes(digest[8 * k : 8 * k + 8], "big") for k in range(3))
    suit = trump % 5
    return Board(deal, dealer % 4, level % 13, None if suit == 4 else suit)
