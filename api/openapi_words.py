"""The words of the OpenAPI document that no handler or Struct carries: the
operationIds, the descriptions of path and query parameters Litestar declares by itself,
and of the fields whose meaning is the same wherever they appear (``matchId``,
``version``…). :mod:`api.openapi_docs` puts them in."""

from __future__ import annotations

from typing import Final

OPERATION_IDS: Final[dict[str, str]] = {
    "get /v1/invites/{code}": "getInvite",
    "post /v1/invites/{code}": "joinByInvite",
    "post /v1/lobby/tickets": "queueForMatch",
    "get /v1/lobby/tickets/{ticket_id}": "getTicket",
    "delete /v1/lobby/tickets/{ticket_id}": "cancelTicket",
    "get /v1/lobby/tickets/{ticket_id}/stream": "streamTicket",
    "post /v1/matches/{match_id}/invites": "createInvite",
    "post /v1/players": "createPlayer",
    "get /v1/players/me": "getMe",
    "delete /v1/players/me": "erasePlayer",
    "get /v1/players/me/matches": "listMyMatches",
    "post /v1/players/me/matches/{match_id}/seat-token": "renewSeatToken",
    "post /v1/players/me/matches/{match_id}/leave": "leaveMatch",
    "patch /v1/players/me": "editMe",
    "post /v1/players/me/sessions/current/refresh": "refreshSession",
    "post /v1/players/me/seats": "claimSeatAsPlayer",
    "get /v1/players/me/sessions": "listSessions",
    "post /v1/players/me/sessions": "openSession",
    "delete /v1/players/me/sessions/{session_id}": "endSession",
    "get /v1/players/me/stream": "streamPlayer",
    "post /v1/players/me/token": "rotateToken",
    "post /v1/players/oidc": "signInWithOidc",
    "get /v1/webhooks": "listWebhooks",
    "post /v1/webhooks": "registerWebhook",
    "delete /v1/webhooks/{subscription_id}": "deleteWebhook",
    "get /v1/webhooks/{subscription_id}/deliveries": "listDeliveries",
    "get /v1/events": "listEvents",
    "get /v1/events/schema": "getEventSchemas",
    "get /v1/events/stream": "streamEvents",
    "get /v1/records": "exportRecords",
    "get /v1/exports/{file}": "exportTable",
    "get /v1/events/subscriptions/{name}": "getFeedSubscription",
    "get /v1/tournaments": "listTournaments",
    "get /v1/tournaments/{tournament_id}/adjustments": "listAdjustments",
    "post /v1/tournaments/{tournament_id}/adjustments": "adjustScore",
    "get /v1/tournaments/{tournament_id}/archive": "getTournamentArchive",
    "post /v1/tournaments/{tournament_id}/forbidden": "forbidPairing",
    "delete /v1/tournaments/{tournament_id}/forbidden/{a}/{b}": "allowPairing",
    "get /v1/tournaments/{tournament_id}/preview": "previewPairings",
    "post /v1/tournaments/{tournament_id}/rounds/{number}/pairings": "overridePairings",
    "get /v1/tournaments/{tournament_id}/rounds/{number}/sheet": "getPairingSheet",
    "post /v1/tournaments/{tournament_id}/rounds/{number}/tables/{table}/tokens": (
        "reissueTableTokens"
    ),
    "get /v1/tournaments/{tournament_id}/standings/stream": "streamStandings",
    "post /v1/tournaments/{tournament_id}/start": "startTournament",
    "post /v1/tournaments/{tournament_id}/teams": "registerTeam",
    "post /v1/tournaments/{tournament_id}/teams/{team}/checkin": "checkInTeam",
    "post /v1/tournaments/{tournament_id}/teams/{team}/withdraw": "withdrawTeam",
    "get /healthz": "getHealth",
    "get /readyz": "getReadiness",
    "get /v1/matches": "listMatches",
    "post /v1/matches": "createMatch",
    "get /v1/matches/{match_id}": "getMatch",
    "post /v1/matches/{match_id}/actions/{action}": "act",
    "post /v1/matches/{match_id}/bots/run": "runBots",
    "post /v1/matches/{match_id}/finish": "finishMatch",
    "post /v1/matches/{match_id}/resign": "resignMatch",
    "post /v1/matches/{match_id}/rematch": "rematch",
    "get /v1/matches/{match_id}/history": "getHistory",
    "get /v1/matches/{match_id}/public": "getPublicView",
    "get /v1/matches/{match_id}/record": "getMatchRecord",
    "get /v1/matches/{match_id}/rounds": "listRounds",
    "get /v1/matches/{match_id}/rounds/{number}": "getRound",
    "get /v1/matches/{match_id}/rounds/{number}/record": "getRoundRecord",
    "get /v1/matches/{match_id}/rounds/{number}/verify": "verifyRound",
    "post /v1/matches/{match_id}/seats/{seat}": "claimSeat",
    "post /v1/matches/{match_id}/seats/{seat}/bot": "seatBot",
    "get /v1/matches/{match_id}/state": "getStateAt",
    "get /v1/matches/{match_id}/stream": "streamMatch",
    "post /v1/matches/{match_id}/timeout": "claimTimeout",
    "get /v1/matches/{match_id}/view": "getSeatView",
    "post /v1/records": "importRecord",
    "post /v1/events/subscriptions": "createFeedSubscription",
    "post /v1/events/subscriptions/{name}/claims": "claimFeedRange",
    "post /v1/events/subscriptions/{name}/acks": "acknowledgeFeedRange",
    "post /v1/events/subscriptions/{name}/checkpoint": "commitFeedPosition",
    "get /v1/rules": "getRuleBook",
    "post /v1/rules/bottom-multiplier": "checkBottomMultiplier",
    "post /v1/rules/follow": "checkFollow",
    "get /v1/rules/presets/{name}": "getPreset",
    "post /v1/rules/settle": "settleRound",
    "post /v1/rules/shape": "checkShape",
    "post /v1/rules/throw": "checkThrow",
    "post /v1/rules/trick": "judgeTrick",
    "get /v1/rules/variants/{name}": "getVariant",
    "get /v1/rules/{number}": "getRule",
    "post /v1/tournaments": "createTournament",
    "get /v1/tournaments/{tournament_id}": "getTournament",
    "get /v1/tournaments/{tournament_id}/results": "getTournamentResults",
    "post /v1/tournaments/{tournament_id}/results/collect": "collectResults",
    "get /v1/tournaments/{tournament_id}/rounds": "listTournamentRounds",
    "post /v1/tournaments/{tournament_id}/rounds": "scheduleTournamentRound",
    "get /v1/tournaments/{tournament_id}/rounds/{number}": "getTournamentRound",
    "post /v1/tournaments/{tournament_id}/rounds/{number}/bots/run": "runTournamentBots",
    "get /v1/tournaments/{tournament_id}/rounds/{number}/tables": "listTables",
    "post /v1/tournaments/{tournament_id}/rounds/{number}/tables/{table}/correction": (
        "correctTableResult"
    ),
    "post /v1/tournaments/{tournament_id}/rounds/{number}/tables/{table}/finish": "finishTable",
    "get /v1/tournaments/{tournament_id}/standings": "getStandings",
    "post /v1/verify": "verifyDeal",
}
"""``"<method> <path>"`` → operationId."""

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

SCHEMA_DOCS: Final[dict[str, str]] = {
    "ActionRequest": "The body of a round command: the cards it shows, buries or plays",
    "BotSeated": "A bot took the seat",
    "BotsRun": "The bots were woken: the match version now and whether a bot is to act",
    "BottomMultiplierRequest": "The last trick's lead, to find the bottom multiplier (R28)",
    "BottomMultiplierResponse": "The bottom multiplier of a last lead (R28)",
    "ClaimSeatRequest": "The name of the person taking a seat",
    "CorrectionRequest": "The organiser's correction of a table's result, with its reason",
    "CreateMatchRequest": "A new match: its name, rule preset, §10 fields and turn timers",
    "CreateTournamentRequest": "A new tournament: teams, format, match length, rules",
    "DealVerified": "A seed checked against its commitment and the deal recomputed (R35)",
    "FinishRequest": "Why the organiser ends the match",
    "FinishTableRequest": "Why the organiser ends a tournament table",
    "FinishedMatch": "The match is over (R32)",
    "FollowRequest": "A lead, a hand and a follow to judge (R23)",
    "FollowResponse": "Whether the follow is legal (R23), and if not which rule and why",
    "HealthStatus": "A probe's answer",
    "HistoryPage": "A page of a match's events, redacted for the viewer (R33, R34)",
    "MatchList": "A page of matches, oldest first",
    "MatchListItem": "A match in a list",
    "NewMatch": "The match created, with the organiser token (shown once)",
    "NewTournament": "The tournament created, with the organiser token (shown once)",
    "PlayerRequest": "A player of a team: a person or a bot",
    "PlayerView": "A player of a team",
    "PresetRef": "A named rule set (§10) and where its text is",
    "RoundList": "A match's rounds, in order",
    "RoundRun": "A tournament round's bots woken: each table finished or playing",
    "RoundVerified": "A scored round checked against its commitment and events (R35)",
    "RoundView": "A tournament round: its tables, its secret's commitment (R35, R36)",
    "RuleBookIndex": "The rule book's contents: rules, variants and presets",
    "RuleRef": "A rule of the rule book and where its text is",
    "RuleText": "A rule's text (Markdown) in the language asked for",
    "ScheduledRound": "A tournament round scheduled, with the people's seat tokens (shown once)",
    "SeatBotRequest": "The bot to seat: its policy and display name",
    "SeatClaimed": "The seat taken, with its token (shown once)",
    "SeatTokenView": "A person's seat at a tournament table and its token (shown once)",
    "SectionText": "A variant's or a preset's text (Markdown) in the language asked for",
    "SettleRequest": "The attackers' total, to settle a round (R30)",
    "SettleResponse": "The level change an attackers' total brings (R30)",
    "ShapeRequest": "Cards to classify (R12-R15)",
    "ShapeResponse": "What the cards are as a combination (R12-R15) and their components",
    "StandingView": "A team's line in the standings",
    "StandingsView": "The tournament's standings, with the tie-breaks used",
    "TableResultView": "A tournament table's result, from its first team's side",
    "TableRunView": "One tournament table: finished, or playing",
    "TableView": "A tournament table: its match, its teams, its result",
    "TeamRequest": "A team of a tournament: a name and two players",
    "TeamView": "A team of a tournament",
    "ThrowRequest": "A throw and the other three hands, to judge it (R22)",
    "ThrowResponse": "Whether the throw stands (R22), and if not what is played instead",
    "TimeoutClaimed": "A seat that ran out of time: what the timeout bot did for it",
    "TournamentView": "A tournament as anyone may see it",
    "TrickRequest": "A trick's plays to judge (R24)",
    "TrickResponse": "Who won the trick (R24) and its points (R26)",
    "VariantRef": "A §10 variant and where its text is",
}
"""Descriptions of the schemas whose Struct has no docstring."""

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

OPERATION_DOCS: Final[dict[str, str]] = {
    "getInvite": (
        "The table an invite code seats at and its free seats; the code is the invitation, so no "
        "token is needed."
    ),
    "getTicket": (
        "The player's lobby ticket: waiting, matched (with the match and seat) or cancelled "
        "(player token)."
    ),
    "createInvite": (
        "A short invite code to this match (organiser token, or a seated player's): `POST "
        "/v1/invites/{code}` takes the lowest free seat (R1)."
    ),
    "getMe": "The player of the token: display name, locale, sign-in kind.",
    "listMyMatches": (
        "The player's matches: current ones with whose turn it is and its deadline, then finished"
        " ones."
    ),
    "renewSeatToken": (
        "A fresh seat token for the player's seat in the match; the old one stops working at once"
        " (its open streams end). Takes no match version."
    ),
    "listSessions": "The player's sessions (devices), oldest first; tokens are never shown again.",
    "openSession": (
        "Open another session (a new device) with the player's token; answers the new session's "
        "token once."
    ),
    "endSession": "End a session (sign a device out): its token stops working at once.",
    "rotateToken": (
        "Rotate this session's token: the answer carries the new one once, and the token used "
        "stops working at once."
    ),
    "listWebhooks": "The webhook subscriptions (operator token).",
    "deleteWebhook": (
        "Stop a webhook subscription (operator token); its undelivered items are not sent."
    ),
    "allowPairing": "Lift a forbidden pairing of two teams (organiser token); the next "
    "rounds may pair them again.",
    "checkInTeam": "A registered team confirms it is present, before the start (its team "
    "token or the organiser's); with check-in required, teams that did not are out.",
    "getHealth": "Liveness: the process answers. Kubernetes restarts it when this fails.",
    "getReadiness": "Readiness: the store is reachable and its schema is in place; 503 "
    "`not-ready` otherwise (the pod is taken out of its Service).",
    "listMatches": "The matches, oldest first, a page at a time: `after` is the `next` of "
    "the page before; `origin` keeps the played or the imported ones only.",
    "getMatch": "A match as anyone may see it: rules (§10), seats, the teams' levels (R5), "
    "the next dealer (R31), its rounds with their results, and the winner once finished "
    "(R32). Nothing secret (R33). ETag: the match version.",
    "listRounds": "The match's rounds in order: playing, scored (with the recorded result, "
    "R29-R32) or abandoned.",
    "checkBottomMultiplier": "The bottom multiplier (R28) of a last trick's lead under the "
    "rules given: single x2, pair x4, a tractor by `bottom_multiplier`, a throw by its "
    "largest component. Stateless.",
    "checkFollow": "Whether a follow is legal for a lead and a hand (R23), and if not the "
    "rule it breaks and why. Stateless.",
    "settleRound": "The level change an attackers' total brings (R30, §10 level_cap). Stateless.",
    "checkShape": "What cards are as a lead (single, pair, tractor, throw or mixed, "
    "R12-R15) and their components, largest first. Stateless.",
    "checkThrow": "Whether a throw stands against the other three hands (R22), and if not "
    "the component played instead. Stateless.",
    "judgeTrick": "The winning play of a trick (R24, ties R11) and its points (R26). Stateless.",
    "getTournament": "A tournament as anyone may see it: teams, rounds with their "
    "commitments (R35), tables and results. ETag: its version.",
    "getTournamentResults": "Everything needed to check and rank the tournament: rounds, "
    "tables, results, commitments and (once revealed) secrets (R36); JSON, or CSV with "
    "`?format=csv` or `Accept: text/csv`.",
    "collectResults": "Organiser: pull the results of the finished tables into the "
    "tournament (each once), so the standings count them.",
    "listTournamentRounds": "The scheduled tournament rounds, each with its tables and results.",
    "getTournamentRound": "One tournament round: its commitment (R35), its secret once "
    "completed (R36), its tables and their results.",
    "listTables": "A tournament round's tables: the pairing, the duplicate seating (R36), "
    "the match and the result.",
    "correctTableResult": "Organiser: replace a table's result; recorded with who and why.",
    "getStandings": "The standings, best first, with the tie-breaks used; JSON, or CSV with "
    "`?format=csv` or `Accept: text/csv`.",
}
"""Descriptions of the operations whose handler gives a summary only."""

TEXT_EXAMPLES: Final[dict[str, str]] = {
    "text/plain": (
        '% Shengji game record: docs/records.md\n[Format "shengji-record/1"]\n'
        '[Kind "round"]\n[Name "demo"]\n[Started "2026-01-01T12:00:00.003000Z"]\n…\n'
        "1. S0 declare 2C {+0.018}\n2. S0 pass {+0.024}\n…\n"
    ),
    "text/csv": "rank,team,name,played,wins,draws,losses,byes,match_points,...\r\n"
    "1,0,Team A,1,1,0,0,0,2,...\r\n",
    "text/event-stream": 'id: 12\nevent: view\ndata: {"kind":"public","version":12,…}\n\n',
}
"""Examples of the answers that are not JSON, by media type."""
