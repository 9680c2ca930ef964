"""Run the HTTP service with uvicorn (``make serve``, ``python -m infra.serve``).

Reads :class:`~infra.settings.Settings` from the environment once (HOST, PORT,
DATABASE_URL → PostgreSQL, else the embedded SQLite file, LOG_LEVEL, …), sets up the JSON
logs (:func:`infra.logging.configure_logging`) and serves ``api.app.create_app(settings)``.
Interactive API docs are at ``/schema`` (the document itself at ``/schema/openapi.json``).

Server options, read from the same environment:

* ``SHUTDOWN_TIMEOUT`` — seconds a graceful shutdown (SIGTERM) waits for open requests and
  streams before closing them [10]
* ``FORWARDED_ALLOW_IPS`` — proxies whose ``X-Forwarded-For`` is trusted for the client
  address (read by uvicorn itself) [127.0.0.1]

uvicorn's own access log is off: the API logs one JSON line per request (``api.logging``).
"""

from __future__ import annotations

import gc
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import uvicorn

from api.app import create_app
from infra.logging import configure_logging
from infra.settings import Settings, SettingsError

DEFAULT_SHUTDOWN_TIMEOUT = 10


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """uvicorn options that are not application settings."""

    shutdown_timeout: int = DEFAULT_SHUTDOWN_TIMEOUT

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ServeOptions:
        text = (environ.get("SHUTDOWN_TIMEOUT") or "").strip()
        if not text:
            return cls()
        try:
            seconds = int(text)
        except ValueError:
            raise SettingsError(f"SHUTDOWN_TIMEOUT must be an integer, got {text!r}") from None
        if not 0 <= seconds <= 3600:
            raise SettingsError(f"SHUTDOWN_TIMEOUT must be 0..3600 seconds, got {seconds}")
        return cls(shutdown_timeout=seconds)


def uvicorn_config(settings: Settings, options: ServeOptions) -> uvicorn.Config:
    """The server configuration for ``settings`` (the app is built here)."""
    return uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=options.shutdown_timeout,
    )


class Server(uvicorn.Server):
    """uvicorn runs the app's shutdown only once open connections close; live streams
    (SSE) never close by themselves, so end them first, with a reconnect hint."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        live = getattr(getattr(self.config.loaded_app, "state", None), "live", None)
        if live is None:
            app = self.config.app
            live = getattr(getattr(app, "state", None), "live", None)
        if live is not None:
            await live.close()
        await super().shutdown(sockets)


def main(environ: Mapping[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    try:
        settings = Settings.from_env(env)
        options = ServeOptions.from_env(env)
    except SettingsError as e:
        sys.stderr.write(f"shengji serve: {e}\n")
        raise SystemExit(2) from None
    configure_logging(settings.log_level)
    config = uvicorn_config(settings, options)
    # A long-lived server allocates many short-lived objects per request: collect less
    # often, and keep what start-up built (modules, tables, the app) out of collections.
    # Full collections of a large heap stalled SSE fan-out by ~250 ms.
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    Server(config).run()


if __name__ == "__main__":
    main()
