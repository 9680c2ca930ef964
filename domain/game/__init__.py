"""Aggregates of the game: ``Match`` and ``Round``, rebuilt only by replaying their events."""
