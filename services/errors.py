"""Errors of the application layer, each with a stable ``code`` (the problem ``type``)."""

from __future__ import annotations

from typing import ClassVar

from domain.rules.errors import ShengjiError


class NotFoundError(ShengjiError):
    code = "not-found"


class VersionConflictError(ShengjiError):
    """Another command changed the aggregate first (optimistic concurrency)."""

    code = "version-conflict"


class PreconditionFailedError(ShengjiError):
    """The client's expected version (If-Match) is not the current one; ``current``: the
    match version now (the answer's ``ETag``), when known."""

    code = "precondition-failed"

    def __init__(self, detail: str, *, current: int | None = None) -> None:
        super().__init__(detail)
        self.current = current


class VerificationError(ShengjiError):
    """A deal does not match its commitment or its recorded hands (R35)."""

    code = "verification-failed"
    rule = "R35"


class UnauthorizedError(ShengjiError):
    """401: a credential is needed, or this one is not valid here (services.access)."""

    code = "unauthorized"
    status: ClassVar[int] = 401


class ForbiddenError(ShengjiError):
    """403: a valid-looking credential of another match, tournament or team, or of the
    wrong role (services.access)."""

    code = "forbidden"
    status: ClassVar[int] = 403


class IdempotencyKeyReusedError(ShengjiError):
    """409: the Idempotency-Key names another request (method, path or body differ)."""

    code = "idempotency-key-reused"
    status: ClassVar[int] = 409


class IdempotencyInFlightError(ShengjiError):
    """409: the first request with this Idempotency-Key is still being handled."""

    code = "idempotency-in-flight"
    status: ClassVar[int] = 409


class QuotaExceededError(ShengjiError):
    """429: the caller has not enough left of an hourly allowance for this command
    (:mod:`services.limits`); ``retry_after``: whole seconds until it has."""

    code = "quota-exceeded"
    status: ClassVar[int] = 429

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class BusyError(ShengjiError):
    """503: as many exports are being built as may be at once (``EXPORT_CONCURRENCY``);
    ``retry_after``: whole seconds to wait before trying again."""

    code = "exports-busy"
    status: ClassVar[int] = 503

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
