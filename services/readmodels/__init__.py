"""Read models: the lists the API serves, kept from the notification log
(docs/decisions.md D-readmodels).

* :mod:`~services.readmodels.rows` — what a row holds (a match, a seat of a player, a
  tournament) and a batch of changed rows;
* :mod:`~services.readmodels.view` — the materialised view, an eventsourcing
  ``TrackingRecorder`` that writes its rows and its tracking record in one transaction
  (in memory here; SQLite and PostgreSQL in :mod:`infra.readviews`);
* :mod:`~services.readmodels.projection` — the eventsourcing ``Projection`` that folds the
  log's events into rows;
* :mod:`~services.readmodels.runner` — follows the log into the view (a thread woken by
  saves) and lets a read wait until the view has reached the log's end;
* :mod:`~services.readmodels.lists` — the list answers (``GET /v1/matches``,
  ``GET /v1/players/me/matches``, ``GET /v1/tournaments``) read from the view.
"""
