"""Feed subscriptions over REST (docs/events.md, "Subscriptions";
:mod:`services.feed_subscriptions`): the server keeps a named consumer's position in the
log, and several consumers of one name share its events under leases. The operator's
routes (``OPERATOR_TOKEN``: 401 without a token, 403 with another):

* ``POST /v1/events/subscriptions`` — create one: ``{name, types?, from?, leaseMs?}``;
* ``GET /v1/events/subscriptions/{name}`` — its checkpoint, what is leased, how far behind;
* ``POST /v1/events/subscriptions/{name}/claims`` — ``{consumer, limit?}``: the next range
  and its items (unredacted), leased to that consumer;
* ``POST /v1/events/subscriptions/{name}/acks`` — ``{consumer, lease}``: the range is
  processed (409 ``lease-lost`` once it expired and another consumer took it);
* ``POST /v1/events/subscriptions/{name}/checkpoint`` — ``{position}``: a single streaming
  consumer commits its ``Last-Event-ID``; ``GET /v1/events/stream?subscription=<name>``
  (with the operator token) resumes after the checkpoint.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response
from litestar.di import NamedDependency
from litestar.params import PathParameter
from msgspec import Meta

from api.auth import credential
from api.calls import Writing, write_route
from api.dto import _Request
from api.feed import Archive
from api.routes import route
from api.runtime import in_thread
from services import feed_subscriptions as fs
from services.access import Credential

Name = Annotated[
    str,
    PathParameter(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="The subscription's name",
    ),
]
Consumer = Annotated[str, msgspec.Meta(min_length=1, max_length=100, examples=["worker-1"])]


class CreateSubscription(_Request, frozen=True, kw_only=True):
    """A named feed subscription."""

    name: Annotated[
        Annotated[
            str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", examples=["warehouse"])
        ],
        Meta(description="Its name: 1 to 64 letters, digits, `.`, `_`, `-`."),
    ]
    types: Annotated[
        Annotated[list[Annotated[str, msgspec.Meta(max_length=64)]], msgspec.Meta(max_length=100)],
        Meta(description="The event types to follow (`CardPlayed`, …); none: every type."),
    ] = msgspec.field(default_factory=list)
    from_: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=10**15), msgspec.Meta(examples=[0])],
        Meta(description="Start after this position of the log (0: from the beginning)."),
    ] = msgspec.field(default=0, name="from")
    lease_ms: Annotated[
        Annotated[int, msgspec.Meta(ge=1000, le=3_600_000)],
        Meta(
            description=(
                "How long a claimed range is a consumer's before another may claim it again."
            )
        ),
    ] = fs.DEFAULT_LEASE_MS


class ClaimRange(_Request, frozen=True, kw_only=True):
    """A consumer asks for the next range."""

    consumer: Annotated[Consumer, Meta(description="Who asks (each worker its own name).")]
    limit: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=1000)],
        Meta(description="Positions of the log in the range at most."),
    ] = 100


class AckRange(_Request, frozen=True, kw_only=True):
    """A consumer processed its range."""

    consumer: Annotated[Consumer, Meta(description="Who processed it (the lease's holder).")]
    lease: Annotated[
        Annotated[str, msgspec.Meta(min_length=1, max_length=64)],
        Meta(description="The lease a claim answered."),
    ]


class CommitPosition(_Request, frozen=True, kw_only=True):
    """A single consumer processed everything up to a position."""

    position: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=10**15)],
        Meta(description="The last position processed (a stream's Last-Event-ID)."),
    ]


def require_operator(archive: Archive, cred: Credential | None) -> None:
    archive.operator.require(cred, fs.SUBSCRIPTIONS)


class SubscriptionController(Controller):
    path = "/v1/events/subscriptions"
    tags = ["archive"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route("/", 201, 401, 403, 409, body=CreateSubscription)
    async def create_feed_subscription(self, write: Writing) -> Response[fs.FeedSubscriptionView]:
        """Create a named feed subscription (operator)

        The server keeps its consumers' position (its checkpoint) across restarts and
        replicas; several consumers share its events by claiming ranges under leases
        (docs/events.md). 409 `subscription-exists` when the name is taken.
        """
        data = await write.body()
        command = fs.CreateFeedSubscription(data.name, tuple(data.types), data.from_, data.lease_ms)
        return await write.send(command)

    @route("/{name:str}", 401, 403, 404)
    async def get_feed_subscription(
        self, request: Request[Any, Any, Any], archive: NamedDependency[Archive], name: Name
    ) -> fs.FeedSubscriptionView:
        """A feed subscription: its checkpoint, its leases, the log's last position (operator)

        `lastPosition - checkpoint` is how far its consumers are behind; `leases` are the
        ranges being processed now, each with its consumer and when its lease ends.
        """
        require_operator(archive, credential(request))
        service = archive.service
        return await in_thread(archive.limiter, lambda: fs.view(service, fs.get(service, name)))

    @write_route("/{name:str}/claims", 200, 401, 403, 404, body=ClaimRange)
    async def claim_feed_range(self, write: Writing, name: Name) -> Response[fs.Claimed]:
        """Claim the next range of the log for a consumer (operator)

        The range's items of the subscription's types, unredacted, leased to `consumer` for
        the subscription's `leaseMs`: acknowledge it once processed. A range whose lease
        expired unacknowledged is handed out again first (at least once). `lease` is null
        and `items` empty when the subscription is caught up.
        """
        data = await write.body()
        return await write.send(fs.ClaimFeedRange(name, data.consumer, data.limit))

    @write_route("/{name:str}/acks", 200, 401, 403, 404, 409, body=AckRange)
    async def acknowledge_feed_range(
        self, write: Writing, name: Name
    ) -> Response[fs.FeedSubscriptionView]:
        """Acknowledge a claimed range: its items are processed (operator)

        The checkpoint moves on over every range acknowledged without a gap. 409
        `lease-lost` when the consumer no longer holds the lease (it expired and another
        consumer claimed the range, or it was acknowledged already).
        """
        data = await write.body()
        return await write.send(fs.AcknowledgeFeedRange(name, data.lease, data.consumer))

    @write_route("/{name:str}/checkpoint", 200, 401, 403, 404, body=CommitPosition)
    async def commit_feed_position(
        self, write: Writing, name: Name
    ) -> Response[fs.FeedSubscriptionView]:
        """Commit a position: everything up to it is processed (operator)

        For one consumer following `GET /v1/events/stream?subscription=<name>`: commit the
        last `id` processed, and a reconnect (on any replica, after a restart) resumes
        after it. A position at or below the checkpoint changes nothing.
        """
        data = await write.body()
        return await write.send(fs.CommitFeedPosition(name, data.position))
