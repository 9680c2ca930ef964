"""The OpenAPI contract under schemathesis (docs/observability.md, "Contract, logs, health").

Every operation of the in-process app, on the embedded SQLite store, with every check
schemathesis has (``not_a_server_error``, status code / content type / headers / schema
conformance, negative data rejected, positive data accepted, missing required header,
unsupported method, Allow header, use after free, resource availability, ignored auth,
object-level authorization), bounded examples per operation; then stateful runs: the
schemathesis state machine built from the document's OpenAPI links (create → seat → act
→ every operation on the match, ``api/openapi_patches.py``), and a
stateful sequence driven from the views (create → seat → act → read), every response
checked the same way.

Random examples per operation: ``SCHEMATHESIS_MAX_EXAMPLES`` (default 5, beside the coverage
phase's ~45 deterministic cases); the state machine's scenarios and steps:
``SCHEMATHESIS_STATEFUL_EXAMPLES`` (10) and ``SCHEMATHESIS_STATEFUL_STEPS`` (12);
``SCHEMATHESIS_SEED`` fixes the seed (default: a fixed one, so a failure reproduces;
``random`` draws a new one). docs/api-testing.md describes the longer run.

Requests carry real credentials where an operation needs them (``Authorization: Bearer``
sent as an explicit header, so ``ignored_auth`` also probes the same request without and
with a bad token): path ``match_id`` values that are valid UUIDs mostly point at matches
made for the run (an empty table, a table of four people in round 1, a finished table of
four bots), so operations get past 404 to their real work.

The schema is loaded at import from the app's document (the checked-in ``openapi.yaml``, kept
equal to it by ``tests/api/test_openapi_drift.py``), and its calls go to the app the
module fixture builds through :class:`AppSlot` (``schemathesis.pytest.from_fixture``
fails under pytest 9: ``'Function' object has no attribute '_nodeid'``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from schemathesis import Response
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.result import Ok

from tests.api.schemathesis_world import (
    CONFIG,
    DOCUMENT,
    MAX_EXAMPLES,
    MAX_STREAM_EVENTS,
    SEMANTIC_PATHS,
    STATEFUL_EXAMPLES,
    STATEFUL_STEPS,
    Case,
    World,
    links,
    running_world,
    schema,
    schema_level_acceptance,
)
from tests.conftest import examples


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from running_world(tmp_path_factory)


def test_every_builtin_check_is_on() -> None:
    load_all_checks()
    names = set(CHECKS.get_all_names())
    assert {"not_a_server_error", "ignored_auth", "use_after_free"} <= names
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        op = result.ok()
        project = CONFIG.projects.get_default()
        # the one client of the run (World.client) reads a stream as far as each operation's
        assert project.max_stream_events_for(operation=op) == MAX_STREAM_EVENTS, op.label
        config = project.checks_config_for(operation=op)
        off = {n for n in names if not config.get_by_name(name=n).enabled}
        assert off == set(), (op.label, off)
        if op.path in SEMANTIC_PATHS:  # on, with their documented 422 among the answers
            check = config.get_by_name(name="positive_data_acceptance")
            accepted = getattr(check, "expected_statuses", ())
            assert "422" in accepted, (op.label, accepted)


@schema.parametrize()
@settings(
    max_examples=examples(MAX_EXAMPLES), deadline=None, suppress_health_check=list(HealthCheck)
)
def test_every_operation(case: Case, world: World) -> None:
    world.aim(case)
    response = case.call_and_validate(
        **world.call_kwargs(case), additional_checks=[schema_level_acceptance]
    )
    world.learn(case, response)


# -- stateful: the state machine from the links ----------------------------------------------------


def test_the_document_links_a_match_to_its_operations() -> None:
    """The state machine walks these: create → every operation on the match; claim a
    seat and act → the same, with the version they left (api/openapi_patches.py)."""
    found = links(DOCUMENT)
    on_match = {
        op["operationId"]
        for path, item in DOCUMENT["paths"].items()
        if path.startswith("/v1/matches/{match_id}")
        for op in item.values()
    }
    for source in (
        "createMatch",
        "claimSeat",
        "act",
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
            return world.call_kwargs(case)

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
            max_examples=examples(STATEFUL_EXAMPLES),
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )
