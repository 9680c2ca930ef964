"""The OpenAPI document says exactly what the API accepts.

Litestar builds the document from the handlers, but (2.x) it drops msgspec ``Meta``
constraints inside unions and list items (a card token's pattern, an optional field's
``minimum: 0``) and constraints of optional parameters. The request bodies are decoded
strictly by msgspec (:mod:`api.strict`), so their schemas are msgspec's own JSON Schema
of the same types — the document and the decoder cannot disagree; parameters get the
constraints their ``Parameter`` declarations state. :func:`constrain_operations` and
:func:`link_operations` are steps of :func:`api.openapi.complete_document`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

import msgspec
from litestar.openapi.spec import (
    Link,
    OpenAPI,
    OpenAPIMediaType,
    OpenAPIResponse,
    Operation,
    Parameter,
    Reference,
    RequestBody,
    Schema,
)
from litestar.params import ParameterKwarg
from litestar.routes import BaseRoute

from api.dto import PROBLEM_DOCS
from api.problems import PROBLEM_MEDIA_TYPE
from api.strict import BODY, optional, structs

REF_TEMPLATE = "#/components/schemas/{name}"
PROBLEM_REF = Reference(ref=REF_TEMPLATE.format(name="Problem"))
NOT_FOUND_DOC = "No such resource, or a path parameter that is not of its form (e.g. not a UUID)"
_CONSTRAINTS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusive_minimum",
    "lt": "exclusive_maximum",
    "min_length": "min_length",
    "max_length": "max_length",
    "pattern": "pattern",
}


@dataclasses.dataclass
class JsonSchema(Schema):
    """A schema given as JSON Schema (msgspec's), rendered as it is."""

    raw: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_schema(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)


def constrain_operations(doc: OpenAPI, routes: Sequence[BaseRoute]) -> None:
    """Request bodies (a route's ``opt=json_body(T)``) as msgspec's schemas, optional bodies
    not required, every parameter's declared constraints in its schema, and every error
    answer as a problem."""
    bodies: set[type[msgspec.Struct]] = set()
    for route in routes:
        item = (doc.paths or {}).get(route.path_format or route.path)
        for handler in getattr(route, "route_handlers", ()):
            signature = dict(handler.parsed_fn_signature.parameters)
            for provider in handler.resolve_dependencies().values():  # ``write``'s header
                signature.update(provider.parsed_fn_signature.parameters)
            for method in handler.http_methods:
                operation = getattr(item, method.lower(), None)
                if isinstance(operation, Operation):
                    _constrain_parameters(operation, signature)
                    _problem_responses(operation)
            target = handler.opt.get(BODY)
            found = structs(target)
            if not found:
                continue
            bodies |= set(found)
            # an optional body is one that may be left out (not a nullable one: one type)
            schema = Reference(ref=REF_TEMPLATE.format(name=found[0].__name__))
            for method in handler.http_methods:
                operation = getattr(item, method.lower(), None)
                if isinstance(operation, Operation):
                    operation.request_body = RequestBody(
                        content={"application/json": OpenAPIMediaType(schema=schema)},
                        required=not optional(target),
                    )
    _request_schemas(doc, bodies)


MATCH_PATH = "/v1/matches/{match_id}"
LINK_SOURCES = (
    ("/v1/matches", "post", "201", "$response.body#/matchId", "$response.body#/version"),
    (
        MATCH_PATH + "/seats/{seat}",
        "post",
        "201",
        "$request.path.match_id",
        "$response.body#/version",
    ),
    (
        MATCH_PATH + "/actions/{action}",
        "post",
        "200",
        "$request.path.match_id",
        "$response.body#/version",
    ),
)
"""Answers that name a match (and the version they left): creating it, claiming a seat,
acting. Each links to every operation on that match (OpenAPI links: clients, and the
schemathesis state machine, walk create → seat → act → read)."""


def link_operations(doc: OpenAPI) -> None:
    """Each answer of :data:`LINK_SOURCES` links to every operation on its match."""
    paths = doc.paths or {}
    targets: list[tuple[Operation, set[str]]] = []
    for path, item in sorted(paths.items()):
        if path != MATCH_PATH and not path.startswith(MATCH_PATH + "/"):
            continue
        for method in ("get", "post", "put", "patch", "delete"):
            operation = getattr(item, method, None)
            if isinstance(operation, Operation) and operation.operation_id:
                names = {
                    f"{getattr(p.param_in, 'value', p.param_in)}.{p.name}"
                    for p in operation.parameters or ()
                    if isinstance(p, Parameter)
                }
                targets.append((operation, names))
    for path, method, status, match_id, version in LINK_SOURCES:
        source = getattr(paths.get(path), method, None)
        response = (source.responses or {}).get(status) if isinstance(source, Operation) else None
        if not isinstance(response, OpenAPIResponse):
            raise RuntimeError(f"OpenAPI links: no {status} answer of {method} {path}")
        links: dict[str, Link | Reference] = {}
        for target, names in targets:
            wanted = {"path.match_id": match_id, "query.version": version}
            parameters = {k: v for k, v in wanted.items() if k in names}
            links[f"{target.operation_id}"] = Link(
                operation_id=target.operation_id, parameters=parameters
            )
        response.links = links


def _problem_responses(operation: Operation) -> None:
    """Every error answers ``application/problem+json`` (:mod:`api.errors`), including
    the 400 Litestar documents by itself as its own JSON for a route with parameters;
    and a route with a path parameter answers 404 (the router's, for a value not of the
    parameter's type such as a non-UUID id; else no such resource)."""
    responses = operation.responses if operation.responses is not None else {}
    in_path = any(
        isinstance(p, Parameter) and getattr(p.param_in, "value", p.param_in) == "path"
        for p in operation.parameters or ()
    )
    if in_path and "404" not in responses:
        responses["404"] = OpenAPIResponse(description=NOT_FOUND_DOC)
    for status, response in responses.items():
        if int(status) < 400 or not isinstance(response, OpenAPIResponse):
            continue
        content = response.content or {}
        if set(content) != {PROBLEM_MEDIA_TYPE}:
            response.content = {PROBLEM_MEDIA_TYPE: OpenAPIMediaType(schema=PROBLEM_REF)}
            if status == "400":
                response.description = PROBLEM_DOCS[400]


def _request_schemas(doc: OpenAPI, bodies: set[type[msgspec.Struct]]) -> None:
    """The request bodies' component schemas (and the structs they nest): msgspec's JSON
    Schema of the types the handlers decode (:mod:`api.strict`), every ``Meta``
    constraint at any depth — the document and the decoder cannot disagree."""
    ordered = sorted(bodies, key=lambda t: t.__name__)
    _, components = msgspec.json.schema_components(ordered, ref_template=REF_TEMPLATE)
    schemas = doc.components.schemas if doc.components.schemas is not None else {}
    for name, raw in components.items():
        schemas[name] = JsonSchema(raw=raw)
    doc.components.schemas = schemas


def _constrain_parameters(operation: Operation, signature: dict[str, Any]) -> None:
    by_name: dict[str, ParameterKwarg] = {}
    for name, field in signature.items():
        kwarg = field.kwarg_definition
        if isinstance(kwarg, ParameterKwarg):
            alias = getattr(kwarg, "name", None) or kwarg.header or kwarg.query or kwarg.cookie
            by_name[(alias or name).lower()] = kwarg
    for parameter in operation.parameters or ():
        if not isinstance(parameter, Parameter) or not isinstance(parameter.schema, Schema):
            continue
        kwarg = by_name.get(parameter.name.lower())
        if kwarg is None:
            continue
        schema = parameter.schema = _not_null(parameter.schema)
        for source, attribute in _CONSTRAINTS.items():
            value = getattr(kwarg, source)
            if value is not None and getattr(schema, attribute) is None:
                setattr(schema, attribute, value)


def _not_null(schema: Schema) -> Schema:
    """An optional parameter is absent, never null (a header or a query value is text):
    its ``oneOf: [X, null]`` becomes X, with the outer schema's keywords on it."""
    branches = [b for b in schema.one_of or () if isinstance(b, Schema)]
    values = [b for b in branches if getattr(b.type, "value", b.type) != "null"]
    if len(branches) != 2 or len(values) != 1:
        return schema
    merged = copy.copy(values[0])
    for item in dataclasses.fields(schema):
        value = getattr(schema, item.name)
        if item.name != "one_of" and value is not None and getattr(merged, item.name) is None:
            setattr(merged, item.name, value)
    return merged
