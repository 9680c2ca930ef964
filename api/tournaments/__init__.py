"""Tournaments over REST (R36): the tournament and its rounds
(:mod:`api.tournaments.controller`), its tables and results (:mod:`api.tournaments.results`),
the organiser's token and write flow (:mod:`api.tournaments.organiser`) and the request and
response bodies (:mod:`api.tournaments.dto`).

The organiser controls (T16): registration (:mod:`api.tournaments.registration`), pairing
control, adjustments, tokens and sheets (:mod:`api.tournaments.control`), the standings
stream and the archive (:mod:`api.tournaments.live`), the clerk task
(:mod:`api.tournaments.clerk`)."""
