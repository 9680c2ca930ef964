"""Who pays for what a request makes (docs/decisions.md D-fair, D-bounded): the client's
address always, and its verified identity too when it has one.

Admission (:mod:`api.admission`) finds them once per request and keeps them in the
request's state (:func:`keep_payer`); a write hands them to the bus, which charges the
matches a command makes to them (:func:`payer_of`), and the exports are charged the same
way (:mod:`api.export_limits`).
"""

from __future__ import annotations

from typing import Final

from litestar.types import Scope

from services.limits import Payer

PAYER_STATE_KEY: Final = "payer"


def keep_payer(scope: Scope, address: str, identity: str | None) -> None:
    """Keep the request's payer: ``address``, and ``identity`` when verified."""
    keys = (address,) if identity is None else (address, identity)
    scope["state"][PAYER_STATE_KEY] = Payer(keys)


def payer_of(scope: Scope) -> Payer | None:
    """Who pays for what the request makes, as admission found it; None when the limits
    are off (``RATE_LIMIT_PER_MINUTE=0``)."""
    found = scope.get("state", {}).get(PAYER_STATE_KEY)
    return found if isinstance(found, Payer) else None
