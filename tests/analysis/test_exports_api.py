"""``GET /v1/exports/{table}.parquet|.csv`` driven as an archivist drives it: download
the files, open them in DuckDB, ask; the public's files are redacted (R33, R35, R36), the
operator's are whole, and a wrong token or file name is a problem, not a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from litestar.testing import TestClient

from services.records.bulk import BulkFilter, finished_records
from tests.analysis.population import Population
from tests.apps import make_app

TOKEN = "operator-token-0123456789"


def download(client: TestClient, file: str, folder: Path, token: str | None = None) -> Path:  # type: ignore[type-arg]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with client.stream("GET", f"/v1/exports/{file}", headers=headers) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith(
            "application/vnd.apache.parquet" if file.endswith(".parquet") else "text/csv"
        )
        assert file in r.headers["content-disposition"]
        path = folder / file
        with path.open("wb") as f:
            for chunk in r.iter_bytes():
                f.write(chunk)
    return path


def test_an_archivist_reads_the_served_files_in_duckdb(
    population: Population, tmp_path: Path
) -> None:
    service = population.service
    with TestClient(make_app(service, operator_token=TOKEN)) as client:
        public = tmp_path / "public"
        operator = tmp_path / "operator"
        public.mkdir()
        operator.mkdir()
        for table in ("matches", "rounds", "plays", "ratings"):
            download(client, f"{table}.parquet", public)
            download(client, f"{table}.parquet", operator, TOKEN)
        download(client, "rounds.csv", public)
    con = duckdb.connect()
    records = list(finished_records(service, BulkFilter()))
    [(matches, days)] = con.sql(
        f"select count(*), count(distinct day) from '{public}/matches.parquet'"
    ).fetchall()
    assert matches == len(records) and days >= 1
    # R36: the table whose tournament round is in play is the operator's only
    embargoed = str(population.embargoed)
    assert con.sql(
        f"select count(*) from '{public}/plays.parquet' where match_id = '{embargoed}'"
    ).fetchall() == [(0,)]
    assert con.sql(
        f"select count(*) > 0 from '{operator}/plays.parquet' where match_id = '{embargoed}'"
    ).fetchall() == [(True,)]
    # R32, R33: the abandoned round's seed is the operator's only
    ended = str(population.ended)
    for folder, hidden in ((public, True), (operator, False)):
        assert con.sql(
            f"select seed is null from '{folder}/rounds.parquet' where match_id = '{ended}'"
        ).fetchall() == [(hidden,)]
    # a row per player per rated match; the account the operator's only; the erased
    # player's rows gone (docs/players.md)
    erased, kept = str(population.erased), str(population.kept)
    [(rows, accounts)] = con.sql(
        f"select count(*), count(account) from '{public}/ratings.parquet'"
    ).fetchall()
    assert rows >= 2 and accounts == 0
    found = {a for (a,) in con.sql(f"select account from '{operator}/ratings.parquet'").fetchall()}
    assert kept in found and erased not in found and len(found) == rows
    # the CSV is the same table
    assert (
        con.sql(
            f"select count(*), sum(attackers_total) from read_csv('{public}/rounds.csv')"
        ).fetchall()
        == con.sql(
            f"select count(*), sum(attackers_total) from '{public}/rounds.parquet'"
        ).fetchall()
    )


@pytest.fixture(scope="module")
def empty() -> Iterator[TestClient]:  # type: ignore[type-arg]
    """One app on an empty store (an operator token set) for the refusals and the empty
    files: they only read."""
    with TestClient(make_app(operator_token=TOKEN)) as client:
        yield client


@pytest.mark.parametrize(
    ("file", "headers", "status", "kind"),
    [
        ("plays.parquet", {"Authorization": f"Bearer {TOKEN}x"}, 401, "unauthorized"),
        ("plays.json", {}, 422, "validation-failed"),
        ("hands.parquet", {}, 422, "validation-failed"),
    ],
)
def test_refusals_are_problems(
    empty: TestClient,  # type: ignore[type-arg]
    file: str,
    headers: dict[str, str],
    status: int,
    kind: str | None,
) -> None:
    r = empty.get(f"/v1/exports/{file}", headers=headers)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    if kind:
        assert r.json()["type"].endswith(kind)


def test_an_empty_history_is_an_empty_table_with_its_columns(
    empty: TestClient,  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    path = download(empty, "tricks.parquet", tmp_path)
    columns = [c[0] for c in duckdb.connect().sql(f"describe '{path}'").fetchall()]
    assert columns[:4] == ["day", "match_id", "round", "trick"]
    path = download(empty, "ratings.parquet", tmp_path)
    columns = [c[0] for c in duckdb.connect().sql(f"describe '{path}'").fetchall()]
    assert columns[:5] == ["day", "match_id", "seat", "player", "account"]
