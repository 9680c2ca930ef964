"""Tournaments (R36; docs/tournaments.md).

* :mod:`services.tournaments.service` — the tournament application: create, schedule
  rounds and their tables, pull results, corrections, run a round's bots;
* :mod:`services.tournaments.seeds` — the deal seeds and pacing of a tournament table;
* :mod:`services.tournaments.views` — what anyone may see of a tournament, JSON and CSV.
"""
