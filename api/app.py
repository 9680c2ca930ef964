"""The Litestar application factory (the API's only door to ``infra``)."""

from __future__ import annotations

from litestar import Litestar, get
from litestar.openapi import OpenAPIConfig

from api.errors import EXCEPTION_HANDLERS
from api.rules_oracle import RulesOracleController

MAX_BODY_BYTES = 64 * 1024


@get("/healthz", summary="Liveness", tags=["health"])
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


def create_app() -> Litestar:
    return Litestar(
        route_handlers=[RulesOracleController, healthz],
        exception_handlers=EXCEPTION_HANDLERS,
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(title="Shengji service", version="1.0.0"),
    )
