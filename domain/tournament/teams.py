"""A tournament's teams as entered (R2: two partners who sit opposite), checked."""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.match import SEAT_KINDS
from domain.names import InvalidNameError, check_apart, checked_name
from domain.rules.errors import InvalidInputError
from domain.tournament import events as ev
from domain.tournament.pairing import MAX_TEAMS


def check_team(team: ev.TeamEntry, where: str = "team") -> None:
    _nfc(team.name, f"{where}.name", bot=False)
    if len(team.players) != 2 or len(team.kinds) != 2:
        raise InvalidInputError(f"{where}: two players (R2: partners sit opposite)")
    for j, (player, kind) in enumerate(zip(team.players, team.kinds, strict=True)):
        _nfc(player, f"{where}.players[{j}].name", bot=kind != "human")
        if kind not in SEAT_KINDS:
            raise InvalidInputError(
                f"{where}.players[{j}].kind: one of {', '.join(SEAT_KINDS)}, got {kind!r}"
            )


def _nfc(name: str, field: str, *, bot: bool) -> None:
    """The name policy (:mod:`domain.names`); the API hands names over NFC-normalised."""
    if checked_name(name, field, bot=bot) != name:
        raise InvalidNameError(field, "must be Unicode-normalised (NFC)")


def check_teams(teams: Sequence[ev.TeamEntry], at_least: int = 2) -> None:
    if not at_least <= len(teams) <= MAX_TEAMS:
        raise InvalidInputError(f"teams: {at_least}..{MAX_TEAMS} teams, got {len(teams)}")
    names = [t.name for t in teams]
    if len(set(names)) != len(names):
        raise InvalidInputError("teams: team names must differ")
    for i, team in enumerate(teams):
        check_team(team, f"teams[{i}]")
        check_apart(team.name, [t.name for t in teams[:i]], f"teams[{i}].name")
