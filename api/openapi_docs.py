"""The OpenAPI document as a mobile developer generates a client from it: a description
on every operation, schema and property (the Structs' own docstrings: the class's, and
the one under each field), readable unique schema names, and every 4xx answer listing
the problem ``type``s it can carry, each with an example.

:func:`document_schemas` runs after :func:`api.contract.constrain_operations` built
the request schemas: every component schema is rendered to plain JSON Schema, given its
descriptions, and kept as such (:class:`api.contract.JsonSchema`).
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from functools import cache
from itertools import pairwise
from typing import Any

import msgspec
from litestar.openapi.spec import (
    Example,
    OpenAPI,
    OpenAPIResponse,
    Operation,
    Parameter,
    Reference,
    Schema,
)

from api.contract import JsonSchema
from api.i18n import MESSAGES
from api.openapi_fields import FIELD_DOCS
from api.openapi_words import (
    PARAMETER_DOCS,
    PROBLEM_CODES,
    TAG_PROBLEM_CODES,
)
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE

METHODS = ("get", "post", "put", "patch", "delete")


def operations(doc: OpenAPI) -> list[tuple[str, str, Operation]]:
    found = []
    for path, item in sorted((doc.paths or {}).items()):
        for method in METHODS:
            operation = getattr(item, method, None)
            if isinstance(operation, Operation):
                found.append((method, path, operation))
    return found


def describe_operations(doc: OpenAPI) -> None:
    """Every operation has a description (its handler's docstring; a new route without one
    fails the document's generation, so it cannot ship undocumented) and its handler's
    name as its ``operationId`` (:func:`api.openapi.operation_id`)."""
    for method, path, operation in operations(doc):
        if not operation.description:
            raise RuntimeError(f"OpenAPI: describe the operation {method} {path} (its handler)")


def describe_parameters(doc: OpenAPI) -> None:
    """A description on every parameter (its declaration's, else :data:`PARAMETER_DOCS`)."""
    for _, _, operation in operations(doc):
        for parameter in operation.parameters or ():
            if isinstance(parameter, Parameter) and not parameter.description:
                parameter.description = PARAMETER_DOCS.get(parameter.name)
                if parameter.description is None:
                    raise RuntimeError(f"OpenAPI: describe the parameter {parameter.name}")


def document_schemas(doc: OpenAPI) -> None:
    """Each component schema as JSON Schema with its description and its properties'."""
    schemas = doc.components.schemas or {}
    structs = _structs()
    for name, schema in list(schemas.items()):
        raw = schema.raw if isinstance(schema, JsonSchema) else _plain(schema)
        cls = structs.get(name)
        docs = _field_docs(cls) if cls is not None else {}
        if not raw.get("description"):
            own = cls.__doc__ if cls is not None and "__doc__" in vars(cls) else None
            text = _clean(own) if own else None
            if text:
                raw["description"] = text
        for prop, sub in (raw.get("properties") or {}).items():
            if sub.get("description"):
                continue
            text = docs.get(prop) or FIELD_DOCS.get(f"{name}.{prop}") or FIELD_DOCS.get(prop)
            if text:
                sub["description"] = text
        schemas[name] = JsonSchema(raw=raw)
    doc.components.schemas = schemas


def _plain(schema: Schema | Reference) -> dict[str, Any]:
    rendered: dict[str, Any] = schema.to_schema()
    return rendered


def _clean(text: str) -> str:
    """A docstring as prose: dedented, reST roles and literals made plain."""
    text = textwrap.dedent(text).strip()
    first, _, rest = text.partition("\n")
    text = (first + "\n" + textwrap.dedent(rest)).strip()
    text = re.sub(r":(?:class|func|meth|mod|data|attr):`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    return re.sub(r"\s*\n\s*", " ", text)


@cache
def _structs() -> dict[str, type[msgspec.Struct]]:
    """Every msgspec Struct of the API and the services by class name (the component
    schema names)."""
    found: dict[str, type[msgspec.Struct]] = {}
    todo: list[type[msgspec.Struct]] = [msgspec.Struct]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.split(".")[0] in ("api", "services", "domain"):
                found.setdefault(sub.__name__, sub)
    return found


def _field_docs(cls: type[msgspec.Struct]) -> dict[str, str]:
    """The docstrings under a Struct's fields (its bases' too), by encoded name."""
    names = {f.name: f.encode_name for f in msgspec.structs.fields(cls)}
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not issubclass(klass, msgspec.Struct) or klass is msgspec.Struct:
            continue
        for field, text in _docstrings(klass).items():
            if field in names:
                docs[names[field]] = text
    return docs


def _docstrings(cls: type) -> dict[str, str]:
    """The docstrings under ``cls``'s annotated fields (its own, not its bases')."""
    return _module_docstrings(cls.__module__).get(cls.__qualname__, {})


@cache
def _module_docstrings(module: str) -> dict[str, dict[str, str]]:
    """Every class of ``module`` (by qualified name, nested ones too) → the docstrings
    under its annotated fields; the module's source is read and parsed once."""
    try:
        source = inspect.getsource(sys.modules[module])
    except (KeyError, OSError, TypeError):
        return {}
    found: dict[str, dict[str, str]] = {}
    todo: list[tuple[str, ast.AST]] = [("", ast.parse(source))]
    while todo:
        prefix, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                found[name] = _field_docstrings(child.body)
                todo.append((name + ".", child))
    return found


def _field_docstrings(statements: list[ast.stmt]) -> dict[str, str]:
    docs: dict[str, str] = {}
    for this, after in pairwise(statements):
        if (
            isinstance(this, ast.AnnAssign)
            and isinstance(this.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[this.target.id] = _clean(after.value.value)
    return docs


def describe_feed_data(schemas: dict[str, Any], classes: dict[str, type]) -> None:
    """Describe each ``FeedData<Type>`` schema (``classes``: its event class) and its
    properties from the class's docstrings; a field without one is named for what it is."""
    for name, cls in classes.items():
        schema = schemas[name]
        own = cls.__doc__ if "__doc__" in vars(cls) else None
        schema["description"] = _clean(own) if own else f"The fields of a `{cls.__name__}`"
        docs: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            docs.update(_docstrings(klass))
        for prop, sub in schema["properties"].items():
            field = next((f for f in docs if _camel(f) == prop), None)
            sub["description"] = docs[field] if field else f"The event's `{prop}` (docs/events.md)"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def problem_types(doc: OpenAPI) -> None:
    """Every 4xx/5xx answer names the problem ``type``s it can carry, one example each
    (``components/examples/<code>``)."""
    shared: dict[str, Example | Reference] = dict(doc.components.examples or {})
    for _, _, operation in operations(doc):
        for status, response in (operation.responses or {}).items():
            if int(status) < 400 or not isinstance(response, OpenAPIResponse):
                continue
            codes = list(PROBLEM_CODES.get(int(status), ()))
            for tag in operation.tags or ():
                codes += TAG_PROBLEM_CODES.get(tag, {}).get(int(status), ())
            codes = list(dict.fromkeys(codes))
            if not codes:
                continue
            listed = ", ".join(f"`{c}`" for c in codes)
            if "Problem types:" not in (response.description or ""):
                response.description = f"{response.description}. Problem types: {listed}"
            media = (response.content or {}).get(PROBLEM_MEDIA_TYPE)
            if media is not None:
                media.examples = {}
                for code in codes:
                    name = f"{code}-{status}"
                    shared.setdefault(
                        name, Example(summary=_title(code), value=_problem(code, int(status)))
                    )
                    media.examples[code] = Reference(ref=f"#/components/examples/{name}")
    doc.components.examples = dict(sorted(shared.items()))


def _title(code: str) -> str:
    m = MESSAGES.get(code)
    return m.title_en if m is not None else code.replace("-", " ").capitalize()


def _problem(code: str, status: int) -> dict[str, Any]:
    return {
        "type": PROBLEM_BASE + code,
        "title": _title(code),
        "status": status,
        "detail": f"(what happened, naming the rule and the cards) - {_title(code).lower()}",
        "code": code,
    }
