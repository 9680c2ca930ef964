"""The history, ready for analysis (docs/analysis.md): tidy tables of the finished
matches as Parquet or CSV.

* :mod:`services.analysis.schema` — the tables, their columns, types, units and redaction;
* :mod:`services.analysis.rows` — a match's events as rows, redacted for their reader;
* :mod:`services.analysis.dump` — the store read a page at a time and written: a folder
  partitioned by day (``shengji export``), or one table as a stream (``GET /v1/exports``).
"""
