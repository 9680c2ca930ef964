"""``make bench-reads`` runs end to end on a tiny store and prints its summary line last
(the figures themselves are the bench's, never asserted)."""

from __future__ import annotations

import re

import pytest

from bench.reads_bench import main


def test_the_reads_bench_prints_its_summary_last(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--small", "20", "--large", "60", "--requests", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"reads small_p50_ms=[\d.]+ large_p50_ms=[\d.]+ ratio=[\d.]+", lines[-1])
    assert any("players/me/matches" in line for line in lines)
