"""The commands of a match's table: create it, take a seat, seat a bot, wake the bots, end
the match, resign, ask for the rematch — with their handlers (:mod:`services.bus`) and
answers.

``CreateMatch`` answers the organiser token once (stored hashed in ``MatchCreated``). Seats
are taken first come (R1), each answering its seat token once; the organiser seats bots.
When the fourth seat fills, round 1 is dealt in the same save (R16). Bots move off the
request path (the bot driver, :mod:`services.bot_driver`). The organiser ends the match
(R32); a seat resigns for its team (R32); after a finished match, its seats ask for a
rematch (docs/decisions.md D-table-life).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Final, Literal
from uuid import UUID, uuid4

import msgspec
from msgspec import Meta

from domain.game.match import Entered, Match
from domain.game.round import Round
from domain.game.timers import Timers
from domain.rules.ruleset import RuleSet
from domain.talk.options import TalkOptions
from services import field_docs, table_life
from services.access import check_visible, organiser_of, player_of, seat_in, seat_or_organiser
from services.accounts.seating import check_admitted, open_if_seated, refuse_a_seated_guest
from services.bots import bot_seats, bot_to_act
from services.bus import Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.game import GameService
from services.idempotency import Fact
from services.sources import ORGANISER_ROLE, PLAYER_ROLE, SEAT_ROLE, new_token, token_hash
from services.unit_of_work import Reading, UnitOfWork
from services.view_types import RulesView, rules_view

END_ATTEMPTS: Final = 5
"""Runs an organiser's end of a match makes against moves saved first (bots move on)."""
TABLE_ATTEMPTS: Final = 8
"""Runs of a resignation or a rematch against moves saved first."""
TOKEN: Final = "token"
FINISHED: Final = "finished"
WAITING: Final = "waitingFor"


# -- answers -------------------------------------------------------------------------------------


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class NewMatch(_Answer, frozen=True, kw_only=True):
    """The match created, with the organiser token (shown once)."""

    match_id: Annotated[
        str, Meta(description="The new match's id (a UUID)", examples=[field_docs.EXAMPLE_ID])
    ]
    version: Annotated[int, Meta(description="The new match's version")]
    organiser_token: Annotated[
        str | None,
        Meta(
            description=(
                "Shown once: seats bots, runs them, ends the match. "
                "Stored only as its hash; null in an idempotent replay "
                "(`token_withheld`)."
            ),
            examples=["o-3f9c2a…"],
        ),
    ]
    rules: Annotated[RulesView, Meta(description="The match's rule set (§10), fixed for good")]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class SeatClaimed(_Answer, frozen=True, kw_only=True):
    """The seat taken, with its token (shown once)."""

    seat: Annotated[int, Meta(description="The seat taken")]
    token: Annotated[
        str | None,
        Meta(
            description=(
                "Shown once: `Authorization: Bearer <token>` for this "
                "seat's commands and view; null in an idempotent replay "
                "(`token_withheld`)."
            ),
            examples=["s-8e1d47…"],
        ),
    ]
    version: Annotated[int, Meta(description="The match version right after")]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class BotSeated(_Answer, frozen=True, kw_only=True):
    """A bot took the seat."""

    seat: Annotated[int, Meta(description="The seat the bot took")]
    kind: Annotated[str, Meta(description="The bot policy: random, heuristic or strong")]
    version: Annotated[
        int,
        Meta(
            description=(
                "The match version right after seating (the bots move after it, off the request)."
            )
        ),
    ]


class BotsRun(_Answer, frozen=True, kw_only=True):
    """The bots were woken: the match version now and whether a bot is to act."""

    version: Annotated[
        int, Meta(description="The match version when the bots were woken (their moves follow)")
    ]
    queued: Annotated[
        bool, Meta(description="A bot is to act now: its moves follow as new versions and frames")
    ]


class FinishedMatch(_Answer, frozen=True, kw_only=True):
    """The match is over (R32)."""

    version: Annotated[int, Meta(description="The match version after MatchFinished")]


class ResignationView(_Answer, frozen=True, kw_only=True):
    """A seat resigned for its team (R32; docs/decisions.md D-table-life)."""

    seat: Annotated[int, field_docs.SEAT]
    finished: Annotated[
        bool, Meta(description="The team conceded: the match is over, the other team won.")
    ]
    waiting_for: Annotated[
        list[int],
        Meta(
            description=(
                "The partner seats whose resignation is still needed (a person's); empty once over."
            )
        ),
    ]
    version: Annotated[int, field_docs.VERSION]


class RematchView(_Answer, frozen=True, kw_only=True):
    """The rematch of a finished match: same seats and rules. Each person of the first
    match confirms by asking for it too; it starts when all have."""

    match_id: Annotated[str, Meta(description="The rematch.", examples=[field_docs.EXAMPLE_ID])]
    seat: Annotated[int | None, Meta(description="The caller's seat there (null: the organiser).")]
    token: Annotated[
        str | None,
        Meta(
            description=(
                "The caller's seat token there — or, for the organiser "
                "who opened it, its organiser token — shown once; null "
                "otherwise (and in an idempotent replay)."
            ),
            examples=["s-8e1d47…"],
        ),
    ]
    waiting_for: Annotated[
        list[int],
        Meta(
            description=(
                "Seats kept for people who have not confirmed yet; empty: round 1 is dealt (R16)."
            )
        ),
    ]
    version: Annotated[int, field_docs.VERSION]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateMatch:
    """A new match: its rules (fixed for good, §10), name, preset, turn timers and
    visibility (``private``: never listed)."""

    rules: RuleSet
    name: str = ""
    preset: str | None = None
    timers: Timers | None = None
    visibility: Literal["public", "private"] = "public"
    tournament: tuple[UUID, int] | None = None
    """A tournament table: its tournament and round (R36; the service's own command)."""
    organiser_token_hash: str | None = None
    """The organiser token's hash when the service mints it elsewhere (a tournament's
    tables); None: the command mints one and answers it once."""
    match_id: UUID | None = None
    """The match's id when the service chooses it (a tournament's table); else a new one."""
    talk: TalkOptions | None = None
    """What the creator allows of table talk (R37); None: the defaults."""


@dataclass(frozen=True, slots=True)
class ClaimSeat:
    """A person takes a free seat under ``name`` (R1); a private table's seats with its
    organiser token only (invites seat the others)."""

    match_id: UUID
    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class SeatBot:
    """The organiser seats a bot of ``kind`` (``random``, ``heuristic``, ``strong``)."""

    match_id: UUID
    seat: int
    kind: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class WakeBots:
    """The organiser asks the bot driver to look at the match now."""

    match_id: UUID


@dataclass(frozen=True, slots=True)
class FinishMatch:
    """The match ends (R32): by its organiser, or by the service (bots only past their
    rounds; a tournament's paper result, ``entered``)."""

    match_id: UUID
    reason: str = "organiser"
    entered: Entered | None = None


@dataclass(frozen=True, slots=True)
class Resign:
    """The caller's seat resigns for its team (R32); the service names the seat (a record's
    replay)."""

    match_id: UUID
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class AskRematch:
    """Open the rematch of a finished match, or confirm the caller's seat in it."""

    match_id: UUID


# -- shared steps --------------------------------------------------------------------------------


def ending(uow: UnitOfWork, match: Match, reason: str, entered: Entered | None = None) -> None:
    """R32: ``match`` ends (its round in play abandoned unscored) in the command's save."""
    match.finish(reason, uow.now, entered=entered)
    current = uow.current_round(match)
    if current is not None and current.phase not in table_life.OVER:
        # Saved with MatchFinished: a command racing on this round conflicts on its
        # version instead of landing after the match's end.
        current.abandon(reason, uow.now)


def create(uow: UnitOfWork, command: CreateMatch, match_id: UUID, organiser_hash: str) -> Match:
    """The match ``command`` describes, created in ``uow``."""
    match = Match.create(
        command.rules,
        uow.now,
        name=command.name,
        preset=command.preset,
        match_id=match_id,
        organiser_token_hash=organiser_hash,
        tournament=command.tournament,
        timers=command.timers,
        visibility=command.visibility,
        talk=command.talk,
    )
    uow.add(match)
    return match


def take_seat(
    uow: UnitOfWork,
    dealer: Dealer,
    match: Match,
    seat: int,
    name: str,
    kind: str,
    token: str,
    *,
    distinct: bool = False,
) -> None:
    """``name`` (a person, or a bot of ``kind``) takes ``seat`` with ``token`` (its hash is
    kept); round 1 is dealt when it was the fourth seat (R1, R16). ``distinct``: a person
    named themselves at this table (their name may not look like another seat's)."""
    uow.add(match)
    match.take_seat(seat, name, kind, token_hash(token), uow.now, distinct=distinct)
    open_if_seated(uow, dealer, match)


def match_version(uow: UnitOfWork, match: Match) -> int:
    """The match version (events of the match and its rounds) as the command leaves it."""
    current = uow.current_round(match)
    return match.sequence(0 if current is None else current.version)


def _organiser(service: GameService, match_id: UUID, caller: Caller) -> Match:
    match = service.get_match(match_id)
    if not isinstance(caller, Service):
        organiser_of(match, caller)
    return match


def _with_token(
    outcome: Outcome, state: Reading, *, always: bool = True
) -> tuple[str | None, bool]:
    """The token the command minted, and whether it is withheld: a replay of a command
    that mints one ``always``, else of one that did (:attr:`Outcome.withheld`)."""
    return outcome.minted.get(TOKEN), state.replay and (always or outcome.withheld)


# -- the handlers --------------------------------------------------------------------------------


class CreateMatchHandler(Handler[CreateMatch, None, NewMatch]):
    def authorise(self, command: CreateMatch, caller: Caller) -> None:
        return None  # anyone may create a match (the hourly quota limits how many)

    def handle(self, uow: UnitOfWork, command: CreateMatch, who: None) -> Outcome:
        match_id = command.match_id or uuid4()
        minted = {}
        digest = command.organiser_token_hash
        if digest is None:
            minted[TOKEN] = new_token(match_id, ORGANISER_ROLE)
            digest = token_hash(minted[TOKEN])
        match = create(uow, command, match_id, digest)
        return Outcome(201, match_id, match.version, minted=minted)

    def answer(self, command: CreateMatch, who: None, outcome: Outcome, state: Reading) -> NewMatch:
        match = state.get(outcome.subject, Match, "match", 1)
        token, withheld = _with_token(outcome, state)
        return NewMatch(
            match_id=str(match.id),
            version=outcome.version,
            organiser_token=token,
            rules=rules_view(match.rules),
            token_withheld=withheld,
        )


class ClaimSeatHandler(Handler[ClaimSeat, Match, SeatClaimed]):
    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: ClaimSeat, caller: Caller) -> Match:
        """A private table's seats: the organiser's token only (invites seat others; 404 to
        anyone not of the table, :func:`services.access.check_visible`); a rematch's seats
        are kept for their people (403)."""
        match = self.service.get_match(command.match_id)
        if not isinstance(caller, Service):
            check_visible(self.service, match, caller)
        if isinstance(caller, Service):
            organiser = True
        elif caller is not None and caller.role == ORGANISER_ROLE:
            organiser_of(match, caller)
            organiser = True
        else:
            organiser = False
            refuse_a_seated_guest(self.service, match, caller)  # R1: 409 already-seated
        check_admitted(match, command.seat, organiser=organiser)
        return match

    def handle(self, uow: UnitOfWork, command: ClaimSeat, who: Match) -> Outcome:
        token = new_token(who.id, SEAT_ROLE)
        take_seat(uow, self.dealer, who, command.seat, command.name, "human", token, distinct=True)
        version = match_version(uow, who)
        return Outcome(201, who.id, version, command.seat, minted={TOKEN: token})

    def answer(
        self, command: ClaimSeat, who: Match, outcome: Outcome, state: Reading
    ) -> SeatClaimed:
        token, withheld = _with_token(outcome, state)
        return SeatClaimed(
            seat=command.seat, token=token, version=outcome.version, token_withheld=withheld
        )


class SeatBotHandler(Handler[SeatBot, Match, BotSeated]):
    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: SeatBot, caller: Caller) -> Match:
        return _organiser(self.service, command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: SeatBot, who: Match) -> Outcome:
        name = command.name or f"{command.kind} bot {command.seat}"
        token = new_token(who.id, SEAT_ROLE)  # a bot's: never shown
        take_seat(uow, self.dealer, who, command.seat, name, command.kind, token)
        return Outcome(201, who.id, match_version(uow, who), command.seat)

    def answer(self, command: SeatBot, who: Match, outcome: Outcome, state: Reading) -> BotSeated:
        return BotSeated(seat=command.seat, kind=command.kind, version=outcome.version)


class WakeBotsHandler(Handler[WakeBots, Match, BotsRun]):
    """Asks the bot driver to look at the match now (a passed deadline is claimed on the
    way, R17, R20) and answers at once: 202, the match version and whether a bot is to
    act. Their moves follow as new versions."""

    def __init__(self, service: GameService, wake: Callable[[UUID], None]) -> None:
        self.service = service
        self.wake = wake

    def authorise(self, command: WakeBots, caller: Caller) -> Match:
        return _organiser(self.service, command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: WakeBots, who: Match) -> Outcome:
        uow.add(who)
        round_: Round | None = uow.current_round(who)
        queued = not who.finished and round_ is not None and bot_to_act(round_, bot_seats(who))
        uow.after(lambda: self.wake(who.id))
        return Outcome(202, who.id, match_version(uow, who), facts={"queued": queued})

    def answer(self, command: WakeBots, who: Match, outcome: Outcome, state: Reading) -> BotsRun:
        return BotsRun(version=outcome.version, queued=bool(outcome.facts.get("queued")))


class FinishMatchHandler(Handler[FinishMatch, None, FinishedMatch]):
    """The end applies to the match as it is: a move saved first (a bot's, off the request
    path) makes it run again (:data:`END_ATTEMPTS`)."""

    attempts = END_ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: FinishMatch, caller: Caller) -> None:
        _organiser(self.service, command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: FinishMatch, who: None) -> Outcome:
        match = uow.match(command.match_id)
        ending(uow, match, command.reason, command.entered)
        return Outcome(200, match.id, match_version(uow, match))

    def answer(
        self, command: FinishMatch, who: None, outcome: Outcome, state: Reading
    ) -> FinishedMatch:
        return FinishedMatch(version=outcome.version)


class ResignHandler(Handler[Resign, int, ResignationView]):
    attempts = TABLE_ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: Resign, caller: Caller) -> int:
        if isinstance(caller, Service):
            assert command.seat is not None, "the service names the seat that resigns"
            return command.seat
        return seat_in(self.service, self.service.get_match(command.match_id), caller)

    def handle(self, uow: UnitOfWork, command: Resign, who: int) -> Outcome:
        match = table_life.resign(uow, command.match_id, who)
        # A resignation is no move of the game (it takes no version): what it left is kept
        # as facts, as the state at the version does not tell it.
        waiting = table_life.waiting_to_resign(match, who)
        facts: dict[str, Fact] = {FINISHED: match.finished, WAITING: ",".join(map(str, waiting))}
        return Outcome(200, match.id, match_version(uow, match), who, facts=facts)

    def answer(
        self, command: Resign, who: int, outcome: Outcome, state: Reading
    ) -> ResignationView:
        waiting = str(outcome.facts.get(WAITING) or "")
        return ResignationView(
            seat=who,
            finished=bool(outcome.facts.get(FINISHED)),
            waiting_for=[int(s) for s in waiting.split(",") if s],
            version=outcome.version,
        )


class AskRematchHandler(Handler[AskRematch, table_life.Caller, RematchView]):
    attempts = TABLE_ATTEMPTS

    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: AskRematch, caller: Caller) -> table_life.Caller:
        match = self.service.get_match(command.match_id)
        if isinstance(caller, Service):
            return table_life.Caller(None)
        who = seat_or_organiser(self.service, match, caller)
        if who == "organiser":
            return table_life.Caller(None)
        assert caller is not None
        account = match.accounts.get(who)
        if account is None:
            return table_life.Caller(who, None, caller.digest)
        signed = player_of(self.service, caller) if caller.role == PLAYER_ROLE else None
        session = match.minted_through.get(who) if signed is None else signed.session_id
        return table_life.Caller(who, account, session_id=session)

    def handle(self, uow: UnitOfWork, command: AskRematch, who: table_life.Caller) -> Outcome:
        done = table_life.rematch(uow, self.dealer, command.match_id, who)
        minted = {} if done.token is None else {TOKEN: done.token}
        match = done.match
        return Outcome(201, match.id, match_version(uow, match), who.seat, minted=minted)

    def answer(
        self, command: AskRematch, who: table_life.Caller, outcome: Outcome, state: Reading
    ) -> RematchView:
        match, _, _ = state.table(outcome.subject, outcome.version)
        token, withheld = _with_token(outcome, state, always=False)
        return RematchView(
            match_id=str(match.id),
            seat=who.seat,
            token=token,
            waiting_for=table_life.waiting_for(match),
            version=outcome.version,
            token_withheld=withheld,
        )
