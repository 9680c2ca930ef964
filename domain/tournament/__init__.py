"""Tournaments (RULES R36): pairing, standings, duplicate-deal seating and seeds, and the
``Tournament`` aggregate. Pure: no IO, no clock, no randomness of its own
(docs/decisions.md F5: the service draws each tournament round's secret)."""
