"""The tidy tables of the columnar dumps (docs/analysis.md): each table's columns, their
types, units and what is redacted for whom, declared once. The Arrow schemas the dumps
are written with and the schema section of docs/analysis.md are both made from
:data:`TABLES` (a test checks the document against it).

Every table has the match it belongs to (``match_id``) and the **day** (UTC) it is
partitioned by: the day the match entered the reader's history (docs/analysis.md,
"Partitions"). Seats are 0–3; teams are 0 (seats 0 and 2) and 1 (seats 1 and 3) (R1, R2);
cards are R4 notation, space-separated, in the order played (``"5C 5C 7C 7C"``); ranks are
``2``..``A``; suits ``S H C D`` and ``NT`` for no trump; times are UTC microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pyarrow as pa

ID: Final = "string"
TEXT: Final = "string"
SMALL: Final = "int8"
COUNT: Final = "int32"
FLAG: Final = "bool"
TIME: Final = "timestamp[us, UTC]"
DATE: Final = "date32[day]"
REAL: Final = "float64"
"""The columns' Arrow types, by the names the schema section of docs/analysis.md gives
them; :func:`arrow_schema` makes the types (pyarrow is imported there, when a dump is
written: :mod:`services.analysis.dump`)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its name, Arrow type, meaning, unit and redaction."""

    name: str
    type: str
    doc: str
    unit: str = ""
    redacted: str = ""
    """For whom and until when the column is null (empty: never redacted)."""
    nullable: bool = False


def col(
    name: str, type_: str, doc: str, *, unit: str = "", redacted: str = "", null: bool = False
) -> Column:
    return Column(name, type_, doc, unit, redacted, null or bool(redacted))


MATCH: Final = col("match_id", ID, "The match (a UUID).")
ROUND: Final = col("round", COUNT, "The round's number in its match (1, 2, …).")
DAY_DOC: Final = "The partition: the UTC day the match entered the reader's history."

SEED_REDACTED: Final = (
    "public: null for a round never scored (abandoned when the match ended, R32, R33); "
    "the operator always sees it"
)

TABLES: Final[dict[str, tuple[str, tuple[Column, ...]]]] = {
    "matches": (
        "One row per finished match (R32).",
        (
            MATCH,
            col("name", TEXT, "The match's name."),
            col("preset", TEXT, "The rule-set preset (§10); null: custom rules.", null=True),
            col("rules", TEXT, "The whole rule set as canonical JSON (§10 field names)."),
            col("origin", TEXT, "`played` here, or `imported` as a record."),
            col("tournament_id", ID, "The tournament of a tournament table.", null=True),
            col("tournament_round", COUNT, "Its tournament round (0 outside).", unit="round"),
            col("started", TIME, "When the match was created.", unit="UTC µs"),
            col("finished", TIME, "When it ended (R32).", unit="UTC µs"),
            col("end_reason", TEXT, "Why it ended: `finish_at_A`, `rounds_played`, …"),
            col("winner", SMALL, "The winning team (0 or 1); null: none.", null=True),
            col("rounds", COUNT, "Rounds scored.", unit="rounds"),
            col(
                "abandoned_rounds", COUNT, "Rounds abandoned unscored (0 or 1, R32).", unit="rounds"
            ),
            col("level_0", TEXT, "Team 0's level at the end (R30)."),
            col("level_1", TEXT, "Team 1's level at the end (R30)."),
            col("laps_0", COUNT, "Times team 0 passed A (R30).", unit="laps"),
            col("laps_1", COUNT, "Times team 1 passed A (R30).", unit="laps"),
            *(col(f"kind_{s}", TEXT, f"Seat {s}: `human` or the bot kind.") for s in range(4)),
            *(col(f"player_{s}", TEXT, f"Seat {s}'s display name.") for s in range(4)),
            *(
                col(
                    f"account_{s}",
                    ID,
                    f"Seat {s}'s player account (docs/players.md).",
                    redacted="public: always null (it links a person's matches); the "
                    "operator sees it (null for a guest or a bot)",
                )
                for s in range(4)
            ),
        ),
    ),
    "rounds": (
        "One row per round of a finished match, scored or abandoned (R16–R32).",
        (
            MATCH,
            ROUND,
            col("dealer", SMALL, "The dealer (庄家) of the result (R18, R31).", null=True),
            col("defenders", SMALL, "The dealer's team (R2).", null=True),
            col("level", TEXT, "The level played (R5): the defenders' level."),
            col("level_0", TEXT, "Team 0's level when the round began."),
            col("level_1", TEXT, "Team 1's level when the round began."),
            col(
                "trump",
                TEXT,
                "The trump suit (R17–R20): `S H C D`, `NT` for no trump; null: never fixed.",
                null=True,
            ),
            col("declarer", SMALL, "The seat whose show fixed trump last (R17–R20).", null=True),
            col("deals", COUNT, "Deals of the round (a redeal adds one, R19).", unit="deals"),
            col("commitment", TEXT, "The last deal's seed commitment (R35), public from the deal."),
            col("seed", TEXT, "The last deal's seed (R35): hex.", redacted=SEED_REDACTED),
            col(
                "bottom",
                TEXT,
                "The bottom (底牌) as scored, or as buried last (R21, R28).",
                redacted="public: null until the round is scored (R21, R33); a round abandoned "
                "unscored keeps it for good",
            ),
            col("tricks", COUNT, "Tricks played.", unit="tricks"),
            col(
                "trick_points",
                COUNT,
                "The attackers' trick points (R27).",
                unit="points",
                null=True,
            ),
            col("bottom_points", COUNT, "Points in the bottom (R28).", unit="points", null=True),
            col("multiplier", COUNT, "The bottom's multiplier (R28).", null=True),
            col(
                "bottom_bonus",
                COUNT,
                "Bottom points × multiplier to the attackers (R28).",
                unit="points",
                null=True,
            ),
            col(
                "penalty_points",
                COUNT,
                "Failed-throw penalties of the round (R22, §10).",
                unit="points",
                null=True,
            ),
            col(
                "attackers_total", COUNT, "The attackers' total T (R29).", unit="points", null=True
            ),
            col("outcome", TEXT, "The settlement (R30).", null=True),
            col("band", TEXT, "The total's band (R30).", null=True),
            col(
                "levels_gained",
                COUNT,
                "Levels the team going up gains (R30).",
                unit="levels",
                null=True,
            ),
            col("defenders_keep", FLAG, "The defenders keep the deal (R31).", null=True),
            col("next_dealer", SMALL, "Who deals next (R31).", null=True),
            col("abandoned", FLAG, "Ended unscored by the organiser (R32)."),
            col("started", TIME, "When the round began.", unit="UTC µs"),
            col("ended", TIME, "When it was scored or abandoned.", unit="UTC µs"),
        ),
    ),
    "declarations": (
        "One row per trump show (declare or overcall, R17–R20), in order.",
        (
            MATCH,
            ROUND,
            col("seq", COUNT, "The show's place in its round (1, 2, …)."),
            col("seat", SMALL, "The seat that showed."),
            col("action", TEXT, "`declare` or `overcall` (R20, 炒底)."),
            col("cards", TEXT, "The cards shown."),
            col("trump", TEXT, "The suit it names; `NT` for jokers (no trump)."),
            col("strength", TEXT, "The show's strength (R18, R20)."),
            col("at", TIME, "When.", unit="UTC µs"),
        ),
    ),
    "tricks": (
        "One row per trick won (R24, R27).",
        (
            MATCH,
            ROUND,
            col("trick", COUNT, "The trick's number in its round (1, 2, …)."),
            col("leader", SMALL, "The seat that led."),
            col("winner", SMALL, "The seat that won it (R24)."),
            col("points", COUNT, "Points in the trick (5s, 10s, Ks; R27).", unit="points"),
            col("led", TEXT, "The cards led (after a failed throw, the cards forced)."),
            col("threw", FLAG, "The lead was a throw (甩牌, R15, R22)."),
            col("failed_throw", FLAG, "The throw failed (R22)."),
            col("at", TIME, "When it was won.", unit="UTC µs"),
        ),
    ),
    "plays": (
        "One row per seat's play in a trick (R22, R23).",
        (
            MATCH,
            ROUND,
            col("trick", COUNT, "The trick's number in its round."),
            col("turn", SMALL, "0 for the lead, then 1, 2, 3 in seat order."),
            col("seat", SMALL, "The seat."),
            col("cards", TEXT, "The cards played (after a failed throw, those forced)."),
            col("count", COUNT, "How many cards.", unit="cards"),
            col("led", FLAG, "This play led the trick."),
            col("followed", FLAG, "This play followed a lead (R23)."),
            col("threw", FLAG, "A lead that was a throw (R15, R22)."),
            col("failed_throw", FLAG, "A throw that failed (R22)."),
            col("attempted", TEXT, "The cards of a failed throw.", null=True),
            col("penalty", COUNT, "The failed throw's penalty (§10).", unit="points"),
            col("points", COUNT, "Points in the cards played.", unit="points"),
            col("at", TIME, "When.", unit="UTC µs"),
        ),
    ),
    "results": (
        "One row per team per scored round: who played, in which role, what it gained (R29–R31).",
        (
            MATCH,
            ROUND,
            col("team", SMALL, "0 (seats 0, 2) or 1 (seats 1, 3)."),
            col("role", TEXT, "`defenders` (the dealer's team) or `attackers`."),
            col("kind", TEXT, "Both seats' kind (`human`, a bot kind), or `mixed`."),
            col("kinds", TEXT, "The two seats' kinds, space-separated (seat order)."),
            col("level_before", TEXT, "The team's level when the round began."),
            col(
                "levels_gained", COUNT, "Levels this team went up this round (R30).", unit="levels"
            ),
            col(
                "points",
                COUNT,
                "The attackers' total T for the attackers; null for defenders.",
                unit="points",
                null=True,
            ),
            col("went_up", FLAG, "This team went up (or took over the deal, R30, R31)."),
        ),
    ),
    "tournament_tables": (
        "One row per tournament table whose match is in the dump (R36).",
        (
            MATCH,
            col("tournament_id", ID, "The tournament."),
            col("tournament", TEXT, "Its name."),
            col("format", TEXT, "`swiss`, `round_robin`, …"),
            col("tournament_round", COUNT, "The tournament round.", unit="round"),
            col("table", COUNT, "The table's number in its round."),
            col("team_first", TEXT, "The first team's name (seats 0, 2 at parity 0)."),
            col("team_second", TEXT, "The second team's name."),
            col("winner", TEXT, "The winning team's name; null: a draw or none.", null=True),
            col("points_first", COUNT, "Match points of the first team.", unit="points", null=True),
            col(
                "points_second", COUNT, "Match points of the second team.", unit="points", null=True
            ),
            col("deals", COUNT, "Deals played at the table.", unit="deals", null=True),
            col("corrected", FLAG, "The organiser corrected the result."),
            col(
                "completed",
                TIME,
                "When its tournament round completed (R36); null: not yet.",
                unit="UTC µs",
                null=True,
            ),
        ),
    ),
    "ratings": (
        "One row per player per rated match (docs/decisions.md D-ratings): the player's "
        "rating in the match's family before and after it, as the model in force rates it.",
        (
            MATCH,
            col("seat", SMALL, "The player's seat (R1)."),
            col("player", TEXT, "The seat's display name (as `matches.player_N`)."),
            col(
                "account",
                ID,
                "The player's account (docs/players.md).",
                redacted="public: always null (it links a person's matches); the operator sees it",
            ),
            col("family", TEXT, "The rule-set family rated: standard, tuolaji or duijia."),
            col("model", TEXT, "The rating model and its version."),
            col("rated_at", TIME, "When the match finished (R32).", unit="UTC µs"),
            col("weight", REAL, "The match's weight (a repeated foursome counts less)."),
            col("mu_before", REAL, "The belief's mean before the match.", unit="mu"),
            col("sigma_before", REAL, "Its uncertainty before the match.", unit="mu"),
            col("mu_after", REAL, "The mean after it.", unit="mu"),
            col("sigma_after", REAL, "The uncertainty after it.", unit="mu"),
            col("rating_before", COUNT, "The shown rating before (1500 + 60·(mu − 25))."),
            col("rating_after", COUNT, "The shown rating after."),
            col("deviation_after", COUNT, "The shown deviation after (60·sigma)."),
        ),
    ),
}
"""Each table: its one-line meaning and its columns (``day`` is added by the partitioning)."""

DAY: Final = col("day", DATE, DAY_DOC)


def arrow_schema(table: str, *, with_day: bool) -> pa.Schema:
    """The Arrow schema of ``table`` (``with_day``: the ``day`` column first, as the
    single-file dumps have it; the partitioned ones carry it in the folder name)."""
    import pyarrow as pa  # noqa: PLC0415 - on first use (the types' doc)

    types = {
        ID: pa.string(),
        SMALL: pa.int8(),
        COUNT: pa.int32(),
        FLAG: pa.bool_(),
        TIME: pa.timestamp("us", tz="UTC"),
        DATE: pa.date32(),
        REAL: pa.float64(),
    }
    columns = ((DAY,) if with_day else ()) + TABLES[table][1]
    return pa.schema(
        [
            pa.field(
                c.name,
                types[c.type],
                nullable=c.nullable,
                metadata={"doc": c.doc, "unit": c.unit, "redacted": c.redacted},
            )
            for c in columns
        ]
    )


def schema_markdown() -> str:
    """The schema section of docs/analysis.md, made from :data:`TABLES`."""
    lines: list[str] = []
    for name, (meaning, columns) in TABLES.items():
        lines += [f"### `{name}`", "", meaning, ""]
        lines += [
            "| column | type | unit | meaning | redacted |",
            "| --- | --- | --- | --- | --- |",
        ]
        for c in ((DAY,), columns)[0] + columns:
            null = "" if not c.nullable else " (null)"
            lines.append(f"| `{c.name}` | {c.type}{null} | {c.unit} | {c.doc} | {c.redacted} |")
        lines.append("")
    return "\n".join(lines)
