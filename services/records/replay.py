"""Import a record: replay it through the rules engine and refuse tampering
(docs/records.md).

A match record is replayed through an in-memory (POPO) :class:`~services.game.GameService`
whose clock is the record's times and whose seeds are the record's seeds: the match is
created, the seats taken, and every move is the command it names, through the bus
(:class:`~services.round_commands.Act`, or ``ClaimDeadlines`` for a ``claim``), so the replay
runs the very code path that played the match, the policy between rounds included
(R30–R32). A round record is replayed on a
``Round`` aggregate the same way (its match's levels and dealer are in the record).

The replay stops at the first thing that is wrong, in the record's order, with a
:class:`~services.records.format.RecordTamperedError` naming that move and the rule:

* a seed that does not hash to its commitment (R35), checked as the replay deals it;
* a move the rules refuse — a changed card, a reordered or reassigned move — with the
  engine's own error and R-number (R16–R25), or a move after its round was scored;
* a time earlier than the move before it (the record is in order, R34), a ``claim``
  when no deadline has passed (R16, R20);
* a result, a next dealer or team levels that the replay does not give (R26–R32), and
  deals the round does not use (R19).

Last, the replayed match is exported again and must give the record's canonical bytes
(byte-identical export → import → export); any difference left is named by its path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated
from uuid import NAMESPACE_URL, UUID, uuid5

import msgspec
from msgspec import Meta

from domain.game.actions import action_of
from domain.game.match import ENTERED_PREFIX, RESIGNED, Entered
from domain.game.match_events import RoundBegun
from domain.game.round import RoundPhase, round_id
from domain.rules.cards import RANKS
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import RuleSet
from services import field_docs
from services.bus import Bus, Caller, Handler, Outcome
from services.dealer import Dealer
from services.game import GameService
from services.game_table import game_handlers
from services.idempotency import Fact
from services.match_commands import ClaimSeat, CreateMatch, FinishMatch, Resign, SeatBot
from services.records.canonical import canonical
from services.records.export import export_match, match_record
from services.records.format import (
    CLAIM,
    GameRecord,
    RecordInvalidError,
    RecordRound,
    RecordTamperedError,
    digest,
    encode,
    parse_time,
)
from services.records.replay_round import replay_round
from services.records.steps import (
    Cursor,
    Deals,
    ReplayClock,
    cards_of,
    check_scored,
    compare,
    count_moves,
    difference,
    refused,
    timers_of,
)
from services.round_commands import Act, ClaimDeadlines
from services.unit_of_work import Reading, UnitOfWork


def resign_team(bus: Bus, match_id: UUID, team: int) -> None:
    """``team`` concedes (R32): each of its people resigns (the first seat of a team of
    bots) — a record's end replayed."""
    match = bus.service.get_match(match_id)
    for seat in match.humans(team) or [team]:
        if bus.execute(Resign(match_id, seat)).finished:
            return


POPO: dict[str, str] = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def imported_match_id(record_digest: str) -> UUID:
    """The id a stored record gets: one per record (importing it again finds it)."""
    return uuid5(NAMESPACE_URL, f"shengji:record:{record_digest}")


# -- match records ---------------------------------------------------------------------------


def replay_match(record: GameRecord, match_id: UUID) -> GameService:
    """Replay canonical match record ``record`` on a fresh in-memory service as match
    ``match_id``; RecordTamperedError at the first bad move. The service holds the match."""
    ctx = Cursor()
    clock = ReplayClock(parse_time(record.started, "started"))
    deals = Deals(record, ctx)
    service = GameService(POPO, clock=clock, seeds=deals)
    bus = Bus(service, game_handlers(service, Dealer(deals)))
    try:
        _replay_match(bus, record, match_id, clock, ctx)
    except RecordTamperedError:
        raise
    except ShengjiError as e:  # the match itself cannot be set up as recorded
        raise RecordTamperedError(
            f"{ctx.where()}: {e.detail}", rule=e.rule, move=ctx.move, round_number=ctx.round_number
        ) from None
    replayed = encode(export_match(service, match_id))
    if replayed != encode(record):
        raise difference(record, msgspec.json.decode(replayed))
    return service


def _replay_match(
    bus: Bus, record: GameRecord, match_id: UUID, clock: ReplayClock, ctx: Cursor
) -> None:
    service = bus.service
    rules = RuleSet.from_mapping(record.rules)
    create = CreateMatch(
        rules, name=record.name, preset=record.preset, timers=timers_of(record), match_id=match_id
    )
    bus.execute(create)
    for i, s in enumerate(record.seats):
        clock.set(s.at, f"seat {s.seat}'s arrival (seats[{i}])", ctx)
        if s.kind == "human":
            bus.execute(ClaimSeat(match_id, s.seat, s.name))
        else:
            bus.execute(SeatBot(match_id, s.seat, s.kind, s.name))
    for index, r in enumerate(record.rounds):
        ctx.round_number = r.number
        match = service.get_match(match_id)
        if match.finished or match.round_number != r.number:
            raise RecordTamperedError(
                f"round {r.number} never begins in the replay: the match "
                + ("is over (R32)" if match.finished else f"is in round {match.round_number}"),
                rule="R32",
                move=ctx.move,
                round_number=r.number,
                field=f"rounds[{index}]",
            )
        round_ = service.get_round(round_id(match_id, r.number))
        begun = (round_.dealer, [RANKS[round_.levels[0]], RANKS[round_.levels[1]]])
        if begun != (r.dealer, r.levels):
            raise RecordTamperedError(
                f"round {r.number} begins with dealer {begun[0]} and levels {begun[1]} in the "
                f"replay; the record says dealer {r.dealer} and levels {r.levels} (R30, R31)",
                rule="R31",
                move=ctx.move,
                round_number=r.number,
                field=f"rounds[{index}].levels",
            )
        if r.abandoned is not None:
            continue  # the organiser ended the match during it: its moves stay secret (R33)
        _replay_round_moves(bus, match_id, r, index, clock, ctx)
    match = service.get_match(match_id)
    end = record.end
    assert end is not None
    if not match.finished:
        if match.round_number != len(record.rounds) or (
            record.rounds and record.rounds[-1].abandoned is None
        ):
            raise RecordTamperedError(
                f"after move {ctx.move} the match goes on in the replay (round "
                f"{match.round_number} is dealt), but the record ends it (R32)",
                rule="R32",
                move=ctx.move,
                round_number=match.round_number,
                field="end",
            )
        clock.set(end.at, "the match's end", ctx)
        if end.reason == RESIGNED and end.winner is not None:
            resign_team(bus, match_id, 1 - end.winner)  # R32: the loser conceded
        else:
            entered = Entered(end.winner) if end.reason.startswith(ENTERED_PREFIX) else None
            bus.execute(FinishMatch(match_id, end.reason, entered))
    replayed = match_record(list(service.events.get(match_id)), [])
    assert replayed.end is not None
    compare(end, replayed.end, "end", ctx, {"winner": "R32", "levels": "R30", "laps": "R32"})


def _replay_round_moves(
    bus: Bus,
    match_id: UUID,
    r: RecordRound,
    index: int,
    clock: ReplayClock,
    ctx: Cursor,
) -> None:
    service = bus.service
    rid = round_id(match_id, r.number)
    for k, a in enumerate(r.actions):
        ctx.move = (ctx.move or 0) + 1
        clock.set(a.at, f"move {ctx.move}", ctx)
        before = service.get_round(rid)
        if before.phase is RoundPhase.SCORED:
            raise RecordTamperedError(
                f"move {ctx.move} comes after round {r.number} was scored (R27, R28)",
                rule="R28",
                move=ctx.move,
                round_number=r.number,
                field=f"rounds[{index}].actions[{k}]",
            )
        try:
            if a.action == CLAIM:
                version = before.version
                bus.execute(ClaimDeadlines(match_id))
                if service.get_round(rid).version == version:
                    raise RecordTamperedError(
                        f"move {ctx.move} claims a deadline, but none has passed at {a.at} "
                        "(R16, R20)",
                        rule="R20",
                        move=ctx.move,
                        round_number=r.number,
                        field=f"rounds[{index}].actions[{k}]",
                    )
            else:
                assert a.seat is not None
                move = action_of(a.action, cards_of(a))
                bus.execute(Act(match_id, move, seat=a.seat, timed_out=a.timeout))
        except RecordTamperedError:
            raise
        except ShengjiError as e:
            raise refused(e, a, ctx) from None
        after = service.get_round(rid)
        if after.deal_no > len(r.deals):
            raise RecordTamperedError(
                f"move {ctx.move} makes round {r.number} deal again (deal {after.deal_no}), but "
                f"the record lists {len(r.deals)} deal(s) for it (R19)",
                rule="R19",
                move=ctx.move,
                round_number=r.number,
                field=f"rounds[{index}].deals",
            )
    check_scored(service.get_round(rid), r, index, ctx)


# -- import ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Imported:
    """A record that replayed: its canonical bytes and identity, and where it is stored."""

    kind: str
    digest: str
    rounds: int
    moves: int
    data: bytes
    """The canonical JSON (what exporting the stored match gives again)."""
    match_id: UUID | None
    """The stored match (``store``), else None."""
    created: bool
    """True when this import stored it; False when it was stored before (same digest)."""


def validated(record: GameRecord) -> Imported:
    """``record`` replayed and checked (RecordTamperedError at the first bad move): its
    canonical bytes and identity; nothing stored."""
    record = canonical(record)
    data = encode(record)
    ident = digest(data)
    if record.kind == "round":
        replay_round(record)
    else:
        replay_match(record, imported_match_id(ident))
    return Imported(record.kind, ident, len(record.rounds), count_moves(record), data, None, False)


def store_import(uow: UnitOfWork, record: GameRecord) -> Imported:
    """Keep match record ``record`` as a new, finished match (its id derives from the
    record's digest, so importing the same record again finds it instead of storing it
    twice): its replayed events, and the match's ``MatchImported`` (its origin: imported,
    when, which record), in the command's save."""
    record = canonical(record)
    if record.kind == "round":
        raise RecordInvalidError(
            "a round record is validated, not stored: only a whole match is archived as a "
            "match (import its match record)"
        )
    data = encode(record)
    ident = digest(data)
    match_id = imported_match_id(ident)
    stored = Imported(
        "match", ident, len(record.rounds), count_moves(record), data, match_id, False
    )
    if uow.service.recorder.select_events(match_id, limit=1):
        return stored
    popo = replay_match(record, match_id)
    events = list(popo.events.get(match_id))
    for e in list(events):
        if isinstance(e, RoundBegun):
            events += popo.events.get(e.round_id)
    match = popo.get_match(match_id)
    match.record_import(ident, uow.now)
    uow.record(*events, *match.collect_events())
    return dataclasses.replace(stored, created=True)


class RecordImported(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A record that replayed without fault."""

    ok: Annotated[bool, Meta(description="True: every move replayed under the rules")]
    kind: Annotated[str, Meta(description="`match` or `round`.")]
    digest: Annotated[
        str,
        Meta(
            description="`sha256:<hex>` of the record's canonical JSON: its identity.",
            examples=[field_docs.EXAMPLE_DIGEST],
        ),
    ]
    rounds: Annotated[int, Meta(description="Rounds in the record")]
    moves: Annotated[int, Meta(description="Moves replayed")]
    match_id: Annotated[
        str | None,
        Meta(
            description=(
                "The stored match (`store=true`): its record is this record, byte for byte."
            ),
            examples=[field_docs.EXAMPLE_ID],
        ),
    ]
    created: Annotated[
        bool,
        Meta(
            description=(
                "True when this request stored it; False when it was stored before, or not stored."
            )
        ),
    ]


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """Replay ``record`` through the rules engine (and, ``store``, keep a match record as a
    finished match)."""

    record: GameRecord
    store: bool = False


class ImportRecordHandler(Handler[ImportRecord, None, RecordImported]):
    """Anyone may (the hourly quota limits how many). The same record stored by a
    concurrent import: the store's conflict, and this one answers the stored match (200)."""

    attempts = 2

    def authorise(self, command: ImportRecord, caller: Caller) -> None:
        return None

    def handle(self, uow: UnitOfWork, command: ImportRecord, who: None) -> Outcome:
        done = store_import(uow, command.record) if command.store else validated(command.record)
        subject = done.match_id or imported_match_id(done.digest)
        facts: dict[str, Fact] = {
            "kind": done.kind,
            "digest": done.digest,
            "rounds": done.rounds,
            "moves": done.moves,
            "stored": done.match_id is not None,
        }
        return Outcome(201 if done.created else 200, subject, 0, facts=facts)

    def answer(
        self, command: ImportRecord, who: None, outcome: Outcome, state: Reading
    ) -> RecordImported:
        facts = outcome.facts
        return RecordImported(
            ok=True,
            kind=str(facts["kind"]),
            digest=str(facts["digest"]),
            rounds=int(str(facts["rounds"])),
            moves=int(str(facts["moves"])),
            match_id=str(outcome.subject) if facts.get("stored") else None,
            created=outcome.status == 201,
        )
