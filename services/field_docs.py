"""The descriptions (and examples) of the fields that mean the same in every type that has
them, one declaration each: a field says ``match_id: Annotated[str, field_docs.MATCH_ID]``
and the OpenAPI and AsyncAPI documents describe it so (msgspec's ``Meta``, which Litestar
reads); the example values other fields show."""

from __future__ import annotations

from typing import Final

from msgspec import Meta

EXAMPLE_ID: Final = "0b5c3a6e-8d5f-4f39-9a41-2f1c6f0e7d21"
EXAMPLE_HEX64: Final = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
EXAMPLE_DIGEST: Final = "sha256:" + EXAMPLE_HEX64
EXAMPLE_TIME: Final = "2026-12-01T20:00:00+00:00"
EXAMPLE_CARDS: Final = ["5C", "5C", "7C", "7C"]
"""Examples of the values fields hold, for the documents (cards: two pairs)."""

ATTACKER_POINTS: Final = Meta(
    description="The attackers' points from the tricks they won (R26, R27)"
)
COMMITMENT: Final = Meta(
    description="sha256 of the seed, 64 hex digits, published before the deal (R35)",
    examples=[EXAMPLE_HEX64],
)
CREATED_AT: Final = Meta(description="When it was created, ISO 8601", examples=[EXAMPLE_TIME])
DEALER: Final = Meta(
    description="The dealer (庄家) of the round (R18, R31); null before round 1's first declaration"
)
DECLARATIONS: Final = Meta(description="Every declaration (R17) and overcall (R20), in order")
EXPECTED: Final = Meta(
    description=(
        "Whose action the round waits for, and which; null when none — between a trick's "
        "fourth card and its TrickWon (the trick is being won, R24) and once every card is "
        "played until the round is scored (R26)"
    )
)
FAILED_THROWS: Final = Meta(description="Throws that failed this round (R22), in order")
FINISHED: Final = Meta(description="The match is over (R32)")
FIRST_SEAT: Final = Meta(
    description="The seat the deal starts from (R16: the dealer; round 1: seat 0)"
)
FORMAT: Final = Meta(description="round_robin or swiss")
ITEMS: Final = Meta(description="The items of this page, in order")
KIND: Final = Meta(description="What it is")
LAST_TRICK: Final = Meta(description="The last completed trick (R24); null before the first")
LEGAL: Final = Meta(description="What this seat may send now (the service accepts exactly these)")
LEVEL: Final = Meta(description="The level rank (R5): 2..10, J, Q, K, A", examples=["2"])
LEVELS_GAINED: Final = Meta(description="Levels the team that goes up gains (R30)")
LEVEL_RANK: Final = Meta(
    description="The round's level rank (R5): the dealer team's level", examples=["2"]
)
MATCH_FINISHED: Final = Meta(description="The match is over (R32)")
MATCH_ID: Final = Meta(description="The match's id (a UUID)", examples=[EXAMPLE_ID])
MATCH_LENGTH: Final = Meta(
    description="How a table's match ends: after N rounds, or finish_at_A (§10 match_end)"
)
MORE: Final = Meta(description="More items follow: ask again with `after` = `next`")
NAME: Final = Meta(description="A display name", examples=["Alice"])
NEXT_DEALER: Final = Meta(description="The next round's dealer (R31)")
OK: Final = Meta(description="True when everything checked matches")
OUTCOME: Final = Meta(
    description=(
        "The round's outcome by R30: defenders_up, "
        "attackers_take_over or attackers_take_over_and_up"
    )
)
PRESET: Final = Meta(
    description="The named rule set it started from (standard, tuolaji, duijia); null for none"
)
REASON: Final = Meta(description="Why, in a few words")
RESULT: Final = Meta(
    description="The round's result once scored, with everything revealed (R26-R35)"
)
ROUNDS: Final = Meta(description="The rounds so far, in order")
ROUND_ID: Final = Meta(
    description="The round's id (a UUID); null before round 1", examples=[EXAMPLE_ID]
)
ROUND_NUMBER: Final = Meta(description="The current round's number, from 1; 0 before round 1")
ROUND_OPEN: Final = Meta(description="A round is being played")
RULES: Final = Meta(description="The rule set (RULES §10), fixed when the match was created")
SEAT: Final = Meta(
    description="A seat 0..3 (R1): seats 0 and 2 are one team, 1 and 3 the other (R2)"
)
SEATS: Final = Meta(description="Who sits in seats 0..3 (R1); null for a free seat")
SEATS_TAKEN: Final = Meta(description="Seats taken, 0..4")
SEED: Final = Meta(description="The deal's seed, 64 hex digits (R35)", examples=[EXAMPLE_HEX64])
TEAM: Final = Meta(description="A team's number: its place in the registration, from 0")
TEAMS: Final = Meta(description="The teams, in registration order (the seeding)")
TOTAL_ROUNDS: Final = Meta(description="Tournament rounds in all")
TOURNAMENT_ID: Final = Meta(description="The tournament's id (a UUID)", examples=[EXAMPLE_ID])
TRICK: Final = Meta(description="The trick in progress: each seat's play in order (R22, R23)")
TRICKS_DONE: Final = Meta(description="Completed tricks this round")
TRICK_LEADER: Final = Meta(
    description="The seat that led the trick in progress; null when none is open"
)
TRUMP_DECIDED: Final = Meta(
    description="Trump is settled (R17-R20); false while declaring and overcalling"
)
TRUMP_SUIT: Final = Meta(
    description="The trump suit S, H, C or D; null for no-trump (R9)", examples=["H"]
)
VERSION: Final = Meta(
    description="The match's version: how many events the match and its rounds hold (the ETag)"
)
VERSIONS: Final = Meta(description="The aggregates' own versions the view was built from")
TOKEN_WITHHELD: Final = Meta(
    description=(
        "An idempotent replay: the token minted by the first request is not shown again "
        "(the token is null)."
    )
)
