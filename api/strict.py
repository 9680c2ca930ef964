"""Request bodies, decoded once and strictly: one msgspec decoder per request type.

Handlers read their body with :func:`read_body` (Litestar's ``Request.body``, within the
route's size limit) and get it decoded by the cached ``msgspec.json.Decoder(T,
strict=True)`` of their request type ``T`` — ``"5"`` is not a number and ``0`` is not a
boolean, as the OpenAPI document says. One JSON allowance: a number with an integral value
(``5.0``) is an integer, as JSON Schema says too (the one case decoded a second time).
Refusals are 422 problems naming the field (``rules.levelCap: Expected `int`, got
`str```), from the path msgspec writes into its error (`` - at `$.rules.levelCap` ``); a
card token that is not R4 notation is ``invalid-card`` naming the field and the token. A
body that is not JSON is a 400 in msgspec's words; no body is ``None`` (the handler's
default) when the type admits it, else a 400; a JSON ``null`` body is a 422 (a body is
an object or left out: one type, as the document says).

The route declares its type once, with ``opt=json_body(T)`` (``write_route(body=T)``):
the handler reads it as that type and the OpenAPI document shows it
(:func:`api.openapi_patches.request_bodies`).
"""

from __future__ import annotations

import re
import types
from functools import cache
from typing import Any, Union, get_args, get_origin

import msgspec
from litestar import Request
from litestar.exceptions import ClientException, HTTPException, ValidationException

from api.dto import CARD_TOKEN
from domain.rules.errors import InvalidCardError, InvalidInputError

_PATH = re.compile(r"^(?P<message>.*) - at `\$(?P<path>[^`]*)`$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_TOKEN = re.compile(f"^(?:{CARD_TOKEN})$")
BODY = "body"
"""The route ``opt`` key naming its request type."""
MAX_DEPTH = 64
"""No request body nests deeper than a few levels; deeper JSON is a 400, never a 500."""


def json_body(target: Any) -> dict[str, Any]:
    """A route's ``opt`` declaring its JSON request type (``T | None``: optional)."""
    return {BODY: target}


def structs(annotation: Any) -> list[type[msgspec.Struct]]:
    """The msgspec Structs of a type (itself, or the members of a union)."""
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return [annotation]
    if get_origin(annotation) in (Union, types.UnionType):
        return [s for arg in get_args(annotation) for s in structs(arg)]
    return []


def optional(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)


@cache
def _decoder(target: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(target, strict=True)


async def read_body(request: Request[Any, Any, Any], target: Any = None) -> Any:
    """The request's JSON body as the type its route declares (``opt=json_body(T)``, see
    the module doc); a body sent with a ``Content-Type`` that is not JSON
    (``application/json`` or ``…+json``) is a 415. ``target``, while handlers still name
    it: the declared type again (anything else is a TypeError: one declaration)."""
    declared = request.route_handler.opt.get(BODY)
    if declared is None or (target is not None and target != declared):
        raise TypeError(f"{request.url.path}: the route declares its body {declared!r}")
    target = declared
    raw = await request.body()
    if raw.strip():
        check_json_media_type(request.headers.get("content-type"))
    return decode_body(raw, target)


def check_json_media_type(content_type: str | None) -> None:
    """415 ``unsupported-media-type`` unless ``content_type`` is JSON or absent (a client
    that names no type is read as JSON)."""
    if content_type is None:
        return
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return
    raise HTTPException(
        status_code=415,
        detail="a request body is JSON (Content-Type: application/json), "
        f"not {media or '(empty)'!r}",
    )


def decode_body(raw: bytes, target: Any) -> Any:
    """``raw`` as ``target``: None for no body (400 if the type does not admit it), 422
    naming the field, 400 for a body that is not JSON."""
    if not raw.strip():
        if optional(target):
            return None
        raise ClientException("a JSON request body is required")
    if raw.strip() == b"null" and optional(target):  # one type: an object, or no body
        raise ValidationException(
            detail="body: a JSON object, or no body at all (not null)",
            extra=[{"key": "body", "message": "not null", "source": "body"}],
        )
    try:
        return _decoder(target).decode(raw)
    except msgspec.ValidationError as e:
        error = str(e)
    except msgspec.DecodeError as e:
        raise ClientException(str(e)) from None
    except RecursionError:
        raise _too_deep() from None
    # The typed decoder stops at the first value of a wrong type; what the body is as
    # plain JSON decides the answer: not JSON at all or too deep (400), an integral float
    # (accepted), or a refusal naming the field (422).
    value = _json(raw)
    try:
        value = integral(value)
    except RecursionError:
        raise _too_deep() from None
    if "got `float`" in error:
        try:
            return msgspec.convert(value, target, strict=True)
        except msgspec.ValidationError as e:
            error = str(e)
    raise refusal(error, value) from None


def _json(raw: bytes) -> Any:
    """The body as plain JSON values (400 in msgspec's words when it is not JSON)."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as e:
        raise ClientException(str(e)) from None
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> ClientException:
    return ClientException(f"the JSON body nests deeper than {MAX_DEPTH} levels")


def integral(value: Any, depth: int = 0) -> Any:
    """``value`` with every integral float as an int."""
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
    value = _at(body, path)
    if message == "Expected `array`, got `str`" and _looks_like_cards(value):
        message += ': cards are a JSON array of card strings (["5C", "5C"]), never one string'
    if CARD_TOKEN in message:
        token = _bad_token(value)
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


def _looks_like_cards(value: Any) -> bool:
    """``value`` is one string of R4 tokens (``"5C 5C"``), as the API once took cards."""
    return isinstance(value, str) and all(_TOKEN.match(t) for t in value.split() or ["-"])


def _bad_token(value: Any) -> str:
    """The first token of ``value`` (a token or a space-separated string) not in R4."""
    if not isinstance(value, str):
        return repr(value)
    for token in value.split(" "):
        if token and not _TOKEN.match(token):
            return token[:20]
    return value[:20]
