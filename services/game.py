"""The game application: command handlers over the Match and Round aggregates.

Built on the eventsourcing library's :class:`~eventsourcing.application.Application`
(ARCHITECTURE decision 1): the recorder (POPO, SQLite or PostgreSQL) is chosen by the
``env`` the composition root passes (``PERSISTENCE_MODULE`` …); events are msgspec-encoded
(:mod:`services.codec`). Randomness and time come from injected callables, so tests can
fix them: a 256-bit seed per deal from ``secrets`` (R35), ``now`` from the clock.

The policy between aggregates lives here: when a command makes a round score
(``RoundScored``), the match records it (``RoundRecorded``: levels, next dealer, match end)
and, unless the match is over, opens and deals the next round — all saved in one atomic
``save`` with the round's last events. A redeal (R19, 暴动) is dealt in the same save too.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, Mapper

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.cards import Card
from domain.rules.errors import IllegalMoveError, InvalidInputError, ShengjiError
from domain.rules.ruleset import RuleSet
from services.codec import MsgspecMapper
from services.errors import NotFoundError, PreconditionFailedError, VersionConflictError

Clock = Callable[[], datetime]
SeedSource = Callable[[], bytes]


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def new_seed() -> bytes:
    """R35: a fresh 256-bit seed from the OS's CSPRNG."""
    return secrets.token_bytes(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command changed: the match and round versions after it."""

    match_id: UUID
    match_version: int
    round_id: UUID | None
    round_version: int | None


ACTIONS = ("declare", "overcall", "pass", "bury", "play", "redeal")


class GameService(Application[UUID]):
    """Commands and loads for matches and their rounds."""

    name = "shengji"
    env: ClassVar[dict[str, str]] = {
        "AGGREGATE_CACHE_MAXSIZE": "1000",
    }

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        clock: Clock = utc_now,
        seeds: SeedSource = new_seed,
        pacing: Pacing | None = None,
    ) -> None:
        super().__init__(env)
        self.clock = clock
        self.seeds = seeds
        self.pacing = pacing or Pacing(interval_ms=0, declare_ms=30_000, window_ms=0)

    def construct_mapper(self) -> Mapper[UUID]:
        return MsgspecMapper()

    # -- loading ---------------------------------------------------------------------------

    def get_match(self, match_id: UUID, version: int | None = None) -> Match:
        try:
            match: Match = self.repository.get(match_id, version=version)
        except AggregateNotFoundError:
            raise NotFoundError(f"no match {match_id}") from None
        if not isinstance(match, Match):
            raise NotFoundError(f"no match {match_id}")
        return match

    def get_round(self, round_id: UUID, version: int | None = None) -> Round:
        try:
            round_: Round = self.repository.get(round_id, version=version)
        except AggregateNotFoundError:
            raise NotFoundError(f"no round {round_id}") from None
        if not isinstance(round_, Round):
            raise NotFoundError(f"no round {round_id}")
        return round_

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
    ) -> UUID:
        match = Match.create(rules, self.clock(), name=name, preset=preset, match_id=match_id)
        self._save(match)
        return match.id

    def take_seat(
        self, match_id: UUID, seat: int, player: str, kind: str = "human"
    ) -> tuple[str, CommandResult]:
        """Seat a player (or a bot); returns the seat token, shown once and stored hashed.

        When the fourth seat fills, round 1 begins and is dealt in the same save.
        """
        match = self.get_match(match_id)
        token = secrets.token_urlsafe(24)
        now = self.clock()
        match.take_seat(seat, player, kind, token_hash(token), now)
        new_round = self._begin_round(match, now) if match.seated else None
        self._save(match, new_round)
        return token, self._result(match, new_round)

    def finish_match(self, match_id: UUID, reason: str = "organiser") -> CommandResult:
        match = self.get_match(match_id)
        match.finish(reason, self.clock())
        self._save(match)
        return self._result(match, None)

    def seat_of_token(self, match: Match, token: str) -> int | None:
        digest = token_hash(token)
        for seat, info in enumerate(match.seats):
            if info is not None and secrets.compare_digest(info.token_hash, digest):
                return seat
        return None

    # -- round commands --------------------------------------------------------------------

    def act(
        self,
        match_id: UUID,
        seat: int,
        action: str,
        cards: tuple[Card, ...] = (),
        *,
        expected_round_version: int | None = None,
    ) -> CommandResult:
        """Run one round command for ``seat`` (``ACTIONS``); save its events atomically."""
        match = self.get_match(match_id)
        if match.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
        round_ = self.current_round(match)
        if round_ is None:
            raise IllegalMoveError(
                "the match has no round in play yet: four seats are needed",
                rule="R1",
                code="no-round",
            )
        if expected_round_version is not None and expected_round_version != round_.version:
            raise PreconditionFailedError(
                f"the round is at version {round_.version}, not {expected_round_version}"
            )
        now = self.clock()
        if round_.dealt is not None:
            # A passed deadline takes effect even when the command itself is refused:
            # its events are saved on their own, then the refusal is raised.
            round_.claim_deadlines(now)
            if round_.phase is RoundPhase.REDEAL:
                round_.deal(self.seeds(), now, self.pacing)
        claimed = bool(round_.pending_events)
        try:
            self._dispatch(round_, seat, action, cards, now)
        except ShengjiError:
            if claimed:
                self._save(round_)
            raise
        to_save: list[Any] = [round_]
        if round_.phase is RoundPhase.REDEAL:
            round_.deal(self.seeds(), now, self.pacing)
        elif round_.phase is RoundPhase.SCORED:
            assert round_.result is not None
            match.record_round(round_.number, round_.result, now, round_events=round_.version)
            to_save.append(match)
            if not match.finished:
                to_save.append(self._begin_round(match, now))
        self._save(*to_save)
        return self._result(match, round_)

    @staticmethod
    def _dispatch(
        round_: Round, seat: int, action: str, cards: tuple[Card, ...], now: datetime
    ) -> None:
        if action == "declare":
            round_.declare(seat, cards, now)
        elif action == "overcall":
            round_.overcall(seat, cards, now)
        elif action == "pass":
            round_.pass_turn(seat, now)
        elif action == "bury":
            round_.bury(seat, cards, now)
        elif action == "play":
            round_.play_cards(seat, cards, now)
        elif action == "redeal":
            round_.request_redeal(seat, now)
        else:
            raise InvalidInputError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")

    def claim_deadlines(self, match_id: UUID) -> CommandResult:
        """Let a passed deadline (end of drawing, overcall window) take effect now."""
        match = self.get_match(match_id)
        round_ = self.current_round(match)
        if round_ is None or round_.dealt is None:
            return self._result(match, round_)
        now = self.clock()
        round_.claim_deadlines(now)
        if round_.phase is RoundPhase.REDEAL:
            round_.deal(self.seeds(), now, self.pacing)
        self._save(round_)
        return self._result(match, round_)

    # -- internals -------------------------------------------------------------------------

    def _begin_round(self, match: Match, now: datetime) -> Round:
        match.begin_round(now)
        round_ = Round.start(
            match.id, match.round_number, match.rules, match.levels, match.dealer, now
        )
        round_.deal(self.seeds(), now, self.pacing)
        return round_

    def _save(self, *aggregates: Any) -> None:
        try:
            self.save(*[a for a in aggregates if a is not None])
        except IntegrityError as e:
            raise VersionConflictError(
                "another command changed this match first; reload and try again"
            ) from e

    @staticmethod
    def _result(match: Match, round_: Round | None) -> CommandResult:
        return CommandResult(
            match.id,
            match.version,
            None if round_ is None else round_.id,
            None if round_ is None else round_.version,
        )
