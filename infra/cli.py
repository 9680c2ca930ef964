"""Command-line entry point (the ``shengji`` console script, ``python -m infra.cli``).

``simulate`` plays complete rounds of one match between bots and prints a summary table:
the attackers' totals (RULES R29), the level-change bands (R30), the bottom bonus (R28),
throws (R22), declaring (R17–R20) and the speed. The same ``--seed`` prints the same
table, but for the speed line.

``verify`` recomputes a deal from its seed (R35, :mod:`infra.cli_verify`); ``migrate``
creates the event store's schema once, before replicas that run with
``CREATE_TABLES=false`` start (:mod:`infra.migrate`; a second run is a no-op).
``rebuild`` replays the whole log into every read model (:mod:`infra.cli_rebuild`);
``serve`` runs the HTTP service (:mod:`infra.serve`); ``worker`` runs the same process with
``PROCESS_ROLE=worker``: the background work beside API processes (docs/scaling.md);
``export`` writes the finished matches as tidy tables, Parquet or CSV (:mod:`infra.cli_export`).
Those two read :class:`~infra.settings.Settings` from the environment once, as the server
does, and build their store with the composition root's :mod:`infra.store`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from domain.bots import PLAYERS
from domain.bots.strong import DEFAULT_BUDGET, StrongPlayer
from domain.rules.cards import RANKS
from domain.rules.ruleset import PRESETS, preset
from domain.rules.scoring import Outcome, settle
from infra.cli_export import add_export_parser, run_export
from infra.cli_rebuild import add_rebuild_parser, run_rebuild
from infra.cli_verify import add_verify_parser, run_verify
from infra.migrate import add_migrate_parser, run_migrate
from services.simulator import SimulationSummary, simulate

DEFAULT_PLAYERS = "heuristic,random,heuristic,random"
BAR = 40


def _players(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if len(names) != 4 or any(name not in PLAYERS for name in names):
        raise argparse.ArgumentTypeError(
            f"four comma-separated players (seats 0-3) among {', '.join(sorted(PLAYERS))}, "
            f"got {text!r}"
        )
    return names


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shengji", description="Shengji (双升) service tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "serve",
        help="serve the HTTP API (the environment configures it: docs/configuration.md)",
    )
    commands.add_parser(
        "worker",
        help="run the background work beside API processes on PostgreSQL: the sweeper and "
        "timers, the bot driver, the tournament clerk, the lobby sweeper, the webhook outbox "
        "(PROCESS_ROLE=worker; health probes and metrics on HOST:PORT)",
    )
    sim = commands.add_parser(
        "simulate",
        help="play rounds between bots and print a summary",
        description="Play complete rounds of one match between bots (RULES R16–R32).",
    )
    sim.add_argument("--rounds", type=_positive, default=1000, help="rounds (default %(default)s)")
    sim.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="standard",
        help="rule set, RULES §10 (default %(default)s)",
    )
    sim.add_argument(
        "--players",
        type=_players,
        default=_players(DEFAULT_PLAYERS),
        help=f"players of seats 0,1,2,3 (default {DEFAULT_PLAYERS})",
    )
    sim.add_argument(
        "--seed", type=int, default=None, help="run seed for a reproducible run (default: random)"
    )
    sim.add_argument(
        "--strong-budget",
        type=_positive,
        default=DEFAULT_BUDGET,
        help="the strong bot's simulated plays per decision (default %(default)s, docs/bots.md)",
    )
    add_verify_parser(commands)
    add_migrate_parser(commands)
    add_rebuild_parser(commands)
    add_export_parser(commands)
    return parser


def _result(band: str, summary: SimulationSummary) -> str:
    """What R30 does for totals in ``band`` (the band's lowest total decides)."""
    s = settle(int(band.split("-", maxsplit=1)[0]), summary.rules)
    if s.outcome is Outcome.DEFENDERS_UP:
        return f"defenders +{s.levels}"
    if s.outcome is Outcome.ATTACKERS_TAKE_OVER:
        return "attackers take over"
    return f"attackers take over, +{s.levels}"


def _value(value: bool | int | str | None) -> str:
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def render_summary(summary: SimulationSummary, preset_name: str = "custom") -> list[str]:
    """The summary table as lines; only the last (speed) line varies between equal runs."""
    n = summary.rounds
    rules = ", ".join(f"{k}={_value(v)}" for k, v in summary.rules.to_mapping().items())
    seed = "random" if summary.seed is None else str(summary.seed)
    lines = [
        f"Shengji simulation: {n} rounds, preset {preset_name}, "
        f"players {','.join(summary.players)}, seed {seed}",
        f"rules: {rules}",
        "",
        f"Attackers' total T (R29): mean {summary.mean_total:.1f}, stdev {summary.stdev_total:.1f}",
    ]
    histogram = summary.histogram(width=20, top=200)
    most = max((count for _, count in histogram), default=0) or 1
    for label, count in histogram:
        bar = "#" * round(BAR * count / most)
        lines.append(f"  {label:>8} {count:7d} {_pct(count, n)}  {bar}")
    lines += ["", "Level change (R30):"]
    for band, count in summary.bands.items():
        lines.append(f"  {band:>8} {_result(band, summary):<28} {count:7d} {_pct(count, n)}")
    lines += [
        "",
        f"Bottom (R28): attackers won the last trick in {summary.last_trick_attackers} rounds "
        f"({_pct(summary.last_trick_attackers, n).strip()}); bonus in {summary.bonus_rounds} "
        f"rounds ({_pct(summary.bonus_rounds, n).strip()}), mean bonus {summary.mean_bonus:.1f}",
        f"Throws (R22): {summary.throws} attempted, {summary.failed_throws} failed "
        f"({_pct(summary.failed_throws, summary.throws).strip()})",
        f"Declaring (R17-R20): {summary.overcalls} overcalls, {summary.fallbacks} R19 fallbacks, "
        f"{summary.redeals} redeals",
        f"Match (R30-R32): {summary.matches_finished} finished; levels now "
        f"{RANKS[summary.levels[0]]} (seats 0,2) and {RANKS[summary.levels[1]]} (seats 1,3)",
        f"Speed: {summary.rounds_per_s:.1f} rounds/s, {summary.plays_per_s:.0f} plays/s "
        f"({summary.plays} plays validated)",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command in ("serve", "worker"):
        # The environment configures the process (docs/configuration.md); `worker` is a
        # server whose role is the background work (PROCESS_ROLE=worker, docs/scaling.md).
        from infra.serve import main as serve  # noqa: PLC0415 - the web server only to serve

        role = {"PROCESS_ROLE": "worker"} if args.command == "worker" else {}
        serve({**os.environ, **role})
        return
    if args.command == "verify":
        sys.exit(run_verify(args))
    if args.command == "migrate":
        sys.exit(run_migrate(args))
    if args.command == "rebuild":
        sys.exit(run_rebuild(args))
    if args.command == "export":
        sys.exit(run_export(args))
    if args.command == "simulate":
        players = [
            StrongPlayer(args.strong_budget) if name == "strong" else name for name in args.players
        ]
        summary = simulate(args.rounds, rules=preset(args.preset), players=players, seed=args.seed)
        sys.stdout.write("\n".join(render_summary(summary, args.preset)) + "\n")


if __name__ == "__main__":
    main()
