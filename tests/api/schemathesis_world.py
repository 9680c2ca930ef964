"""The schemathesis run's configuration, the app's OpenAPI document with its links, and the
app under test with tables to aim at (the tests: :mod:`tests.api.test_schemathesis`,
:mod:`tests.api.test_schemathesis_views`).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
import schemathesis
import yaml  # type: ignore[import-untyped]
from litestar import Litestar
from schemathesis import Case as GenericCase
from schemathesis import CheckContext, Response
from schemathesis.generation.meta import CoverageScenario
from schemathesis.python import asgi
from schemathesis.specs.openapi.schemas import OpenApiSchema

from services.bot_driver import BotDriver
from services.game import GameService
from tests.apps import make_app
from tests.commands import bus_of
from tests.conftest import FixedSeeds
from tests.documents import ROOT, load_yaml
from tests.tool_cache import key_of, tool_output

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "5"))
"""Random (fuzzing) cases per operation, beside the coverage phase's ~45 deterministic ones:
5 in `make test` (docs/decisions.md, D-suite3; the longer run: docs/api-testing.md)."""
STATEFUL_EXAMPLES = int(os.environ.get("SCHEMATHESIS_STATEFUL_EXAMPLES", "10"))
STATEFUL_STEPS = int(os.environ.get("SCHEMATHESIS_STATEFUL_STEPS", "12"))
_SEED = os.environ.get("SCHEMATHESIS_SEED", "4")
SEED: int | None = None if _SEED == "random" else int(_SEED)
PATH_REGEX = os.environ.get("SCHEMATHESIS_PATH_REGEX")
"""Only the operations whose path matches (e.g. ``^/v1/rules/``); default: every one."""
MAX_STREAM_EVENTS = 1
"""A live stream is read until its first frame (``max-stream-events``, :data:`SHARED`)."""
BOTS_ONLY_ROUNDS = 1
"""A bots-only match the run makes ends after its first round (the default plays 20)."""
DECISION_CPU_S = 0.05
"""A strong bot the run seats decides in at most this much CPU (its search is cut short)."""

Json = dict[str, Any]
Case = GenericCase[Any]

# Operations whose input has meaning a JSON Schema cannot state: the rules oracle (a lead
# must be of one suit category, every play as long as the lead, the hand must hold the
# play, R15-R23) and deal verification (the seed must hash to the commitment, R35). The
# contract answers such input with a 422 problem ("Malformed input → 422"), so
# the built-in positive_data_acceptance (schema-valid input must not be 4xx) cannot hold
# there; it is replaced for these operations by `schema_level_acceptance` below, which
# still fails when the API refuses schema-valid input for a reason the schema could have
# stated (a field, a type, an unknown property, card notation, a rule-set field).
SEMANTIC_PATHS = (
    "/v1/rules/trick",
    "/v1/rules/follow",
    "/v1/rules/shape",
    "/v1/rules/throw",
    "/v1/rules/bottom-multiplier",
    "/v1/rules/settle",
    "/v1/records",  # a record must replay: every move legal, seeds vs commitments (R35)
    # teams with distinct names, a Swiss system of 1..(teams - 1) rounds: JSON Schema
    # cannot state uniqueness of a property across items, nor a bound on another field's
    # length (docs/tournaments.md)
    "/v1/tournaments",
    # a Last-Event-ID beyond the match's version is refused (422 last-event-id-ahead): which
    # version is current is not in the schema
    "/v1/matches/{match_id}/stream",
    # the log's stream refuses a Last-Event-ID beyond the log's end; the state
    # takes exactly one of version and at, and at needs a time zone (RFC 3339 allows none)
    "/v1/events/stream",
    "/v1/matches/{match_id}/state",
    # a Last-Event-ID beyond the tournament's version (the standings stream) or the log's
    # end (a player's stream) is refused as the match stream's is (422
    # last-event-id-ahead): which version is current is not in the schema
    "/v1/tournaments/{tournament_id}/standings/stream",
    "/v1/players/me/stream",
    # the log's pages refuse an `after` beyond the log's end, and the ticket stream a
    # Last-Event-ID beyond the ticket's version (422 last-event-id-ahead, R34): where the
    # log ends, or which version a ticket is at, is not in the schema
    "/v1/events",
    "/v1/lobby/tickets/{ticket_id}/stream",
    # a board's `after` is a cursor a board answered and `around` a player's id or `me` with
    # a player's token (422 invalid-input otherwise): which cursors exist, and whose token
    # asks, is not in the schema
    "/v1/leaderboards/{family}",
    # a player's matches page on `after`, a cursor a page answered (422 invalid-input
    # otherwise): which cursors exist is not in the schema
    "/v1/players/{player_id}/matches",
    # the friends' lists page on `after`, a cursor a page answered, and a friend request
    # names exactly one of playerId and friendCode (422 invalid-input otherwise)
    "/v1/players/me/friends",
    "/v1/players/me/friend-requests",
    "/v1/players/me/blocks",
    # a person's name follows one policy (domain/names.py, 422 invalid-name): no control,
    # private-use or unassigned characters (Unicode categories a JSON Schema pattern
    # cannot name portably), not only invisible ones, not a name the service shows itself
    "/v1/players",
    "/v1/players/me",
    "/v1/matches",
    "/v1/matches/{match_id}/seats/{seat}",
    "/v1/matches/{match_id}/seats/{seat}/bot",
    "/v1/invites/{code}",
    "/v1/tournaments/{tournament_id}/teams",
    "/v1/tournaments/{tournament_id}/teams/{team}/rename",
    "/v1/tournaments/{tournament_id}/substitutes",
    # a message's text follows the same policy (R37, 422 invalid-text); a message is a
    # phrase or a text, one of them, and the phrase one of the catalogue's (422)
    "/v1/matches/{match_id}/talk",
    # a mute names a spectator who spoke at that table (422 otherwise): who spoke is not in
    # the schema
    "/v1/matches/{match_id}/talk/mutes",
    "/v1/matches/{match_id}/talk/mutes/{source}",
)
IF_MATCH_PATHS = ("/v1/matches/{match_id}/actions/{action}", "/v1/matches/{match_id}/timeout")
"""Commands that take ``If-Match`` (the round's actions, claiming a timeout)."""
TOKEN_READERS = ("/v1/matches/{match_id}/stream",)
"""Operations that read a token without declaring security (a seat or a spectator)."""
SCHEMA_LEVEL_CODES = frozenset({"validation-failed", "invalid-card", "invalid-rule-set"})

SHARED: Json = {
    "generation": {"max-examples": MAX_EXAMPLES},
    # The live stream never ends by itself: stop reading after its first frame (a match
    # stream resumed at its version sends `caught-up`), or after a quarter of a second
    # when none comes (the events feed resumed at the log's end waits for news).
    "max-stream-events": MAX_STREAM_EVENTS,
    "base-url": "http://testserver",
    # Tokens here are throwaway; a reproduction needs the real header values.
    "output": {"sanitization": {"enabled": False}},
    "operations": [
        {"include-path": "/v1/matches/{match_id}/stream", "request-timeout": 0.25},
        {"include-path": "/v1/events/stream", "request-timeout": 0.25},
        {
            # GET /v1/rules/follow is the rules oracle's path (POST only): 405, as
            # documented; any other string is a rule number (404 when unknown)
            "include-path": "/v1/rules/{number}",
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "3xx", "404", "405", "429", "5xx"]
                }
            },
        },
        {
            # refused for their meaning: 422 as documented (the suite's own check,
            # schema_level_acceptance, still fails a refusal of their form)
            "include-path": list(SEMANTIC_PATHS),
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": [
                        *("2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx")
                    ]
                }
            },
        },
        {
            # A well-formed If-Match naming another version is refused with 412 by
            # design (RFC 9110 §13.1.1): which version is current is not in the
            # schema. Every other status keeps the built-in expectation.
            "include-path": list(IF_MATCH_PATHS),
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": [
                        *("2xx", "3xx", "401", "403", "404", "409", "412", "429", "5xx")
                    ]
                }
            },
        },
    ],
}
"""The checks' configuration, shared with an external ``schemathesis run`` through the
checked-in ``schemathesis.toml`` (``scripts/gen_schemathesis_toml.py``; a drift test)."""

CONFIG = schemathesis.Config.from_dict({**({} if SEED is None else {"seed": SEED}), **SHARED})


def schema_level_acceptance(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """positive_data_acceptance for SEMANTIC_PATHS: schema-valid input may be refused
    for its meaning (422 ``invalid-input``, ``verification-failed``) but not for its
    form (422 ``validation-failed``, ``invalid-card``, ``invalid-rule-set``)."""
    meta = case.meta
    if case.operation.path not in SEMANTIC_PATHS or meta is None:
        return None
    if not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    code = _problem_code(response)
    if code in SCHEMA_LEVEL_CODES:
        raise AssertionError(
            f"schema-valid input refused for its form (422 {code}): the schema should "
            f"state this constraint\n{response.text[:500]}"
        )
    return None


def _problem_code(response: Response) -> str | None:
    try:
        body = json.loads(response.text)
    except ValueError:
        return None
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def document() -> Json:
    """The app's OpenAPI document (the one ``/schema/openapi.json`` serves): the checked-in
    ``openapi.yaml``, which ``tests/api/test_openapi_drift.py`` keeps equal to it, without
    the paths ``SCHEMATHESIS_PATH_REGEX`` leaves out; a fresh copy on each call. Read
    rather than built: every xdist worker imports this module at collection, and building
    the app and its document there cost each of them ~2 CPU-s. Parsed as JSON: PyYAML's
    load costs ~1.2 CPU-s even with libyaml's parser, the JSON text ~0.03
    (:func:`document_json`)."""
    doc: Json = json.loads(document_json().read_text(encoding="utf-8"))
    if PATH_REGEX:
        doc["paths"] = {p: v for p, v in doc["paths"].items() if re.search(PATH_REGEX, p)}
        kept = {op["operationId"] for item in doc["paths"].values() for op in item.values()}
        for item in doc["paths"].values():
            for op in item.values():
                for response in op.get("responses", {}).values():
                    if "links" in response:  # no link to an operation left out
                        response["links"] = {
                            k: v for k, v in response["links"].items() if v["operationId"] in kept
                        }
    return doc


def document_json() -> Path:
    """``openapi.yaml`` parsed and written as JSON once per content (and parser version), in
    the tests' tool cache (:mod:`tests.tool_cache`): the first process that needs it (the
    warm-up collection of ``make test``) parses it, every worker after reads the JSON. The
    values are the YAML's: a document JSON could not hold the same (keys that are not
    strings, dates) fails here."""
    source = (ROOT / "openapi.yaml").read_bytes()

    def parse(folder: Path) -> None:
        doc = load_yaml(source.decode("utf-8"))
        text = json.dumps(doc, ensure_ascii=False)
        assert json.loads(text) == doc, "openapi.yaml holds values JSON does not"
        (folder / "openapi.json").write_text(text, encoding="utf-8")

    return tool_output("openapi-json", key_of(source, yaml.__version__), parse) / "openapi.json"


def links(doc: Json) -> dict[str, set[str]]:
    """The document's OpenAPI links: source operation → the operations it links to."""
    out: dict[str, set[str]] = {}
    for item in doc["paths"].values():
        for op in item.values():
            for response in op.get("responses", {}).values():
                for link in response.get("links", {}).values():
                    out.setdefault(op["operationId"], set()).add(link["operationId"])
    return out


class AppSlot:
    """The ASGI app the schema calls: the module's fixture puts the app on its SQLite
    store here (schemathesis takes the app when the schema is loaded, at import)."""

    def __init__(self) -> None:
        self.target: Litestar | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert self.target is not None, "the `world` fixture sets the app"
        await self.target(scope, receive, send)


SLOT = AppSlot()
DOCUMENT = document()
# schemathesis works on its own copy: what it changes in the document it loads (resolved
# references, examples) never reaches the tests that read DOCUMENT, whatever their order
schema: OpenApiSchema = schemathesis.openapi.from_dict(document(), config=CONFIG)
schema.app = SLOT


@dataclass
class Table:
    match_id: str
    organiser: str
    seats: dict[int, str] = field(default_factory=dict)


@dataclass
class World:
    """The app on its SQLite store, and the tables (with their tokens) made so far."""

    app: Litestar
    service: GameService
    client: asgi.ASGIClient
    """The one client every case is sent with (:meth:`session`); without it schemathesis
    makes a client per call (a requests session and its adapter), and requests reads the
    proxy variables of the environment for each request: ~0.5 ms of a case's ~4."""
    tables: dict[str, Table] = field(default_factory=dict)
    private: dict[str, Table] = field(default_factory=dict)
    """Private tables (made so, or given an invite code): a private table answers 404 to any
    credential not its own (no oracle of its existence), so cases are not aimed at them and
    the wrong-credential probes (which want 401/403) leave them alone; a case that reaches
    one through a link (the state machine: create a private table, read its rounds) sends
    one of its own tokens, as its people would."""
    tournaments: list[str] = field(default_factory=list)
    """The tournaments the run made: the tournament reads (standings, display, crosstable,
    a round's boards and travellers) are aimed at them."""

    def table(self, case: Case) -> Table | None:
        raw = (case.path_parameters or {}).get("match_id")
        if not isinstance(raw, str):
            return None
        return self.tables.get(raw) or self.private.get(raw)

    def aim(self, case: Case) -> None:
        """Point a valid ``match_id`` at a known table (mostly), then :meth:`fresh_key`
        (valid values are replaced by valid values, so the case's meta holds)."""
        rng = _rng(case, "aim")
        params = case.path_parameters
        raw = params.get("match_id") if params else None
        if params is not None and isinstance(raw, str) and _is_uuid(raw) and rng.random() < 0.85:
            params["match_id"] = rng.choice(sorted(self.tables))
        raw = params.get("tournament_id") if params else None
        if (
            params is not None
            and self.tournaments
            and isinstance(raw, str)
            and _is_uuid(raw)
            and rng.random() < 0.85
        ):
            params["tournament_id"] = rng.choice(self.tournaments)
        self.fresh_key(case)

    @staticmethod
    def fresh_key(case: Case) -> None:
        """Make a valid Idempotency-Key unique. Anonymous callers share one key scope,
        so a key the generator repeats would be "reused for another request" (409) by
        design; fresh keys keep the positive checks about the input itself (keys have
        their own tests in tests/api/test_rest_writes.py)."""
        headers = case.headers
        key = headers.get("Idempotency-Key") if headers else None
        if headers is not None and isinstance(key, str) and 1 <= len(key) <= 255:
            headers["Idempotency-Key"] = uuid4().hex

    def call_kwargs(self, case: Case) -> dict[str, Any]:
        """What a case is sent with: the run's client and the case's :meth:`headers`."""
        return {"session": self.session(), "headers": self.headers(case)}

    def session(self) -> asgi.ASGIClient:
        """The run's client, holding no cookie from an earlier call (the API sets none;
        schemathesis' own client per call starts without)."""
        self.client.cookies.clear()
        return self.client

    def headers(self, case: Case) -> dict[str, str]:
        """The headers a case is sent with: its credentials, and ``Accept-Encoding:
        identity`` for an event stream. A stream is read until its first event (or the
        operation's timeout): compressed, its events cannot be counted or cut, so the call
        waited out the timeout and the checks saw an empty body (gzip streams are the light
        frames tests' subject, tests/api/test_patch_frames.py)."""
        headers = self.credentials(case)
        if _streams(case):
            headers["Accept-Encoding"] = "identity"
        return headers

    def credentials(self, case: Case) -> dict[str, str]:
        """An ``Authorization`` header for operations that take a token: mostly the
        right token for the table (seat or organiser), sometimes another role's or
        another table's; none when the case is about the header being missing. The
        stream takes its token in the header or in ``?token=``, either at random."""
        declared = bool(case.operation.definition.raw.get("security"))
        if not declared and case.operation.path not in TOKEN_READERS:
            return {}
        meta = case.meta
        data = meta.phase.data if meta is not None else None
        if (
            getattr(data, "scenario", None) == CoverageScenario.MISSING_PARAMETER
            and str(getattr(data, "parameter", "")).lower() == "authorization"
        ):
            return {}
        table = self.table(case)
        if table is None:
            return {}
        organiser_only = case.operation.path.endswith(("/bot", "/bots/run", "/finish"))
        seats = [table.seats[s] for s in sorted(table.seats)]
        if organiser_only:
            right, wrong = [table.organiser], seats or [table.organiser]
        else:
            right, wrong = seats or [table.organiser], [table.organiser]
        others = [t.organiser for t in self.tables.values() if t is not table]
        rng = _rng(case, "credentials")
        roll = rng.random()
        if table.match_id in self.private:
            pool = right
        else:
            pool = right if roll < 0.8 else wrong if roll < 0.9 or not others else others
        token = rng.choice(pool)
        query = case.query
        in_query = query is not None and isinstance(query.get("token"), str)
        if not declared and in_query and query is not None and rng.random() < 0.5:
            query["token"] = token
            return {}
        return {"Authorization": f"Bearer {token}"}

    def learn(self, case: Case, response: Response) -> None:
        """Remember the tokens a response hands out (a new match, a claimed seat)."""
        if response.status_code != 201:
            return
        try:
            body = json.loads(response.text)
        except ValueError:
            return
        if case.operation.path == "/v1/matches" and "organiserToken" in body:
            made = Table(body["matchId"], body["organiserToken"])
            private = isinstance(case.body, dict) and case.body.get("visibility") == "private"
            (self.private if private else self.tables)[made.match_id] = made
        elif case.operation.path == "/v1/matches/{match_id}/invites":
            table = self.table(case)  # an invite code makes the table private
            if table is not None and len(self.tables) > 1 and table.match_id in self.tables:
                self.private[table.match_id] = self.tables.pop(table.match_id)
        elif case.operation.path == "/v1/tournaments" and "tournamentId" in body:
            self.tournaments.append(body["tournamentId"])
        elif case.operation.path == "/v1/matches/{match_id}/seats/{seat}" and "token" in body:
            table = self.table(case)
            if table is not None:
                table.seats[int(body["seat"])] = body["token"]


def _streams(case: Case) -> bool:
    """The operation answers ``text/event-stream``."""
    responses = case.operation.definition.raw.get("responses", {})
    return any("text/event-stream" in (r.get("content") or {}) for r in responses.values())


def _rng(case: Case, salt: str) -> random.Random:
    """Choices made for a case, from the case itself: Hypothesis resets the global
    ``random`` before each example (every case would pick the same), and a replayed or
    shrunk case should make the same choices again."""
    headers = {k: v for k, v in (case.headers or {}).items() if k != "Idempotency-Key"}
    seen = (case.operation.label, case.path_parameters, case.query, headers, case.body)
    return random.Random(f"{salt}:{seen!r}")


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def running_world(
    tmp_path_factory: pytest.TempPathFactory, *, played: bool = True
) -> Iterator[World]:
    """The app on a SQLite store in a temporary folder with three tables: empty, four people
    in round 1, four bots finished (the tests' module fixture ``world``); and a boards event
    whose first round completed. Without ``played``, the first two tables only: the bots
    play nothing (~1 CPU-s less), for tests that make what they read."""
    path: Path = tmp_path_factory.mktemp("schemathesis") / "store.sqlite3"
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)},
        seeds=FixedSeeds(),
    )
    bots = BotDriver(
        bus_of(service), workers=1, decision_cpu_s=DECISION_CPU_S, bots_only_rounds=BOTS_ONLY_ROUNDS
    )
    app = make_app(service, backend="sqlite", sqlite_path=path, bots=bots)
    assert app.state.rate_limiter.per_minute == 0, "the run needs rate limiting off"
    SLOT.target = app
    with asgi.get_client(SLOT, max_stream_events=MAX_STREAM_EVENTS) as client:
        # in-process: no proxy, netrc or certificate bundle from the environment applies
        client.trust_env = False
        w = World(app, service, client)
        empty = _create(client, {"name": "empty table"})
        people = _create(client, {"name": "four people"})
        for seat in range(4):
            r = client.post(
                f"/v1/matches/{people.match_id}/seats/{seat}", json={"name": f"p{seat}"}
            )
            assert r.status_code == 201, r.text
            people.seats[seat] = r.json()["token"]
        w.tables = {t.match_id: t for t in (empty, people)}
        if played:
            robots = _bots_table(client, app)
            w.tables[robots.match_id] = robots
            w.tournaments.append(_boards_event(client, app))
        yield w
        asgi.shutdown_lifespans()
    SLOT.target = None
    service.close()


def _bots_table(client: asgi.ASGIClient, app: Litestar) -> Table:
    """A table of four random bots whose one round the bot driver played to the end."""
    robots = _create(client, {"name": "four bots", "rules": {"matchEnd": "rounds:1"}})
    auth = {"Authorization": f"Bearer {robots.organiser}"}
    for seat in range(4):
        r = client.post(
            f"/v1/matches/{robots.match_id}/seats/{seat}/bot",
            json={"kind": "random"},
            headers=auth,
        )
        assert r.status_code == 201, r.text
    assert app.state.bots.idle(120), "the bot driver did not go idle"
    summary = client.get(f"/v1/matches/{robots.match_id}").json()
    assert summary["rounds"][0]["status"] == "scored", summary
    return robots


def _boards_event(client: asgi.ASGIClient, app: Litestar) -> str:
    """A boards event of four bot teams whose round 1 (one board) has completed: its
    travellers, board index and duplicate ranking answer."""
    bots = [{"name": f"b{i}", "kind": "random"} for i in range(2)]
    body: Json = {
        "name": "boards",
        "teams": [{"name": f"T{n}", "players": bots} for n in range(4)],
        "format": "swiss",
        "swissRounds": 2,
        "matchLength": 1,
        "deals": "boards",
    }
    r = client.post("/v1/tournaments", json=body)
    assert r.status_code == 201, r.text
    tid, auth = r.json()["tournamentId"], {"Authorization": f"Bearer {r.json()['organiserToken']}"}
    assert client.post(f"/v1/tournaments/{tid}/rounds", headers=auth).status_code in (200, 201)
    assert app.state.bots.idle(120), "the bot driver did not go idle"
    client.post(f"/v1/tournaments/{tid}/results/collect", headers=auth)
    assert client.get(f"/v1/tournaments/{tid}/rounds/1/boards/1").status_code == 200
    return str(tid)


def _create(client: asgi.ASGIClient, body: Json) -> Table:
    r = client.post("/v1/matches", json=body)
    assert r.status_code == 201, r.text
    return Table(r.json()["matchId"], r.json()["organiserToken"])
