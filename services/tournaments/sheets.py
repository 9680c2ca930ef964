"""A round's printable pairing sheet (docs/tournaments.md): plain text for the notice board, or CSV
(RFC 4180, a header row; formula-like cells prefixed with ``'``). One line per table:
the table number, the first team (seats 0/2 or 1/3, R36) against the second — a team that
has withdrawn marked so —, and the bye or byes, each with its kind: the pairing's, awarded
(a round robin's opponent withdrew) or requested (the team asked to sit out); nothing
secret (no card, no seed before the round completes, R33, R35)."""

from __future__ import annotations

from domain.tournament.events import RoundState
from domain.tournament.tournament import Tournament
from services.tournaments.display import bye_kinds
from services.tournaments.exports import csv_text

SHEET_COLUMNS = [
    "round", "table", "first_team", "first_name", "first_seats", "second_team", "second_name",
    "second_seats", "match_id", "bye",
]  # fmt: skip
"""``bye``: a bye's kind (``pairing``, ``awarded``, ``requested``); empty on a table's row."""
BYE_LABELS = {"pairing": "Bye", "awarded": "Bye (awarded)", "requested": "Bye (requested)"}


def _seats(parity: int) -> str:
    return f"{parity}/{parity + 2}"


def _name(t: Tournament, team: int) -> str:
    """The team's name, marked when it has withdrawn."""
    name = t.teams[team].name
    return f"{name} (withdrawn)" if team in t.withdrawn else name


def sheet_text(t: Tournament, state: RoundState) -> str:
    lines = [f"{t.name}: round {state.number} of {t.total_rounds}", ""]
    width = max((len(_name(t, x)) for x in range(len(t.teams))), default=4)
    for table in state.tables:
        first, second = _name(t, table.first), _name(t, table.second)
        lines.append(
            f"Table {table.table + 1:>2}  {first:<{width}} (seats {_seats(table.first_parity)})"
            f"  v  {second:<{width}} (seats {_seats(1 - table.first_parity)})"
        )
    for team, kind in bye_kinds(t, state):
        lines.append(f"{BYE_LABELS[kind]:<17}{_name(t, team)}")
    if state.override:
        lines += ["", f"Pairing set by the organiser: {state.override}"]
    return "\n".join(lines) + "\n"


def sheet_csv(t: Tournament, state: RoundState) -> str:
    rows: list[list[object]] = [
        [
            state.number,
            table.table + 1,
            table.first,
            t.teams[table.first].name,
            _seats(table.first_parity),
            table.second,
            t.teams[table.second].name,
            _seats(1 - table.first_parity),
            table.match_id,
            "",
        ]
        for table in state.tables
    ]
    rows += [
        [state.number, "bye", team, t.teams[team].name, "", "", "", "", "", kind]
        for team, kind in bye_kinds(t, state)
    ]
    return csv_text(SHEET_COLUMNS, rows)
