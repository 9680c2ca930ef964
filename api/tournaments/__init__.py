"""Tournaments over REST (R36): the tournament and its rounds
(:mod:`api.tournaments.controller`), its tables and results (:mod:`api.tournaments.results`),
and the request bodies (:mod:`api.tournaments.dto`). Every write route parses its body and
sends its command through the bus (:mod:`services.tournaments.commands`).

The organiser controls (T16): registration (:mod:`api.tournaments.registration`), pairing
control, adjustments, tokens and sheets (:mod:`api.tournaments.control`), the standings
stream and the archive (:mod:`api.tournaments.live`), the clerk and the results
policy's task (:mod:`api.tournaments.clerk`)."""
