"""The OpenAPI contract under schemathesis (issue 4, "Contract, logs, health").

Every operation of the in-process app, on the embedded SQLite store, with every check
schemathesis has (``not_a_server_error``, status code / content type / headers / schema
conformance, negative data rejected, positive data accepted, missing required header,
unsupported method, Allow header, use after free, resource availability, ignored auth,
object-level authorization), bounded examples per operation; then stateful runs: the
schemathesis state machine built from the document's OpenAPI links (create → seat → act
→ every operation on the match, ``api/contract.py``), and a
stateful sequence driven from the views (create → seat → act → read), every response
checked the same way.

Examples per operation: ``SCHEMATHESIS_MAX_EXAMPLES`` (default 25); the state machine's
scenarios and steps: ``SCHEMATHESIS_STATEFUL_EXAMPLES`` (10) and
``SCHEMATHESIS_STATEFUL_STEPS`` (12); ``SCHEMATHESIS_SEED`` fixes the seed (default: a
fixed one, so a failure reproduces; ``random`` draws a new one). docs/api-testing.md
describes the longer run.

Requests carry real credentials where an operation needs them (``Authorization: Bearer``
sent as an explicit header, so ``ignored_auth`` also probes the same request without and
with a bad token): path ``match_id`` values that are valid UUIDs mostly point at matches
made for the run (an empty table, a table of four people in round 1, a finished table of
four bots), so operations get past 404 to their real work.

The schema is loaded at import from the app's document, and its calls go to the app the
module fixture builds through :class:`AppSlot` (``schemathesis.pytest.from_fixture``
fails under pytest 9: ``'Function' object has no attribute '_nodeid'``).
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
from hypothesis import HealthCheck, settings
from litestar import Litestar
from schemathesis import Case as GenericCase
from schemathesis import CheckContext, Response
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core import NOT_SET
from schemathesis.core.result import Ok
from schemathesis.generation.meta import CoverageScenario
from schemathesis.python import asgi
from schemathesis.specs.openapi.schemas import OpenApiSchema

from api.app import create_app
from infra.settings import Settings
from services.game import GameService
from tests.api.rest import choose
from tests.conftest import FixedSeeds

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))
STATEFUL_EXAMPLES = int(os.environ.get("SCHEMATHESIS_STATEFUL_EXAMPLES", "10"))
STATEFUL_STEPS = int(os.environ.get("SCHEMATHESIS_STATEFUL_STEPS", "12"))
_SEED = os.environ.get("SCHEMATHESIS_SEED", "4")
SEED: int | None = None if _SEED == "random" else int(_SEED)
PATH_REGEX = os.environ.get("SCHEMATHESIS_PATH_REGEX")
"""Only the operations whose path matches (e.g. ``^/v1/rules/``); default: every one."""
BOT_STEPS = 40
"""Bot moves after each command (the default, 1000, would play a whole match per seat)."""

Json = dict[str, Any]
Case = GenericCase[Any]

# Operations whose input has meaning a JSON Schema cannot state: the rules oracle (a lead
# must be of one suit category, every play as long as the lead, the hand must hold the
# play, R15-R23) and deal verification (the seed must hash to the commitment, R35). The
# contract answers such input with a 422 problem ("Malformed input → 422", issue 4), so
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
    "/v1/verify",
    "/v1/records",  # a record must replay: every move legal, seeds vs commitments (R35)
    # teams with distinct names, a Swiss system of 1..(teams - 1) rounds: JSON Schema
    # cannot state uniqueness of a property across items, nor a bound on another field's
    # length (docs/tournaments.md)
    "/v1/tournaments",
    # a Last-Event-ID beyond the match's version is refused (422 last-event-id-ahead, issue
    # 13): which version is current is not in the schema
    "/v1/matches/{match_id}/stream",
)
IF_MATCH_PATHS = ("/v1/matches/{match_id}/actions/{action}", "/v1/matches/{match_id}/timeout")
"""Commands that take ``If-Match`` (the round's actions, claiming a timeout)."""
TOKEN_READERS = ("/v1/matches/{match_id}/stream",)
"""Operations that read a token without declaring security (a seat or a spectator)."""
SCHEMA_LEVEL_CODES = frozenset({"validation-failed", "invalid-card", "invalid-rule-set"})

CONFIG = schemathesis.Config.from_dict(
    {
        **({} if SEED is None else {"seed": SEED}),
        "generation": {"max-examples": MAX_EXAMPLES},
        # The live stream never ends by itself: stop reading after its first view frame,
        # or after a second when none comes (resuming at the current version).
        "max-stream-events": 1,
        "base-url": "http://testserver",
        # Tokens here are throwaway; a reproduction needs the real header values.
        "output": {"sanitization": {"enabled": False}},
        "operations": [
            {"include-path": "/v1/matches/{match_id}/stream", "request-timeout": 1.0},
            {
                "include-path": list(SEMANTIC_PATHS),
                "checks": {"positive_data_acceptance": {"enabled": False}},
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
)


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


# -- the document (with its OpenAPI links) --------------------------------------------------------


def document() -> Json:
    """The app's OpenAPI document (the one ``/schema/openapi.json`` serves)."""
    app = create_app(service=GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}))
    doc: Json = json.loads(json.dumps(app.openapi_schema.to_schema()))
    return doc


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
if PATH_REGEX:
    DOCUMENT["paths"] = {p: v for p, v in DOCUMENT["paths"].items() if re.search(PATH_REGEX, p)}
    _kept = {op["operationId"] for item in DOCUMENT["paths"].values() for op in item.values()}
    for _item in DOCUMENT["paths"].values():
        for _op in _item.values():
            for _response in _op.get("responses", {}).values():
                if "links" in _response:  # no link to an operation left out
                    _response["links"] = {
                        k: v for k, v in _response["links"].items() if v["operationId"] in _kept
                    }
schema: OpenApiSchema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)
schema.app = SLOT


# -- the app under test, with tables to aim at ---------------------------------------------------


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
    tables: dict[str, Table] = field(default_factory=dict)

    def table(self, case: Case) -> Table | None:
        raw = (case.path_parameters or {}).get("match_id")
        return self.tables.get(raw) if isinstance(raw, str) else None

    def aim(self, case: Case) -> None:
        """Point a valid ``match_id`` at a known table (mostly), then :meth:`fresh_key`
        (valid values are replaced by valid values, so the case's meta holds)."""
        rng = _rng(case, "aim")
        params = case.path_parameters
        raw = params.get("match_id") if params else None
        if params is not None and isinstance(raw, str) and _is_uuid(raw) and rng.random() < 0.85:
            params["match_id"] = rng.choice(sorted(self.tables))
        self.fresh_key(case)

    @staticmethod
    def fresh_key(case: Case) -> None:
        """Make a valid Idempotency-Key unique. Anonymous callers share one key scope,
        so a key the generator repeats would be "reused for another request" (422) by
        design; fresh keys keep the positive checks about the input itself (keys have
        their own tests in tests/api/test_rest_writes.py)."""
        headers = case.headers
        key = headers.get("Idempotency-Key") if headers else None
        if headers is not None and isinstance(key, str) and 1 <= len(key) <= 255:
            headers["Idempotency-Key"] = uuid4().hex

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
            self.tables[body["matchId"]] = Table(body["matchId"], body["organiserToken"])
        elif case.operation.path == "/v1/matches/{match_id}/seats/{seat}" and "token" in body:
            table = self.table(case)
            if table is not None:
                table.seats[int(body["seat"])] = body["token"]


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


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    path: Path = tmp_path_factory.mktemp("schemathesis") / "store.sqlite3"
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)},
        seeds=FixedSeeds(),
    )
    settings = Settings(backend="sqlite", sqlite_path=path, rate_limit_per_minute=0)
    app = create_app(settings, service, bot_steps=BOT_STEPS)
    assert app.state.rate_limiter.per_minute == 0, "the run needs rate limiting off"
    SLOT.target = app
    w = World(app, service)
    with asgi.get_client(SLOT) as client:
        empty = _create(client, {"name": "empty table"})
        people = _create(client, {"name": "four people"})
        for seat in range(4):
            r = client.post(
                f"/v1/matches/{people.match_id}/seats/{seat}", json={"name": f"p{seat}"}
            )
            assert r.status_code == 201, r.text
            people.seats[seat] = r.json()["token"]
        bots = _create(client, {"name": "four bots", "rules": {"matchEnd": "rounds:1"}})
        auth = {"Authorization": f"Bearer {bots.organiser}"}
        for seat in range(4):
            r = client.post(
                f"/v1/matches/{bots.match_id}/seats/{seat}/bot",
                json={"kind": "random"},
                headers=auth,
            )
            assert r.status_code == 201, r.text
        for _ in range(10):
            r = client.post(f"/v1/matches/{bots.match_id}/bots/run", json={}, headers=auth)
            assert r.status_code == 200, r.text
            if r.json()["stopped"] == "waiting":
                break
        summary = client.get(f"/v1/matches/{bots.match_id}").json()
        assert summary["rounds"][0]["status"] == "scored", summary
        w.tables = {t.match_id: t for t in (empty, people, bots)}
    yield w
    asgi.shutdown_lifespans()
    SLOT.target = None
    service.close()


def _create(client: asgi.ASGIClient, body: Json) -> Table:
    r = client.post("/v1/matches", json=body)
    assert r.status_code == 201, r.text
    return Table(r.json()["matchId"], r.json()["organiserToken"])


# -- every operation, every check ------------------------------------------------------------------


def test_every_builtin_check_is_on() -> None:
    load_all_checks()
    names = set(CHECKS.get_all_names())
    assert {"not_a_server_error", "ignored_auth", "use_after_free"} <= names
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        op = result.ok()
        config = CONFIG.projects.get_default().checks_config_for(operation=op)
        off = {n for n in names if not config.get_by_name(name=n).enabled}
        expected = {"positive_data_acceptance"} if op.path in SEMANTIC_PATHS else set()
        assert off == expected, (op.label, off)


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation(case: Case, world: World) -> None:
    world.aim(case)
    response = case.call_and_validate(
        headers=world.credentials(case),
        additional_checks=[schema_level_acceptance],
    )
    world.learn(case, response)


# -- stateful: the state machine from the links ----------------------------------------------------


def test_the_document_links_a_match_to_its_operations() -> None:
    """The state machine walks these: create → every operation on the match; claim a
    seat and act → the same, with the version they left (api/contract.py)."""
    found = links(DOCUMENT)
    on_match = {
        op["operationId"]
        for path, item in DOCUMENT["paths"].items()
        if path.startswith("/v1/matches/{match_id}")
        for op in item.values()
    }
    for source in (
        "V1MatchesCreate",
        "V1MatchesMatchIdSeatsClaimSeat",
        "V1MatchesMatchIdActionsAct",
    ):
        assert found.get(source) == on_match, source


def test_state_machine(world: World) -> None:
    """schemathesis's state machine over the document's OpenAPI links (and the ones
    schemathesis infers): create a match, claim seats, seat bots, act, read it back;
    every step with every check (``use_after_free`` and ``ensure_resource_availability``
    see the whole scenario)."""
    base: Any = schema.as_state_machine()

    class Workflow(base):  # type: ignore[misc]
        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            world.fresh_key(case)  # the match id comes from the link: keep it
            return {"headers": world.credentials(case)}

        def after_call(self, response: Response, case: Case) -> None:
            super().after_call(response, case)
            world.learn(case, response)

        def validate_response(
            self,
            response: Response,
            case: Case,
            additional_checks: list[Any] | None = None,
            **kwargs: Any,
        ) -> None:
            # As the base class, plus the credentials as an explicit header (so
            # ignored_auth probes without and with a bad token) and the custom check.
            case.validate_response(
                response,
                additional_checks=[schema_level_acceptance, *(additional_checks or [])],
                headers=kwargs.get("headers"),
                transport_kwargs=kwargs or None,
                recorder=self.recorder,
            )

    Workflow.run(
        settings=settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )


# -- stateful: a round driven by the views ---------------------------------------------------


def _header(response: Response, name: str) -> str | None:
    for key, values in response.headers.items():
        if key.lower() == name.lower() and values:
            return values[0]
    return None


@dataclass
class Driver:
    """Requests built as schemathesis cases, each response checked like a generated one."""

    statuses: list[tuple[str, int]] = field(default_factory=list)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        body: Any = NOT_SET,
        token: str | None = None,
    ) -> Response:
        op = schema[path][method]
        case = op.Case(
            path_parameters=params or {},
            query=query or {},
            headers=headers or {},
            body=body,
            media_type=None if body is NOT_SET else "application/json",
        )
        auth = {} if token is None else {"Authorization": f"Bearer {token}"}
        response = case.call_and_validate(headers=auth, additional_checks=[schema_level_acceptance])
        self.statuses.append((f"{method} {path}", response.status_code))
        return response


def test_a_round_driven_by_the_views(world: World) -> None:
    """The links the document lacks, walked by hand: create → claim four seats → play a
    whole round from what each seat's view offers (If-Match, Idempotency-Key) → read
    every view, the history, the state as of each version, the rounds, the stream, the
    verification; then finish the match and see commands refused. Every response goes
    through every check."""
    d = Driver()
    created = d.send("POST", "/v1/matches", body={"name": "driven", "preset": "standard"})
    assert created.status_code == 201, created.text
    match_id = created.json()["matchId"]
    organiser = created.json()["organiserToken"]
    m = {"match_id": match_id}
    tokens: list[str] = []
    for seat in range(4):
        r = d.send(
            "POST",
            "/v1/matches/{match_id}/seats/{seat}",
            params={**m, "seat": seat},
            body={"name": f"p{seat}"},
            headers={"Idempotency-Key": uuid4().hex},
        )
        assert r.status_code == 201, r.text
        tokens.append(r.json()["token"])
    version = r.json()["version"]
    seen = 0
    for _ in range(400):
        public = d.send("GET", "/v1/matches/{match_id}/public", params=m)
        assert public.status_code == 200, public.text
        tag = _header(public, "ETag")
        assert tag is not None
        again = d.send(
            "GET", "/v1/matches/{match_id}/public", params=m, headers={"If-None-Match": tag}
        )
        assert again.status_code == 304
        expected = public.json()["expected"]
        if public.json()["roundNumber"] > 1 or expected is None:
            break
        seats = range(4) if expected["seat"] is None else [expected["seat"]]
        choice = None
        for seat in seats:
            view = d.send("GET", "/v1/matches/{match_id}/view", params=m, token=tokens[seat])
            assert view.status_code == 200, view.text
            choice = choose(view.json())
            if choice is not None:
                break
        assert choice is not None, expected
        action, cards = choice
        acted = d.send(
            "POST",
            "/v1/matches/{match_id}/actions/{action}",
            params={**m, "action": action},
            headers={"If-Match": f'"{public.json()["version"]}"', "Idempotency-Key": uuid4().hex},
            body={"cards": cards},
            token=tokens[seat],
        )
        assert acted.status_code == 200, acted.text
        version = acted.json()["version"]
        state = d.send(
            "GET",
            "/v1/matches/{match_id}/state",
            params=m,
            query={"version": version},
            token=tokens[(seat + 1) % 4],
        )
        assert state.status_code == 200, state.text
        page = d.send(
            "GET", "/v1/matches/{match_id}/history", params=m, query={"after": seen, "limit": 50}
        )
        assert page.status_code == 200, page.text
        seen = page.json()["next"]
    else:
        raise AssertionError("round 1 did not end")
    for path in (
        "/v1/matches/{match_id}",
        "/v1/matches/{match_id}/rounds",
    ):
        assert d.send("GET", path, params=m).status_code == 200
    one = {**m, "number": 1}
    assert d.send("GET", "/v1/matches/{match_id}/rounds/{number}", params=one).status_code == 200
    verified = d.send("GET", "/v1/matches/{match_id}/rounds/{number}/verify", params=one)
    assert verified.status_code == 200, verified.text
    for token in (*tokens, None):
        streamed = d.send("GET", "/v1/matches/{match_id}/stream", params=m, token=token)
        assert streamed.status_code == 200, streamed.text
    history = d.send("GET", "/v1/matches/{match_id}/history", params=m, token=tokens[0])
    assert history.status_code == 200
    first_state = d.send(
        "GET", "/v1/matches/{match_id}/state", params=m, query={"version": 1}, token=organiser
    )
    assert first_state.status_code == 200
    finished = d.send(
        "POST", "/v1/matches/{match_id}/finish", params=m, body={"reason": "done"}, token=organiser
    )
    assert finished.status_code == 200, finished.text
    refused = d.send(
        "POST",
        "/v1/matches/{match_id}/actions/{action}",
        params={**m, "action": "pass"},
        body={"cards": []},
        token=tokens[0],
    )
    assert refused.status_code == 409, refused.text
    assert len(d.statuses) > 100


def test_version_headers_with_other_unicode_digits(world: World) -> None:
    """``If-Match`` and ``Last-Event-ID`` are ASCII digits: a Unicode digit such as
    ``²`` (byte 0xB2 on the wire, latin-1) is input to refuse, never a 500 (found by
    review after schemathesis flagged the undocumented Last-Event-ID format)."""
    d = Driver()
    people = next(t for t in world.tables.values() if len(t.seats) == 4 and t.match_id)
    m = {"match_id": people.match_id}
    acted = d.send(
        "POST",
        "/v1/matches/{match_id}/actions/{action}",
        params={**m, "action": "pass"},
        headers={"If-Match": '"\u00b2"'},
        body={"cards": []},
        token=people.seats[0],
    )
    assert acted.status_code in (412, 422), acted.text
    streamed = d.send(
        "GET", "/v1/matches/{match_id}/stream", params=m, headers={"Last-Event-ID": "\u00b2"}
    )
    assert streamed.status_code == 422, streamed.text
