"""The event catalogue in code: every stored event type, its class version and the JSON
Schema of its fields, generated from the classes' annotations (``msgspec.json.schema``).

:data:`EVENT_CLASSES` lists every class the store may hold (a test checks that no event
class of ``domain`` or ``services`` is missing). ``services/event_schemas.json`` is the
checked-in snapshot of the schema of *every version* of every type, older versions
included (``scripts/gen_event_schemas.py`` adds a new version; it never rewrites one).
:func:`drift` compares the classes with it: an event class whose fields changed without
a new ``class_version`` — or a new version without an ``upcast_vN_vN+1`` for every step
from the oldest version stored — is a failure (``tests/services/test_event_schemas.py``), so
events already in a store always decode (:mod:`services.codec` upcasts them).

Schemas describe the event *as decoded* (the stored JSON plus ``originator_id`` and
``originator_version`` from the store's columns); titles and descriptions are left out,
so editing a docstring is not a schema change. docs/events.md says what each type means,
which rule it records and which fields are secret until when.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import msgspec
from eventsourcing.utils import get_topic
from msgspec import Meta

from domain.accounts.account import (
    AccountCreated,
    AccountErased,
    MatchLeft,
    ProfileEdited,
    Queued,
    SeatClaimed,
    SessionEnded,
    SessionOpened,
    SessionRefreshed,
    SessionTokenRotated,
    Unqueued,
)
from domain.accounts.friend_online import FriendCameOnline
from domain.accounts.friendship import (
    FriendAccepted,
    FriendRemoved,
    FriendRequestDeclined,
    FriendRequested,
    FriendRequestWithdrawn,
    FriendshipErased,
    FriendshipOpened,
    PlayerBlocked,
    PlayerUnblocked,
)
from domain.accounts.invite import InviteCreated
from domain.accounts.lobby import LobbyOpened, MatchMade, TicketLeft, TicketQueued
from domain.accounts.ranked_queue import (
    RankedMatchMade,
    RankedQueueOpened,
    RankedTicketLeft,
    RankedTicketQueued,
)
from domain.accounts.rating_change import RatingChanged
from domain.accounts.social import (
    FriendCodeChanged,
    FriendCodeIssued,
    FriendCodeRetired,
    PresenceChoiceMade,
    SocialProfileErased,
    SocialProfileOpened,
)
from domain.accounts.table_invitation import (
    InvitationAccepted,
    InvitationDeclined,
    InvitationWithdrawn,
    TableInvited,
)
from domain.accounts.ticket import TicketCancelled, TicketMatched, TicketOpened
from domain.accounts.webhooks import (
    AttemptFailed,
    Delivered,
    Enqueued,
    PlayerSeated,
    QueueOpened,
    RegistryOpened,
    Subscribed,
    SubscriptionRegistered,
    SubscriptionRemoved,
    TableOpened,
    Unsubscribed,
)
from domain.feed_subscription import (
    CheckpointCommitted,
    FeedSubscriptionCreated,
    RangeAcknowledged,
    RangeClaimed,
)
from domain.game.match_events import (
    MatchCreated,
    MatchFinished,
    MatchImported,
    RematchOffered,
    Resigned,
    RoundBegun,
    RoundRecorded,
    SeatLeft,
    SeatTaken,
    SeatTokenReissued,
    TableMadePrivate,
)
from domain.game.round_events import ROUND_EVENTS, RoundStarted
from domain.talk.table_talk import MessageReported, MessageSent, Muted, TalkOpened, Unmuted
from domain.tournament.events import (
    DIRECTOR_EVENTS,
    ByeAwarded,
    PairingAllowed,
    PairingForbidden,
    PairingsOverridden,
    ResultCorrected,
    RoundCompleted,
    RoundDeadlinePassed,
    RoundScheduled,
    ScoreAdjusted,
    TableForfeited,
    TableResultRecorded,
    TeamCheckedIn,
    TeamPlayersLinked,
    TeamRegistered,
    TeamsSeeded,
    TeamWithdrew,
    TournamentConfigured,
    TournamentCreated,
    TournamentStarted,
)
from services.idempotency import IdempotencyRecord
from services.positions import PolicyPosition

SNAPSHOT = Path(__file__).with_name("event_schemas.json")

_STREAMS: tuple[tuple[str, tuple[type[Any], ...]], ...] = (
    (
        "match",
        (
            MatchCreated,
            SeatTaken,
            SeatTokenReissued,
            RoundBegun,
            RoundRecorded,
            MatchFinished,
            MatchImported,
            TableMadePrivate,
            SeatLeft,
            Resigned,
            RematchOffered,
        ),
    ),
    ("round", (RoundStarted, *ROUND_EVENTS)),
    (
        "tournament",
        (
            TournamentCreated,
            TournamentConfigured,
            TeamRegistered,
            TeamPlayersLinked,
            TeamsSeeded,
            TeamCheckedIn,
            TournamentStarted,
            RoundScheduled,
            TableResultRecorded,
            ResultCorrected,
            RoundCompleted,
            TeamWithdrew,
            TableForfeited,
            ByeAwarded,
            PairingForbidden,
            PairingAllowed,
            PairingsOverridden,
            ScoreAdjusted,
            RoundDeadlinePassed,
            *DIRECTOR_EVENTS,
        ),
    ),
    ("idempotency", (IdempotencyRecord.Recorded,)),
    ("policy", (PolicyPosition.PositionStarted, PolicyPosition.PositionMoved)),
    (
        "account",
        (
            AccountCreated,
            SessionOpened,
            SessionTokenRotated,
            SessionEnded,
            SessionRefreshed,
            ProfileEdited,
            SeatClaimed,
            MatchLeft,
            Queued,
            Unqueued,
            AccountErased,
        ),
    ),
    ("invite", (InviteCreated,)),
    ("talk", (TalkOpened, MessageSent, Muted, Unmuted, MessageReported)),
    ("rating", (RatingChanged,)),
    ("online-notice", (FriendCameOnline,)),
    (
        "friendship",
        (
            FriendshipOpened,
            FriendRequested,
            FriendRequestWithdrawn,
            FriendRequestDeclined,
            FriendAccepted,
            FriendRemoved,
            PlayerBlocked,
            PlayerUnblocked,
            FriendshipErased,
        ),
    ),
    ("friend-code", (FriendCodeIssued, FriendCodeRetired)),
    (
        "social-profile",
        (SocialProfileOpened, FriendCodeChanged, PresenceChoiceMade, SocialProfileErased),
    ),
    (
        "table-invitation",
        (TableInvited, InvitationAccepted, InvitationDeclined, InvitationWithdrawn),
    ),
    ("lobby", (LobbyOpened, TicketQueued, TicketLeft, MatchMade)),
    ("ranked-queue", (RankedQueueOpened, RankedTicketQueued, RankedTicketLeft, RankedMatchMade)),
    ("ticket", (TicketOpened, TicketMatched, TicketCancelled)),
    ("webhook", (SubscriptionRegistered, SubscriptionRemoved)),
    (
        "subscription",
        (FeedSubscriptionCreated, RangeClaimed, RangeAcknowledged, CheckpointCommitted),
    ),
    (
        "outbox",
        (
            RegistryOpened,
            Subscribed,
            Unsubscribed,
            TableOpened,
            PlayerSeated,
            QueueOpened,
            Enqueued,
            AttemptFailed,
            Delivered,
        ),
    ),
)
EVENT_CLASSES: tuple[tuple[str, type[Any]], ...] = tuple(
    (stream, cls) for stream, classes in _STREAMS for cls in classes
)
"""(stream kind, class) of every event the store may hold."""

_DROPPED = frozenset({"title", "description"})


class EventType(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One event type: where it is stored and the schema of each of its versions."""

    type: Annotated[
        str, Meta(description="The event class's name (`CardPlayed`, …; docs/events.md).")
    ]
    topic: Annotated[str, Meta(description="The stored topic (`module:Class`).")]
    stream: Annotated[
        str,
        Meta(
            description=(
                "`match`, `round`, `tournament`, `idempotency`, "
                "`account`, `invite`, `talk`, `lobby`, `ranked-queue`, `ticket`, `webhook`, "
                "`subscription` (the game's store) or `outbox` (the "
                "webhook outbox's own store, never in the feed); "
                "docs/events.md says who may read each."
            )
        ),
    ]
    class_version: Annotated[
        int,
        Meta(description="The version the code writes now; older ones are upcast on reading."),
    ]
    secret: Annotated[
        list[str],
        Meta(
            description=(
                "Fields hidden from some readers (R33, R35; docs/events.md says until when)."
            )
        ),
    ]
    personal: Annotated[
        list[str],
        Meta(
            description=(
                "Fields that identify a person, stored encrypted under "
                "that player's own key: they read `erased player` once "
                "the player is erased (crypto-shredding, "
                "docs/players.md)."
            )
        ),
    ] = []
    versions: Annotated[
        dict[str, dict[str, Any]],
        Meta(description=('`"1"`, `"2"`, … → the JSON Schema (2020-12) of that version.')),
    ]


class EventSchemas(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Every event type and version of the store."""

    events: list[EventType]
    """Every event type of the store."""


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items()) if k not in _DROPPED}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return value


def schema_of(cls: type[Any]) -> dict[str, Any]:
    """The JSON Schema of ``cls``'s fields (no titles or descriptions)."""
    shaped: dict[str, Any] = _shape(msgspec.json.schema(cls))
    return shaped


def generated() -> dict[str, dict[str, Any]]:
    """Type name → {"version": the class version, "schema": its schema}, from the code."""
    return {
        cls.__name__: {"version": getattr(cls, "class_version", 1), "schema": schema_of(cls)}
        for _, cls in EVENT_CLASSES
    }


def load_snapshot(path: Path = SNAPSHOT) -> dict[str, dict[str, Any]]:
    """The checked-in snapshot: type name → {"1": schema, "2": schema, …}."""
    loaded: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def drift(
    snapshot: dict[str, dict[str, Any]], classes: tuple[tuple[str, type[Any]], ...]
) -> list[str]:
    """What is wrong between ``classes`` and ``snapshot`` (empty: nothing)."""
    problems: list[str] = []
    for _, cls in classes:
        name, version = cls.__name__, getattr(cls, "class_version", 1)
        versions = snapshot.get(name, {})
        stored = versions.get(str(version))
        if stored is None:
            problems.append(
                f"{name} v{version} is not in the snapshot: run scripts/gen_event_schemas.py"
            )
        elif stored != schema_of(cls):
            problems.append(
                f"{name} changed without a new class_version: its fields differ from the "
                f"snapshot of v{version}; raise class_version to {version + 1}, add "
                f"upcast_v{version}_v{version + 1} and run scripts/gen_event_schemas.py"
            )
        oldest = min((int(v) for v in versions), default=version)
        for step in range(oldest, version):
            if not callable(getattr(cls, f"upcast_v{step}_v{step + 1}", None)):
                problems.append(
                    f"{name}: the store may hold v{step} events but there is no "
                    f"upcast_v{step}_v{step + 1}"
                )
        newer = [v for v in versions if int(v) > version]
        if newer:
            problems.append(f"{name}: the snapshot has versions {newer} newer than the code's")
    return problems


def updated_snapshot(snapshot: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``snapshot`` with the code's current version of every type added (the generator);
    ValueError when that would rewrite a version already recorded."""
    out = {name: dict(versions) for name, versions in snapshot.items()}
    for name, current in generated().items():
        versions = out.setdefault(name, {})
        key = str(current["version"])
        if key in versions and versions[key] != current["schema"]:
            raise ValueError(
                f"{name} v{key} changed: raise its class_version and add an upcaster "
                "instead of rewriting a version the store may hold"
            )
        versions[key] = current["schema"]
    return {name: out[name] for name in sorted(out)}


@cache
def event_schemas() -> EventSchemas:
    """Every type with every version: the snapshot's older ones and the code's current."""
    snapshot = load_snapshot()
    items = []
    for stream, cls in EVENT_CLASSES:
        version = getattr(cls, "class_version", 1)
        versions = {k: v for k, v in snapshot.get(cls.__name__, {}).items() if int(k) < version}
        versions[str(version)] = schema_of(cls)
        items.append(
            EventType(
                type=cls.__name__,
                topic=get_topic(cls),
                stream=stream,
                class_version=version,
                secret=list(getattr(cls, "SECRET_FIELDS", ())),
                personal=list(getattr(cls, "PERSONAL_FIELDS", {})),
                versions=dict(sorted(versions.items(), key=lambda kv: int(kv[0]))),
            )
        )
    return EventSchemas(events=items)
