"""The matches' endings in the order they finished: the store's notification log filtered
by the ``MatchFinished`` topic (commit order), read a page at a time (:data:`PAGE`
notifications), so that a scan over every finished match holds one page at once
(the bulk records, :mod:`services.records.bulk`; the columnar dumps,
:mod:`services.analysis.dump`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from eventsourcing.utils import get_topic

from domain.game.match_events import MatchFinished
from services.game import GameService

PAGE: Final = 100
"""``MatchFinished`` notifications read per query."""
_FINISHED = get_topic(MatchFinished)


def finishes(service: GameService) -> Iterator[Any]:
    """Every ``MatchFinished`` event of the log, oldest first (its ``originator_id`` is the
    match, its ``timestamp`` the time it ended)."""
    cursor = 0
    while True:
        page = service.recorder.select_notifications(
            cursor, PAGE, topics=[_FINISHED], inclusive_of_start=False
        )
        for n in page:
            cursor = n.id
            yield service.mapper.to_domain_event(n)
        if len(page) < PAGE:
            return
