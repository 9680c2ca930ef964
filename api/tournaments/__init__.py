"""Tournaments over REST (R36): the routes (:mod:`api.tournaments.controller`) and their
request and response bodies (:mod:`api.tournaments.dto`)."""
