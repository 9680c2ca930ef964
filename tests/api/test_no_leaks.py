"""RULES R33 over HTTP: no response ever holds a card its viewer may not see (docs/observability.md,
"Writes you can trust").

Random games are played through the API only — each move one a seat's view offers,
picked at random (declare, overcall, pass, bury, lead a single, a pair or a throw that
may fail, follow), with now and then a move the rules refuse and an idempotent replay.
Four seat streams and a spectator stream (SSE) stay open and every frame is read; now and
then a stream resumes with Last-Event-ID (its first frame carries the missed history);
the seat streams' frames are the seat views at every version. After every command of a kind a game
plays seldom — declare, overcall, pass, bury, 炒底, a throw led or failed, a phase's or a
round's first command, a round scored — and after the first two of each common kind in a
round (a single or a pair led, a follow, a trick won) and 15 % of the rest, drawn
from the game's seed (``LEAK_SAMPLE=1``: after every command), every viewer — the four
seats, a spectator and the organiser (who reads as a spectator) — calls every read: its
view (or the public view), its history page (which carries every item since its last
page), the state as of the new version (and, for one reader in turn, of an earlier one),
the match, its rounds and the current round; after the other commands, the seat views
the next move is chosen from. Every response body — the command answers too — is checked against
what the viewer may see at that moment, computed from the aggregates directly (not from
the views):

* **kinds**: every R4 card token anywhere in the JSON is a kind the viewer has seen in
  that round by then: its own hands, the bottom while it was the burier or the 炒底 taker
  (R21, R20), every card played, shown (R17, R20) or shown by a failed throw (R22), the
  bottom's third card when it named trump (R19); everything once the round is scored;
* **copies**: a list of cards holds no more copies of a kind than the viewer has seen at
  once (R3: the two copies of a card are interchangeable, so copies cannot be told
  apart; a kind-level check alone would let a second copy through);
* **exactly**: a seat view's ``hand`` is that seat's hand then, its ``bottom`` the bottom
  exactly when it may see it, its ``visible`` its hand, that bottom and the cards played
  (all 108 once scored); a spectator gets no seat view, a seat no other seat's;
* **secrets**: the deal's seed (hex) appears nowhere before that round's RoundScored;
  no token hash ever; no seat or organiser token except in the answer that issued it.

The captured logs hold no card token and no token. ``LEAK_GAMES`` (default 2) sets the
games, ``LEAK_COMMANDS`` (default 190) the commands per game: round 1 to its end, then
round 2 through its burying and 炒底 window into its first tricks.
"""

from __future__ import annotations

import asyncio
import io
import random
from typing import Any

import httpx
import pytest

import services.history
import services.views
from domain.game.round import Round
from services.game import GameService
from services.sources import token_hash
from tests.api.leak_game import asgi, play_and_watch
from tests.api.leak_truth import CARD_IN_TEXT, GAMES, RULE_SETS, LeakError, Secrets
from tests.apps import make_app
from tests.conftest import FakeClock, examples


def assert_clean_logs(text: str, secrets: Secrets) -> None:
    assert text.strip(), "nothing was logged"
    for token in secrets.all():
        assert token not in text, "a token in the logs"
        assert token_hash(token) not in text, "a token hash in the logs"
    assert "Bearer" not in text
    found = CARD_IN_TEXT.findall(text)
    assert not found, f"card tokens in the logs: {found[:10]}"


@pytest.mark.parametrize("game", range(examples(GAMES)))
def test_no_response_shows_a_card_its_viewer_may_not_see(game: int, logs: io.StringIO) -> None:
    """Game ``game``: its own deck seed, and the rule sets in turn (one game per test, so
    the games run on different workers)."""
    seed = random.Random(f"leak-game:{game}").getrandbits(32)
    checker = asyncio.run(play_and_watch(seed, RULE_SETS[game % len(RULE_SETS)]))
    assert checker.checked["SSE frame"] > 100
    assert checker.checked["GET /state"] > 100
    for kind in ("bury", "lead", "follow", "trick won", "round scored", "the start of playing"):
        assert checker.checked[f"read after {kind}"] >= 1, kind
    assert_clean_logs(logs.getvalue(), checker.secrets)


# -- the checks have teeth ------------------------------------------------------------------------


def test_the_checks_catch_a_bottom_shown_to_every_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Views that show the bottom to every seat are caught (exact and kind checks)."""

    def everyone(round_: Round | None, viewer: int, **_: Any) -> tuple[int, ...] | None:
        return None if round_ is None or round_.dealt is None else tuple(round_.bottom)

    monkeypatch.setattr(services.views, "_visible_bottom", everyone)
    with pytest.raises(LeakError, match="bottom"):
        asyncio.run(play_and_watch(1, {}, 40, to_round_two=False))


def test_the_checks_catch_a_history_that_tells_too_much(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history that shows the buried cards to all is caught by the kind checks; one
    that shows the seed, by the seed search."""

    def cards_for_all(*_: Any) -> frozenset[str]:
        return frozenset({"cards"})

    monkeypatch.setattr(services.history, "_visible", cards_for_all)
    with pytest.raises(LeakError, match=r"never visible|copies"):
        asyncio.run(play_and_watch(2, {}, 60, to_round_two=False))

    def seed_for_all(*_: Any) -> frozenset[str]:
        return frozenset({"seed"})

    monkeypatch.setattr(services.history, "_visible", seed_for_all)
    with pytest.raises(LeakError, match="seed"):
        asyncio.run(play_and_watch(3, {}, 5, to_round_two=False))


# -- tokens handed out once ------------------------------------------------------------------------


def test_a_replayed_key_hands_no_token_to_another_client() -> None:
    """A seat claim (and a match creation) answers its token once. Replaying its
    Idempotency-Key is how *its* client recovers a lost answer, but callers without a
    token share one key scope: another client that sends the same key and body (keys are
    often guessable: "seat-0") must not be handed the token (R33: other seats' tokens
    never appear in any response). Any fix passes: keys scoped by client, keys that
    must be unguessable, or no replay of an issued token to an anonymous caller."""

    async def run() -> None:
        app = make_app(GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock()))

        def client(address: str) -> httpx.AsyncClient:
            transport = httpx.ASGITransport(app=asgi(app), client=(address, 50000))
            return httpx.AsyncClient(transport=transport, base_url="http://test")

        async with app.lifespan(), client("198.51.100.7") as mine, client("203.0.113.9") as other:
            body = {"name": "replayed"}
            created = await mine.post("/v1/matches", json=body, headers={"Idempotency-Key": "m-1"})
            if created.status_code == 201:
                organiser = created.json()["organiserToken"]
                again = await other.post(
                    "/v1/matches", json=body, headers={"Idempotency-Key": "m-1"}
                )
                assert organiser not in again.text, "another client got the organiser token"
            else:  # the key was refused (too guessable): create without one
                assert created.status_code == 422, created.text
                created = await mine.post("/v1/matches", json=body)
            url = f"/v1/matches/{created.json()['matchId']}/seats/0"
            claim = await mine.post(url, json={"name": "p0"}, headers={"Idempotency-Key": "seat-0"})
            if claim.status_code == 201:
                token = claim.json()["token"]
                again = await other.post(
                    url, json={"name": "p0"}, headers={"Idempotency-Key": "seat-0"}
                )
                assert token not in again.text, "another client got seat 0's token"
                assert token_hash(token) not in again.text
            else:
                assert claim.status_code == 422, claim.text

    asyncio.run(run())
