"""Portable game records (the format: docs/records.md).

* :mod:`services.records.format` — the JSON document, its canonical encoding and errors;
* :mod:`services.records.canonical` — a decoded record rewritten in canonical form;
* :mod:`services.records.export` — a finished match or scored round read off its events;
* :mod:`services.records.replay` — import: a match record replayed through the rules engine;
* :mod:`services.records.replay_round` — a round record replayed on a ``Round`` aggregate;
* :mod:`services.records.steps` — the parts both replays share;
* :mod:`services.records.text` — the text notation, in the spirit of chess's PGN.
"""
