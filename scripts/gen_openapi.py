"""Write ``openapi.yaml`` at the repository root from the app (``--check``: only compare).

    .venv/bin/python scripts/gen_openapi.py          # regenerate
    .venv/bin/python scripts/gen_openapi.py --check  # exit 1 when the file has drifted

The document comes from :func:`infra.bootstrap.openapi_yaml` (the app on an in-memory store);
``tests/api/test_openapi_drift.py`` fails when the checked-in file differs from it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "openapi.yaml"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from infra.bootstrap import openapi_yaml  # noqa: PLC0415 - after the path is set

    text = openapi_yaml()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            sys.stderr.write("openapi.yaml has drifted: run scripts/gen_openapi.py\n")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {TARGET.relative_to(ROOT)} ({len(text)} bytes)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
