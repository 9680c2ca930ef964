"""The ``Match`` aggregate: four seats, the rule set, team levels, the dealer, the rounds.

Rounds are aggregates of their own (:mod:`domain.game.round`); a policy in services
carries each ``RoundScored`` into the match with :meth:`Match.record_round`, saved in the
same transaction as the round's last events (R30–R32).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING
from uuid import UUID

from domain.game import match_events as ev
from domain.game.base import GameAggregate
from domain.game.round import round_id
from domain.game.round_events import RoundScored
from domain.game.timers import Timers
from domain.names import check_apart, checked_name, checked_title
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import RuleSet
from domain.rules.scoring import advance_level, match_over
from domain.talk.options import DEFAULT as TALK_DEFAULT
from domain.talk.options import TalkOptions

SEAT_KINDS = ("human", "random", "heuristic", "strong")
"""A seat's holder: a person, or a bot policy of ``domain.bots.PLAYERS``."""
RESIGNED = "resigned"
"""``MatchFinished.reason`` of a match a team resigned (R32)."""
PUBLIC = "public"
PRIVATE = "private"
VISIBILITIES = (PUBLIC, PRIVATE)


ENTERED_PREFIX = "result entered: "
"""How a match's end reason starts when its result was entered, not played (R32)."""


@dataclass(frozen=True, slots=True)
class Entered:
    """A result the organiser entered (a paper result): the winning team (0: seats 0/2,
    1: seats 1/3, None: a draw)."""

    winner: int | None


class Match(GameAggregate):
    """A match between teams {0,2} and {1,3} (R2) under one rule set (§10)."""

    if TYPE_CHECKING:
        name: str
        preset: str | None
        rules: RuleSet
        seats: list[ev.SeatInfo | None]
        levels: tuple[int, int]
        laps: tuple[int, int]
        dealer: int | None
        round_number: int
        round_open: bool
        results: list[ev.RoundRecorded]
        winner: int | None
        finished: bool
        organiser_token_hash: str
        tournament_id: UUID | None
        tournament_round: int
        timers: Timers
        imported: ev.MatchImported | None
        """Set when the match is an imported record (its origin); None when played here."""
        visibility: str
        """``public`` or ``private`` (never listed; seats by invite or organiser)."""
        rematch_of: UUID | None
        ranked: bool
        """Made by a ranked queue (docs/players.md)."""
        reserved: tuple[str, ...]
        """Per seat, who may take it in a rematch (``MatchCreated.reserved``); "" anyone."""
        accounts: Mapping[int, UUID]
        """Seats held by a player's account (not a guest's or a bot's) → the account."""
        minted_through: Mapping[int, UUID]
        """Seats whose token was minted through a player's session → that session: the
        token works while the session does (docs/players.md)."""
        left: Mapping[int, str]
        """Seats whose holder left after round 1 began → the bot that plays them."""
        resigned: frozenset[int]
        """Seats that resigned (R32); the team concedes once each person of it did."""
        rematch: UUID | None
        """The rematch asked for after this match, if any."""
        talk: TalkOptions
        """What the creator allows of table talk (R37)."""

    unversioned = 0  # not annotated: the library would make it a field of MatchCreated
    """The match's events that take no match version (``MatchEvent.VERSIONED``)."""
    # The table's life (docs/decisions.md D-table-life): class defaults, replaced (never
    # changed in place) by the events that set them, so most matches hold none of them.
    visibility = PUBLIC
    rematch_of = None
    ranked = False
    reserved = ("", "", "", "")
    accounts = MappingProxyType({})
    minted_through = MappingProxyType({})
    left = MappingProxyType({})
    resigned = frozenset()
    rematch = None
    talk = TALK_DEFAULT

    @classmethod
    def create(
        cls,
        rules: RuleSet,
        now: datetime,
        *,
        name: str = "",
        preset: str | None = None,
        start_level: int = 0,
        match_id: UUID,
        organiser_token_hash: str = "",
        tournament: tuple[UUID, int] | None = None,
        timers: Timers | None = None,
        visibility: str = PUBLIC,
        rematch_of: UUID | None = None,
        reserved: list[str] | None = None,
        ranked: bool = False,
        talk: TalkOptions | None = None,
    ) -> Match:
        """``tournament``: (tournament id, tournament round) of a tournament table, whose
        deals take the tournament round's seeds (R36, ``services.tournaments.seeds``);
        ``visibility``: ``public`` or ``private``; ``rematch_of`` and ``reserved``: a
        rematch's first match and who may take each seat (docs/decisions.md D-table-life);
        ``ranked``: made by a ranked queue (docs/players.md); ``talk``: what the creator
        allows of table talk (R37)."""
        name = checked_title(name, "name")
        if visibility not in VISIBILITIES:
            raise InvalidInputError(f"visibility is public or private, not {visibility!r}")
        if reserved is not None and len(reserved) != 4:
            raise InvalidInputError("a rematch reserves each of the four seats")
        if type(start_level) is not int or not 0 <= start_level <= 12:
            raise InvalidInputError(f"start level must be a rank index 0..12, got {start_level!r}")
        return cls._create(
            ev.MatchCreated,
            id=match_id,
            name=name,
            preset=preset,
            rules=rules.to_mapping(),
            start_level=start_level,
            organiser_token_hash=organiser_token_hash,
            tournament_id=None if tournament is None else tournament[0],
            tournament_round=0 if tournament is None else tournament[1],
            timers=timers.to_mapping() if timers is not None and timers.any else None,
            visibility=visibility,
            rematch_of=rematch_of,
            reserved=reserved,
            ranked=ranked,
            talk=None if talk is None or talk.default else talk.to_mapping(),
            timestamp=now,
        )

    # -- queries ---------------------------------------------------------------------------

    @property
    def seated(self) -> bool:
        return all(s is not None for s in self.seats)

    def sequence(self, round_version: int) -> int:
        """The match's version: how many events the match and all its rounds hold, given
        the current round's version (ignored once that round is recorded). Gap-free,
        one per event, in the order the events were saved (see ``services.history``);
        events that are no move of the game (``MatchEvent.VERSIONED``) take none."""
        finished = sum(r.round_events for r in self.results)
        own = self.version - self.unversioned
        return own + finished + (round_version if self.round_open else 0)

    @property
    def private(self) -> bool:
        return self.visibility == PRIVATE

    def humans(self, team: int | None = None) -> list[int]:
        """The seats a person holds (of ``team``: 0 seats 0 and 2, 1 seats 1 and 3, R2)."""
        return [
            s
            for s, info in enumerate(self.seats)
            if info is not None and info.kind == "human" and (team is None or s % 2 == team)
        ]

    def current_round_id(self) -> UUID | None:
        return round_id(self.id, self.round_number) if self.round_number else None

    # -- commands --------------------------------------------------------------------------

    def take_seat(
        self,
        seat: int,
        player: str,
        kind: str,
        token_hash: str,
        now: datetime,
        account_id: UUID | None = None,
        session_id: UUID | None = None,
        *,
        distinct: bool = False,
    ) -> None:
        """``session_id``: the player's session the token is minted through. ``distinct``:
        a person chose this table, so their name may not look like another seat's (the
        name policy, :func:`domain.names.check_apart`); the service's own seatings — quick
        play, a tournament's tables, a record — seat names chosen elsewhere."""
        if type(seat) is not int or not 0 <= seat <= 3:
            raise InvalidInputError(f"seat must be 0..3, got {seat!r}", rule="R1")
        if kind not in SEAT_KINDS:
            raise InvalidInputError(f"seat kind must be one of {', '.join(SEAT_KINDS)}")
        player = checked_name(player, "name", bot=kind != "human")
        if distinct:
            others = [i.name for i in self.seats if i is not None and isinstance(i.name, str)]
            check_apart(player, others, "name")
        self._check_open()
        if self.seats[seat] is not None:
            raise IllegalMoveError(f"seat {seat} is taken", rule="R1", code="seat-taken")
        self._emit(
            ev.SeatTaken,
            now,
            seat=seat,
            player=player,
            kind=kind,
            token_hash=token_hash,
            account_id=account_id,
            session_id=session_id,
        )

    def make_private(self, now: datetime) -> None:
        """An invite was made: the table is no longer listed (once)."""
        self._check_open()
        if not self.private:
            self._emit(ev.TableMadePrivate, now)

    def leave(self, seat: int, bot: str, now: datetime) -> str | None:
        """The person in ``seat`` leaves the table: before round 1 the seat is free again;
        after, the bot ``bot`` plays it to the end (the table goes on). Answers the bot,
        or None when the seat was freed."""
        self._check_open()
        info = self.seats[seat] if type(seat) is int and 0 <= seat <= 3 else None
        if info is None or info.kind != "human":
            raise IllegalMoveError(
                f"no person sits in seat {seat!r} of this match", rule="R1", code="not-seated"
            )
        if bot not in SEAT_KINDS or bot == "human":
            raise InvalidInputError(f"a seat left is played by a bot, not {bot!r}")
        replaced_by = bot if self.round_number else None
        self._emit(ev.SeatLeft, now, seat=seat, replaced_by=replaced_by)
        return replaced_by

    def resign(self, seat: int, now: datetime) -> bool:
        """R32: ``seat`` resigns for its team. The team concedes — the match ends, the
        other team wins — once each of its seats held by a person has resigned (a bot or
        a seat left concedes with them). Answers whether the match ended."""
        self._check_open()
        if not self.round_number:
            raise IllegalMoveError(
                "the match has not begun: leave the table instead", rule="R32", code="not-begun"
            )
        if seat in self.resigned:
            raise IllegalMoveError(
                f"seat {seat} has resigned already; waiting for its partner",
                rule="R32",
                code="already-resigned",
            )
        self._emit(ev.Resigned, now, seat=seat)
        team = seat % 2
        if all(s in self.resigned for s in self.humans(team)):
            self._emit(ev.MatchFinished, now, reason=RESIGNED, winner=1 - team)
            return True
        return False

    def offer_rematch(self, rematch_id: UUID, seat: int | None, now: datetime) -> None:
        """A rematch of this finished match was opened (once)."""
        if not self.finished:
            raise IllegalMoveError(
                "a rematch follows a finished match (R32)", rule="R32", code="match-not-finished"
            )
        if self.rematch is not None:
            raise IllegalMoveError(
                f"the rematch is match {self.rematch}", rule="R32", code="rematch-exists"
            )
        self._emit(ev.RematchOffered, now, rematch_id=rematch_id, seat=seat)

    def reissue_token(
        self, seat: int, token_hash: str, now: datetime, session_id: UUID | None = None
    ) -> None:
        """A taken seat gets a new token (its old one stops working); ``session_id``: the
        player's session it is minted through."""
        if type(seat) is not int or not 0 <= seat <= 3 or self.seats[seat] is None:
            raise IllegalMoveError(f"seat {seat!r} is not taken", rule="R1", code="seat-free")
        self._emit(
            ev.SeatTokenReissued, now, seat=seat, token_hash=token_hash, session_id=session_id
        )

    def begin_round(self, now: datetime, *, dealer: int | None = None) -> UUID:
        """Open the next round (the service then starts and deals it in the same save).
        ``dealer``: the dealer of the board it plays (R36, docs/decisions.md D-boards),
        instead of the match's (R18, R31)."""
        self._check_open()
        if not self.seated:
            free = [s for s in range(4) if self.seats[s] is None]
            raise IllegalMoveError(
                f"four players are needed; seats {free} are free", rule="R1", code="seats-free"
            )
        if self.round_open:
            raise IllegalMoveError(
                f"round {self.round_number} is still being played",
                rule="R22",
                code="round-in-progress",
            )
        number = self.round_number + 1
        rid = round_id(self.id, number)
        self._emit(
            ev.RoundBegun,
            now,
            number=number,
            round_id=rid,
            dealer=self.dealer if dealer is None else dealer,
            levels=self.levels,
        )
        return rid

    def record_round(
        self, number: int, scored: RoundScored, now: datetime, *, round_events: int
    ) -> None:
        """The policy: RoundScored → levels (R30, R32), next dealer (R31), match end (R32)."""
        self._check_open()
        if not self.round_open or number != self.round_number:
            raise IllegalMoveError(
                f"round {number} is not the open round of this match",
                rule="R34",
                code="round-not-open",
            )
        defenders = scored.dealer % 2
        team_up = defenders if scored.defenders_keep else 1 - defenders
        change = advance_level(
            self.levels[team_up],
            scored.levels_gained,
            self.rules,
            defending=team_up == defenders,
        )
        levels = list(self.levels)
        laps = list(self.laps)
        levels[team_up] = change.level
        laps[team_up] += change.laps
        self._emit(
            ev.RoundRecorded,
            now,
            number=number,
            round_id=round_id(self.id, number),
            round_events=round_events,
            dealer=scored.dealer,
            attackers_total=scored.attackers_total,
            outcome=scored.outcome,
            levels_gained=scored.levels_gained,
            team_up=team_up,
            levels=(levels[0], levels[1]),
            laps=(laps[0], laps[1]),
            next_dealer=scored.next_dealer,
        )
        if change.match_won:
            self._emit(ev.MatchFinished, now, reason="finish_at_A", winner=team_up)
        elif match_over(number, self.rules):
            self._emit(ev.MatchFinished, now, reason="rounds_played", winner=self._leader())

    def finish(self, reason: str, now: datetime, *, entered: Entered | None = None) -> None:
        """The organiser ends the match (wrap rules end by the organiser's limit, R32).
        ``entered``: the result was entered by the organiser (a paper result) — its winner
        stands instead of the team ahead, and the reason says it was entered."""
        self._check_open()
        if entered is None:
            self._emit(ev.MatchFinished, now, reason=reason, winner=self._leader())
            return
        if not reason.startswith(ENTERED_PREFIX) or entered.winner not in (None, 0, 1):
            raise InvalidInputError(
                f"an entered result's reason starts {ENTERED_PREFIX!r}; its winner is 0, 1 or none",
                rule="R32",
            )
        self._emit(ev.MatchFinished, now, reason=reason, winner=entered.winner)

    def record_import(self, digest: str, now: datetime) -> None:
        """Mark a finished match rebuilt from a record as imported (its origin), once."""
        if not self.finished:
            raise IllegalMoveError("only a finished match is imported", rule="R34")
        if self.imported is not None:
            raise IllegalMoveError("the match is marked imported already", rule="R34")
        if not 1 <= len(digest) <= 80:
            raise InvalidInputError("a record digest is 1 to 80 characters")
        self._emit(ev.MatchImported, now, digest=digest)

    def _leader(self) -> int | None:
        a = self.laps[0] * 13 + self.levels[0]
        b = self.laps[1] * 13 + self.levels[1]
        return None if a == b else (0 if a > b else 1)

    def _check_open(self) -> None:
        if self.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
