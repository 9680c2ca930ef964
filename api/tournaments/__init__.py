"""Tournaments over REST (R36): the tournament and its rounds
(:mod:`api.tournaments.controller`), its tables and results (:mod:`api.tournaments.results`),
and the request bodies (:mod:`api.tournaments.dto`). Every write route parses its body and
sends its command through the bus (:mod:`services.tournaments.commands`).

The organiser controls (T16): registration (:mod:`api.tournaments.registration`), pairing
control, adjustments, tokens and sheets (:mod:`api.tournaments.control`), the standings
stream and the archive (:mod:`api.tournaments.live`). The tournament clerk and the results
policy are background work (:mod:`services.tournaments.background`, run by the process's
runner, ``infra.workers``)."""
