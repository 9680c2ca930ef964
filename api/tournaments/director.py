"""The director's tools over REST (docs/tournaments.md, "The director's room"). Every
write is the organiser's (its token), a command through the bus
(:mod:`services.tournaments.director_commands`), recorded as an event with who and why:

* ``POST …/rounds/{n}/tables/{t}/result`` — a table's result entered (a paper result);
* ``PATCH /v1/tournaments/{id}`` — the time control of the rounds to come (in
  :mod:`api.tournaments.controller`, beside the tournament's GET);
* ``POST …/rounds/{n}/clock`` — the round in play's own deadline and timers;
* ``POST …/rounds/{n}/tables/{t}/extension`` — one table's extra time;
* ``POST …/rounds/{n}/pause`` / ``…/resume`` — stop and restart the round's clock;
* ``POST …/rounds/{n}/cancel`` — cancel the round in play (paired again later);
* ``POST …/byes``, ``…/substitutes``, ``…/teams/{team}/rename``, ``…/fixed-tables``;
* ``POST …/publish`` — publish the next round's pairing (the preview is private until then).
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, Response
from litestar.params import FromPath, PathParameter

from api.calls import CHECKED, Writing, write_route
from api.tournaments.dto import RoundParam, TableParam
from api.tournaments.dto_director import (
    ByeRequest,
    CancelRequest,
    EnterResultRequest,
    ExtensionRequest,
    FixedTableRequest,
    PauseRequest,
    RenameRequest,
    RoundClockRequest,
    SubstituteRequest,
)
from services.tournaments.answers import Published
from services.tournaments.director_commands import (
    CancelRound,
    EnterResult,
    ExtendTable,
    FixTable,
    PauseRound,
    PublishPairing,
    RenameTeam,
    RequestBye,
    ResumeRound,
    SetRoundClock,
    Substitute,
)
from services.tournaments.views import TournamentView

TeamParam = Annotated[int, PathParameter(ge=0, le=63, description="A team's number, from 0")]
ROUND = "/{tournament_id:uuid}/rounds/{number:int}"
"""The path of a round (its clock, pause, resume, cancellation)."""
TABLE = ROUND + "/tables/{table:int}"
"""The path of one table of a round (its result, its extension)."""


class DirectorController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route(f"{TABLE}/result", 200, *CHECKED, body=EnterResultRequest)
    async def enter_result(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam, table: TableParam
    ) -> Response[TournamentView]:
        """Enter a table's result (organiser): a paper result, with the reason

        For a table of the round in play without a result (one that played offline, or a result
        handed in late): recorded as TableResultEntered — entered, not played — and the table's
        match ends with the same winner, its end reason starting "result entered:" (R32). The
        winner defaults to the team that gained more levels. 409 result-recorded (correct it
        instead), round-not-current.
        """
        data = await write.body()
        command = EnterResult(
            tournament_id,
            number,
            table - 1,
            levels=(data.levels[0], data.levels[1]),
            points=(0, 0) if data.points is None else (data.points[0], data.points[1]),
            by=data.by,
            reason=data.reason,
            winner=data.winner,
        )
        return await write.send(command)

    @write_route(f"{ROUND}/clock", 200, *CHECKED, body=RoundClockRequest)
    async def set_round_clock(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam
    ) -> Response[TournamentView]:
        """Set the round in play's own deadline and timers (organiser)

        The deadline counts from the round's scheduling (paused time added); the timers apply to
        its tables seated from now on. Recorded as RoundTimeSet. 409 round-not-current.
        """
        data = await write.body()
        timers = None if data.timers is None else data.timers.value().to_mapping()
        return await write.send(SetRoundClock(tournament_id, number, data.deadline_s, timers))

    @write_route(f"{TABLE}/extension", 200, *CHECKED, body=ExtensionRequest)
    async def extend_table(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam, table: TableParam
    ) -> Response[TournamentView]:
        """Give one table more time past the round's deadline (organiser)

        Recorded as TableExtended (seconds, who, why); the deadline rule applies to that table only
        after its own deadline. 409 round-not-current.
        """
        data = await write.body()
        return await write.send(
            ExtendTable(tournament_id, number, table - 1, data.seconds, data.by, data.reason)
        )

    @write_route(f"{ROUND}/pause", 200, *CHECKED, body=PauseRequest)
    async def pause_round(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam
    ) -> Response[TournamentView]:
        """Pause the round in play's clock (organiser)

        Its deadline waits (no table is flagged or finished while paused) until it is resumed; the
        pause's length is added to the deadline. 409 round-paused, round-not-current.
        """
        data = await write.body()
        return await write.send(PauseRound(tournament_id, number, data.reason))

    @write_route(f"{ROUND}/resume", 200, *CHECKED)
    async def resume_round(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam
    ) -> Response[TournamentView]:
        """Resume the round's clock (organiser): its deadline moves by the pause

        409 round-not-paused, round-not-current.
        """
        return await write.send(ResumeRound(tournament_id, number))

    @write_route(f"{ROUND}/cancel", 200, *CHECKED, body=CancelRequest)
    async def cancel_round(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam
    ) -> Response[TournamentView]:
        """Cancel the round in play (organiser): paired again by the next scheduling

        Recorded as RoundCancelled (who, why); its tables' results are dropped and their matches
        ended (R32); the next POST …/rounds pairs the same round number again, on new tables with a
        new secret (R35). 409 round-not-current.
        """
        data = await write.body()
        return await write.send(CancelRound(tournament_id, number, data.reason, data.by))

    @write_route("/{tournament_id:uuid}/byes", 200, *CHECKED, body=ByeRequest)
    async def request_bye(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Record a requested bye (organiser): a team sits out a round to come

        The team is not paired in that round and scores the configured requested bye (0 match
        points, or 1: half a win; PATCH requestedByePoints). 409 round-started, team-not-active.
        """
        data = await write.body()
        return await write.send(RequestBye(tournament_id, data.team, data.round, data.reason))

    @write_route("/{tournament_id:uuid}/substitutes", 200, *CHECKED, body=SubstituteRequest)
    async def substitute_player(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Replace a player for one round to come (organiser)

        Recorded as PlayerSubstituted; the round's table seats the substitute under its name (a
        person with a seat token, or a bot of its kind). 409 round-started.
        """
        data = await write.body()
        command = Substitute(
            tournament_id, data.round, data.team, data.player, data.name, data.kind, data.reason
        )
        return await write.send(command)

    @write_route("/{tournament_id:uuid}/teams/{team:int}/rename", 200, *CHECKED, body=RenameRequest)
    async def rename_team(
        self, write: Writing, tournament_id: FromPath[UUID], team: TeamParam
    ) -> Response[TournamentView]:
        """Rename a team (organiser): its number, players and results stay

        409 team-name-taken.
        """
        data = await write.body()
        return await write.send(RenameTeam(tournament_id, team, data.name, data.reason))

    @write_route("/{tournament_id:uuid}/fixed-tables", 200, *CHECKED, body=FixedTableRequest)
    async def fix_table(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Give a team a fixed table (organiser): its home table, accessibility

        From the next round the team's table gets that number (when the round has that many
        tables); null removes it. 409 table-taken.
        """
        data = await write.body()
        return await write.send(FixTable(tournament_id, data.team, data.table, data.reason))

    @write_route("/{tournament_id:uuid}/publish", 200, *CHECKED)
    async def publish_pairing(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[Published]:
        """Publish the next round's pairing (organiser)

        From now on GET …/preview shows it to anyone (before, only to the organiser), the display
        page lists it, and scheduling the round uses it — unless the teams to pair change first
        (a withdrawal, a late entry, a requested bye, an override), which unpublishes it. A Swiss
        pairing waits for the round in play to complete (409 round-in-play: it follows the
        results, hidden until then, R36).
        """
        return await write.send(PublishPairing(tournament_id))
