"""Run the HTTP service with uvicorn (``make serve``, ``python -m infra.serve``), or with
``PROCESS_ROLE=worker`` (``shengji worker``) the worker's own server of probes and metrics
beside its background work (:mod:`infra.worker`).

Reads :class:`~infra.settings.Settings` from the environment once (docs/configuration.md:
HOST, PORT, DATABASE_URL → PostgreSQL, else the embedded SQLite file, LOG_LEVEL,
SHUTDOWN_TIMEOUT, SCHEMA_WAIT_TIMEOUT, …), sets up the JSON logs
(:func:`infra.logging.configure_logging`) and serves the app of the composition root,
:func:`infra.bootstrap.build_app`. Interactive API docs are at ``/schema`` (the document
itself at ``/schema/openapi.json``). With ``CREATE_TABLES=false`` the server first waits
up to ``SCHEMA_WAIT_TIMEOUT`` seconds for the schema (``shengji migrate``, the migration
Job) and exits 1 when it does not come.

Forwarding headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are believed only from
the proxies named in ``TRUSTED_PROXIES`` (:class:`~infra.settings.Settings`; none by
default): uvicorn's proxy-headers middleware is on only then, with exactly those
addresses and networks. (uvicorn's own default trusts 127.0.0.1, so any local process
or a same-host proxy that passes the header through could choose its client address.)

Graceful drain (SIGTERM, SIGINT): the listening socket closes first (new connections are
refused; Kubernetes' preStop pause has taken the pod out of its Service by then), every
live stream ends with a final ``retry:`` reconnect hint (EventSource reconnects to another
replica, resuming with ``Last-Event-ID``), requests in flight finish and are answered,
then their connections close, idle keep-alive connections close, the app shuts down (its
store connections close) and the process exits 0 (SIGINT keeps uvicorn's way: the signal
is raised again). After ``SHUTDOWN_TIMEOUT`` seconds the requests still running are
cancelled.

uvicorn's own access log is off: the API logs one JSON line per request (``api.logging``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator, Mapping

import structlog
import uvicorn

from infra.bootstrap import build_app
from infra.logging import configure_logging
from infra.migrate import wait_for_schema
from infra.settings import Settings, SettingsError
from infra.worker import build_worker
from infra.writerlock import StoreTakenError


def uvicorn_config(settings: Settings) -> uvicorn.Config:
    """The server configuration for ``settings`` (the app is built here: the API app, or
    a worker's own small server of probes and metrics, :mod:`infra.worker`)."""
    worker = settings.process_role == "worker"
    return uvicorn.Config(
        build_worker(settings) if worker else build_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=settings.shutdown_timeout,
        timeout_keep_alive=settings.keep_alive_timeout,
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies),
    )


class Server(uvicorn.Server):
    """uvicorn runs the app's shutdown only once open connections close; live streams
    (SSE) never close by themselves, so end them first, with a reconnect hint — after the
    listening sockets close, so that no new stream opens meanwhile (the module doc)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = getattr(self.config.loaded_app, "state", None)
        if getattr(state, "live", None) is None:
            state = getattr(self.config.app, "state", None)
        live = getattr(state, "live", None)
        if live is not None:
            await live.close()
        archive = getattr(state, "archive", None)  # the events feed's streams (api.feed)
        if archive is not None:
            await archive.close()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn raises a captured signal again once it has shut down, so a drained
        process would die of its SIGTERM (exit 143); a completed drain exits 0."""
        with super().capture_signals():
            yield
            self._captured_signals = [s for s in self._captured_signals if s != signal.SIGTERM]


def await_schema(settings: Settings) -> bool:
    """With ``CREATE_TABLES=false``: wait for the migration (:mod:`infra.migrate`)."""
    if settings.create_tables or settings.backend == "popo":
        return True
    log = structlog.get_logger("infra.serve")
    started = time.monotonic()

    def waiting(reason: str) -> None:
        log.warning(
            "waiting for the schema: run `shengji migrate` (CREATE_TABLES=false)",
            reason=reason[:300],
            waited_s=round(time.monotonic() - started, 1),
        )

    return wait_for_schema(settings, settings.schema_wait_timeout, on_wait=waiting)


def main(environ: Mapping[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    try:
        settings = Settings.from_env(env)
    except SettingsError as e:
        sys.stderr.write(f"shengji serve: {e}\n")
        raise SystemExit(2) from None
    configure_logging(settings.log_level)
    try:
        if not await_schema(settings):
            sys.stderr.write(
                f"shengji serve: the {settings.backend} store has no schema after "
                f"{settings.schema_wait_timeout} s: run `shengji migrate` (CREATE_TABLES=false)\n"
            )
            raise SystemExit(1)
        config = uvicorn_config(settings)
    except StoreTakenError as e:  # another server on the same SQLite file
        sys.stderr.write(f"shengji serve: {e}\n")
        raise SystemExit(1) from None
    # A long-lived server allocates many short-lived objects per request: collect less
    # often, and keep what start-up built (modules, tables, the app) out of collections.
    # Full collections of a large heap stalled SSE fan-out by ~250 ms.
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    Server(config).run()


if __name__ == "__main__":
    main()
