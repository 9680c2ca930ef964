"""The words of the OpenAPI document that no handler or Struct carries: the
descriptions of path and query parameters Litestar declares by itself, the problem
``type`` codes each answer can carry, and examples of the answers that are not JSON.
:mod:`api.openapi_docs` puts them in (the operation ids, summaries and descriptions are
on the routes, docs/decisions.md D-contract-native)."""

from __future__ import annotations

from typing import Final

PARAMETER_DOCS: Final[dict[str, str]] = {
    "subscription_id": "A webhook subscription's id (as registerWebhook answered it)",
    "session_id": "A session's id (as listSessions shows it)",
    "ticket_id": "A lobby ticket's id (a UUID, as queueForMatch answered it)",
    "match_id": "The match's id (a UUID, as `createMatch` answered it)",
    "tournament_id": "The tournament's id (a UUID, as `createTournament` answered it)",
    "action": "The round command: declare, overcall, pass, bury, play or redeal",
    "seat": "A seat 0..3 (R1); seats 0 and 2 are one team, 1 and 3 the other (R2)",
    "number": "A round number, from 1",
    "table": "A table of the tournament round, from 0",
    "name": "The name of a preset or a variant (RULES §10)",
    "limit": "At most this many items in the page",
}
"""Path and query parameters by name, where the route declares no description."""

_ROUND_RULES = (
    "not-dealt",
    "still-dealing",
    "already-passed",
    "not-playing-yet",
    "already-declared",
    "not-eligible-to-declare",
    "not-your-turn-to-declare",
    "declaring-closed",
    "jokers-cannot-declare",
    "deal-already-ended",
    "not-a-show",
    "not-a-level-card",
    "no-joker-of-matching-colour",
    "declaration-too-weak",
    "self-overcall-not-allowed",
    "not-your-turn-to-overcall",
    "overcall-window-closed",
    "weak-hand-redeal-off",
    "weak-hand-too-strong",
    "redeal-request-closed",
    "not-burying-now",
    "not-your-turn-to-bury",
    "bury-eight",
    "illegal-bury",
    "not-your-turn",
    "cards-not-in-hand",
    "empty-play",
    "illegal-follow",
    "mixed-lead",
    "round-over",
    "no-round",
    "match-finished",
)
PROBLEM_CODES: Final[dict[int, tuple[str, ...]]] = {
    400: ("bad-request", "unknown-parameter"),
    401: ("unauthorized",),
    403: ("forbidden", "table-closed"),
    404: ("not-found",),
    405: ("method-not-allowed",),
    409: (
        "illegal-move",
        "version-conflict",
        "idempotency-in-flight",
        "idempotency-key-reused",
    ),
    412: ("precondition-failed",),
    413: ("payload-too-large",),
    415: ("unsupported-media-type",),
    422: ("validation-failed", "invalid-input", "invalid-card", "invalid-rule-set", "invalid-name"),
    429: ("rate-limited", "quota-exceeded", "too-many-streams"),
    500: ("internal-error",),
    503: ("not-ready",),
}
"""The problem ``type`` codes (``…/problems/<code>``) each status can carry anywhere."""

TAG_PROBLEM_CODES: Final[dict[str, dict[int, tuple[str, ...]]]] = {
    "commands": {
        409: (*_ROUND_RULES, "not-timed-out", "no-turn-timer"),
    },
    "matches": {
        409: (
            "seat-taken",
            "seats-free",
            "round-in-progress",
            "match-finished",
            "not-begun",
            "already-resigned",
            "match-not-finished",
            "rematch-exists",
            "rematch-confirmed",
            "tournament-table",
            "already-seated",
            "left-match",
        ),
    },
    "views": {409: ("round-not-scored", "deal-embargoed"), 422: ("verification-failed",)},
    "live": {422: ("last-event-id-ahead",)},
    "rules oracle": {409: ("impossible-position",)},
    "records": {
        409: ("record-unavailable", "deal-embargoed"),
        422: ("record-invalid", "record-tampered"),
    },
    "tournaments": {
        409: (
            "round-in-play",
            "tournament-over",
            "round-not-scheduled",
            "round-not-current",
            "no-such-table",
            "table-not-seated",
            "result-recorded",
            "result-not-recorded",
            "match-finished",
            # the organiser's controls (domain/tournament/controls.py)
            "registration-open",
            "registration-closed",
            "no-such-team",
            "team-name-taken",
            "tournament-full",
            "team-withdrawn",
            "too-few-teams",
            "pairing-invalid",
            "swiss-only",
            "not-forbidden",
            "round-started",
            "seat-free",
            # the director's tools (domain/tournament/director.py)
            "round-paused",
            "round-not-paused",
            "team-not-active",
            "table-taken",
        ),
        422: ("last-event-id-ahead",),
    },
    "players": {
        409: (
            "already-seated",
            "seat-taken",
            "no-free-seat",
            "seat-free",
            "match-finished",
            "too-many-sessions",
            "no-such-session",
            "invite-expired",
            "already-queued",
            "ticket-closed",
            "player-erased",
            "not-seated",
            "left-match",
        ),
        422: ("last-event-id-ahead",),
    },
    "webhooks": {409: ("no-subscription",)},
    "archive": {422: ("last-event-id-ahead",)},
}
"""More codes a status carries in the operations of a tag."""

TEXT_EXAMPLES: Final[dict[str, str]] = {
    "text/plain": (
        '% Shengji game record: docs/records.md\n[Format "shengji-record/1"]\n'
        '[Kind "round"]\n[Name "demo"]\n[Started "2026-01-01T12:00:00.003000Z"]\n…\n'
        "1. S0 declare 2C {+0.018}\n2. S0 pass {+0.024}\n…\n"
    ),
    "text/csv": "rank,team,name,played,wins,draws,losses,byes,match_points,...\r\n"
    "1,0,Team A,1,1,0,0,0,2,...\r\n",
}
"""Examples of the answers that are not JSON, by media type."""
