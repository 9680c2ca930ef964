"""The ``verify`` subcommand: recompute a deal from its revealed seed (RULES R35).

``shengji verify --seed HEX --commitment HEX [--first-seat N] [--hands H0 H1 H2 H3]
[--bottom B]`` checks ``sha256(seed) == commitment``, recomputes the deal (R16) and
compares it with the recorded hands and bottom (R4 notation, any order). Exit codes:
0 OK (the recomputed deal is printed), 1 mismatch (the first one is named), 2 malformed
input. Registered in :mod:`infra.cli` by :func:`add_verify_parser`; runs on its own as
``python -m infra.cli_verify``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from domain.rules.cards import parse_cards
from domain.rules.errors import InvalidInputError
from services.errors import VerificationError
from services.verify import verify_deal

OK, MISMATCH, INVALID = 0, 1, 2


def add_verify_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``verify`` to the ``shengji`` command's subparsers; returns its parser."""
    parser = subparsers.add_parser(
        "verify",
        help="check a revealed seed against its commitment and recompute the deal (R35)",
        description="Recompute a deal from its revealed seed and check it (RULES R16, R35).",
    )
    parser.add_argument("--seed", required=True, help="the revealed seed, 64 hex digits")
    parser.add_argument("--commitment", required=True, help="the published sha256, 64 hex")
    parser.add_argument(
        "--first-seat",
        type=int,
        choices=range(4),
        default=0,
        help="the seat drawn first, the dealer (round 1: 0) (default %(default)s)",
    )
    parser.add_argument(
        "--hands",
        nargs=4,
        metavar="HAND",
        help='the recorded hands of seats 0-3, each a string like "AS 10H SJ ..." (R4)',
    )
    parser.add_argument("--bottom", help="the recorded bottom as dealt, 8 cards (R4)")
    return parser


def run_verify(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``verify`` for parsed ``args``; print the outcome; return the exit code."""
    stdout = out or sys.stdout
    stderr = out or sys.stderr
    try:
        hands = None if args.hands is None else [parse_cards(h) for h in args.hands]
        bottom = None if args.bottom is None else parse_cards(args.bottom)
        check = verify_deal(args.seed, args.commitment, args.first_seat, hands, bottom)
    except VerificationError as e:
        stderr.write(f"MISMATCH: {e.detail}\n")
        return MISMATCH
    except InvalidInputError as e:
        stderr.write(f"invalid input: {e.detail}\n")
        return INVALID
    compared = " and ".join(
        what for what, given in (("hands", hands), ("bottom", bottom)) if given is not None
    )
    stdout.write(
        f"OK: sha256(seed) matches the commitment; deal recomputed from seat "
        f"{check.first_seat}{'; recorded ' + compared + ' match' if compared else ''} (R35)\n"
    )
    for seat, hand in enumerate(check.hands):
        stdout.write(f"seat {seat}: {' '.join(hand)}\n")
    stdout.write(f"bottom: {' '.join(check.bottom)}\n")
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shengji")
    add_verify_parser(parser.add_subparsers(dest="command", required=True))
    return run_verify(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
