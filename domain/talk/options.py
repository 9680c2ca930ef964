"""What the creator of a table allows of table talk (R37), fixed at creation like its rules."""

from __future__ import annotations

from collections.abc import Mapping

from domain.values import Value


class TalkOptions(Value):
    """``free_text``: the seats may write their own words (off unless the creator allows
    it; never at a tournament table while it is played, R37); ``spectators``: spectators
    read the table's talk and may send quick chat."""

    __slots__ = ("free_text", "spectators")

    def __init__(self, free_text: bool = False, spectators: bool = True) -> None:
        self.free_text = free_text
        self.spectators = spectators

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TalkOptions) and self.to_mapping() == other.to_mapping()

    def __hash__(self) -> int:
        return hash((self.free_text, self.spectators))

    @property
    def default(self) -> bool:
        return self == DEFAULT

    def to_mapping(self) -> dict[str, bool]:
        return {"free_text": self.free_text, "spectators": self.spectators}

    @classmethod
    def from_mapping(cls, data: Mapping[str, bool] | None) -> TalkOptions:
        if not data:
            return DEFAULT
        return cls(bool(data.get("free_text", False)), bool(data.get("spectators", True)))


DEFAULT = TalkOptions()
"""A table created without talk options: quick chat only, spectators included."""
