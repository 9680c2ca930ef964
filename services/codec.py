"""msgspec encoding of stored events (docs/decisions.md F4).

A small :class:`~eventsourcing.persistence.Mapper`: an event is stored as the msgspec
JSON of its dataclass fields (UUIDs, datetimes and tuples included) and decoded straight
back into its class with the field types msgspec reads from the annotations. Event
classes at ``class_version`` > 1 are decoded to a dict first, run through their
``upcast_vN_vN+1`` static methods (the eventsourcing convention), then converted.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import (
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)
from eventsourcing.utils import get_topic, resolve_topic

from services.accounts.keys import PREFIX, UNREADABLE, Sealed, Sealer

_ENCODER = msgspec.json.Encoder()
_IDENTITY = frozenset({"originator_id", "originator_version"})


class _NoTranscoder(Transcoder):
    """The Mapper base class wants a transcoder; this one is never used."""

    def encode(self, obj: Any) -> bytes:  # pragma: no cover - never called
        raise NotImplementedError

    def decode(self, data: bytes) -> Any:  # pragma: no cover - never called
        raise NotImplementedError


@cache
def _decoder(cls: type[Any]) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(cls)


class MsgspecMapper(Mapper[UUID]):
    """Stored event state = msgspec JSON of the event's fields."""

    def __init__(self, *, sealer: Sealer | None = None, **_library_parts: Any) -> None:
        # A follower (the webhook outbox) builds its leader's mapper through the library's
        # factory, which passes a transcoder, cipher and compressor: msgspec needs none.
        super().__init__(transcoder=_NoTranscoder())
        self.sealer = sealer
        """Seals an event's ``PERSONAL_FIELDS`` under its player's key (crypto-shredding,
        :mod:`services.accounts.keys`; the game service's own). None: stored plain."""

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        state = {k: v for k, v in vars(domain_event).items() if k not in _IDENTITY}
        personal = getattr(type(domain_event), "PERSONAL_FIELDS", None)
        if personal and self.sealer is not None:
            for name, owner_field in personal.items():
                owner = vars(domain_event).get(owner_field)
                if isinstance(owner, UUID) and isinstance(state.get(name), str):
                    state[name] = self.sealer.seal(owner, name, state[name])
        class_version = getattr(type(domain_event), "class_version", 1)
        if class_version > 1:
            state["class_version"] = class_version
        return StoredEvent(
            originator_id=domain_event.originator_id,
            originator_version=domain_event.originator_version,
            topic=get_topic(type(domain_event)),
            state=_ENCODER.encode(state),
        )

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        cls = resolve_topic(stored_event.topic)
        originator_id = stored_event.originator_id
        if not isinstance(originator_id, UUID):
            originator_id = UUID(str(originator_id))
        try:
            if getattr(cls, "class_version", 1) > 1 or getattr(cls, "PERSONAL_FIELDS", None):
                return self._upcast(cls, stored_event, originator_id)
            prefix = (
                b'{"originator_id":"'
                + str(originator_id).encode()
                + b'","originator_version":'
                + str(stored_event.originator_version).encode()
                + b","
            )
            data = stored_event.state
            event: DomainEventProtocol[UUID] = _decoder(cls).decode(prefix + data[1:])
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise MapperDeserialisationError(
                f"stored event {stored_event.topic} v{stored_event.originator_version} "
                f"of {originator_id} does not decode: {e}"
            ) from e
        return event

    def _upcast(
        self, cls: type[Any], stored_event: StoredEvent, originator_id: UUID
    ) -> DomainEventProtocol[UUID]:
        state: dict[str, Any] = msgspec.json.decode(stored_event.state)
        from_version = state.pop("class_version", 1)
        while from_version < cls.class_version:
            getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(state)
            from_version += 1
        for name, owner_field in getattr(cls, "PERSONAL_FIELDS", {}).items():
            if name in state:
                owner = originator_id if owner_field == "originator_id" else state.get(owner_field)
                state[name] = self._personal(name, state[name], owner)
        state["originator_id"] = originator_id
        state["originator_version"] = stored_event.originator_version
        names = _field_names(stored_event.topic)
        event: DomainEventProtocol[UUID] = msgspec.convert(
            {k: v for k, v in state.items() if k in names}, cls, strict=False
        )
        return event

    def _personal(self, name: str, value: Any, owner: Any) -> Any:
        """A stored personal field as read: a :class:`Sealed` object opened (or shown as
        unreadable), a legacy prefixed string opened only when it names the event's own
        account, any other string as written (docs/decisions.md D-integrity)."""
        if isinstance(value, dict):
            try:
                sealed = msgspec.convert(value, Sealed)
            except msgspec.ValidationError:
                return UNREADABLE
            return UNREADABLE if self.sealer is None else self.sealer.open(name, sealed)
        if isinstance(value, str) and value.startswith(PREFIX) and self.sealer is not None:
            try:
                account = owner if isinstance(owner, UUID) else UUID(str(owner))
            except ValueError:
                return value
            return self.sealer.open_legacy(name, value, account)
        return value


@cache
def _field_names(topic: str) -> frozenset[str]:
    """The fields of the event class of ``topic`` (read once per class, not per event)."""
    return frozenset(f.name for f in fields(resolve_topic(topic)))
