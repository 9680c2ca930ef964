"""The one way in: every write is a typed command with exactly one handler, through one bus
(docs/decisions.md D-bus).

A command is a frozen value (a dataclass in ``services/``: :mod:`services.match_commands`,
:mod:`services.round_commands`, …) naming what the caller wants done. Its
:class:`Handler`, registered once with the bus (:mod:`services.handlers`), has three steps
the bus runs in this order, in one place (:meth:`Bus.handle`):

1. **authorise** the parsed credential (401/403, and 404 for what it names) — before
   anything about the key or the state is told;
2. look the **Idempotency-Key** up (:class:`~services.idempotency.Keys`): a key in flight
   is a 409, a key used for another request a 409, a recorded request is answered again
   (a handler with :attr:`Handler.key_first` False runs first: its save, refused on the
   key's record, or its refusal tells a used key, looked up then, before anything is
   saved);
3. **handle**: load through the command's :class:`~services.unit_of_work.UnitOfWork`,
   decide (the domain's commands raise a problem naming the rule), change the aggregates
   and answer an :class:`Outcome` — what the key's record keeps;
4. **charge** the matches it makes (:meth:`Handler.matches_made`: by default those its
   unit of work creates) to the caller's match quota (``MATCH_QUOTA_PER_HOUR``,
   :class:`~services.limits.Allowance`; the request's :class:`~services.limits.Payer`):
   not enough left is a 429 ``quota-exceeded`` and nothing is saved (docs/decisions.md
   D-bounded);
5. **save** every changed aggregate and the key's record in one transaction (a version
   taken meanwhile: the handler runs again when it allows it, ``attempts``, else 409;
   what was charged for it is given back);
6. **answer**: :meth:`Handler.answer` builds the body from the outcome and the state as
   the command left it. A replay calls the same function on the state as of the recorded
   version, so it answers exactly what the first call answered (a token the first call
   minted is withheld, never stored: docs/security.md).

A **dry run** (``dry=True``) is steps 1 and 3 on copies, nothing saved, no key used
(:meth:`Handler.dry_run`; round commands only, docs/decisions.md D-dry-run).

In-process callers — the bot driver, the sweeper, a record's replay, tools and tests — send
commands as :data:`SERVICE`, the service itself, which every handler admits (what it acts
for is in the command), and which pays no quota: what it makes, it makes on behalf of a
caller who paid (a lobby's match for its tickets). Nothing here knows HTTP; nothing calls
back.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Final, Generic, TypeVar
from uuid import UUID

from domain.rules.errors import InvalidInputError, ShengjiError
from services.access import Credential
from services.errors import VersionConflictError
from services.game import GameService
from services.idempotency import Fact, Keys, Receipt, RequestKey
from services.limits import NO_ALLOWANCE, Allowance, Payer
from services.settling import Settling
from services.sources import PLAYER_ROLE
from services.unit_of_work import Reading, UnitOfWork

log = logging.getLogger(__name__)

C = TypeVar("C")
W = TypeVar("W")
A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class Service:
    """The caller that is the service itself (:data:`SERVICE`)."""

    name: str = "service"


SERVICE: Final = Service()
"""The in-process caller (the module docstring): never a request's credential."""
WITHHELD: Final = "tokenWithheld"
"""The fact a record of a command that minted a token keeps: its replay says so."""
Caller = Credential | Service | None
"""Who sends a command: a request's credential (None: none sent), or the service."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did, as its Idempotency-Key's record keeps it (:class:`Receipt`),
    with the secrets it minted (answered once, never stored)."""

    status: int
    subject: UUID
    """The aggregate the command acted on or created (a match, a tournament, a player)."""
    version: int
    """The subject's version right after the command (a match's: :meth:`Match.sequence`)."""
    seat: int | None = None
    facts: Mapping[str, Fact] = field(default_factory=dict)
    """Small, non-secret facts of the answer that the subject's state does not hold."""
    minted: Mapping[str, str] = field(default_factory=dict)
    """Tokens the command minted (answered once; a replay answers without them)."""

    @property
    def withheld(self) -> bool:
        """A replay of a command that minted a token: the answer says it is withheld."""
        return bool(self.facts.get(WITHHELD))

    def receipt(self) -> Receipt:
        facts = dict(self.facts)
        if self.minted:
            facts[WITHHELD] = True
        return Receipt(self.status, self.subject, self.version, self.seat, facts)

    @classmethod
    def of(cls, receipt: Receipt) -> Outcome:
        """A recorded outcome (a replay: nothing minted)."""
        return cls(receipt.status, receipt.subject, receipt.version, receipt.seat, receipt.facts)


class Handler(ABC, Generic[C, W, A]):
    """The one handler of one command type (the module docstring). ``W`` is who is calling
    as :meth:`authorise` found it; ``A`` the answer's type."""

    attempts: ClassVar[int] = 1
    """Runs of :meth:`handle` on a version conflict: more than one for a command that
    applies to the state as it is (an organiser's end of a match while bots move on);
    one for a move made on what the caller saw (the conflict is the caller's to see)."""

    key_first: ClassVar[bool] = True
    """Look the Idempotency-Key's record up before running (step 2). False for a handler
    whose run writes nothing but through its unit of work's one save (a round command):
    it runs first, and a key used before is told by that save, refused on the record's
    version 1 (and a refusal looks the key up before it saves anything kept), so a new
    key — nearly every request — costs no look-up (docs/decisions.md D-path3)."""

    def attempts_for(self, command: C) -> int:
        """The runs ``command`` gets (:attr:`attempts` unless the command says otherwise)."""
        return self.attempts

    @abstractmethod
    def authorise(self, command: C, caller: Caller) -> W:
        """Who is calling, as the command needs it; 401/403/404 otherwise."""

    @abstractmethod
    def handle(self, uow: UnitOfWork, command: C, who: W) -> Outcome:
        """Decide and change (events pending in ``uow``); nothing is saved here."""

    @abstractmethod
    def answer(self, command: C, who: W, outcome: Outcome, state: Reading) -> A:
        """The answer, from ``outcome`` and ``state``: the same function for the first call
        (the state as the command left it) and a replay (as of the recorded version)."""

    def matches_made(self, command: C, uow: UnitOfWork, outcome: Outcome) -> int:
        """The matches the command makes, charged to the caller's match quota before the
        save (docs/decisions.md D-bounded): those its unit of work creates. A command that
        makes one later, on the caller's behalf, counts it here (a quick-play ticket)."""
        return uow.new_matches

    def dry_run(self, command: C, who: W, uow: UnitOfWork) -> A:
        """The command checked on copies, nothing saved (round commands)."""
        raise InvalidInputError("this command has no dry run")


@dataclass(frozen=True, slots=True)
class Answered(Generic[A]):
    """What the bus answers: the status and body, and whether it is a recorded answer
    given again (``replayed``; a record of version 1 gives its stored JSON as ``legacy``)."""

    status: int
    body: A | None
    replayed: bool = False
    legacy: bytes | None = None
    outcome: Outcome | None = None
    """The outcome the body was built from (its subject, version and acting seat)."""


class Bus:
    """Commands to their handlers, under one pipeline (the module docstring)."""

    def __init__(
        self,
        service: GameService,
        handlers: Mapping[type[Any], Handler[Any, Any, Any]],
        *,
        clock: Callable[[], datetime] | None = None,
        matches: Allowance = NO_ALLOWANCE,
    ) -> None:
        self.service = service
        self.handlers = dict(handlers)
        self.keys = Keys(service)
        self.clock = clock or service.clock
        self.matches = matches
        """The match quota every command's new matches are charged to (the payer's)."""
        self.acted: list[Callable[[UUID], None]] = []
        """Told the player of each command a player token sent and the bus saved: a recent
        action is what presence is derived from (docs/decisions.md D-social)."""

    @property
    def commands(self) -> Iterable[type[Any]]:
        """Every command type the bus handles (one handler each)."""
        return self.handlers.keys()

    def handler(self, command: Any) -> Handler[Any, Any, Any]:
        try:
            return self.handlers[type(command)]
        except KeyError:
            raise TypeError(f"no handler for {type(command).__name__}") from None

    def handle(
        self,
        command: Any,
        caller: Caller = SERVICE,
        *,
        key: RequestKey | None = None,
        dry: bool = False,
        payer: Payer | None = None,
    ) -> Answered[Any]:
        """Run ``command`` for ``caller`` under ``key`` (blocking: call it in a worker
        thread from async code); the matches it makes are charged to ``payer`` (None: the
        service's own, free). A dry run's loads see every save acknowledged before it;
        a command's loads take the cache as it is, its save checking its copies
        (docs/decisions.md D-settle)."""
        handler = self.handler(command)
        if dry:
            who = handler.authorise(command, caller)
            copies = UnitOfWork(self.service, self.clock)
            return Answered(200, handler.dry_run(command, who, copies))
        with Settling.deciding():
            return self._handle(handler, command, caller, key, payer)

    def _handle(
        self,
        handler: Handler[Any, Any, Any],
        command: Any,
        caller: Caller,
        key: RequestKey | None,
        payer: Payer | None,
    ) -> Answered[Any]:
        who = handler.authorise(command, caller)
        if key is None:
            return self._told(caller, self._run(handler, command, caller, who, None, payer))
        with self.keys.claimed(key):
            found = self.keys.recorded(key) if handler.key_first else None
            if found is None:
                try:
                    return self._told(caller, self._run(handler, command, caller, who, key, payer))
                except ShengjiError:
                    # another process saved this key first (a retry sent elsewhere while
                    # this one ran): its save won, or the state it left refused this run
                    found = self.keys.recorded(key)
                    if found is None:
                        raise
            if found.legacy_body is not None:  # recorded before records kept outcomes
                status = found.outcome.status
                return Answered(status, None, replayed=True, legacy=found.legacy_body.encode())
            outcome = Outcome.of(found.outcome)
            body = handler.answer(command, who, outcome, Reading(self.service))
            return Answered(outcome.status, body, replayed=True, outcome=outcome)

    def _told(self, caller: Caller, answered: Answered[Any]) -> Answered[Any]:
        """The player who sent the command acted (the :attr:`acted` listeners)."""
        if isinstance(caller, Credential) and caller.role == PLAYER_ROLE and caller.owner:
            for listener in self.acted:
                listener(caller.owner)
        return answered

    def execute(self, command: Any, caller: Caller = SERVICE) -> Any:
        """``command`` without a key (by default sent by the service itself): its answer."""
        return self.handle(command, caller).body

    def _run(
        self,
        handler: Handler[Any, Any, Any],
        command: Any,
        caller: Caller,
        who: Any,
        key: RequestKey | None,
        payer: Payer | None,
    ) -> Answered[Any]:
        attempts = handler.attempts_for(command)
        fresh = not self.service.trusts_cache
        # While a cached copy may be stale (docs/decisions.md D-owner), a command refused on
        # one — its save lost on a version, or a refusal (an If-Match, a rule) by copies the
        # store has moved past — is decided again once on fresh copies, inside this call:
        # the key's record is saved with the run that wins, so a replay answers what that
        # run answered.
        lost: VersionConflictError | None = None
        attempt = 0
        while True:
            attempt += 1
            uow = UnitOfWork(self.service, self.clock)
            try:
                outcome = handler.handle(uow, command, who)
            except VersionConflictError:
                if attempt >= attempts:
                    raise
                continue  # the handler found the state moved under it: decide again
            except ShengjiError:
                if self._used(handler, key):
                    raise  # a key used before (run first): the bus answers its record
                if not fresh and self.service.behind(uow.versions()):
                    fresh, attempt = True, attempt - 1  # refused on a stale copy: once more
                    who = self._stale(handler, command, caller, uow)
                    continue
                if lost is not None and attempts == 1:
                    # the caller's conflict (D-bus): the save it lost is the answer, as
                    # when loads asked the store; the fresh run only checked a stale copy
                    raise lost from None
                uow.commit_kept()
                raise
            records = [] if key is None else self.keys.record(key, outcome.receipt(), uow.now)
            spent = self.matches.spend(payer, handler.matches_made(command, uow, outcome))
            try:
                uow.commit(*records)
            except VersionConflictError as e:
                self.matches.refund(payer, spent)
                if self._used(handler, key):
                    raise  # the key's record was saved before (run first): answer it
                if not fresh:  # a stale copy, or a save made meanwhile: once more, fresh
                    fresh, attempt, lost = True, attempt - 1, e
                    if key is not None and self.keys.recorded(key) is not None:
                        raise  # another process answered this key: the bus answers its record
                    who = self._stale(handler, command, caller, uow)
                    continue
                if attempt >= attempts:
                    raise
                continue  # the state moved under us: decide again on the state as it is
            except BaseException:
                self.matches.refund(payer, spent)
                raise
            body = handler.answer(command, who, outcome, uow.reading())
            return Answered(outcome.status, body, outcome=outcome)

    def _used(self, handler: Handler[Any, Any, Any], key: RequestKey | None) -> bool:
        """A handler that runs before its key is looked up (:attr:`Handler.key_first`
        False) found its key recorded (409 when for another request)."""
        return key is not None and not handler.key_first and self.keys.recorded(key) is not None

    def _stale(
        self, handler: Handler[Any, Any, Any], command: Any, caller: Caller, uow: UnitOfWork
    ) -> Any:
        """The command is decided again on fresh copies: drop what ``uow`` loaded from the
        cache, count it (``shengji_stale_retries_total``), log it, and authorise again (what
        authorising loaded, the run may have changed): who is calling, as fresh."""
        self.service.refresh(*uow.loaded())
        self.service.stale_retried()
        log.info("stale cache: the command is decided again on fresh copies")
        return handler.authorise(command, caller)
