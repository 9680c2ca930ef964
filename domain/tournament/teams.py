"""A tournament's teams as entered (R2: two partners who sit opposite), checked."""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.match import SEAT_KINDS
from domain.rules.errors import InvalidInputError
from domain.tournament import events as ev
from domain.tournament.pairing import MAX_TEAMS


def check_team(team: ev.TeamEntry, where: str = "team") -> None:
    if not 1 <= len(team.name) <= 100:
        raise InvalidInputError(f"{where}.name: 1 to 100 characters")
    if len(team.players) != 2 or len(team.kinds) != 2:
        raise InvalidInputError(f"{where}: two players (R2: partners sit opposite)")
    for j, (player, kind) in enumerate(zip(team.players, team.kinds, strict=True)):
        if not 1 <= len(player) <= 100:
            raise InvalidInputError(f"{where}.players[{j}].name: 1 to 100 characters")
        if kind not in SEAT_KINDS:
            raise InvalidInputError(
                f"{where}.players[{j}].kind: one of {', '.join(SEAT_KINDS)}, got {kind!r}"
            )


def check_teams(teams: Sequence[ev.TeamEntry], at_least: int = 2) -> None:
    if not at_least <= len(teams) <= MAX_TEAMS:
        raise InvalidInputError(f"teams: {at_least}..{MAX_TEAMS} teams, got {len(teams)}")
    names = [t.name for t in teams]
    if len(set(names)) != len(names):
        raise InvalidInputError("teams: team names must differ")
    for i, team in enumerate(teams):
        check_team(team, f"teams[{i}]")
