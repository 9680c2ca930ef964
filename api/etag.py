"""ETags and conditional requests (RFC 9110 §8.8.3, §13.1).

A match's representations carry a strong ETag of the match version,
``"<version>"`` — the number of events of the match and its rounds, which only grows
(:meth:`domain.game.match.Match.sequence`). A view that also changes with the clock gets
a suffix: ``"<version>-d37"`` while a paced deal is drawing (37 cards out, R16) and
``"<version>-c"`` once a deadline has passed that no command has claimed yet (R17, R20),
so a poller is never told 304 for a view that changed.

* ``If-None-Match`` on a read: 304 Not Modified, no body, when any listed tag matches
  (weak comparison; ``*`` matches any).
* ``If-Match`` on a command: ``"<version>"`` (or ``*``); the command is refused with 412
  ``precondition-failed`` unless the match is at exactly that version.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Response
from litestar.params import HeaderParameter

from services.round_commands import Precondition

IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match", description='"<version>" of a previous answer: 304 if current'
    ),
]
IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        description='"<version>": act only if the match is at this version, else 412',
    ),
]


def etag(version: int, marker: str = "") -> str:
    """The quoted, strong ETag of a match version (with a clock marker when needed)."""
    return f'"{version}-{marker}"' if marker else f'"{version}"'


def _tags(header: str) -> list[str]:
    return [t.strip().removeprefix("W/") for t in header.split(",") if t.strip()]


def not_modified(if_none_match: str | None, tag: str) -> bool:
    """True when ``If-None-Match`` matches ``tag``: answer 304."""
    if if_none_match is None:
        return False
    tags = _tags(if_none_match)
    return "*" in tags or tag in tags


def precondition(if_match: str | None) -> Precondition:
    """The match version ``If-Match`` requires (none: any), or why it is not one — the
    412 is given after the caller is authorised (:class:`services.round_commands.Precondition`)."""
    if if_match is None or if_match.strip() == "*":
        return Precondition()
    text = if_match.strip()
    digits = text[1:-1]
    well_formed = len(text) >= 3 and text[0] == '"' and text[-1] == '"'
    if not well_formed or not (digits.isascii() and digits.isdigit()):
        return Precondition(
            malformed=f'If-Match must be one strong ETag "<version>" (or *), got {text[:40]!r}'
        )
    if len(digits) > 18:
        return Precondition(malformed="If-Match: no match has that many versions")
    return Precondition(int(digits))


def not_modified_response(tag: str) -> Response[Any]:
    """304 Not Modified: no body, the current ETag."""
    return Response(None, status_code=304, headers={"ETag": tag})


def tagged(content: Any, tag: str) -> Response[Any]:
    """200 with the ETag; clients revalidate (If-None-Match) before reusing it."""
    return Response(content, headers={"ETag": tag, "Cache-Control": "no-cache"})
