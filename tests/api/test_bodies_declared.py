"""A request body's type is declared once, on its route (``write_route(body=T)``,
``opt=json_body(T)``): the handler reads it as that type (:func:`api.strict.read_body`)
and the OpenAPI document shows it; a handler naming another type is a programming error,
never a silent second declaration."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar, Request, post
from litestar.testing import TestClient

from api.strict import json_body, read_body


class Echo(msgspec.Struct):
    word: str


class Other(msgspec.Struct):
    number: int


@post("/echo", opt=json_body(Echo))
async def echo(request: Request[Any, Any, Any]) -> str:
    data: Echo = await read_body(request)
    return data.word


@post("/mixed", opt=json_body(Echo))
async def mixed(request: Request[Any, Any, Any]) -> str:
    await read_body(request, Other)
    return "never"


@post("/undeclared")
async def undeclared(request: Request[Any, Any, Any]) -> str:
    await read_body(request)
    return "never"


def test_the_body_is_read_as_its_route_declares_and_only_so() -> None:
    with TestClient(Litestar([echo, mixed, undeclared])) as c:
        assert c.post("/echo", json={"word": "tractor"}).text == "tractor"
        assert c.post("/echo", json={"word": 5}).status_code == 400  # refused (422 in the app)
        assert c.post("/mixed", json={"number": 1}).status_code == 500
        assert c.post("/undeclared", json={}).status_code == 500
