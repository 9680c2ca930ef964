"""A rated match tells each of its players how their rating moved: the rating notices'
policy (docs/decisions.md D-career).

The policy follows the store's notification log — the ``MatchFinished`` and
``RoundCompleted`` notifications, in commit order — once the career and the ratings have
projected them. At each, the matches that entered the players' histories there (the
career's :meth:`~services.career.view.CareerView.released_at`: a match at its finish, a
tournament table when its round completes, R36) and were rated (the ratings' history row
of the player, family and match) give one :class:`RatingMove` per account seat, and
:class:`NoteRatingChanges` saves a :class:`~domain.accounts.rating_change.RatingChange`
per move **with the policy's position** (:class:`~services.positions.PolicyPosition`) in
one save, through the bus, as the service. The player's stream and the webhook outbox,
which follow the log, send them on (``rating-changed``).

* **Once per player and match**: a notice's id is derived from the player and the match;
  the command creates only those that do not exist, and the position skips what was
  done (a restart, a second process). ``shengji rebuild`` rebuilds the views, never the
  log: nothing is sent again.
* An erased player's rows are gone from both views by then: they hear nothing more.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass
from typing import Final
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.utils import get_topic

from domain.accounts.rating_change import RatingChange, rating_change_id
from domain.game.match import Match
from domain.game.match_events import MatchFinished
from domain.game.round import Round
from domain.tournament.events import RoundCompleted
from services.background import Doorbell, Loop
from services.bus import Bus, Caller, Handler, Outcome, Service
from services.career.reads import CareerModels
from services.career.rows import account_of
from services.errors import ForbiddenError, VersionConflictError
from services.positions import PolicyPosition, position_id, position_in
from services.ratings.boards import RatingModels, model_name
from services.ratings.model import FAMILIES, MODEL, Rating
from services.unit_of_work import Reading, UnitOfWork

log = logging.getLogger(__name__)

POLICY: Final = "rating-notices"
"""The policy's name: its position's id is derived from it (one position per store)."""
PAGE: Final = 100
PASS_EVERY: Final = 100
"""Notifications passed over (no rated match entered there) before the position moves by
itself: a restart reads at most that many again."""
ATTEMPTS: Final = 5
NOTED: Final = "noted"
TOPICS: Final = (get_topic(MatchFinished), get_topic(RoundCompleted))
FOLLOWED: Final = frozenset(TOPICS)


@dataclass(frozen=True, slots=True)
class RatingMove:
    """A rated match moved a player's rating (shown ratings, :mod:`services.ratings.model`)."""

    player_id: UUID
    match_id: UUID
    family: str
    model: str
    before: int
    after: int
    deviation: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class NoteRatingChanges:
    """The moves of the matches that entered the histories at log ``position``, each
    saved as a notice unless it is already; the policy's position moves to ``position``
    in the same save (no moves: the position alone)."""

    position: int
    moves: tuple[RatingMove, ...] = ()


class NoticesTaken(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the policy's command did."""

    position: int
    noted: int


class NoteRatingChangesHandler(Handler[NoteRatingChanges, None, NoticesTaken]):
    """The service's command only (403 for any credential). ``ring``: once saved, each
    player noted is told (their streams read the log at once, docs/decisions.md D-social)."""

    attempts = ATTEMPTS

    def __init__(self, ring: Callable[[UUID], None] = lambda _: None) -> None:
        self.ring = ring

    def authorise(self, command: NoteRatingChanges, caller: Caller) -> None:
        if not isinstance(caller, Service):
            raise ForbiddenError("the rating notices' command is the service's own")

    def handle(self, uow: UnitOfWork, command: NoteRatingChanges, who: None) -> Outcome:
        position = position_in(uow, POLICY)
        if command.position <= position.position:  # another process was first
            return Outcome(200, position.id, position.version, facts={NOTED: 0})
        noted = 0
        for m in command.moves:
            if uow.find(rating_change_id(m.player_id, m.match_id), RatingChange) is not None:
                continue
            uow.add(
                RatingChange.note(
                    m.player_id,
                    m.match_id,
                    family=m.family,
                    model=m.model,
                    before=m.before,
                    after=m.after,
                    deviation=m.deviation,
                    provisional=m.provisional,
                    now=uow.now,
                )
            )
            noted += 1
        position.move(command.position, uow.now)
        uow.add(position)
        players = {m.player_id for m in command.moves}

        def told() -> None:
            for player in players:
                self.ring(player)

        uow.after(told)
        return Outcome(200, position.id, position.version, facts={NOTED: noted})

    def answer(
        self, command: NoteRatingChanges, who: None, outcome: Outcome, state: Reading
    ) -> NoticesTaken:
        noted = outcome.facts.get(NOTED)
        return NoticesTaken(position=command.position, noted=noted if isinstance(noted, int) else 0)


def moves_at(career: CareerModels, ratings: RatingModels, position: int) -> Iterator[RatingMove]:
    """The rating moves of the matches that entered the histories at ``position``."""
    for row in career.view.released_at(position):
        facts = row.facts
        if facts.family not in FAMILIES:
            continue
        for taken in facts.seats:
            player = account_of(taken.who)
            if player is None:
                continue
            found = ratings.view.history_at(player, facts.family, facts.finished_at)
            if found is None or found.match_id != row.match_id:
                continue  # not rated (a guest at the table, a paper result …)
            after = Rating(found.mu_after, found.sigma_after)
            count = ratings.view.history_count(player, facts.family, facts.finished_at)
            yield RatingMove(
                player_id=player,
                match_id=row.match_id,
                family=facts.family,
                model=model_name(),
                before=Rating(found.mu_before, found.sigma_before).shown,
                after=after.shown,
                deviation=after.deviation,
                provisional=count < MODEL.provisional_matches,
            )


class RatingNotices:
    """Follows the log into the notices (the module docstring). One catch-up runs at a
    time in a process; processes are told apart by the store."""

    def __init__(self, bus: Bus, career: CareerModels, ratings: RatingModels) -> None:
        self.bus = bus
        self.career = career
        self.ratings = ratings
        self._cursor = 0
        self._lock = threading.Lock()
        self.doorbell = Doorbell()
        """Rung by a save that finished a match (and the hub's news on a worker)."""

    def loop(self, period_s: float) -> Loop:
        """The policy's background work: a catch-up at once when rung, and every period."""
        return Loop(
            POLICY, self.catch_up, period_s, self.doorbell, begin=self.listen, halt=self.deafen
        )

    def listen(self) -> None:
        self.bus.service.saves.stored.add(self.saved)

    def deafen(self) -> None:
        self.bus.service.saves.stored.remove(self.saved)

    def heard(self, topics: Set[str]) -> None:
        """The process's pass over the views read ``topics`` (they show them now): catch
        up when one is what the notices follow (docs/decisions.md D-follow)."""
        if not FOLLOWED.isdisjoint(topics):
            self.doorbell.ring()

    def saved(self, state: Sequence[Match | Round]) -> None:
        """A save of this process: catch up when it finished a match."""
        if any(isinstance(a, Match) and a.finished for a in state):
            self.doorbell.ring()

    def position(self) -> int:
        """The position saved in the store (0: none yet)."""
        try:
            found: object = self.bus.service.repository.get(position_id(POLICY))
        except AggregateNotFoundError:
            return 0
        return found.position if isinstance(found, PolicyPosition) else 0

    def catch_up(self) -> int:
        """Note the moves of every notification past the position that both views show;
        how many notices were saved."""
        with self._lock:
            self.career.fresh()
            self.ratings.fresh()
            shown = min(self.career.view.position(), self.ratings.view.position())
            cursor = max(self._cursor, self.position())
            noted = passed = 0
            recorder = self.bus.service.recorder
            while cursor < shown:
                page = recorder.select_notifications(
                    cursor, PAGE, stop=shown, topics=TOPICS, inclusive_of_start=False
                )
                for n in page:
                    moves = tuple(moves_at(self.career, self.ratings, n.id))
                    try:
                        if moves or passed + 1 >= PASS_EVERY:
                            taken: NoticesTaken = self.bus.execute(NoteRatingChanges(n.id, moves))
                            noted += taken.noted
                            passed = 0
                        else:
                            passed += 1
                    except VersionConflictError:
                        self._cursor = cursor  # busy: the next catch-up goes on from here
                        return noted
                    cursor = n.id
                if len(page) < PAGE:
                    cursor = shown  # read to it: the next scan starts there (D-pgcost)
                    break
            self._cursor = cursor
            return noted
