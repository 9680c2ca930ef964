"""Tournaments (R36; docs/tournaments.md).

* :mod:`services.tournaments.commands`, :mod:`~services.tournaments.control_commands`,
  :mod:`~services.tournaments.director_commands` — every write, a typed command with its
  handler (one save each, docs/decisions.md D-bus), and the steps they share
  (:mod:`~services.tournaments.tables`);
* :mod:`services.tournaments.results_policy` — a finished table moves the standings;
* :mod:`services.tournaments.seeds` — the deal seeds and pacing of a tournament table;
* :mod:`services.tournaments.views` — what anyone may see of a tournament, JSON and CSV.
"""
