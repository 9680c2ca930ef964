"""Replay a round record on a ``Round`` aggregate (docs/records.md).

A round record carries its match's levels and dealer, so it replays without its match:
the same command path as ``GameService.act`` — claim a passed deadline, deal again when
the round asks for it (R19, 暴动), make the move — each deal checked against its
commitment (R35), the result against the replay's (R26–R31).
"""

from __future__ import annotations

from uuid import NAMESPACE_URL, uuid5

import msgspec

from domain.game.actions import action_of, perform
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.cards import RANKS
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import RuleSet
from services.records.export import round_record
from services.records.format import (
    CLAIM,
    GameRecord,
    RecordRound,
    RecordTamperedError,
    parse_time,
    to_builtins,
)
from services.records.steps import (
    Cursor,
    Deals,
    ReplayClock,
    cards_of,
    check_scored,
    difference,
    moves_of,
    record_board,
    refused,
    timed_out,
    timers_of,
)


def replay_round(record: GameRecord) -> Round:
    """Replay canonical round record ``record`` on a ``Round`` aggregate: the same steps as
    a round command (claim a passed deadline, deal again when the round asks for it, then
    the action: :mod:`services.round_commands`)."""
    r = record.rounds[0]
    ctx = Cursor(round_number=r.number)
    if not r.deals:
        raise RecordTamperedError(
            f"round {r.number} lists no deal (R16)", rule="R16", round_number=r.number
        )
    deals = Deals(record, ctx)
    clock = ReplayClock(parse_time(r.deals[0].at, "rounds[0].deals[0].at"))
    rules = RuleSet.from_mapping(record.rules)
    levels = (RANKS.index(r.levels[0]), RANKS.index(r.levels[1]))
    board = record_board(r.board)
    round_ = Round.start(
        uuid5(NAMESPACE_URL, "shengji:record"),
        r.number,
        rules,
        levels,
        r.dealer,
        clock(),
        board=board,
    )

    def deal() -> None:
        seed = deals()
        d = r.deals[deals.next - 1]
        pacing = Pacing(d.interval_ms, d.declare_ms, d.window_ms)
        round_.deal(seed, clock(), pacing, first_seat=d.first_seat)  # R16, R36
        if board is not None and round_.phase is RoundPhase.REDEAL:
            deal()  # a board's shared redeal (R36): dealt again at once, as it was played

    def redeal_if_asked() -> None:
        if round_.phase is RoundPhase.REDEAL:
            deal()

    deal()
    for n, _, k, a in moves_of(record):
        ctx.move = n
        clock.set(a.at, f"move {n}", ctx)
        if round_.phase is RoundPhase.SCORED:
            raise RecordTamperedError(
                f"move {n} comes after round {r.number} was scored (R27, R28)",
                rule="R28",
                move=n,
                round_number=r.number,
                field=f"rounds[0].actions[{k}]",
            )
        version = round_.version
        try:
            round_.claim_deadlines(clock())
            redeal_if_asked()
            if a.action == CLAIM:
                if round_.version == version:
                    raise RecordTamperedError(
                        f"move {n} claims a deadline, but none has passed at {a.at} (R16, R20)",
                        rule="R20",
                        move=n,
                        round_number=r.number,
                        field=f"rounds[0].actions[{k}]",
                    )
            else:
                assert a.seat is not None
                if a.timeout is not None:
                    timed_out(a, ctx, timers_of(record))(None, round_, clock())
                perform(round_, a.seat, action_of(a.action, cards_of(a)), clock())
                redeal_if_asked()
        except RecordTamperedError:
            raise
        except ShengjiError as e:
            raise refused(e, a, ctx) from None
        if round_.deal_no > len(r.deals):
            raise RecordTamperedError(
                f"move {n} makes round {r.number} deal again, but the record lists "
                f"{len(r.deals)} deal(s) (R19)",
                rule="R19",
                move=n,
                round_number=r.number,
                field="rounds[0].deals",
            )
    check_scored(round_, r, 0, ctx)
    replayed = round_record(list(round_.collect_events()))
    if encode_round(replayed) != encode_round(r):
        raise difference(
            msgspec.structs.replace(record, rounds=[r]),
            {**to_builtins(record), "rounds": [msgspec.to_builtins(replayed)]},
        )
    return round_


def encode_round(r: RecordRound) -> bytes:
    return msgspec.json.encode(r)
