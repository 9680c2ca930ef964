"""Write ``schemathesis.toml``: the suite's schemathesis configuration for an external run.

    .venv/bin/python scripts/gen_schemathesis_toml.py          # write it
    .venv/bin/schemathesis run --checks all http://127.0.0.1:8000/schema/openapi.json

The checks' expectations (the documented semantic refusals, the 405 of the rules
oracle's path, the 412 of a stale If-Match) are the ones the suite runs with
(``tests.api.schemathesis_world.SHARED``), less what only the in-process run sets (its
base URL, its number of examples); ``tests/api/test_schemathesis_toml.py`` fails when they differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "schemathesis.toml"
HEADER = (
    "# Written by scripts/gen_schemathesis_toml.py from tests/api/schemathesis_world.py"
    " (SHARED); do not edit.\n"
)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"no TOML for {v!r}")


def _table(prefix: str, table: dict[str, Any], out: list[str]) -> None:
    """Scalars of ``table`` under ``[prefix]``, then its sub-tables."""
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    if prefix and scalars:
        out.append(f"[{prefix}]")
    out.extend(f"{k} = {_value(v)}" for k, v in scalars.items())
    for k, v in table.items():
        if isinstance(v, dict):
            _table(f"{prefix}.{k}" if prefix else k, v, out)


def toml_text(config: dict[str, Any]) -> str:
    config = {k: v for k, v in config.items() if k not in ("base-url", "generation")}
    operations = config.pop("operations", [])
    out: list[str] = []
    _table("", {k: v for k, v in config.items() if not isinstance(v, dict)}, out)
    for k, v in config.items():
        if isinstance(v, dict):
            _table(k, v, out)
    for op in operations:
        out.append("")
        out.append("[[operations]]")
        out.extend(f"{k} = {_value(v)}" for k, v in op.items() if not isinstance(v, dict))
        for k, v in op.items():
            if isinstance(v, dict):
                _table(f"operations.{k}", v, out)
    return HEADER + "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from tests.api.schemathesis_world import SHARED  # noqa: PLC0415 - after the path is set

    text = toml_text(SHARED)
    if "--check" in argv:
        return 0 if TARGET.exists() and TARGET.read_text() == text else 1
    TARGET.write_text(text)
    print(f"wrote {TARGET.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
