"""The game application: command handlers over the Match and Round aggregates.

Built on the eventsourcing library's :class:`~eventsourcing.application.Application`:
the recorder (POPO, SQLite or PostgreSQL) is chosen by the
``env`` the composition root passes (``PERSISTENCE_MODULE`` …); events are msgspec-encoded
(:mod:`services.codec`). Randomness and time come from injected callables, so tests can
fix them: a 256-bit seed per deal from ``secrets`` (R35), ``now`` from the clock.

The policy between aggregates lives here: when a command makes a round score
(``RoundScored``), the match records it (``RoundRecorded``: levels, next dealer, match end)
and, unless the match is over, opens and deals the next round — all saved in one atomic
``save`` with the round's last events. A redeal (R19, 暴动) is dealt in the same save too.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar
from uuid import UUID, uuid4

from eventsourcing.application import AggregateNotFoundError, Application, project_aggregate
from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import IntegrityError, Mapper, Recording

from domain.accounts.account import Account
from domain.game.match import Entered, Match
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.game.timers import Timers
from domain.rules.board import Board
from domain.rules.cards import Card
from domain.rules.errors import IllegalMoveError, ShengjiError
from domain.rules.ruleset import RuleSet
from services.codec import MsgspecMapper
from services.commands import Attach, CommandResult, Decide, Pending, dispatch
from services.errors import NotFoundError, PreconditionFailedError, VersionConflictError
from services.sources import SEAT_ROLE, new_seed, new_token, token_hash, utc_now
from services.tournaments.seeds import table_board, table_pacing, table_seed

Clock = Callable[[], datetime]
SeedSource = Callable[[], bytes]
SaveListener = Callable[[frozenset[UUID]], None]
"""Told the ids of the matches a save touched (a round counts as its match)."""
StateListener = Callable[[Sequence[Match | Round]], None]
"""Told the matches and rounds a save stored, as saved (read only)."""
SaveObserver = Callable[[float, str], None]
"""Told each save's duration (seconds) and outcome: ``ok``, ``conflict`` or ``error``."""

log = logging.getLogger(__name__)

END_ATTEMPTS = 5
"""Tries an organiser's end of a match makes against moves saved first (bots move on)."""
STAND_IN_SEED = bytes(32)
"""The seed a dry run deals a void deal again from: the real seed is drawn only when a
command acts (R35), and a dry run shows nothing it could not know (R33)."""


QUICK_PLAY_TIMERS = Timers(declare_ms=30_000, bury_ms=60_000, play_ms=30_000)


@dataclass(frozen=True, slots=True)
class TablePolicy:
    """What the service's settings say about tables and players (docs/configuration.md;
    docs/decisions.md D-table-life)."""

    session_idle: timedelta = timedelta(days=30)
    """A player session unused (not refreshed) this long no longer signs in."""
    quick_play_rounds: int = 4
    """Quick play's match length (``rounds:N``) when its rule set would never end (wrap)."""
    quick_play_timers: Timers = QUICK_PLAY_TIMERS
    """Quick play's turn limits: the timeout bot moves for a seat over its time."""
    substitute: str = "heuristic"
    """The bot that plays a seat whose player left (the timeout bot's kind)."""


class GameService(Application[UUID]):
    """Commands and loads for matches and their rounds."""

    name = "shengji"
    env: ClassVar[dict[str, str]] = {
        "AGGREGATE_CACHE_MAXSIZE": "1000",
    }
    log_section_size = 500  # notifications a follower (the webhook outbox) reads a query

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        clock: Clock = utc_now,
        seeds: SeedSource = new_seed,
        pacing: Pacing | None = None,
        table: TablePolicy | None = None,
    ) -> None:
        super().__init__(env)
        self.clock = clock
        self.seeds = seeds
        self.pacing = pacing or Pacing(interval_ms=0, declare_ms=30_000, window_ms=0)
        self.table = table or TablePolicy()
        """Sessions' idle limit, quick play's match length and turn limits, the bot that
        takes a seat left (``SESSION_IDLE_S``, ``QUICK_PLAY_*``, ``TIMEOUT_BOT``)."""
        self.deal_from: int | None = None
        """The seat the next deal of a match draws from first; None: the dealer (R16;
        round 1 from seat 0). A record's replay sets it from the record's ``firstSeat``,
        read with each seed as the pacing is (:mod:`services.records.steps`), so a table
        that dealt from seat 0 (R36) re-imports as it was played."""
        self.board_for: Callable[[int], Board | None] | None = None
        """The board round N of a match plays, when set (a record's replay of a board
        match, R36); None: a tournament of boards gives it, other matches have none."""
        self.on_saved: list[SaveListener] = []
        """Called after every save, on the saving thread (the in-process live hub), with the
        ids of the matches and accounts it changed."""
        self.on_saved_state: list[StateListener] = []
        """Told each save's matches and rounds as saved (read only; the sweeper)."""
        self.save_observers: list[SaveObserver] = []
        """Told every save's duration and outcome (the store append latency metric)."""
        self.events_replayed = 0
        """Events applied to rebuild aggregates from the store (metrics)."""
        self._replayed_lock = threading.Lock()
        self.on_forgotten: list[SaveListener] = []
        """Told ids whose cached copies were dropped with no new version (a name erased)."""
        self.on_close: list[Callable[[], None]] = []
        """Called once the store is closed (the embedded store's writer claim)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Subclasses (test doubles, benches) keep the same event tables."""
        super().__init_subclass__(**kwargs)
        cls.name = GameService.name

    def close(self) -> None:
        """Close the store, then run :attr:`on_close`."""
        try:
            super().close()
        finally:
            callbacks, self.on_close = self.on_close, []
            for callback in callbacks:
                callback()

    def construct_mapper(self) -> Mapper[UUID]:
        return MsgspecMapper()

    # -- loading ---------------------------------------------------------------------------

    def get_match(self, match_id: UUID, version: int | None = None) -> Match:
        """The match (at ``version``): the library's load, a copy of its cached aggregate
        (a command's changes reach the cache only by its save)."""
        try:
            match: Match = self.repository.get(
                match_id, version=version, projector_func=self._replay
            )
        except AggregateNotFoundError:
            raise NotFoundError(f"no match {match_id}") from None
        if not isinstance(match, Match):
            raise NotFoundError(f"no match {match_id}")
        return match

    def get_round(self, round_id: UUID, version: int | None = None) -> Round:
        """The round (at ``version``), as :meth:`get_match` loads."""
        try:
            round_: Round = self.repository.get(
                round_id, version=version, projector_func=self._replay
            )
        except AggregateNotFoundError:
            raise NotFoundError(f"no round {round_id}") from None
        if not isinstance(round_, Round):
            raise NotFoundError(f"no round {round_id}")
        return round_

    def _replay(self, aggregate: Any, events: Iterable[Any]) -> Any:
        """The library's projector, counting the events it applies (metrics)."""
        events = list(events)
        with self._replayed_lock:
            self.events_replayed += len(events)
        return project_aggregate(aggregate, events)

    def current_round(self, match: Match) -> Round | None:
        rid = match.current_round_id()
        return None if rid is None else self.get_round(rid)

    # -- match commands --------------------------------------------------------------------

    def create_match(
        self,
        rules: RuleSet,
        *,
        name: str = "",
        preset: str | None = None,
        match_id: UUID | None = None,
        organiser_token_hash: str = "",
        attach: Attach | None = None,
        tournament: tuple[UUID, int] | None = None,
        timers: Timers | None = None,
        visibility: str = "public",
    ) -> UUID:
        """A new match; ``organiser_token_hash`` authorises its admin actions;
        ``tournament`` (id, round) makes it a tournament table (R36); a ``private`` one is
        never listed (docs/decisions.md D-table-life)."""
        match = Match.create(
            rules,
            self.clock(),
            name=name,
            preset=preset,
            match_id=match_id or uuid4(),
            organiser_token_hash=organiser_token_hash,
            tournament=tournament,
            timers=timers,
            visibility=visibility,
        )
        self._save(match, *self._extras(attach, match, None, None))
        return match.id

    def take_seat(
        self,
        match_id: UUID,
        seat: int,
        player: str,
        kind: str = "human",
        *,
        token: str | None = None,
        attach: Attach | None = None,
    ) -> tuple[str, CommandResult]:
        """Seat a player (or a bot); returns the seat token (``token``, or a new one),
        shown once and stored hashed.

        When the fourth seat fills, round 1 begins and is dealt in the same save.
        """
        match = self.get_match(match_id)
        token = token or new_token(match_id, SEAT_ROLE)
        now = self.clock()
        match.take_seat(seat, player, kind, token_hash(token), now)
        new_round = self._begin_round(match, now) if match.seated else None
        self._save(match, new_round, *self._extras(attach, match, new_round, new_round))
        return token, self._result(match, new_round, new_round)

    def finish_match(
        self,
        match_id: UUID,
        reason: str = "organiser",
        *,
        attach: Attach | None = None,
        entered: Entered | None = None,
    ) -> CommandResult:
        """R32: the organiser ends the match (a round in play is abandoned unscored). The
        end applies to the match as it is: a move saved first (a bot's, off the request
        path) makes it try again, at most :data:`END_ATTEMPTS` times."""
        for attempt in range(END_ATTEMPTS):
            try:
                return self._finish(match_id, reason, attach, entered)
            except VersionConflictError:
                if attempt == END_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _finish(
        self, match_id: UUID, reason: str, attach: Attach | None, entered: Entered | None
    ) -> CommandResult:
        match, current = self.ending(match_id, reason, entered=entered)
        self._save(match, current, *self._extras(attach, match, None, current))
        return self._result(match, None, current)

    def ending(
        self, match_id: UUID, reason: str, *, entered: Entered | None = None
    ) -> tuple[Match, Round | None]:
        """R32: ``match_id`` ended (its round in play abandoned), not saved yet — the
        caller saves both, with whatever else must change with them (a withdrawal)."""
        match = self.get_match(match_id)
        now = self.clock()
        match.finish(reason, now, entered=entered)
        current = self.current_round(match)
        if current is not None and current.phase not in (RoundPhase.SCORED, RoundPhase.ABANDONED):
            # Saved with MatchFinished: a command racing on this round conflicts on its
            # version instead of landing after the match's end.
            current.abandon(reason, now)
        return match, current

    # -- round commands --------------------------------------------------------------------

    def act(
        self,
        match_id: UUID,
        seat: int,
        action: str,
        cards: tuple[Card, ...] = (),
        *,
        match: Match | None = None,
        expected_version: int | None = None,
        expected_round_version: int | None = None,
        attach: Attach | None = None,
        decide: Decide | None = None,
    ) -> CommandResult:
        """Run one round command for ``seat`` (``ACTIONS``); save its events atomically.

        ``match``: the match as the caller loaded it (a command loads it once,
        :mod:`services.pipeline`), else it is loaded here. ``expected_version`` (the match
        version, If-Match) or ``expected_round_version`` that is not the current one →
        PreconditionFailedError, nothing saved. ``decide`` (a turn timeout) chooses seat,
        action and cards instead, with ``now`` and the deadlines claimed; it records
        ``TurnTimedOut`` first (:mod:`services.timers`)."""
        match = self.get_match(match_id) if match is None else match
        round_, now, _ = self._ready(match, expected_version, expected_round_version)
        claimed = bool(round_.pending_events)
        try:
            if decide is not None:
                seat, action, cards = decide(match, round_, now)
            self._dispatch(round_, seat, action, cards, now)
        except ShengjiError:
            if claimed:  # a passed deadline takes effect even when the command is refused
                self._save(round_)
            raise
        to_save: list[Any] = [round_]
        current: Round | None = round_
        if round_.phase is RoundPhase.REDEAL:
            self._deal(match, round_, now)
        elif round_.phase is RoundPhase.SCORED:
            assert round_.result is not None
            match.record_round(round_.number, round_.result, now, round_events=round_.version)
            to_save.append(match)
            if not match.finished:
                current = self._begin_round(match, now)
                to_save.append(current)
        self._save(*to_save, *self._extras(attach, match, round_, current))
        return self._result(match, round_, current)

    def try_command(
        self,
        match: Match,
        seat: int,
        action: str,
        cards: tuple[Card, ...] = (),
        *,
        expected_version: int | None = None,
    ) -> tuple[int, Round]:
        """The dry run of :meth:`act` (docs/decisions.md D-dry-run): the same steps on the
        loaded copies — a passed deadline claimed, a void deal dealt again (from a
        stand-in seed: the real one is drawn only when a command acts), the command run —
        and nothing saved. A throw is judged by its shape alone (R22, R33). Answers the
        match version and the round with the command's events pending; raises what
        :meth:`act` would raise."""
        round_, now, version = self._ready(match, expected_version, None, dry=True)
        round_.collect_events()  # the deadlines' events are not the command's
        self._dispatch(round_, seat, action, cards, now, dry=True)
        return version, round_

    def _ready(
        self,
        match: Match,
        expected_version: int | None,
        expected_round_version: int | None,
        *,
        dry: bool = False,
    ) -> tuple[Round, datetime, int]:
        """A command's preconditions on ``match`` (R32, R1, If-Match), then its round with
        a passed deadline claimed (R16, R17, R20) and a void deal dealt again (R19):
        the round, the command's ``now`` and the match version the command found."""
        if match.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
        round_ = self.current_round(match)
        if round_ is None:
            raise IllegalMoveError(
                "the match has no round in play yet: four seats are needed",
                rule="R1",
                code="no-round",
            )
        current_version = match.sequence(round_.version)
        if expected_round_version is not None and expected_round_version != round_.version:
            raise PreconditionFailedError(
                f"the round is at version {round_.version}, not {expected_round_version}",
                current=current_version,
            )
        if expected_version is not None and expected_version != current_version:
            raise PreconditionFailedError(
                f"the match is at version {current_version}, not {expected_version}",
                current=current_version,
            )
        now = self.clock()
        if round_.dealt is not None:
            round_.claim_deadlines(now)
            if round_.phase is RoundPhase.REDEAL:
                self._deal(match, round_, now, dry=dry)
        return round_, now, current_version

    _dispatch = staticmethod(dispatch)

    def claim_deadlines(self, match_id: UUID) -> CommandResult:
        """Let a passed deadline (end of drawing, overcall window) take effect now."""
        match = self.get_match(match_id)
        round_ = self.current_round(match)
        if match.finished or round_ is None or round_.dealt is None:
            return self._result(match, round_, round_)  # nothing happens after MatchFinished
        now = self.clock()
        round_.claim_deadlines(now)
        if round_.phase is RoundPhase.REDEAL:
            self._deal(match, round_, now)
        self._save(round_)
        return self._result(match, round_, round_)

    # -- internals -------------------------------------------------------------------------

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        """Save, then tell :attr:`on_saved` which matches changed. The events are
        stored whatever a listener does, so a listener's error is logged, not raised."""
        started = time.perf_counter()
        try:
            recordings = super().save(*objs, **kwargs)
        except Exception as e:
            self._observe_save(started, "conflict" if isinstance(e, IntegrityError) else "error")
            raise
        self._observe_save(started, "ok")
        if recordings and (self.on_saved or self.on_saved_state):
            state = [o for o in objs if isinstance(o, Match | Round)]
            # The matches changed, and the accounts: a player's streams follow their
            # account, to end when its token is revoked (docs/decisions.md D-fair).
            touched = frozenset(o.id if isinstance(o, Match) else o.match_id for o in state)
            touched |= {o.id for o in objs if isinstance(o, Account)}
            listeners: list[Callable[[], None]] = [
                *(partial(listener, touched) for listener in self.on_saved),
                *(partial(listener, state) for listener in self.on_saved_state),
            ]
            for call in listeners:
                try:
                    call()
                except Exception:
                    log.exception("a save listener failed (the events are saved)")
        return recordings

    def _observe_save(self, started: float, outcome: str) -> None:
        seconds = time.perf_counter() - started
        for observe in self.save_observers:
            observe(seconds, outcome)

    def _deal(self, match: Match, round_: Round, now: datetime, *, dry: bool = False) -> None:
        """Deal ``round_`` from a fresh seed (R35); a tournament table's deals take the
        tournament round's seeds instead (R36, :mod:`services.tournaments.seeds`). ``dry``
        (a dry run): from :data:`STAND_IN_SEED`, so no seed is drawn or shown. A board
        dealt with a weak hand is dealt again at once, as at every table (R36, §10;
        ``Round.deal`` stops redealing after ``MAX_DEALINGS``)."""
        while True:
            if match.tournament_id is None:
                seed = STAND_IN_SEED if dry else self.seeds()
                round_.deal(seed, now, self.pacing, first_seat=self.deal_from)
            else:
                seed = (
                    STAND_IN_SEED
                    if dry
                    else table_seed(self.repository, match, round_.number, round_.deal_no + 1)
                )
                # R36: seat 0 draws first at every table; a board from its dealer (R16)
                first_seat = 0 if round_.board is None else None
                round_.deal(seed, now, table_pacing(match, self.pacing), first_seat=first_seat)
            if dry or round_.phase is not RoundPhase.REDEAL:
                return

    def _begin_round(self, match: Match, now: datetime) -> Round:
        number = match.round_number + 1
        board = (  # R36: None but for boards
            table_board(self.repository, match, number)
            if self.board_for is None
            else self.board_for(number)
        )
        match.begin_round(now, dealer=None if board is None else board.dealer)
        round_ = Round.start(
            match.id,
            match.round_number,
            match.rules,
            match.levels,
            match.dealer if board is None else board.dealer,
            now,
            board=board,
        )
        self._deal(match, round_, now)
        return round_

    def _save(self, *aggregates: Any) -> None:
        try:
            self.save(*[a for a in aggregates if a is not None])
        except IntegrityError as e:
            # Whoever won wrote newer events than our cached copies: drop them, so the
            # next load reads the store (needed when the cache does not fast-forward).
            cache = self.repository.cache
            if cache is not None:
                for aggregate in aggregates:
                    if aggregate is not None:
                        with contextlib.suppress(KeyError):
                            cache.get(aggregate.id, evict=True)
            raise VersionConflictError(
                "another command changed this match first; reload and try again"
            ) from e

    def _extras(
        self, attach: Attach | None, match: Match, round_: Round | None, current: Round | None
    ) -> Sequence[Any]:
        if attach is None:
            return ()
        return attach(Pending(self._result(match, round_, current), match, current))

    @staticmethod
    def _result(match: Match, round_: Round | None, current: Round | None) -> CommandResult:
        """``round_`` is the round acted on, ``current`` the match's round after it."""
        return CommandResult(
            match.id,
            match.version,
            None if round_ is None else round_.id,
            None if round_ is None else round_.version,
            match.sequence(0 if current is None else current.version),
            match,
            current,
        )
