"""Strict request bodies: JSON is decoded into the handler's msgspec type with
``strict=True`` before Litestar's own (lax) conversion sees it.

Litestar's signature model converts request data with ``strict=False``, which turns
``"5"`` into ``5`` and ``0`` into ``false`` — input the OpenAPI document calls invalid.
This ``before_request`` hook (``Litestar(before_request=strict_body)``) decodes the body
against the same type first and refuses anything but an exact match, with one JSON
allowance: a number with an integral value (``5.0``) is an integer, as JSON Schema says
too. Refusals are 422 problems naming the field (``rules.levelCap: Expected `int`, got
`str```); a card token that is not R4 notation is ``invalid-card`` naming the field and
the token. A body that is not JSON at all is left to Litestar (400); JSON nested deeper
than :data:`MAX_DEPTH` (or than the interpreter's recursion limit) is a 400 too.
"""

from __future__ import annotations

import re
import types
from typing import Any, Union, get_args, get_origin

import msgspec
from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException, ValidationException

from api.dto import CARD_TOKEN
from domain.rules.errors import InvalidCardError, InvalidInputError

_PATH = re.compile(r"^(?P<message>.*) - at `\$(?P<path>[^`]*)`$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_TOKEN = re.compile(f"^(?:{CARD_TOKEN})$")
_NO_BODY: Any = object()
MAX_DEPTH = 64
"""No request body nests deeper than a few levels; deeper JSON is a 400, never a 500."""


def structs(annotation: Any) -> list[type[msgspec.Struct]]:
    """The msgspec Structs of a type (itself, or the members of a union)."""
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return [annotation]
    if get_origin(annotation) in (Union, types.UnionType):
        return [s for arg in get_args(annotation) for s in structs(arg)]
    return []


def body_type(request: Request[Any, Any, Any]) -> Any:
    """The type of the handler's JSON ``data`` when it is made of msgspec Structs
    (``_NO_BODY`` otherwise: no body, or one the handler reads itself)."""
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None or not structs(data.annotation):
        return _NO_BODY
    kwarg = data.kwarg_definition
    media = getattr(kwarg, "media_type", RequestEncodingType.JSON)
    return data.annotation if media == RequestEncodingType.JSON else _NO_BODY


async def strict_body(request: Request[Any, Any, Any]) -> None:
    target = body_type(request)
    if target is _NO_BODY:
        return
    raw = await request.body()
    if not raw.strip():
        return  # no body: the handler's default (or Litestar's refusal) applies
    try:
        _strict(raw, target)
    except msgspec.DecodeError:
        return  # not JSON: Litestar answers 400


def decode_body(raw: bytes, target: Any) -> Any:
    """``raw`` as ``target`` (a type that admits None), as :func:`strict_body` and then
    Litestar would take it: None for no body, 422 naming the field, 400 for a body
    that is not JSON (in Litestar's words) — for a handler that reads its body itself."""
    if not raw.strip():
        return None
    try:
        return _strict(raw, target)
    except msgspec.DecodeError as e:
        raise ClientException(str(e)) from None


def _strict(raw: bytes, target: Any) -> Any:
    """Raises ``msgspec.DecodeError`` for a body that is not JSON."""
    value: Any = None
    try:
        value = msgspec.json.decode(raw)
        return msgspec.convert(integral(value), target, strict=True)
    except msgspec.ValidationError as e:
        raise refusal(str(e), value) from None
    except RecursionError:
        raise ClientException(f"the JSON body nests deeper than {MAX_DEPTH} levels") from None


def integral(value: Any, depth: int = 0) -> Any:
    """``value`` with every integral float as an int (JSON has one number type)."""
    if depth > MAX_DEPTH:
        raise RecursionError("too deep")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [integral(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: integral(v, depth + 1) for k, v in value.items()}
    return value


def refusal(error: str, body: Any) -> Exception:
    """The 422 for msgspec's ``error`` about ``body``: the field named, and for a card
    token the token (R4)."""
    found = _PATH.match(error)
    message, path = (found["message"], found["path"]) if found else (error, "")
    field = path.removeprefix(".") or "body"
    if CARD_TOKEN in message:
        token = _bad_token(_at(body, path))
        return InvalidInputError(
            f"{field}: {InvalidCardError(token).detail}", code="invalid-card", rule="R4"
        )
    return ValidationException(
        detail=f"{field}: {message}",
        extra=[{"key": field, "message": message, "source": "body"}],
    )


def _at(body: Any, path: str) -> Any:
    for name, index in _STEP.findall(path):
        if name and isinstance(body, dict):
            body = body.get(name)
        elif index and isinstance(body, list) and int(index) < len(body):
            body = body[int(index)]
        else:
            return None
    return body


def _bad_token(value: Any) -> str:
    """The first token of ``value`` (a token or a space-separated string) not in R4."""
    if not isinstance(value, str):
        return repr(value)
    for token in value.split(" "):
        if token and not _TOKEN.match(token):
            return token[:20]
    return value[:20]
