"""One policy for every name a person writes and others read: players' display names,
seat names, team, player, match and tournament names, and the names of an imported
record (docs/decisions.md D-integrity).

A name is stored Unicode-normalised (NFC) and shown exactly as written. Refused, with a
problem naming the field: control characters, bidirectional overrides and isolates (they
reorder the text around them), a name made only of white space or invisible characters,
a name longer than its limit, and the names the service itself shows — ``erased player``,
``unavailable name`` and the bots' default names (``random bot 2``) — so a reader can
always tell them apart. Nothing else is special: a name that looks like a sealed value
(``enc:v1:…``) is plain text and reads as written, since sealed values are typed
(:mod:`services.accounts.keys`).
"""

from __future__ import annotations

import re
import unicodedata

from domain.rules.errors import InvalidInputError

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Marks and embeddings, overrides and isolates (Unicode Bidi_Control)."""
RESERVED = frozenset({"erased player", "unavailable name"})
"""What the service shows in place of a name (casefolded)."""
BOT_NAME = re.compile(r"^(random|heuristic|strong) bot [0-3]$")
"""The bots' default seat names (a person's name may not pass for a bot's)."""
_INVISIBLE = frozenset({"Cf", "Mn", "Me", "Zs", "Zl", "Zp"})


class InvalidNameError(InvalidInputError):
    """A name the policy refuses; ``field`` names it."""

    code = "invalid-name"

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field} {why}")
        self.field = field


def checked_name(text: str, field: str, *, max_length: int = 100, bot: bool = False) -> str:
    """``text`` NFC-normalised, or InvalidNameError naming ``field``. ``bot``: the service
    names a bot's seat, so the bots' default names are allowed."""
    if not isinstance(text, str):
        raise InvalidNameError(field, "must be text")
    name = unicodedata.normalize("NFC", text)
    if not 1 <= len(name) <= max_length:
        raise InvalidNameError(field, f"must be 1 to {max_length} characters, got {len(name)}")
    for ch in name:
        if ch in BIDI_CONTROLS:
            raise InvalidNameError(field, f"may not hold the bidirectional control U+{ord(ch):04X}")
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs", "Co", "Cn") or ch in "\u2028\u2029":
            raise InvalidNameError(field, f"may not hold the control character U+{ord(ch):04X}")
    if all(unicodedata.category(ch) in _INVISIBLE for ch in name):
        raise InvalidNameError(field, "must hold a visible character")
    folded = name.strip().casefold()
    if folded in RESERVED or (not bot and BOT_NAME.match(folded)):
        raise InvalidNameError(field, f"{name.strip()!r} is a name the service shows itself")
    return name


def checked_title(text: str, field: str, *, max_length: int = 200) -> str:
    """A match's or tournament's name: as :func:`checked_name`, but may be empty (a match
    created without one)."""
    return "" if text == "" else checked_name(text, field, max_length=max_length, bot=True)
