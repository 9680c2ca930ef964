"""``shengji export``: the store the environment names, written as day partitions an
analyst's DuckDB reads (docs/analysis.md)."""

from __future__ import annotations

import io
from pathlib import Path

import duckdb
import pytest

from infra.cli import build_parser
from infra.cli_export import run_export
from infra.settings import Settings
from infra.store import build_service
from services.analysis.schema import schema_markdown
from tests.archive.matches import bot_match, ended_match


def test_the_command_writes_partitions_by_day_that_duckdb_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.sqlite3"
    service = build_service(Settings(backend="sqlite", sqlite_path=path))
    try:
        played = [bot_match(service, "standard", rounds=2), bot_match(service, "tuolaji")]
        ended = ended_match(service)
    finally:
        service.close()
    monkeypatch.setenv("PERSISTENCE", "sqlite")
    monkeypatch.setenv("SQLITE_PATH", str(path))
    out_dir = tmp_path / "dump"
    for fmt in ("parquet", "csv"):
        args = build_parser().parse_args(["export", "--format", fmt, "--out", str(out_dir / fmt)])
        out, err = io.StringIO(), io.StringIO()
        assert run_export(args, out, err) == 0, err.getvalue()
        assert "exported 3 matches" in out.getvalue()
        days = sorted(p.name for p in (out_dir / fmt / "plays").iterdir())
        assert days and all(d.startswith("day=") for d in days)
    con = duckdb.connect()
    ids = sorted(
        row[0]
        for row in con.sql(
            f"select match_id from read_parquet('{out_dir}/parquet/matches/*/*.parquet', "
            "hive_partitioning=true)"
        ).fetchall()
    )
    assert ids == sorted(str(m) for m in [*played, ended])
    # R32, R33: the public dump (the default) keeps an abandoned round's seed secret
    [(seed,)] = con.sql(
        f"select seed from read_csv('{out_dir}/csv/rounds/*/*.csv', hive_partitioning=true) "
        f"where match_id = '{ended}'"
    ).fetchall()
    assert seed is None
    args = build_parser().parse_args(
        ["export", "--reader", "operator", "--out", str(out_dir / "full")]
    )
    assert run_export(args, io.StringIO(), io.StringIO()) == 0
    [(seed,)] = con.sql(
        f"select seed from read_parquet('{out_dir}/full/rounds/*/*.parquet') "
        f"where match_id = '{ended}'"
    ).fetchall()
    assert seed is not None and len(seed) == 64


def test_the_command_refuses_a_day_that_is_not_one() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["export", "--out", "x", "--since", "yesterday"])


def test_the_documented_schema_is_the_one_written() -> None:
    """docs/analysis.md's schema section is made from the tables' declaration."""
    doc = (Path(__file__).parents[2] / "docs" / "analysis.md").read_text()
    assert schema_markdown() in doc
