"""structlog setup: one JSON object per line for every log record of the process.

:func:`configure_logging` is called by the entry point (``infra.serve``) or a test, never
at import. structlog loggers and plain :mod:`logging` loggers (``api.errors``, uvicorn,
the eventsourcing library) end in the same handler and the same JSON renderer, and both
carry what the request middleware bound in structlog's context variables
(``request_id``, ``match_id``, ``seat``).

Secrets stay secret: the request middleware never logs bodies or headers, and as a last
guard :func:`redact_secrets` blanks any field named like a secret (hands, the bottom,
cards, seeds, tokens, Authorization, bodies) whoever logs it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, Final, TextIO

import msgspec
import structlog
from structlog.typing import Processor

REDACTED: Final = "[redacted]"
SECRET_KEYS: Final = frozenset(
    {
        "authorization",
        "token",
        "seat_token",
        "organiser_token",
        "hand",
        "hands",
        "bottom",
        "kitty",
        "cards",
        "seed",
        "body",
        "request_body",
        "password",
        "cookie",
    }
)
_HANDLER_MARK: Final = "_shengji_json_handler"


def redact_secrets(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Blank the value of every field whose name is in :data:`SECRET_KEYS`."""
    for key in SECRET_KEYS.intersection(event_dict):
        event_dict[key] = REDACTED
    return event_dict


def _json_line(event_dict: Any, **_: Any) -> str:
    """One log record as JSON (msgspec: several times faster than :mod:`json`); values
    msgspec cannot encode are written as their ``str``."""
    return _ENCODER.encode(event_dict).decode()


_ENCODER: Final = msgspec.json.Encoder(enc_hook=str)


def _shared_processors() -> list[Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        redact_secrets,
    ]


def configure_logging(level: str | int = "INFO", *, stream: TextIO | None = None) -> None:
    """Send every log record of the process as JSON lines to ``stream`` (stdout).

    Idempotent: calling it again replaces the handler it installed before (handlers that
    others put on the root logger, such as pytest's, are left alone).
    """
    numeric = logging.getLevelName(level) if isinstance(level, str) else level
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    # The logging HOWTO's "Optimization": no caller frame lookup, thread or process
    # names per record (our JSON lines carry none of them; the access log writes one
    # line per request, so these are on the hot path of every request).
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    shared = _shared_processors()
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=_json_line),
        ],
    )
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    handler.setFormatter(formatter)
    setattr(handler, _HANDLER_MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(numeric)
    # uvicorn's own loggers go through the root handler; its access log is replaced by
    # the API's (api.logging), which knows the route template and the request id.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uv = logging.getLogger(name)
        uv.handlers.clear()
        uv.propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    # HTTP clients log whole URLs (a query string may hold a token): warnings only.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
