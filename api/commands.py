"""Round commands: ``POST /v1/matches/{match_id}/actions/{action}``.

``action`` is one of declare (R17, R18), overcall (R20), pass (R17, R18, R20), bury (R21),
play (R22–R25) and redeal (暴动, §10); the body's ``cards`` are R4 tokens. The seat is the
one the bearer seat token names (401 without or with a bad token; 403 for another
match's or an organiser's). The handler parses the request into an
:class:`~services.round_commands.Act` and hands it to the bus (:mod:`services.bus`); the
answer is the new match version and the acting seat's view right after the command — the
bots reply off the request.

Status codes: 200 done; 409 when the rules forbid the move (the problem's ``type`` is the
rule's own code, e.g. ``illegal-follow``, and it names the R-number and the cards) or
when another command changed the match first (``version-conflict``: exactly one of two
conflicting commands wins); 412 when ``If-Match`` is not the current version; 422 for
input that cannot be understood (a card token, a field).
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, Response
from litestar.params import FromPath, QueryParameter

from api.calls import CHECKED, Writing, write_route
from api.dto import Action, ActionRequest, Cards
from api.etag import IfMatch, precondition
from domain.game.actions import action_of
from domain.rules.cards import Card, parse_cards
from domain.rules.errors import InvalidInputError
from services.dryrun import DryRun
from services.round_commands import Act, CommandDone

DryRunFlag = Annotated[
    bool,
    QueryParameter(
        name="dryRun",
        description="true: check the command and answer whether it is legal (a DryRun, or "
        "the problem a real command would answer); nothing is saved",
        required=False,
    ),
]


def parse_field(value: Cards | None, field: str) -> tuple[Card, ...]:
    """R4 tokens of a request field; an error names the field and the token."""
    if value is None:
        return ()
    try:
        return tuple(parse_cards(value))
    except InvalidInputError as e:
        raise InvalidInputError(f"{field}: {e.detail}", code=e.code, rule=e.rule) from None


class CommandController(Controller):
    path = "/v1/matches"
    tags = ["commands"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route(
        "/{match_id:uuid}/actions/{action:str}", 200, *CHECKED, 412, body=ActionRequest | None
    )
    async def act(
        self,
        write: Writing,
        match_id: FromPath[UUID],
        action: FromPath[Action],
        if_match: IfMatch = None,
        dry_run: DryRunFlag = False,
    ) -> Response[CommandDone | DryRun]:
        """Act in the round as the token's seat

        `action`: `declare` (R17, R18), `overcall` (R20), `pass` (R17, R18, R20), `bury`
        (R21, 8 cards), `play` (R22–R25) or `redeal` (暴动, §10); `cards` in R4 notation. The
        seat is the bearer seat token's. Answers the match version the command left and the
        acting seat's view right after it, as soon as the command is saved; the bots at the
        table reply after it, off the request (their moves reach the live stream as frames).

        409: the rules forbid the move (the problem's `type` is the rule's own code, such as
        `illegal-follow`, and names the R-number and the cards), or another command changed
        the match first (`version-conflict`: of two conflicting commands exactly one wins).
        412: `If-Match` is not the current version. 422: input that cannot be understood.

        `?dryRun=true`: check the command without acting — the same checks, the same problem
        when it is refused, judged only on what the seat can know (its hand and the table,
        R33); a legal one answers `DryRun` (the cards a play would play; for a throw, R22,
        that it is tested against the other hands only when played, and the penalty if it
        fails). Nothing is saved (the match stays at its version), and an `Idempotency-Key`
        is not used.
        """
        data: ActionRequest | None = await write.body()
        cards = parse_field(data.cards if data else None, "cards")
        command = Act(match_id, action_of(action, cards), precondition(if_match))
        return await write.send(command, dry=dry_run)
