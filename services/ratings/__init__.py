"""Ratings, leaderboards and the player's record: projections of the event log
(docs/decisions.md D-ratings)."""
