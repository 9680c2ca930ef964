"""Seasons of the boards (docs/decisions.md D-ratings): a schedule declared as a setting
(``RATING_SEASONS``: ``weekly`` or ``monthly``), each season a board of its own that starts
empty — every player starts again from the model's first rating, as a reset of Nakama's
leaderboards does — and stays readable once past."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Literal

Schedule = Literal["weekly", "monthly"]


def season_of(schedule: str, at: datetime) -> str:
    """The season ``at`` is in: ``2026-W49`` (ISO week) or ``2026-12``."""
    day = at.astimezone(UTC).date()
    if schedule == "weekly":
        year, week, _ = day.isocalendar()
        return f"{year}-W{week:02d}"
    if schedule == "monthly":
        return f"{day.year}-{day.month:02d}"
    raise ValueError(f"a season schedule is weekly or monthly, got {schedule!r}")


def season_bounds(season: str) -> tuple[datetime, datetime]:
    """When ``season`` starts and when the next one does (UTC)."""
    if "-W" in season:
        year, week = season.split("-W")
        start = date.fromisocalendar(int(year), int(week), 1)
        end = start + timedelta(days=7)
    else:
        year, month = season.split("-")
        start = date(int(year), int(month), 1)
        end = date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return (
        datetime(start.year, start.month, start.day, tzinfo=UTC),
        datetime(end.year, end.month, end.day, tzinfo=UTC),
    )


def valid_season(schedule: str, season: str) -> bool:
    """Whether ``season`` is a season id of ``schedule``."""
    try:
        start, _ = season_bounds(season)
    except ValueError:
        return False
    return season_of(schedule, start) == season
