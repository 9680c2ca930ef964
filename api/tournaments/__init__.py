"""Tournaments over REST (R36): the tournament and its rounds
(:mod:`api.tournaments.controller`), its tables and results (:mod:`api.tournaments.results`),
the organiser's token and write flow (:mod:`api.tournaments.organiser`) and the request and
response bodies (:mod:`api.tournaments.dto`)."""
