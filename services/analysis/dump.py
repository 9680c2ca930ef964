"""The columnar dumps (docs/analysis.md): the finished matches of the log as the tidy
tables of :mod:`services.analysis.schema`, in Parquet or CSV (pyarrow writes both), for a
reader (``public`` or ``operator``, :mod:`services.analysis.rows`).

* :func:`write_dump` — a folder, one sub-folder per table and one per day inside it
  (``matches/day=2026-12-02/part-0.parquet``, hive partitioning, as DuckDB, Polars, Spark
  and object stores read it). ``since`` writes only the partitions of that day and later;
  a partition is written to a temporary name and renamed over the old one, so running it
  again gives the same files and a reader never sees half of one (idempotent, docs/analysis.md
  "Periodic dumps").
* :func:`table_chunks` — one table as one file (a ``day`` column first), produced a
  row group at a time for a streamed response: whatever the history's size, one chunk
  of matches (:data:`CHUNK_MATCHES`) is held at once.

Which matches and which day (docs/analysis.md, "Partitions"): every finished match
(R32), read a page of ``MatchFinished`` notifications at a time. A match's **day** is the
UTC day it ended. The public's dump leaves private tables out (their ids and seat names
are for the people of the table, docs/decisions.md D-hidden). For the public a tournament
table enters the history when its
tournament round completes (R36: until then it is left out, as the bulk records leave it
out), so its public day is the later of the two and a public partition of a past day
gains no match as the log goes on — but for a record imported later, and its rows change
when a player is erased or a tournament corrected (:mod:`services.analysis.partitions`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from domain.game.match import PRIVATE
from domain.game.match_events import (
    MatchCreated,
    MatchFinished,
    RoundBegun,
    SeatTaken,
    TableMadePrivate,
)
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import RuleSet
from domain.tournament.events import RoundCompleted
from domain.tournament.tournament import Tournament
from services.analysis.rows import READERS, RatedSeat, Reader, Rows, TableFacts, match_rows
from services.analysis.schema import TABLES, arrow_schema
from services.embargo import embargo_for
from services.finishes import finishes
from services.game import GameService
from services.ratings.boards import RatingModels, model_name
from services.ratings.model import family
from services.ratings.projection import micros
from services.ratings.view import RatingsView

if TYPE_CHECKING:
    import pyarrow as pa

Format = Literal["parquet", "csv"]
FORMATS: Final[tuple[Format, ...]] = ("parquet", "csv")
CHUNK_MATCHES: Final = 200
"""Matches whose rows are held before they are written (a Parquet row group)."""


def check_choice(table: str | None, fmt: str, reader: str) -> None:
    """InvalidInputError naming what is not a table, format or reader."""
    if table is not None and table not in TABLES:
        raise InvalidInputError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
    if fmt not in FORMATS:
        raise InvalidInputError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if reader not in READERS:
        raise InvalidInputError(f"unknown reader {reader!r}; known: {', '.join(READERS)}")


@dataclass(frozen=True, slots=True)
class Dumped:
    """One finished match as a reader's dump takes it."""

    match_id: UUID
    day: date
    events: list[Any]
    rounds: list[list[Any]]
    table: TableFacts | None
    rated: tuple[RatedSeat, ...] = ()


def rated_seats(view: RatingsView | None, events: list[Any]) -> tuple[RatedSeat, ...]:
    """The rating moves of a finished match's account seats (the ratings' history rows of
    the match: none when it was not rated, or its player is erased)."""
    created, finished = events[0], next(e for e in events if isinstance(e, MatchFinished))
    fam = family(created.preset, RuleSet.from_mapping(created.rules))
    if view is None or fam is None:
        return ()
    found = []
    for taken in events:
        if not isinstance(taken, SeatTaken) or taken.account_id is None:
            continue
        h = view.history_at(taken.account_id, fam, micros(finished.timestamp))
        if h is None or h.match_id != created.originator_id:
            continue
        found.append(
            RatedSeat(
                seat=taken.seat,
                account=taken.account_id,
                family=fam,
                model=model_name(),
                weight=h.weight,
                mu_before=h.mu_before,
                sigma_before=h.sigma_before,
                mu_after=h.mu_after,
                sigma_after=h.sigma_after,
            )
        )
    return tuple(sorted(found, key=lambda r: r.seat))


class _Tournaments:
    """The tournaments the dump meets, each read once."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.found: dict[UUID, tuple[Tournament, dict[int, datetime]] | None] = {}

    def get(self, tid: UUID) -> tuple[Tournament, dict[int, datetime]] | None:
        if tid not in self.found:
            try:
                t: Any = self.service.repository.get(tid)
            except AggregateNotFoundError:
                self.found[tid] = None
                return None
            completed = {
                e.number: e.timestamp
                for e in self.service.events.get(tid)
                if isinstance(e, RoundCompleted)
            }
            self.found[tid] = (t, completed) if isinstance(t, Tournament) else None
        return self.found[tid]

    def table(self, created: MatchCreated) -> TableFacts | None:
        tid = created.tournament_id
        found = None if tid is None else self.get(tid)
        if tid is None or found is None:
            return None
        t, completed = found
        number = created.tournament_round
        if not 1 <= number <= len(t.rounds):
            return None
        entry = next(
            (x for x in t.rounds[number - 1].tables if x.match_id == created.originator_id),
            None,
        )
        if entry is None:
            return None
        result = t.results.get((number, entry.table))
        names = (t.teams[entry.first].name, t.teams[entry.second].name)
        winner = None if result is None or result.winner is None else t.teams[result.winner].name
        return TableFacts(
            tournament_id=tid,
            tournament=t.name,
            format=t.format,
            round=number,
            table=entry.table,
            team_first=names[0],
            team_second=names[1],
            winner=winner,
            points=None if result is None else result.points,
            deals=None if result is None else result.deals,
            corrected=result is not None and result.corrected_by is not None,
            completed=completed.get(number),
        )


def dumped_matches(
    service: GameService,
    reader: Reader,
    since: date | None = None,
    only: date | None = None,
    ratings: RatingModels | None = None,
) -> Iterator[Dumped]:
    """The finished matches ``reader``'s dump takes, in the order they finished, with
    their day (module docstring); ``since``: only those of that day or later; ``only``:
    only those of that day (a match that ended on another day is passed over unread,
    unless its public day may be later: a tournament table's); ``ratings``: the rating
    moves of the rated ones (none: the ``ratings`` table is empty)."""
    tournaments = _Tournaments(service)
    view = None if ratings is None else ratings.fresh()
    for finished in finishes(service):
        match_id: UUID = finished.originator_id
        day = _day(finished.timestamp)
        may_be_later = reader == "public" and only is not None and day < only
        if (
            only is not None
            and day != only
            and not (may_be_later and _of_a_tournament(service, match_id))
        ):
            continue
        events = list(service.events.get(match_id))
        created = events[0]
        if not isinstance(created, MatchCreated):
            continue
        if reader == "public" and private_table(events):
            continue  # D-hidden: a private table's id and names are for its people
        table = tournaments.table(created)
        if created.tournament_id is not None and reader == "public":
            if embargo_for(service, created.tournament_id, created.tournament_round):
                continue  # R36: it enters the public history when its round completes
            if table is not None and table.completed is not None:
                day = max(day, _day(table.completed))
        if (since is not None and day < since) or (only is not None and day != only):
            continue
        rounds = [list(service.events.get(e.round_id)) for e in events if isinstance(e, RoundBegun)]
        yield Dumped(match_id, day, events, rounds, table, rated_seats(view, events))


def _of_a_tournament(service: GameService, match_id: UUID) -> bool:
    """The match is a tournament table (its first event read alone)."""
    stored = service.recorder.select_events(match_id, lte=1)
    created: Any = service.mapper.to_domain_event(stored[0]) if stored else None
    return isinstance(created, MatchCreated) and created.tournament_id is not None


def private_table(events: list[Any]) -> bool:
    """A match's events make it a private table: created private, or made private later
    (an invite code, ``TableMadePrivate``)."""
    first = events[0] if events else None
    created_private = isinstance(first, MatchCreated) and first.visibility == PRIVATE
    return created_private or any(isinstance(e, TableMadePrivate) for e in events)


def _day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def rows_of(found: Dumped, reader: Reader) -> Rows:
    return match_rows(found.events, found.rounds, reader, found.day, found.table, found.rated)


# -- writers ----------------------------------------------------------------------------------


class _Writer:
    """One file being written: Parquet row groups or CSV lines, from row dicts. pyarrow is
    imported here, when a dump is written: a process that serves none (a server starting, a
    command-line tool) never pays its import (about a tenth of a second, numpy's included)."""

    def __init__(self, sink: Any, fmt: Format, schema: pa.Schema) -> None:
        import pyarrow as pa  # noqa: PLC0415 - on first use (the class doc)
        import pyarrow.csv as pa_csv  # noqa: PLC0415
        import pyarrow.parquet as pq  # noqa: PLC0415

        self.schema = schema
        self.table = pa.Table
        self.writer: Any = (
            pq.ParquetWriter(sink, schema, compression="zstd")
            if fmt == "parquet"
            else pa_csv.CSVWriter(sink, schema)
        )

    def write(self, rows: list[dict[str, Any]]) -> None:
        self.writer.write_table(self.table.from_pylist(rows, schema=self.schema))

    def close(self) -> None:
        self.writer.close()


@dataclass(frozen=True, slots=True)
class DumpSummary:
    """What :func:`write_dump` wrote."""

    matches: int
    rows: dict[str, int]
    files: list[Path]
    bytes: int


def write_dump(
    service: GameService,
    out: Path,
    fmt: Format = "parquet",
    reader: Reader = "operator",
    since: date | None = None,
    ratings: RatingModels | None = None,
) -> DumpSummary:
    """Write ``reader``'s dump of every table into ``out`` (module docstring); the rating
    moves from ``ratings``."""
    check_choice(None, fmt, reader)
    writers: dict[tuple[str, date], tuple[_Writer, Path, Path]] = {}
    pending = Rows()
    counts = dict.fromkeys(TABLES, 0)
    matches = 0

    def flush() -> None:
        for table, rows in pending.tables.items():
            by_day: dict[date, list[dict[str, Any]]] = {}
            for row in rows:
                by_day.setdefault(row.pop("day"), []).append(row)
            for day, day_rows in by_day.items():
                key = (table, day)
                if key not in writers:
                    folder = out / table / f"day={day.isoformat()}"
                    folder.mkdir(parents=True, exist_ok=True)
                    final = folder / f"part-0.{fmt}"
                    temp = folder / f".part-0.{fmt}.{os.getpid()}.tmp"
                    writers[key] = (
                        _Writer(str(temp), fmt, arrow_schema(table, with_day=False)),
                        temp,
                        final,
                    )
                writers[key][0].write(day_rows)
                counts[table] += len(day_rows)
        pending.clear()

    try:
        for found in dumped_matches(service, reader, since, ratings=ratings):
            pending.extend(rows_of(found, reader))
            matches += 1
            if matches % CHUNK_MATCHES == 0:
                flush()
        flush()
    except BaseException:
        for writer, temp, _ in writers.values():
            writer.close()
            temp.unlink(missing_ok=True)
        raise
    files: list[Path] = []
    for writer, temp, final in writers.values():
        writer.close()
        temp.replace(final)  # atomic: a reader sees the old partition or the new one
        files.append(final)
    return DumpSummary(matches, counts, sorted(files), sum(f.stat().st_size for f in files))


class _Sink:
    """A file-like object collecting what a writer writes, drained chunk by chunk."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    def drain(self) -> bytes:
        data = b"".join(self.parts)
        self.parts = []
        return data


def table_chunks(
    service: GameService,
    table: str,
    fmt: Format,
    reader: Reader,
    day: date | None = None,
    ratings: RatingModels | None = None,
) -> Iterator[bytes]:
    """``table`` of ``reader``'s dump as one file (``day`` first), a chunk of bytes per
    :data:`CHUNK_MATCHES` matches (a row group), the file's end last; ``day``: that
    day's partition only."""
    check_choice(table, fmt, reader)
    sink = _Sink()
    writer = _Writer(sink, fmt, arrow_schema(table, with_day=True))
    rows: list[dict[str, Any]] = []
    moves = ratings if table == "ratings" else None  # read only for the table that shows them
    for matches, found in enumerate(dumped_matches(service, reader, only=day, ratings=moves), 1):
        rows += rows_of(found, reader).tables[table]
        if matches % CHUNK_MATCHES == 0 and rows:
            writer.write(rows)
            rows = []
            yield sink.drain()
    if rows:
        writer.write(rows)
    writer.close()  # an empty table still has its schema (Parquet) or header (CSV)
    yield sink.drain()
