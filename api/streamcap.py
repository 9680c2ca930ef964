"""Caps on concurrent live streams (SSE) of every kind, per verified identity and per address.

A live stream holds a connection, a task and a place in a fan-out or a polling loop for as
long as the client keeps it (its lifetime, then EventSource reconnects), and it is not rate
limited (:mod:`api.ratelimit`). So the streams *open at once* are capped, for each kind of
stream (:data:`api.streams.STREAMS`: a match's, a player's, a lobby ticket's, a
tournament's standings or display, the events feed) on its own: ``per_kind[kind]`` for a
verified identity (the account, seat, match or tournament a token stands for,
:mod:`api.identity` — minting tokens buys no streams), else ``per_address`` for the
client's address — a made-up token counts under the
address. Beyond its cap a stream is refused before it starts: 429 ``too-many-streams``
problem+json with ``Retry-After``; the refusals are counted by which cap refused
(``shengji_sse_refusals_total{limit}``) and the streams open by kind
(``shengji_sse_open{kind}``, :mod:`api.metrics`). A stream's place is freed when its
request ends, however it ends.

:class:`api.admission.AdmissionMiddleware` admits them, for ``GET`` on the stream routes only
(the routes that carry a declaration, :func:`api.streams.declared`); the counts are per
process (each replica caps its own streams).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Final

from api.streams import KINDS, STREAMS

RETRY_AFTER_S: Final = 10
"""Retry-After of a refused stream: long enough for a stream of the client to end."""
LIMITS: Final = ("identity", "address")


def parse_caps(items: tuple[str, ...], default: int) -> dict[str, int]:
    """Per-kind caps from ``kind=cap`` items (``SSE_STREAM_CAPS``); a kind not named gets
    its declared cap, else ``default`` (``SSE_MAX_PER_IDENTITY``). ValueError for an unknown
    kind or a cap that is not an integer >= 0."""
    caps = {s.kind: default if s.cap is None else s.cap for s in STREAMS}
    for item in items:
        kind, sep, text = item.partition("=")
        kind = kind.strip()
        if not sep or kind not in KINDS:
            raise ValueError(f"{item!r}: use kind=cap, kind one of {', '.join(KINDS)}")
        try:
            cap = int(text)
        except ValueError:
            cap = -1
        if cap < 0:
            raise ValueError(f"{item!r}: a cap is an integer >= 0 (0: no cap)")
        caps[kind] = cap
    return caps


class StreamCaps:
    """The streams open per (kind, identity) and per (kind, address), and the refusals."""

    def __init__(
        self, per_identity: int, per_address: int, per_kind: Mapping[str, int] | None = None
    ) -> None:
        if per_identity < 0 or per_address < 0:
            raise ValueError("stream caps are >= 0 (0: no cap)")
        self.per_kind = dict(per_kind) if per_kind is not None else parse_caps((), per_identity)
        if any(cap < 0 for cap in self.per_kind.values()):
            raise ValueError("stream caps are >= 0 (0: no cap)")
        self.per_address = per_address
        self.open: Counter[tuple[str, str]] = Counter()
        self.refusals: Counter[str] = Counter({limit: 0 for limit in LIMITS})

    @property
    def enabled(self) -> bool:
        return bool(self.per_address or any(self.per_kind.values()))

    def open_by_kind(self) -> dict[str, int]:
        """Streams open now, by kind (for the metrics)."""
        counts = dict.fromkeys(KINDS, 0)
        for (kind, _), n in self.open.items():
            counts[kind] += n
        return counts

    def cap(self, kind: str, verified: bool) -> int:
        return self.per_kind.get(kind, 0) if verified else self.per_address

    def admit(self, kind: str, identity: str | None, address: str) -> tuple[str, str] | None:
        """The key the stream is counted under, or None when its cap is full (counted)."""
        key = (kind, identity if identity is not None else address)
        cap = self.cap(kind, identity is not None)
        if cap and self.open[key] >= cap:
            self.refusals["identity" if identity is not None else "address"] += 1
            return None
        self.open[key] += 1
        return key

    def release(self, key: tuple[str, str]) -> None:
        self.open[key] -= 1
        if self.open[key] <= 0:
            del self.open[key]
