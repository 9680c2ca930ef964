"""``shengji rebuild``: replay the whole log into every read model
(docs/operations.md, "Rebuilding read models").

Reads the store the environment configures (as ``shengji serve``: ``DATABASE_URL``,
``SQLITE_PATH`` …), resets every registered projection (:mod:`services.projections`) and
the lists' read models (``lists``, :mod:`infra.readviews`), replays the log into them
from position 0, drawing a progress bar with the rate on stderr, and puts the rebuilt
lists in place of the stored ones (one transaction). ``--check`` instead compares each
rebuilt model with what the service has now (the stored lists; the models computed on
demand) and exits 1 on any difference; ``--only NAME`` (or ``shengji rebuild NAME …``)
rebuilds some projections only.
On SQLite the server must be stopped first (one process owns the file).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from infra.careerviews import career_factories
from infra.cli_store import open_store
from infra.readviews import read_model_factories
from infra.socialviews import social_factories
from services.projections import Factory, Progress, Stored, differences, rebuild, registered

BAR = 30


def factories() -> dict[str, Factory]:
    """Every projection ``shengji rebuild`` knows, by name."""
    found = {**registered(), **read_model_factories(), **career_factories(), **social_factories()}
    return dict(sorted(found.items()))


def add_rebuild_parser(commands: Any) -> None:
    names = ", ".join(factories())
    parser = commands.add_parser(
        "rebuild",
        help="replay the whole log into every read model",
        description=f"Replay the whole event log into every read model ({names}).",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare with the stored and live read models, change nothing (exit 1 on drift)",
    )
    parser.add_argument(
        "--only", action="append", default=None, metavar="NAME", help="rebuild NAME only"
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="rebuild these only (as --only NAME)"
    )


def bar(p: Progress) -> str:
    """``[#####-----]  1234/5678 events  9,876 ev/s``."""
    share = p.position / p.last if p.last else 1.0
    filled = round(BAR * share)
    return (
        f"\r[{'#' * filled}{'-' * (BAR - filled)}] {p.position:>9}/{p.last} "
        f"positions, {p.done} events, {p.rate:,.0f} ev/s"
    )


def run_rebuild(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    known = factories()
    only = [*(args.only or ()), *getattr(args, "names", ())]
    unknown = sorted(set(only) - set(known))
    if unknown:
        err.write(
            f"shengji rebuild: no projection {', '.join(unknown)}; known: {', '.join(known)}\n"
        )
        return 2
    service = open_store("rebuild", err)
    if service is None:
        return 2
    try:
        chosen = [f(service) for name, f in known.items() if not only or name in only]

        def draw(p: Progress) -> None:
            err.write(bar(p))

        projections, final = rebuild(service, chosen, progress=draw)
        err.write("\n")
        out.write(
            f"rebuilt {', '.join(p.name for p in projections)} from {final.done} events "
            f"({final.rate:,.0f} events/s)\n"
        )
        if not args.check:
            for projection in projections:
                if isinstance(projection, Stored):
                    projection.store()
            return 0
        drifted = [line for p in projections for line in differences(p)]
        for line in drifted:
            out.write(f"differs: {line}\n")
        out.write("check: " + ("DIFFERENCES\n" if drifted else "every read model matches\n"))
        return 1 if drifted else 0
    finally:
        service.close()
