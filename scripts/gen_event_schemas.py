"""Add the current version of every event type to ``services/event_schemas.json``.

    .venv/bin/python scripts/gen_event_schemas.py          # add new versions
    .venv/bin/python scripts/gen_event_schemas.py --check  # exit 1 on drift

A version already recorded is never rewritten (the store may hold events of it): an
event class whose fields changed must raise its ``class_version`` and add an
``upcast_vN_vN+1`` first (docs/events.md, "Changing an event").
``tests/services/test_event_schemas.py`` fails while the snapshot and the classes disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from services.event_schema import (  # noqa: PLC0415 - after the path is set
        EVENT_CLASSES,
        SNAPSHOT,
        drift,
        load_snapshot,
        updated_snapshot,
    )

    snapshot = load_snapshot() if SNAPSHOT.exists() else {}
    if "--check" in argv:
        problems = drift(snapshot, EVENT_CLASSES)
        for problem in problems:
            sys.stderr.write(problem + "\n")
        return 1 if problems else 0
    try:
        updated = updated_snapshot(snapshot)
    except ValueError as e:
        sys.stderr.write(f"{e}\n")
        return 1
    SNAPSHOT.write_text(json.dumps(updated, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {SNAPSHOT.relative_to(ROOT)} ({len(updated)} event types)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
