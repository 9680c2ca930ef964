"""YAML as the tests read it: with libyaml's parser (PyYAML's C loader, about three times
faster than the pure-Python one on the API documents; the same values), else the pure one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, faster."""
    return yaml.load(text, Loader=_LOADER)


def load_yaml_all(text: str) -> list[Any]:
    """``yaml.safe_load_all(text)``, faster."""
    return list(yaml.load_all(text, Loader=_LOADER))


def repository_yaml(name: str) -> Any:
    """A YAML file of the repository (``openapi.yaml``, ``k8s/configmap.yaml``…), parsed."""
    return load_yaml((ROOT / name).read_text(encoding="utf-8"))
