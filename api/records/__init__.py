"""Portable game records over REST (:mod:`api.records.controller`; docs/records.md)."""
