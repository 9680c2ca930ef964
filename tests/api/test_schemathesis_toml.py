"""The checked-in ``schemathesis.toml`` (for an external ``schemathesis run --checks all``)
says what the suite's own schemathesis runs say: the same documented expectations."""

from __future__ import annotations

import tomllib
from pathlib import Path

from scripts.gen_schemathesis_toml import TARGET, toml_text
from tests.api.schemathesis_world import SEMANTIC_PATHS, SHARED


def test_schemathesis_toml_is_the_suites_configuration() -> None:
    assert TARGET.read_text() == toml_text(SHARED), "run scripts/gen_schemathesis_toml.py"


def test_it_parses_and_names_every_semantic_path() -> None:
    config = tomllib.loads(Path(TARGET).read_text())
    paths = {
        p
        for op in config["operations"]
        for p in (
            [op["include-path"]] if isinstance(op["include-path"], str) else op["include-path"]
        )
    }
    assert set(SEMANTIC_PATHS) <= paths
