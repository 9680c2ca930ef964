"""The next round's pairing as the preview and the publication answer it (R36): its
tables with the teams' names, the bye, whether it is the organiser's override or
published, and its warnings (forbidden pairings, rematches)."""

from __future__ import annotations

from api.tournaments.dto_controls import PairingPreview, PreviewTable
from domain.tournament.tournament import Tournament


def preview_answer(t: Tournament) -> PairingPreview:
    number, pairing, awarded = t.preview()
    return PairingPreview(
        number=number,
        tables=[
            PreviewTable(
                table=i + 1,
                first_team=a,
                first_name=t.teams[a].name,
                second_team=b,
                second_name=t.teams[b].name,
            )
            for i, (a, b) in enumerate(pairing.tables)
        ],
        bye=pairing.bye,
        awarded_byes=awarded,
        overridden=number in t.overrides,
        published=number in t.published,
        warnings=t.pairing_warnings(pairing.tables),
    )
