"""Errors of the application layer, each with a stable ``code`` (the problem ``type``)."""

from __future__ import annotations

from domain.rules.errors import ShengjiError


class NotFoundError(ShengjiError):
    code = "not-found"


class VersionConflictError(ShengjiError):
    """Another command changed the aggregate first (optimistic concurrency)."""

    code = "version-conflict"


class PreconditionFailedError(ShengjiError):
    """The client's expected version (If-Match) is not the current one."""

    code = "precondition-failed"


class VerificationError(ShengjiError):
    """A deal does not match its commitment or its recorded hands (R35)."""

    code = "verification-failed"
    rule = "R35"
