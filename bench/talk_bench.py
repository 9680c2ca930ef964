"""What table talk costs: ``make bench-talk`` / ``python -m bench.talk_bench``
(docs/decisions.md D-talk).

On the embedded SQLite store (durable commits, as served), four people play a round by
random legal moves (``bench._core_commands.next_command``) while, between any two moves,
a seat says a quick-chat phrase — every write through the bus, as the API sends it. Then
the reads: ``state?version=`` of the last version for a seat, the talk's part of it (the
messages said up to that version, the seat's mutes applied) and a seat's talk page.
Figures are medians; the ratios compare with what was measured in the same run. The
last line is machine-readable::

    talk say_ms=<f> move_ms=<f> say_move_ratio=<f> state_ms=<f> talk_share=<f> \\
        page_ms=<f> messages=<n>
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from uuid import UUID

from bench._core_commands import next_command
from domain.game.actions import action_of
from domain.rules.ruleset import RuleSet
from domain.talk.options import TalkOptions
from domain.talk.phrases import PHRASES
from infra.settings import Settings
from infra.store import build_service
from services.access import Credential
from services.bus import SERVICE
from services.handlers import build_bus
from services.history import state_at
from services.live import current_version
from services.match_commands import ClaimSeat, CreateMatch
from services.round_commands import Act
from services.talk.commands import Say
from services.talk.reads import Listener, said_by, talk_page


def _ms(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=120, help="moves of the round played")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reads", type=int, default=30, help="reads timed of each kind")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            backend="sqlite", sqlite_path=Path(folder) / "events.sqlite3", talk_per_minute=600
        )
        service = build_service(settings)
        bus = build_bus(service)
        made = bus.execute(CreateMatch(RuleSet(), name="talk", talk=TalkOptions(free_text=True)))
        match_id = UUID(made.match_id)
        seats = [
            Credential.parse(bus.execute(ClaimSeat(match_id, s, f"p{s}"), SERVICE).token)
            for s in range(4)
        ]
        say_ms, move_ms = [], []
        for n in range(args.moves):
            match = service.get_match(match_id)
            round_ = service.current_round(match)
            if round_ is None or not match.round_open:
                break
            seat, action, cards = next_command(round_, rng)
            act = Act(match_id, action_of(action, tuple(cards)), seat=seat)
            move_ms.append(_ms(lambda a=act: bus.execute(a)))
            said = Say(match_id, phrase=PHRASES[n % len(PHRASES)].id)
            say_ms.append(_ms(lambda s=said, c=seats[n % 4]: bus.execute(s, c)))
        version = current_version(service, match_id)
        match = service.get_match(match_id)
        state_ms, talk_ms, page_ms = [], [], []
        for _ in range(args.reads):
            state_ms.append(_ms(lambda: state_at(service, match_id, version, 0)))
            talk_ms.append(_ms(lambda: said_by(service, match, 0, version)))
            page_ms.append(_ms(lambda: talk_page(service, match, Listener("seat:0", 0))))
        messages = len(say_ms)
        service.close()
    say, move = statistics.median(say_ms), statistics.median(move_ms)
    state, talk = statistics.median(state_ms), statistics.median(talk_ms)
    page = statistics.median(page_ms)
    print(f"say (quick chat, one save with its talk):   {say:7.2f} ms median of {messages}")
    print(f"a move (the round's command):              {move:7.2f} ms median of {len(move_ms)}")
    print(f"state?version= for a seat:                  {state:7.2f} ms")
    print(f"  of which the talk ({messages} messages):       {talk:7.2f} ms")
    print(f"a seat's talk page ({messages} messages):       {page:7.2f} ms")
    print(
        f"talk say_ms={say:.2f} move_ms={move:.2f} say_move_ratio={say / move:.2f} "
        f"state_ms={state:.2f} talk_share={talk / state:.2f} "
        f"page_ms={page:.2f} messages={messages}"
    )


if __name__ == "__main__":
    main()
