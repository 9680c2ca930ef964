"""The events of a :class:`~domain.game.match.Match`, past tense, each with its ``apply``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.game.timers import Timers
from domain.rules.ruleset import RuleSet
from domain.talk.options import TalkOptions
from domain.values import Value

if TYPE_CHECKING:
    from domain.game.match import Match


class SeatInfo(Value):
    """Who sits in a seat: a display name, ``human`` or a bot kind, and the hash of the
    seat token (never the token itself)."""

    __slots__ = ("kind", "name", "token_hash")

    def __init__(self, name: str, kind: str, token_hash: str) -> None:
        self.name = name
        self.kind = kind
        self.token_hash = token_hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SeatInfo) and (self.name, self.kind, self.token_hash) == (
            other.name,
            other.kind,
            other.token_hash,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.token_hash))


def _minted_through(match: Match, seat: int, session_id: UUID | None) -> None:
    """The seat's current token was minted through ``session_id`` (None: no session)."""
    if session_id is not None:
        match.minted_through = {**match.minted_through, seat: session_id}
    elif seat in match.minted_through:
        match.minted_through = {s: x for s, x in match.minted_through.items() if s != seat}


class MatchEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()
    VERSIONED: ClassVar[bool] = True
    """False for an event that is no move of the game and takes no match version (R34):
    it may come while a round is open without moving the round's events (a seat's token
    re-issued); history, frames and versions pass over it."""

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, match: Match) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class MatchCreated(Aggregate.Created):
    """A match with its rule set, fixed for good (RULES §10). ``organiser_token_hash`` is
    the sha256 of the organiser's token (admin actions), never shown; "" when none.
    Version 2 says whether the table is listed (``visibility``) and, for a rematch, the
    match it follows and who may take each seat (docs/decisions.md D-table-life);
    version 1 events are read as public tables (:meth:`upcast_v1_v2`). Version 3 says
    whether the match is ranked (made by a ranked queue, docs/players.md); older ones are
    not (:meth:`upcast_v2_v3`). Version 4 says what the creator allows of table talk
    (``talk``, R37); older ones allow the defaults (:meth:`upcast_v3_v4`)."""

    class_version: ClassVar[int] = 4
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("organiser_token_hash", "reserved")
    name: str
    preset: str | None
    rules: dict[str, bool | int | str | None]
    start_level: int
    organiser_token_hash: str = ""
    tournament_id: UUID | None = None
    """The tournament of a tournament table (R36); None for other matches."""
    tournament_round: int = 0
    timers: dict[str, int] | None = None
    """Turn time limits in ms (``domain.game.timers``); None: no limits."""
    visibility: str = "public"
    """``public`` (listed, seats claimed by anyone) or ``private`` (never listed; seats
    by an invite code or the organiser)."""
    rematch_of: UUID | None = None
    """The finished match this one is the rematch of (its seats, its rules)."""
    reserved: list[str] | None = None
    """A rematch's seats kept for their holders, per seat: ``account:<id>`` (a player),
    ``token:<seat token hash>`` (a guest's token of the first match) or "" (a bot,
    seated at once). Never shown."""
    ranked: bool = False
    """Made by a ranked queue: four players of close rating, teams balanced (rated)."""
    talk: dict[str, bool] | None = None
    """What the creator allows of table talk (``domain.talk.options``); None: the
    defaults (quick chat, spectators too; no free text)."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A match created before private tables: public, no rematch."""
        state["visibility"] = "public"
        state["rematch_of"] = None
        state["reserved"] = None

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A match created before ranked play: not ranked."""
        state["ranked"] = False

    @staticmethod
    def upcast_v3_v4(state: dict[str, Any]) -> None:
        """A match created before table talk: the default talk options."""
        state["talk"] = None

    def apply(self, aggregate: Any) -> None:
        m: Match = aggregate
        # A public table that is no rematch keeps the class's defaults (``Match``): no
        # memory per match for what most matches never use.
        if self.visibility != m.visibility:
            m.visibility = self.visibility
        if self.rematch_of is not None:
            m.rematch_of = self.rematch_of
        if self.reserved:
            m.reserved = tuple(self.reserved)
        if self.ranked:
            m.ranked = True
        if self.talk:
            m.talk = TalkOptions.from_mapping(self.talk)
        m.name = self.name
        m.preset = self.preset
        m.rules = RuleSet.from_mapping(self.rules)
        m.seats = [None, None, None, None]
        m.levels = (self.start_level, self.start_level)
        m.laps = (0, 0)
        m.dealer = None
        m.round_number = 0
        m.round_open = False
        m.results = []
        m.winner = None
        m.finished = False
        m.organiser_token_hash = self.organiser_token_hash
        m.tournament_id = self.tournament_id
        m.tournament_round = self.tournament_round
        m.timers = Timers.from_mapping(self.timers)
        m.imported = None


class SeatTaken(MatchEvent):
    """A player (or a bot) took a seat (R1). Version 2 names the player's
    account; version 1 events are read with none (:meth:`upcast_v1_v2`). Version 3 names
    the player session the seat's token was minted through (the token works while that
    session does, docs/players.md); version 2 events are read with none."""

    class_version: ClassVar[int] = 3
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("token_hash", "account_id", "session_id")
    """Never public: the account id would link a player's matches (after an erasure too);
    the operator's feed reads it (docs/players.md)."""
    PERSONAL_FIELDS: ClassVar[dict[str, str]] = {"player": "account_id"}
    """Stored encrypted under the key of the account named by ``account_id`` (when set:
    a player's seat; docs/players.md crypto-shredding)."""
    seat: int
    player: str
    kind: str
    token_hash: str
    account_id: UUID | None = None
    """The player's account, when a player (not a guest or a bot) took the seat."""
    session_id: UUID | None = None
    """The player's session the seat token was minted through; None: a guest's, a bot's,
    or a token that answers to no session (docs/players.md)."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A seat taken before players existed: a guest or a bot, no account."""
        state["account_id"] = None

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A seat token minted before tokens were tied to a session: tied to none."""
        state["session_id"] = None

    def apply_to(self, match: Match) -> None:
        match.seats[self.seat] = SeatInfo(self.player, self.kind, self.token_hash)
        if self.account_id is not None:
            match.accounts = {**match.accounts, self.seat: self.account_id}
        _minted_through(match, self.seat, self.session_id)


class SeatTokenReissued(MatchEvent):
    """A new token for a seat — a tournament organiser re-issued the table's tokens
    (docs/tournaments.md), or a player asked for a fresh seat token (docs/players.md): the old one
    stops working. No move of the game: it takes no match version (``VERSIONED``), so it
    may come in the middle of a round. Version 2 names the player session the new token
    was minted through (as :class:`SeatTaken` v3); version 1 events are read with none."""

    class_version: ClassVar[int] = 2
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("token_hash", "session_id")
    VERSIONED: ClassVar[bool] = False
    seat: int
    token_hash: str
    session_id: UUID | None = None
    """The player's session the new token was minted through; None: tied to none."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A token re-issued before tokens were tied to a session: tied to none."""
        state["session_id"] = None

    def apply_to(self, match: Match) -> None:
        info = match.seats[self.seat]
        assert info is not None
        match.seats[self.seat] = SeatInfo(info.name, info.kind, self.token_hash)
        _minted_through(match, self.seat, self.session_id)
        match.unversioned += 1


class RoundBegun(MatchEvent):
    """The match opened round ``number`` (its own aggregate ``round_id``)."""

    number: int
    round_id: UUID
    dealer: int | None
    levels: tuple[int, int]

    def apply_to(self, match: Match) -> None:
        match.round_number = self.number
        match.round_open = True


class RoundRecorded(MatchEvent):
    """The policy carried ``RoundScored`` into the match: levels and the next dealer
    (R30–R32), in the same transaction as the round's last events."""

    number: int
    round_id: UUID
    round_events: int
    """The round's final version: how many events the round holds (for match versions)."""
    dealer: int
    attackers_total: int
    outcome: str
    levels_gained: int
    team_up: int
    levels: tuple[int, int]
    laps: tuple[int, int]
    next_dealer: int

    def apply_to(self, match: Match) -> None:
        match.levels = (self.levels[0], self.levels[1])
        match.laps = (self.laps[0], self.laps[1])
        match.dealer = self.next_dealer
        match.round_open = False
        match.results.append(self)


class MatchFinished(MatchEvent):
    """R32: the match is over (finish_at_A won, rounds:N played, or the organiser ended it)."""

    reason: str
    winner: int | None

    def apply_to(self, match: Match) -> None:
        match.finished = True
        match.winner = self.winner


class MatchImported(MatchEvent):
    """The match was not played here: it is a record imported (``POST /v1/records?store=
    true``) whose canonical digest is ``digest``; the event's timestamp is when. Its seeds
    and moves are the importer's (R35 proves them consistent, not drawn here). Saved with
    the replayed events, after them; public."""

    digest: str

    def apply_to(self, match: Match) -> None:
        match.imported = self


class TableMadePrivate(MatchEvent):
    """The table became private (an invite code was made for it): no longer listed, its
    free seats taken only with a code or by the organiser (docs/decisions.md
    D-table-life). No move of the game: it takes no match version."""

    VERSIONED: ClassVar[bool] = False

    def apply_to(self, match: Match) -> None:
        match.visibility = "private"
        match.unversioned += 1


class SeatLeft(MatchEvent):
    """The seat's holder left the table (docs/decisions.md D-table-life): before round 1
    the seat is free again (``replaced_by`` None); after, the bot ``replaced_by`` plays
    it for the rest of the match, and the seat's token stops working. No move of the
    game: it takes no match version (it may come mid-round)."""

    VERSIONED: ClassVar[bool] = False
    seat: int
    replaced_by: str | None

    def apply_to(self, match: Match) -> None:
        info = match.seats[self.seat]
        assert info is not None
        match.accounts = {s: a for s, a in match.accounts.items() if s != self.seat}
        _minted_through(match, self.seat, None)
        if self.replaced_by is None:
            match.seats[self.seat] = None
        else:
            match.seats[self.seat] = SeatInfo(info.name, self.replaced_by, "")
            match.left = {**match.left, self.seat: self.replaced_by}
        match.unversioned += 1


class Resigned(MatchEvent):
    """A seat resigned the match for its team (R32): the team concedes once each of its
    seats held by a person has resigned — a bot partner concedes with them — and
    ``MatchFinished`` (``resigned``) follows in the same save. No move of the game: it
    takes no match version."""

    VERSIONED: ClassVar[bool] = False
    seat: int

    def apply_to(self, match: Match) -> None:
        match.resigned = match.resigned | {self.seat}
        match.unversioned += 1


class RematchOffered(MatchEvent):
    """A seat of this finished match asked for a rematch: match ``rematch_id``, same
    seats and rules, starts once each person of this table took their seat there. No
    move of the game: it takes no match version."""

    VERSIONED: ClassVar[bool] = False
    rematch_id: UUID
    seat: int | None
    """The seat that asked (None: the organiser)."""

    def apply_to(self, match: Match) -> None:
        match.rematch = self.rematch_id
        match.unversioned += 1
