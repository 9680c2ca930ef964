"""The dumps read as an analyst reads them: DuckDB over the Parquet (and CSV) files of a
generated population, answering questions whose answers are computed here independently,
from the records of the same matches (``GET /v1/records``'s lines) through the rules
engine's own functions (R15, R19, R22, R29, R30)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from domain.rules.cards import parse_cards, suit_of
from domain.rules.context import trump_context
from domain.rules.shapes import ShapeKind, decompose
from domain.rules.shuffle import bottom_third_card, deal, seed_from_hex, shuffle_deck
from services.analysis.dump import write_dump
from services.ratings.boards import RatingModels
from services.ratings.model import MODEL, Rating
from services.ratings.rows import HistoryRow
from services.records.bulk import BulkFilter, finished_records
from services.records.format import GameRecord, RecordRound, decode
from tests.analysis.population import Population

RANK_INDEX = {
    r: i for i, r in enumerate(("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"))
}


@pytest.fixture(scope="module")
def dumps(population: Population, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dumps")
    ratings = RatingModels.in_memory(population.service)
    for reader in ("public", "operator"):
        write_dump(population.service, root / reader, "parquet", reader, ratings=ratings)
    write_dump(population.service, root / "csv", "csv", "public", ratings=ratings)
    return {"public": root / "public", "operator": root / "operator", "csv": root / "csv"}


def sql(folder: Path, query: str, fmt: str = "parquet") -> list[tuple[Any, ...]]:
    """``query`` with ``{table}`` read from ``folder``'s partitions, as an analyst would."""
    con = duckdb.connect()
    for table in ("matches", "rounds", "declarations", "tricks", "plays", "results", "ratings"):
        reader = "read_parquet" if fmt == "parquet" else "read_csv"
        con.execute(
            f"create view {table} as select * from {reader}('{folder}/{table}/*/*.{fmt}', "
            "hive_partitioning=true)"
        )
    return con.sql(query).fetchall()


def records(population: Population) -> list[GameRecord]:
    """The public records of the finished matches (the bulk export's lines)."""
    return [decode(line) for line in finished_records(population.service, BulkFilter())]


def scored(record: GameRecord) -> Iterator[RecordRound]:
    return (r for r in record.rounds if r.result is not None)


# -- the answers, from the records -----------------------------------------------------------


def attackers_mean_by_preset(recs: list[GameRecord]) -> dict[str, float]:
    """R29: the attackers' total T, averaged over the scored rounds of each preset."""
    totals: dict[str, list[int]] = defaultdict(list)
    for rec in recs:
        for r in scored(rec):
            assert r.result is not None
            totals[rec.preset or "custom"].append(r.result.attackers_total)
    return {k: sum(v) / len(v) for k, v in totals.items()}


def trump_of(r: RecordRound) -> tuple[int, int | None]:
    """The round's level and trump from its record: the last show of the last deal
    (R17–R20; jokers: no trump), else the bottom's third card (R19)."""
    last_deal = max((i for i, a in enumerate(r.actions) if a.action == "redeal"), default=-1)
    shows = [a for a in r.actions[last_deal + 1 :] if a.action in ("declare", "overcall")]
    dealer = r.result.dealer if r.result is not None else 0
    level = RANK_INDEX[r.levels[dealer % 2]]
    if shows:
        return level, suit_of(parse_cards(shows[-1].cards)[0])
    last = r.deals[-1]
    dealt = deal(shuffle_deck(seed_from_hex(last.seed)), last.first_seat)
    return level, suit_of(bottom_third_card(dealt.bottom))


def throws(recs: list[GameRecord]) -> tuple[int, int]:
    """(throws led, throws that failed): a lead the shape rules call a throw (R15), failed
    when the seats after it follow fewer cards than it attempted (R22: the forced cards
    are what stands; the record keeps the attempt)."""
    thrown = failed = 0
    for rec in recs:
        for r in scored(rec):
            level, trump = trump_of(r)
            ctx = trump_context(level, trump)
            plays = [a for a in r.actions if a.action == "play"]
            for k in range(0, len(plays), 4):
                lead, follow = plays[k], plays[k + 1]
                if decompose(ctx, parse_cards(lead.cards)).kind is ShapeKind.THROW:
                    thrown += 1
                    failed += len(follow.cards) != len(lead.cards)
    return thrown, failed


def level_gain_by_kind(recs: list[GameRecord]) -> dict[str, float]:
    """R30, R31: each bot kind's levels gained per round it played (teams of one kind):
    the defenders go up when they keep the deal, else the attackers take it over."""
    gained: dict[str, int] = defaultdict(int)
    rounds: dict[str, int] = defaultdict(int)
    for rec in recs:
        kinds = {s.seat: s.kind for s in rec.seats}
        for r in scored(rec):
            res = r.result
            assert res is not None
            defenders = res.dealer % 2
            up = defenders if res.defenders_keep else 1 - defenders
            for team in (0, 1):
                if kinds[team] != kinds[team + 2]:
                    continue
                rounds[kinds[team]] += 1
                gained[kinds[team]] += res.levels_gained if team == up else 0
    return {k: gained[k] / rounds[k] for k in rounds}


# -- the questions ---------------------------------------------------------------------------


def test_the_attackers_average_points_per_round_by_preset(
    population: Population, dumps: dict[str, Path]
) -> None:
    """R29 by preset (§10): the dump's answer is the records' answer."""
    expected = attackers_mean_by_preset(records(population))
    rows = sql(
        dumps["public"],
        "select coalesce(m.preset, 'custom'), avg(r.attackers_total) from rounds r "
        "join matches m using (match_id) where not r.abandoned group by 1",
    )
    assert {p: pytest.approx(v) for p, v in rows} == expected
    assert {"standard", "tuolaji", "duijia"} <= set(expected)


def test_the_share_of_failed_throws(population: Population, dumps: dict[str, Path]) -> None:
    """R15, R22: throws led and the share that failed, from the tricks and the plays."""
    thrown, failed = throws(records(population))
    assert thrown > 0, "the population has throws to count"
    [(dump_thrown, dump_failed, share)] = sql(
        dumps["public"],
        "select sum(threw::int), sum(failed_throw::int), "
        "sum(failed_throw::int) / sum(threw::int) from tricks",
    )
    assert (dump_thrown, dump_failed) == (thrown, failed)
    assert share == pytest.approx(failed / thrown)
    [(plays_failed,)] = sql(dumps["public"], "select count(*) from plays where failed_throw")
    assert plays_failed == failed


def test_each_bot_kinds_level_gain_per_round(
    population: Population, dumps: dict[str, Path]
) -> None:
    """R30, R31: levels gained per round, by the kind of bot both seats of a team are."""
    expected = level_gain_by_kind(records(population))
    rows = sql(
        dumps["public"],
        "select kind, avg(levels_gained) from results where kind <> 'mixed' group by kind",
    )
    assert {k: pytest.approx(v) for k, v in rows} == expected
    assert {"random", "heuristic"} <= set(expected)


def test_the_csv_dump_answers_the_same(dumps: dict[str, Path]) -> None:
    query = (
        "select m.preset, count(*), sum(r.attackers_total) from rounds r "
        "join matches m using (match_id) where not r.abandoned group by m.preset order by 1"
    )
    assert sql(dumps["csv"], query, "csv") == sql(dumps["public"], query)


def test_every_move_of_the_records_is_a_row(population: Population, dumps: dict[str, Path]) -> None:
    """Nothing dropped: as many matches, scored rounds, shows and plays as the records hold."""
    recs = records(population)
    moves: dict[str, int] = defaultdict(int)
    for rec in recs:
        for r in rec.rounds:
            for a in r.actions:
                moves[a.action] += 1
    [(matches, rounds, shows, plays)] = sql(
        dumps["public"],
        "select (select count(*) from matches), "
        "(select count(*) from rounds where not abandoned), "
        "(select count(*) from declarations), (select count(*) from plays)",
    )
    assert matches == len(recs)
    assert rounds == sum(1 for rec in recs for _ in scored(rec))
    assert shows == moves["declare"] + moves["overcall"]
    assert plays == moves["play"]


# -- redaction -------------------------------------------------------------------------------


def test_the_public_never_sees_a_seed_or_bottom_that_was_never_revealed(
    population: Population, dumps: dict[str, Path]
) -> None:
    """R32, R33, R35: a round abandoned unscored keeps its seed and bottom from the public;
    the operator reads them."""
    ended = str(population.ended)
    query = (
        f"select abandoned, seed is null, commitment <> '' from rounds where match_id = '{ended}'"
    )
    assert sql(dumps["public"], query) == [(True, True, True)]
    assert sql(dumps["operator"], query) == [(True, False, True)]
    [(hidden,)] = sql(
        dumps["public"],
        "select count(*) from rounds where not abandoned and (seed is null or bottom is null)",
    )
    assert hidden == 0, "a scored round's seed and bottom are public (R33, R35)"


def test_a_table_of_a_tournament_round_in_play_is_left_out_for_the_public(
    population: Population, dumps: dict[str, Path]
) -> None:
    """R36: its deals are played at other tables; the operator's dump has it."""
    table = str(population.embargoed)
    for name in ("matches", "rounds", "plays"):
        query = f"select count(*) from {name} where match_id = '{table}'"
        assert sql(dumps["public"], query) == [(0,)]
        assert sql(dumps["operator"], query)[0][0] > 0
    done = sql(
        dumps["public"],
        f"select count(*) from matches where tournament_id = '{population.tournament}'",
    )
    assert done == [(2,)], "a completed tournament round's tables are public"


def test_accounts_are_the_operators_only(population: Population, dumps: dict[str, Path]) -> None:
    """A seat's account links a person's matches: never public."""
    query = (
        "select account_0, account_1, account_2, account_3, kind_0, kind_1, kind_2, kind_3 "
        f"from matches where match_id = '{population.quick_play}'"
    )
    [public] = sql(dumps["public"], query)
    [operator] = sql(dumps["operator"], query)
    assert public[:4] == (None, None, None, None)
    humans = [s for s in range(4) if operator[4 + s] == "human"]
    assert len(humans) == 1 and operator[humans[0]] is not None


def test_the_ratings_table_is_the_rating_history(
    population: Population, dumps: dict[str, Path]
) -> None:
    """D-ratings: a row per player per rated match, as the ratings' history holds it; the
    account is the operator's only; an erased player's rows are gone (docs/players.md)."""
    view = RatingModels.in_memory(population.service).fresh()
    history = {
        (str(h.match_id), str(h.player_id)): h for h in view.rows() if isinstance(h, HistoryRow)
    }
    rows = sql(
        dumps["operator"],
        "select match_id, account, seat, player, family, weight, mu_before, sigma_before, "
        "mu_after, sigma_after, rating_before, rating_after, model from ratings",
    )
    assert {(m, a) for m, a, *_ in rows} == set(history)
    for m, a, seat, name, fam, weight, mb, sb, ma, sa, before, after, model in rows:
        h = history[m, a]
        assert (fam, weight, mb, sb, ma, sa) == ("standard", h.weight, *moved(h))
        assert (before, after) == (Rating(mb, sb).shown, Rating(ma, sa).shown)
        assert model == f"{MODEL.name}/{MODEL.version}" and name and seat in range(4)
    public = sql(dumps["public"], "select match_id, seat, account from ratings")
    assert sorted((m, s) for m, s, _ in public) == sorted((m, s) for m, _, s, *_ in rows)
    assert all(account is None for *_, account in public)
    rated, kept, erased = str(population.rated), str(population.kept), str(population.erased)
    assert (rated, kept) in history and not [k for k in history if k[1] == erased]
    [(names,)] = sql(
        dumps["public"], f"select [player_0, player_2] from matches where match_id = '{rated}'"
    )
    assert names == ["Lan", "erased player"]
    assert len(history) >= 2  # the quick-play player's match and Lan's


def moved(h: HistoryRow) -> tuple[float, float, float, float]:
    return h.mu_before, h.sigma_before, h.mu_after, h.sigma_after


# -- partitions --------------------------------------------------------------------------------


def test_a_dump_written_again_is_the_same_and_since_leaves_older_days_alone(
    population: Population, tmp_path: Path
) -> None:
    first = write_dump(population.service, tmp_path, "parquet", "public")
    before = {f: f.read_bytes() for f in first.files}
    again = write_dump(population.service, tmp_path, "parquet", "public")
    assert again.files == first.files
    assert {f: f.read_bytes() for f in again.files} == before
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    tomorrow = max(date.fromisoformat(f.parent.name[4:]) for f in first.files) + timedelta(days=1)
    later = write_dump(population.service, tmp_path, "parquet", "public", since=tomorrow)
    assert later.matches == 0 and later.files == []
    assert {f: f.read_bytes() for f in first.files} == before
