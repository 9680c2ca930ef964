"""Parts of a command's cost in the API process, each against what it was, in one run:
``python -m bench.command_parts_bench`` (docs/decisions.md D-path4, D-path5, D-bus2).

* **save** — the CPU of this process per save of a command's two rows (a round event and
  an Idempotency-Key record, each ~300 bytes of state) through the PostgreSQL recorder
  (:class:`infra.pgstore.LockingInsertRecorder`, a throwaway cluster): its rows sent in
  binary (``%b``, the recorder's statement) and as the text of a composite array (``%s``,
  the library's), blocks alternated.
* **frames** — the CPU per version of the live follower's five frames (four seats and the
  spectators, :class:`services.live.LiveTable`): one look-up of the stored state for all
  five (:meth:`~services.live.LiveTable.frames`) and one per viewer (five
  :meth:`~services.live.LiveTable.frame` calls), the views kept (as after the command's
  answer built the acting seat's) and built (nothing kept), blocks alternated.
* **command** (``--parts command``) — the CPU of this process per round command through
  the bus (:meth:`services.bus.Bus.handle`, timed alone) on a throwaway PostgreSQL with the
  owner's trusted cache: 16 matches of four seats whose credentials send random legal moves
  (as the capacity bench's seats pick them: bury, follow or lead, now and then a
  declaration, else pass), each with a fresh Idempotency-Key. ``now`` takes turns command
  by command with each cut of D-bus2 undone (``--undo``: ``copies``, the match copied out of
  the cache; ``record``, the key's record saved as an aggregate) and with all undone
  (``before``); ``--profile FILE`` runs ``now`` alone under cProfile (CPU time).

Each figure is the best block's (the machine is shared: the least disturbed block is the
closest to the work itself); the load average is printed with every line. The last line:

    command-parts save_binary_ms=<f> save_text_ms=<f> save_ratio=<f> \\
        frames_one_us=<f> frames_each_us=<f> frames_ratio=<f> \\
        hub_own_ms=<f> hub_read_ms=<f> hub_ratio=<f> load=<1-min load>
    command-parts command_now_ms=<f> command_without_copies_ms=<f> \\
        command_without_record_ms=<f> command_before_ms=<f> load=<1-min load>
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import StoredEvent
from psycopg import sql

import services.views
from domain.game.actions import action_of
from domain.game.match import Match
from domain.rules.cards import parse_cards
from domain.rules.ruleset import RuleSet
from infra.hub import PostgresHub
from infra.pgcluster import throwaway_server
from infra.pgstore import LockingInsertRecorder
from infra.settings import Settings
from infra.store import build_service
from services.access import Credential
from services.bus import Bus
from services.game import GameService
from services.handlers import build_bus
from services.idempotency import IdempotencyRecord, Keys, Receipt, RequestKey, fingerprint
from services.live import LiveTable
from services.match_commands import ClaimSeat, CreateMatch
from services.round_commands import Act
from services.views import table_view
from tests.resilience.harness import drop_schema, fresh_schema
from tests.services.test_bus import Table

BLOCKS = 7


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def best(runs: dict[str, Callable[[], None]], n: int) -> dict[str, float]:
    """CPU seconds per call of each of ``runs``, the best of :data:`BLOCKS` blocks of ``n``
    calls, the runs' blocks alternated."""
    found = dict.fromkeys(runs, float("inf"))
    for _ in range(BLOCKS):
        for name, run in runs.items():
            started = time.process_time()
            for _ in range(n):
                run()
            found[name] = min(found[name], (time.process_time() - started) / n)
    return found


def saves() -> tuple[float, float]:
    """CPU ms per save, rows in binary and as text."""
    with throwaway_server() as cluster:
        schema = fresh_schema(cluster.url)
        settings = Settings(
            backend="postgres",
            database_url=cluster.url,
            postgres_schema=schema,
            postgres_pool_size=1,
            postgres_max_overflow=0,
        )
        service = build_service(settings)
        try:
            recorder = service.recorder
            assert isinstance(recorder, LockingInsertRecorder)
            binary = recorder.sql_invoke_pg_function_insert_events
            text = sql.SQL("SELECT * FROM {}.{}((%s))").format(
                sql.Identifier(schema), sql.Identifier(recorder.pg_function_name_insert_events)
            )
            state = bytes(range(48, 123)) * 4  # ~300 bytes of JSON-like text

            def save(statement: sql.Composed) -> Callable[[], None]:
                def run() -> None:
                    recorder.sql_invoke_pg_function_insert_events = statement
                    rows = [
                        StoredEvent(uuid.uuid4(), 1, "domain.game.round:Round.CardsPlayed", state),
                        StoredEvent(uuid.uuid4(), 1, "services.idempotency:Recorded", state),
                    ]
                    recorder.insert_events(rows)

                return run

            runs = {"binary": save(binary), "text": save(text)}
            best(runs, 50)  # warm: statements prepared, pool connection made
            found = best(runs, 400)
            return 1e3 * found["binary"], 1e3 * found["text"]
        finally:
            service.close()
            drop_schema(cluster.url, schema)


def frames() -> tuple[float, float, float, float]:
    """CPU µs per version of five frames: one look-up and one per viewer, the views kept
    and built."""
    t = Table()
    live = LiveTable.now(t.service, t.match_id)
    for _ in range(12):  # the bidding: every seat passes in turn
        match = t.service.get_match(t.match_id)
        round_ = t.service.current_round(match)
        legal = [table_view(match, round_, s, t.clock()).legal.actions for s in range(4)]
        seat = next((s for s in range(4) if "pass" in legal[s]), None)
        if seat is None:
            break
        t.run(seat)
        for _ in live.advance():
            pass
    step = live.last
    viewers = (0, 1, 2, 3, None)
    kept = services.views._stored

    def one() -> None:
        live.frames(step, viewers)

    def each() -> None:
        for viewer in viewers:
            live.frame(step, viewer)

    def built(run: Callable[[], None]) -> Callable[[], None]:
        def again() -> None:
            kept.clear()
            run()

        return again

    found = best({"one": one, "each": each}, 2000)
    fresh = best({"one": built(one), "each": built(each)}, 300)
    return 1e6 * found["one"], 1e6 * found["each"], 1e6 * fresh["one"], 1e6 * fresh["each"]


def hub() -> tuple[float, float]:
    """CPU ms per save of two followed matches, the hub taking the commit from the save
    and reading it back."""
    with throwaway_server() as cluster:
        schema = fresh_schema(cluster.url)
        settings = Settings(backend="postgres", database_url=cluster.url, postgres_schema=schema)
        service = build_service(settings)
        try:
            return asyncio.run(_hubs(settings, service))
        finally:
            service.close()
            drop_schema(cluster.url, schema)


async def _hubs(settings: Settings, service: GameService) -> tuple[float, float]:
    rules = RuleSet()

    def saves(n: int) -> list[Match]:
        return [Match.create(rules, service.clock(), match_id=uuid.uuid4()) for _ in range(2 * n)]

    def run(matches: list[Match]) -> None:
        for i in range(0, len(matches), 2):
            service.save(matches[i], matches[i + 1])

    def log_end() -> int:
        return service.recorder.max_notification_id() or 0

    async def block(hub: PostgresHub, n: int) -> float:
        matches = saves(n)
        subs = [hub.subscribe(m.id) for m in matches]  # followed, as the owner's are
        started = time.process_time()
        await asyncio.to_thread(run, matches)
        last = await asyncio.to_thread(log_end)
        while hub.position < last:  # every commit reached: woken, handed over
            await asyncio.sleep(0.001)
        spent = time.process_time() - started
        for sub in subs:
            sub.close()
        return spent / n

    kinds: dict[str, dict[str, Any]] = {"own": {}, "read": {"saves": None}}
    found = dict.fromkeys(kinds, float("inf"))
    for rounds, n in ((1, 50), (BLOCKS, 200)):  # the first warms: statements, connections
        for _ in range(rounds):
            for name, options in kinds.items():
                hub = PostgresHub.for_service(settings, service, poll_s=3600, **options)
                await hub.start()
                try:
                    found[name] = min(found[name], await block(hub, n))
                finally:
                    await hub.stop()
                    service.saves.recorded.remove(hub.recorded)
        if rounds == 1:
            found = dict.fromkeys(kinds, float("inf"))
    return 1e3 * found["own"], 1e3 * found["read"]


class Tables:
    """``n`` matches of four people on ``service``, played by random legal moves sent as
    the API sends them: the seat's credential, a fresh Idempotency-Key, through the bus."""

    def __init__(self, bus: Bus, n: int, seed: int = 1) -> None:
        self.bus = bus
        self.service = bus.service
        self.rng = random.Random(seed)
        self.tables: list[tuple[uuid.UUID, list[Credential]]] = []
        for i in range(n):
            self.tables.append(self.new_table(i))
        self.turn = 0

    def new_table(self, i: int) -> tuple[uuid.UUID, list[Credential]]:
        done = self.bus.execute(CreateMatch(RuleSet(), name=f"bench{i}"))
        match_id = uuid.UUID(done.match_id)
        seats = [
            Credential.parse(self.bus.execute(ClaimSeat(match_id, s, f"p{s}")).token)
            for s in range(4)
        ]
        return match_id, seats

    def next_move(self) -> tuple[Act, Credential, RequestKey] | None:
        """The next table's move (round robin): a seat the view offers something, and the
        move :func:`bench._capacity_stream.choose` would pick (never timed)."""
        for _ in range(len(self.tables)):
            self.turn = (self.turn + 1) % len(self.tables)
            match_id, seats = self.tables[self.turn]
            match = self.service.get_match(match_id)
            if match.finished:
                self.tables[self.turn] = self.new_table(self.turn + len(self.tables))
                continue
            round_ = self.service.current_round(match)
            now = self.service.clock()
            for seat in self.rng.sample(range(4), 4):
                view = table_view(match, round_, seat, now)
                legal = view.legal
                move: tuple[str, list[str]] | None = None
                if "bury" in legal.actions:
                    move = "bury", self.rng.sample(legal.bury_from, legal.bury_count)
                elif "play" in legal.actions:
                    if legal.follows:
                        move = "play", list(self.rng.choice(legal.follows))
                    elif view.hand:
                        move = "play", [self.rng.choice(view.hand)]
                elif "declare" in legal.actions and legal.shows and self.rng.random() < 0.1:
                    move = "declare", list(self.rng.choice(legal.shows))
                elif "pass" in legal.actions:
                    move = "pass", []
                if move is None:
                    continue
                name, cards = move
                command = Act(match_id, action_of(name, tuple(parse_cards(" ".join(cards)))))
                cred = seats[seat]
                body = f'{{"cards":{cards!r}}}'.encode()
                path = f"/v1/matches/{match_id}/actions/{name}"
                key = RequestKey.of(cred.digest, uuid.uuid4().hex, fingerprint("POST", path, body))
                return command, cred, key
        return None


def _undone(cut: str) -> Callable[[], Callable[[], None]]:
    """A cut of D-bus2 undone for a block (its "before"); the function put back after it."""

    def undo() -> Callable[[], None]:
        if cut == "copies":  # the round command's match copied from the cache, as before
            load = GameService.get_match

            def copied(
                self: GameService, match_id: uuid.UUID, version: int | None = None, **_: Any
            ) -> Match:
                return load(self, match_id, version)

            GameService.get_match = copied  # type: ignore[method-assign]
            return lambda: setattr(GameService, "get_match", load)
        if cut == "record":  # the key's record saved as an aggregate (cached), as before
            record = Keys.record

            def aggregate(self: Keys, key: RequestKey, receipt: Receipt, now: Any) -> list[Any]:
                return [IdempotencyRecord.record(key.rid, key.fingerprint, receipt, now)]

            Keys.record = aggregate  # type: ignore[method-assign]
            return lambda: setattr(Keys, "record", record)
        raise ValueError(f"no cut {cut!r}")

    return undo


def commands(
    n: int, tables: int, profile: str | None, cuts: list[str]
) -> tuple[dict[str, float], Counter[str]]:
    """CPU ms per round command through the bus on PostgreSQL (the owner's trusted cache,
    a fresh Idempotency-Key each), the calls of ``bus.handle`` alone timed, on ``tables``
    matches after a warm-up: ``now`` and, per name in ``cuts``, with that cut undone
    (``before``: all of them), taking turns command by command, ``n`` commands of each a
    block; the best of :data:`BLOCKS` blocks' means."""
    with throwaway_server() as cluster:
        schema = fresh_schema(cluster.url)
        settings = Settings(backend="postgres", database_url=cluster.url, postgres_schema=schema)
        deals = random.Random(7)  # the same deals, moves and commands in every run
        service = build_service(settings, seeds=lambda: deals.randbytes(32))
        try:
            service.hub_caught_up()  # the owner's cache, kept as its hub keeps it (D-owner)
            bus = build_bus(service)
            play = Tables(bus, tables)
            prof = cProfile.Profile(time.process_time) if profile else None
            done: Counter[str] = Counter()
            modes: dict[str, list[str]] = {"now": []}
            if cuts:
                modes.update({f"without {c}": [c] for c in cuts} if len(cuts) > 1 else {})
                modes["before"] = cuts

            def one(measuring: bool) -> float:
                move = play.next_move()
                if move is None:
                    raise RuntimeError("no table has a move")
                command, cred, key = move
                if prof is not None and measuring:
                    prof.enable()
                started = time.process_time()
                try:
                    bus.handle(command, cred, key=key)
                    outcome = "ok"
                except Exception as e:  # a refused move (409): counted, as the bench's
                    outcome = type(e).__name__
                took = time.process_time() - started
                if prof is not None and measuring:
                    prof.disable()
                if measuring:
                    done[f"{command.action.name} {outcome}"] += 1
                return took

            for _ in range(max(200, n // 5)):  # warm: statements prepared, tables dealt
                one(False)
            # the modes take turns command by command, so each sees the same mix of moves
            # (bidding, burying, leads, follows, a round's end); the best block's mean
            found = dict.fromkeys(modes, float("inf"))
            names = list(modes)
            for _ in range(BLOCKS if cuts else 1):
                spent = dict.fromkeys(modes, 0.0)
                for i in range(n * len(names)):
                    name = names[i % len(names)]
                    restore = [_undone(c)() for c in modes[name]]
                    try:
                        spent[name] += one(name == "now")
                    finally:
                        for put_back in restore:
                            put_back()
                for name in names:
                    found[name] = min(found[name], spent[name] / n)
            if prof is not None and profile:
                prof.dump_stats(profile)
                stats = pstats.Stats(prof)
                stats.sort_stats("cumulative").print_stats(45)
                stats.sort_stats("tottime").print_stats(35)
            return {k: 1e3 * v for k, v in found.items()}, done
        finally:
            service.close()
            drop_schema(cluster.url, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--parts",
        default="save,frames,hub",
        help="which parts: command, and save,frames,hub (any of these three runs the three)",
    )
    parser.add_argument(
        "--commands", type=int, default=300, help="the command part's commands per mode and block"
    )
    parser.add_argument("--tables", type=int, default=16, help="the command part's matches")
    parser.add_argument("--profile", help="cProfile the command part's calls into this file")
    parser.add_argument(
        "--undo",
        default="copies,record",
        help="the command part's cuts undone, taking turns with now (D-bus2): copies,record",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)  # as infra.serve
    print(f"load {load()} (1-min average, 2 cores)", flush=True)
    if "command" in parts:
        cuts = [c for c in args.undo.split(",") if c]
        found, done = commands(args.commands, args.tables, args.profile, cuts)
        print(
            "command (a round command through the bus, PostgreSQL, the owner's cache): "
            + ", ".join(f"{k} {v:.3f} ms CPU" for k, v in found.items())
            + f"; {dict(done)}; load {load()}",
            flush=True,
        )
        figures = " ".join(f"command_{k.replace(' ', '_')}_ms={v:.3f}" for k, v in found.items())
        print(f"command-parts {figures} load={load()}", flush=True)
    if not parts & {"save", "frames", "hub"}:
        return
    binary, text = saves()
    print(
        f"save (two rows): binary {binary:.3f} ms CPU, text {text:.3f} ms CPU, "
        f"binary/text {binary / text:.2f}; load {load()}",
        flush=True,
    )
    one, each, one_built, each_built = frames()
    print(
        f"frames (five viewers, views kept): one look-up {one:.1f} us, one per viewer "
        f"{each:.1f} us, ratio {one / each:.2f}; load {load()}",
        flush=True,
    )
    print(
        f"frames (five viewers, views built): one look-up {one_built:.1f} us, one per viewer "
        f"{each_built:.1f} us, ratio {one_built / each_built:.2f}; load {load()}",
        flush=True,
    )
    own, read = hub()
    print(
        f"hub (a save of two followed rows): taken from the save {own:.3f} ms CPU, read back "
        f"{read:.3f} ms CPU, ratio {own / read:.2f}; load {load()}",
        flush=True,
    )
    print(
        f"command-parts save_binary_ms={binary:.3f} save_text_ms={text:.3f} "
        f"save_ratio={binary / text:.2f} frames_one_us={one:.1f} frames_each_us={each:.1f} "
        f"frames_ratio={one / each:.2f} hub_own_ms={own:.3f} hub_read_ms={read:.3f} "
        f"hub_ratio={own / read:.2f} load={load()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
