"""What the OpenAPI document needs that Litestar (2.25) does not write from the routes and
the types: small steps on the generated document, each named for the gap it fills, run
once per process by :func:`api.openapi.complete_document` (docs/decisions.md
D-contract-native, D-declared).

The words are declared where Litestar reads them: an operation's on its handler (the
docstring), a field's on its type (msgspec ``Meta(description=…, examples=…)``), a
stream's on its declaration (:mod:`api.streams`). What is left here is what Litestar
cannot be told, or gets wrong.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import msgspec
from litestar.params import ParameterKwarg
from litestar.routes import BaseRoute, HTTPRoute

from api.dto import PARAMETER_DOCS, PROBLEM_CODES, PROBLEM_DOCS, TAG_PROBLEM_CODES
from api.i18n import MESSAGES
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE
from api.strict import BODY, optional, structs
from services.feed_schema import feed_item_components

Json = dict[str, Any]
REF_TEMPLATE = "#/components/schemas/{name}"
METHODS = ("get", "post", "put", "patch", "delete")
NOT_FOUND_DOC = "No such resource, or a path parameter that is not of its form (e.g. not a UUID)"
_CONSTRAINTS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "pattern": "pattern",
}


def operations(document: Json) -> Iterator[tuple[str, str, Json]]:
    """Every operation of ``document``: (method, path, operation), in path order."""
    for path, item in sorted(document["paths"].items()):
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


def _handlers(routes: Sequence[BaseRoute], document: Json) -> Iterator[tuple[Any, list[Json]]]:
    """Each route handler with the operations it answers."""
    for route in routes:
        if isinstance(route, HTTPRoute):
            item = document["paths"].get(route.path_format, {})
            for handler in route.route_handlers:
                ops = [item[m.lower()] for m in handler.http_methods if m.lower() in item]
                yield handler, ops


def request_bodies(document: Json, routes: Sequence[BaseRoute]) -> None:
    """Gap: Litestar drops msgspec ``Meta`` constraints inside unions and list items (a
    card token's pattern, an optional field's minimum). A body is decoded strictly by
    msgspec (:mod:`api.strict`) as the type its route declares (``write_route(body=T)``,
    ``opt=json_body(T)``), so its schema is msgspec's own: the document and the decoder
    cannot disagree. An optional body is one that may be left out."""
    bodies: set[type[msgspec.Struct]] = set()
    for handler, ops in _handlers(routes, document):
        target = handler.opt.get(BODY)
        found = structs(target)
        bodies |= set(found)
        for op in ops if found else ():
            schema = {"$ref": REF_TEMPLATE.format(name=found[0].__name__)}
            op["requestBody"] = {
                "content": {"application/json": {"schema": schema}},
                "required": not optional(target),
            }
    ordered = sorted(bodies, key=lambda t: t.__name__)
    _, components = msgspec.json.schema_components(ordered, ref_template=REF_TEMPLATE)
    document["components"]["schemas"].update(components)


def parameter_constraints(document: Json, routes: Sequence[BaseRoute]) -> None:
    """Gap: an optional parameter loses the constraints its ``Parameter`` declares, and is
    written ``oneOf [X, null]`` though a header or query value is text, absent or not."""
    for handler, ops in _handlers(routes, document):
        fields = dict(handler.parsed_fn_signature.parameters)
        for provider in handler.resolve_dependencies().values():  # ``write``'s header
            fields.update(provider.parsed_fn_signature.parameters)
        declared: dict[str, ParameterKwarg] = {}
        for name, field in fields.items():
            kwarg = field.kwarg_definition
            if isinstance(kwarg, ParameterKwarg):
                alias = kwarg.name or kwarg.header or kwarg.query or kwarg.cookie or name
                declared[alias.lower()] = kwarg
        for op in ops:
            for parameter in op.get("parameters", ()):
                kwarg = declared.get(parameter["name"].lower())
                if kwarg is None:
                    continue
                schema = parameter["schema"] = _not_null(parameter["schema"])
                for source, key in _CONSTRAINTS.items():
                    if getattr(kwarg, source) is not None and key not in schema:
                        schema[key] = getattr(kwarg, source)


def _not_null(schema: Json) -> Json:
    branches = schema.get("oneOf", ())
    values = [b for b in branches if b.get("type") != "null"]
    if len(branches) != 2 or len(values) != 1:
        return schema
    outer = {k: v for k, v in schema.items() if k != "oneOf"}
    return {**outer, **values[0]}


def parameter_words(document: Json) -> None:
    """Gap: a path parameter that only the path declares (``{match_id:uuid}``,
    ``FromPath``) has no description; one word per name (:data:`PARAMETER_DOCS`). An
    operation without a description fails here: a route ships documented."""
    for method, path, op in operations(document):
        if not op.get("description"):
            raise RuntimeError(f"OpenAPI: describe the operation {method} {path} (its handler)")
        for parameter in op.get("parameters", ()):
            if not parameter.get("description"):
                parameter["description"] = PARAMETER_DOCS.get(parameter["name"])
                if parameter["description"] is None:
                    raise RuntimeError(f"OpenAPI: describe the parameter {parameter['name']}")


def problem_answers(document: Json) -> None:
    """Gap: Litestar documents its own 400 (its validation error as JSON) for a route with
    parameters, and not the router's 404 for a path parameter not of its type; every
    error here is a problem (:mod:`api.errors`). Each answer names the problem ``type``s
    it can carry (:data:`api.dto.PROBLEM_CODES` by status, :data:`api.dto.TAG_PROBLEM_CODES` by
    the operation's tag), one
    shared example each (``components/examples/<code>-<status>``)."""
    shared: Json = document["components"].setdefault("examples", {})
    for _, _, op in operations(document):
        responses = op["responses"]
        if any(p["in"] == "path" for p in op.get("parameters", ())):
            responses.setdefault("404", {"description": NOT_FOUND_DOC})
        for status, response in responses.items():
            if int(status) < 400:
                continue
            if set(response.get("content", {})) != {PROBLEM_MEDIA_TYPE}:
                response["content"] = {
                    PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}
                }
                if status == "400":
                    response["description"] = PROBLEM_DOCS[400]
            codes = [*PROBLEM_CODES.get(int(status), ())]
            for tag in op.get("tags", ()):
                codes += TAG_PROBLEM_CODES.get(tag, {}).get(int(status), ())
            codes = list(dict.fromkeys(codes))
            if not codes:
                continue
            listed = ", ".join(f"`{c}`" for c in codes)
            response["description"] = f"{response['description']}. Problem types: {listed}"
            examples = response["content"][PROBLEM_MEDIA_TYPE]["examples"] = {}
            for code in codes:
                name = f"{code}-{status}"
                shared.setdefault(
                    name, {"summary": _title(code), "value": _problem(code, int(status))}
                )
                examples[code] = {"$ref": f"#/components/examples/{name}"}
    document["components"]["examples"] = dict(sorted(shared.items()))


def _title(code: str) -> str:
    m = MESSAGES.get(code)
    return m.title_en if m is not None else code.replace("-", " ").capitalize()


def _problem(code: str, status: int) -> Json:
    return {
        "type": PROBLEM_BASE + code,
        "title": _title(code),
        "status": status,
        "detail": f"(what happened, naming the rule and the cards) - {_title(code).lower()}",
        "code": code,
    }


def schema_words(document: Json) -> None:
    """Gap: Litestar gives a Struct's schema no description of its own — and writes there
    the description of a field that refers to it — and a tagged Struct's tag field
    (``kind``) is a bare ``const``: the Struct's docstring is its schema's description,
    the tag is described by what it tells apart."""
    found = _structs()
    for name, schema in document["components"]["schemas"].items():
        cls = found.get(name)
        own = cls.__doc__ if cls is not None and "__doc__" in vars(cls) else None
        if own:
            schema["description"] = _clean(own)
        for sub in (schema.get("properties") or {}).values():
            if "const" in sub and not sub.get("description"):
                sub["description"] = f"Always `{sub['const']}`: tells a `{name}` from the others"


def _clean(text: str) -> str:
    """A docstring as prose: reST roles and literals made plain, on one line."""
    text = re.sub(
        r":(?:class|func|meth|mod|data|attr):`~?([^`]+)`", r"`\1`", inspect.cleandoc(text)
    )
    return re.sub(r"\s*\n\s*", " ", text.replace("``", "`"))


@cache
def _structs() -> dict[str, type[msgspec.Struct]]:
    """Every msgspec Struct of the API, the services and the domain by class name (the
    component schemas' names)."""
    found: dict[str, type[msgspec.Struct]] = {}
    todo: list[type[msgspec.Struct]] = [msgspec.Struct]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.split(".")[0] in ("api", "services", "domain"):
                found.setdefault(sub.__name__, sub)
    return found


def feed_items(document: Json) -> None:
    """A feed item is one schema per event type, told apart by ``type`` — the served
    schemas (:mod:`services.feed_schema`, made from the domain's events) — where
    Litestar writes msgspec's ``FeedItem`` with ``data`` of any object."""
    schemas = document["components"]["schemas"]
    schemas.update(feed_item_components(REF_TEMPLATE))
    schemas.pop("FeedStream", None)  # msgspec's FeedItem's, replaced by FeedItemStream


MATCH_PATH = "/v1/matches/{match_id}"
LINK_SOURCES = (
    ("/v1/matches", "post", "201", "$response.body#/matchId"),
    (MATCH_PATH + "/seats/{seat}", "post", "201", "$request.path.match_id"),
    (MATCH_PATH + "/actions/{action}", "post", "200", "$request.path.match_id"),
)
"""Answers that name a match (and the version they left): creating it, claiming a seat,
acting."""


def links(document: Json) -> None:
    """Gap: a route cannot declare OpenAPI links. Each answer of :data:`LINK_SOURCES`
    links to every operation on its match (clients, and the schemathesis state machine,
    walk create → seat → act → read)."""
    targets = [
        (op["operationId"], {f"{p['in']}.{p['name']}" for p in op.get("parameters", ())})
        for _, path, op in operations(document)
        if path == MATCH_PATH or path.startswith(MATCH_PATH + "/")
    ]
    for path, method, status, match_id in LINK_SOURCES:
        wanted = {"path.match_id": match_id, "query.version": "$response.body#/version"}
        document["paths"][path][method]["responses"][status]["links"] = {
            target: {
                "operationId": target,
                "parameters": {k: v for k, v in wanted.items() if k in names},
            }
            for target, names in targets
        }


def tag_unions(document: Json) -> None:
    """Gap: Litestar writes a union of tagged Structs as an inline ``oneOf`` without a
    ``discriminator``. Each becomes a named schema (``CommandDoneOrDryRun``; for many
    branches their common prefix, ``FeedItemAny``) with its discriminator — the property
    whose ``const`` tells the branches apart (the msgspec tag) — so that generated clients
    decode each answer as its own type (docs/decisions.md D-contract-native). A union
    with no such tag fails the generation."""
    schemas = document["components"]["schemas"]
    _tag_unions_in(document, schemas)
    document["components"]["schemas"] = dict(sorted(schemas.items()))


def _tag_unions_in(node: Any, schemas: Json) -> None:
    """:func:`tag_unions` in ``node`` and every node below it."""
    if isinstance(node, list):
        for item in node:
            _tag_unions_in(item, schemas)
    if not isinstance(node, dict):
        return
    refs = [b.get("$ref", "") for b in node.get("oneOf", ())]
    if refs and all(refs) and "discriminator" not in node:  # a named, tagged one stays
        named = {ref: schemas[ref.rsplit("/", 1)[1]] for ref in refs}
        common = set.intersection(
            *({k for k, v in s["properties"].items() if "const" in v} for s in named.values())
        )
        if not common:
            raise RuntimeError(f"OpenAPI: a oneOf of {refs} has no tag to tell them apart")
        name = min(common)
        mapping = {s["properties"][name]["const"]: ref for ref, s in named.items()}
        names = [ref.rsplit("/", 1)[1] for ref in refs]
        prefix = os.path.commonprefix(names)  # noqa: RUF071 - names, not paths
        union = "Or".join(names) if len(names) <= 3 or not prefix else prefix + "Any"
        schemas[union] = {
            "description": f"{' or '.join(names[:3])}{', …' if len(names) > 3 else ''}, "
            f"told apart by `{name}`",
            "oneOf": node.pop("oneOf"),
            "discriminator": {"propertyName": name, "mapping": mapping},
        }
        node["$ref"] = f"#/components/schemas/{union}"
    for value in list(node.values()):
        _tag_unions_in(value, schemas)
