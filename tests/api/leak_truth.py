"""What each viewer may see, computed from the aggregates, and the checks of every response
against it (RULES R33; the tests: :mod:`tests.api.test_no_leaks`).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from domain.game.round import Round, RoundPhase, round_id
from domain.rules.cards import card_names
from services.game import GameService, replay
from services.history import match_history
from services.sources import token_hash
from tests.conftest import FakeClock

GAMES = int(os.environ.get("LEAK_GAMES", "2"))
COMMANDS = int(os.environ.get("LEAK_COMMANDS", "190"))
SAMPLE = float(os.environ.get("LEAK_SAMPLE", "0.15"))
"""The share of the common moves (a single or a pair led, a follow, a trick won) after which
every read is made, beyond the first two of each kind in a round; 1: after every command."""
TIMEOUT = 5.0

Json = dict[str, Any]
Viewer = int | None
"""A seat 0..3, or None for a spectator (the organiser reads as one)."""
VIEWERS: tuple[Viewer, ...] = (0, 1, 2, 3, None)
READERS: tuple[tuple[Viewer, Viewer | str], ...] = (
    (0, 0),
    (1, 1),
    (2, 2),
    (3, 3),
    (None, None),
    (None, "organiser"),
)
"""(whose eyes, whose token): the organiser's token reads as a spectator."""
CARD = re.compile(r"(?:10|[2-9JQKA])[SHCD]|[SB]J")
CARD_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])(?:(?:10|[2-9JQKA])[SHCD]|[SB]J)(?![A-Za-z0-9])")
RULE_SETS: tuple[Json, ...] = (
    {},
    {"preset": "tuolaji"},
    {"rules": {"selfOvercall": True, "throwPenaltyPoints": 10}},
    {"rules": {"declareWithJoker": True, "bottomMultiplier": "exponential"}},
)


def is_card(value: object) -> bool:
    return isinstance(value, str) and CARD.fullmatch(value) is not None


def names(cards: Any) -> Counter[str]:
    return Counter(card_names(cards))


def at_most(seen: Counter[str], new: Counter[str]) -> Counter[str]:
    """Kind by kind, the larger count."""
    out = Counter(seen)
    for kind, n in new.items():
        out[kind] = max(out[kind], n)
    return out


# -- what each viewer may see, from the aggregates -------------------------------------------


@dataclass
class Moment:
    """A round at one of its versions, as the rules let each viewer see it."""

    hands: list[Counter[str]]
    bottom: list[Counter[str] | None]
    """Per seat: the bottom when that seat may see it (R21, R20 炒底), else None."""
    played: Counter[str]
    scored: bool
    everything: Counter[str]
    """Once scored: the dealt hands and the dealt bottom (all 108)."""


@dataclass
class RoundTruth:
    number: int
    rid: UUID
    moments: list[Moment] = field(default_factory=list)
    """moments[k - 1]: the round at its version k."""
    seen: dict[Viewer, list[Counter[str]]] = field(default_factory=lambda: {v: [] for v in VIEWERS})
    """seen[viewer][k - 1]: how many copies of each kind the viewer has seen at once, at
    some version up to k."""
    seeds: set[str] = field(default_factory=set)
    at: Round | None = None
    """The round at its last version read, replayed here from its stored events one by one
    (:func:`services.game.replay`, as the service's loads replay them): a version is
    applied once, not replayed from the round's first event for each version."""

    @property
    def scored(self) -> bool:
        return bool(self.moments) and self.moments[-1].scored

    def advance(self, service: GameService, now: Any) -> None:
        done = len(self.moments)
        for stored in service.recorder.select_events(self.rid, gt=done or None):
            self.at = replay(self.at, [service.mapper.to_domain_event(stored)])
            r = self.at
            assert isinstance(r, Round) and r.version == len(self.moments) + 1
            moment = self._moment(r, now)
            self.moments.append(moment)
            if r.dealt is not None:
                self.seeds.add(r.seed_hex.lower())
            public = Counter(moment.played)
            for show in r.bidding.shows:
                public += names(show.cards)
            if r.play is not None:
                for _, attempted in r.play.failed_throws:
                    public += names(attempted)
            if r.bidding.fallback and r.bidding.bottom_card is not None:
                public += names([r.bidding.bottom_card])
            for viewer in VIEWERS:
                if moment.scored:
                    now_seen = moment.everything
                elif viewer is None:
                    now_seen = public
                else:
                    now_seen = moment.hands[viewer] + (moment.bottom[viewer] or Counter()) + public
                history = self.seen[viewer]
                history.append(at_most(history[-1] if history else Counter(), now_seen))

    @staticmethod
    def _moment(r: Round, now: Any) -> Moment:
        if r.dealt is None:
            empty: Counter[str] = Counter()
            return Moment([Counter() for _ in range(4)], [None] * 4, empty, False, empty)
        bottom = names(r.bottom)
        burying = r.phase is RoundPhase.BURYING
        scored = r.result is not None
        visible = [
            bottom
            if scored or (burying and r.bidding.burier == seat) or r.buried_by == seat
            else None
            for seat in range(4)
        ]
        everything: Counter[str] = names(r.dealt.bottom)
        for hand in r.dealt.hands:
            everything += names(hand)
        return Moment(
            hands=[names(r.hand_at(seat, now)) for seat in range(4)],
            bottom=visible,
            played=names(r.play.played) if r.play is not None else Counter(),
            scored=scored,
            everything=everything,
        )


@dataclass
class Truth:
    service: GameService
    match_id: UUID
    clock: FakeClock
    rounds: dict[int, RoundTruth] = field(default_factory=dict)
    scored_version: dict[int, int] = field(default_factory=dict)
    """Round number → the match version of its ``RoundScored`` (a stream's frame for a
    version between two commands' answers knows exactly what was scored by then)."""

    def refresh(self, version: int) -> None:
        match = self.service.get_match(self.match_id)
        for n in range(1, match.round_number + 1):
            rt = self.rounds.get(n)
            if rt is None:
                rt = self.rounds[n] = RoundTruth(n, round_id(self.match_id, n))
            rt.advance(self.service, self.clock())
            if rt.scored and n not in self.scored_version:
                self.scored_version[n] = self._version_of_scoring(n)

    def _version_of_scoring(self, number: int) -> int:
        after = 0
        while True:
            page = match_history(self.service, self.match_id, None, after=after, limit=1000)
            for item in page.items:
                if item.type == "RoundScored" and item.round == number:
                    return item.version
            if not page.more:
                raise AssertionError(f"round {number} is scored but has no RoundScored")
            after = page.next

    def scored_now(self) -> frozenset[int]:
        return frozenset(n for n, rt in self.rounds.items() if rt.scored)

    def scored_at(self, version: int) -> frozenset[int]:
        return frozenset(n for n, v in self.scored_version.items() if v <= version)


# -- the checks ------------------------------------------------------------------------------------


@dataclass
class Secrets:
    organiser: str = ""
    seats: list[str] = field(default_factory=list)

    def all(self) -> list[str]:
        return [t for t in (self.organiser, *self.seats) if t]


class LeakError(AssertionError):
    """A response holds something its viewer may not see."""


@dataclass
class Checker:
    truth: Truth
    secrets: Secrets
    checked: Counter[str] = field(default_factory=Counter)

    def response(
        self,
        what: str,
        viewer: Viewer,
        status: int,
        text: str,
        *,
        scored: frozenset[int] | None = None,
        sent: frozenset[str] = frozenset(),
        issued: str | None = None,
        headers: httpx.Headers | None = None,
    ) -> None:
        """Check one response (or SSE frame) body as seen by ``viewer``. ``scored``: the
        rounds scored when it was made (default: now); ``sent``: card kinds the request
        itself named (a refusal may name them back); ``issued``: the one token this
        answer hands out."""
        self.checked[what] += 1
        scored = self.truth.scored_now() if scored is None else scored
        where = f"{what} for viewer {viewer}"
        raw = text + "".join(f"\n{k}: {v}" for k, v in (headers or {}).items())
        for token in self.secrets.all():
            if token != issued and token in raw:
                raise LeakError(f"{where}: a token appears\n{raw[:400]}")
            if token_hash(token) in raw:
                raise LeakError(f"{where}: a token hash appears\n{raw[:400]}")
        lowered = raw.lower()
        for n, rt in self.truth.rounds.items():
            if n not in scored:
                for seed in rt.seeds:
                    if seed in lowered:
                        raise LeakError(f"{where}: round {n}'s seed appears before RoundScored")
        if not text.strip():
            return
        body = json.loads(text)
        if isinstance(body, dict) and "status" in body and "detail" in body and status >= 400:
            self._problem(where, viewer, body, sent)
            return
        self._walk(where, viewer, body, None, scored)

    def _problem(self, where: str, viewer: Viewer, body: Json, sent: frozenset[str]) -> None:
        """A refusal names the rule and the cards: only cards the caller sent or may see."""
        text = f"{body.get('title', '')} {body.get('detail', '')}"
        current = max(self.truth.rounds) if self.truth.rounds else None
        for token in CARD_IN_TEXT.findall(text):
            if token in sent or current is None:
                continue
            rt = self.truth.rounds[current]
            seen = rt.seen[viewer][-1] if rt.seen[viewer] else Counter()
            if not rt.scored and seen[token] == 0:
                raise LeakError(f"{where}: the problem names {token}, unseen by the viewer: {text}")

    # context: ("view", round, version) | ("item", round) | ("revealed", round) | None

    def _walk(
        self,
        where: str,
        viewer: Viewer,
        node: Any,
        ctx: tuple[str, int, int] | None,
        scored: frozenset[int],
    ) -> None:
        if isinstance(node, dict):
            if node.get("kind") in ("seat", "public") and "versions" in node:
                ctx = self._view(where, viewer, node, scored)
            elif {"aggregate", "aggregateVersion", "type", "data"} <= node.keys():
                if node["aggregate"] == "round" and isinstance(node.get("round"), int):
                    ctx = ("item", node["round"], 0)
                else:
                    ctx = None
            for key, value in node.items():
                child = ctx
                if key == "revealed" and value is not None:
                    view = node.get("view") or {}
                    child = ("revealed", int(view.get("roundNumber") or 0), 0)
                self._walk(where, viewer, value, child, scored)
            return
        if isinstance(node, list):
            cards = [x for x in node if is_card(x)]
            if cards and len(cards) == len(node):
                self._cards(where, viewer, Counter(cards), ctx, scored)
                return
            for value in node:
                self._walk(where, viewer, value, ctx, scored)
            return
        if is_card(node):
            self._cards(where, viewer, Counter([node]), ctx, scored)

    def _allowed(
        self, viewer: Viewer, ctx: tuple[str, int, int] | None, scored: frozenset[int]
    ) -> Counter[str] | None:
        """Copies of each kind the viewer may see in this part (None: everything)."""
        if ctx is None:
            return Counter()
        kind, number, version = ctx
        rt = self.truth.rounds.get(number)
        if rt is None:
            return Counter()
        if number in scored:
            return None
        if kind == "revealed":
            return Counter()  # a round's hidden cards before it is scored
        seen = rt.seen[viewer]
        if not seen:
            return Counter()
        if kind == "view" and 1 <= version <= len(seen):
            return seen[version - 1]
        return seen[-1]  # a history item: what the viewer has seen of the round so far

    def _cards(
        self,
        where: str,
        viewer: Viewer,
        cards: Counter[str],
        ctx: tuple[str, int, int] | None,
        scored: frozenset[int],
    ) -> None:
        allowed = self._allowed(viewer, ctx, scored)
        if allowed is None:
            return
        for kind, n in cards.items():
            if allowed[kind] == 0:
                raise LeakError(f"{where}: {kind} in {ctx}, never visible to this viewer")
            if n > allowed[kind]:
                raise LeakError(
                    f"{where}: {n} copies of {kind} in one list in {ctx}; the viewer has "
                    f"seen {allowed[kind]}"
                )

    def _view(
        self, where: str, viewer: Viewer, view: Json, scored: frozenset[int]
    ) -> tuple[str, int, int] | None:
        """The exact checks of a view; its context for the kind checks."""
        number = int(view.get("roundNumber") or 0)
        version = (view.get("versions") or {}).get("roundVersion")
        if view["kind"] == "public":
            for secret in ("hand", "bottom", "visible", "legal"):
                if secret in view:
                    raise LeakError(f"{where}: a public view with {secret!r}")
        elif viewer is None or view.get("seat") != viewer:
            raise LeakError(f"{where}: the view of seat {view.get('seat')}")
        if not number or not isinstance(version, int):
            return None
        rt = self.truth.rounds[number]
        moment = rt.moments[version - 1]
        if view["kind"] == "seat" and viewer is not None:
            if Counter(view["hand"]) != moment.hands[viewer]:
                raise LeakError(f"{where}: hand {view['hand']} is not seat {viewer}'s hand then")
            bottom = moment.bottom[viewer]
            if (view["bottom"] is None) != (bottom is None) or (
                bottom is not None and Counter(view["bottom"]) != bottom
            ):
                raise LeakError(f"{where}: bottom {view['bottom']}, the rules say {bottom}")
            visible = (
                moment.everything
                if moment.scored
                else moment.hands[viewer] + (bottom or Counter()) + moment.played
            )
            if Counter(view["visible"]) != visible:
                raise LeakError(f"{where}: visible {sorted(view['visible'])} is not {visible}")
        return ("view", number, version)
