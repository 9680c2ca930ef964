"""A rated match tells each of its players how their rating moved (docs/decisions.md
D-career), on every store: one ``RatingChanged`` per player and rated match, none for a
tournament table until its round completes (R36), the same on the player's stream
(``rating-changed`` frames) and on a webhook subscription — and nothing again after the
views are rebuilt, the policy is run by a second process, or its command is sent again."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic

from domain.accounts.rating_change import RatingChanged
from domain.accounts.webhooks import Enqueued
from infra.careerviews import open_career_view
from infra.ratingviews import open_ratings_view
from infra.store import outbox_env
from services.accounts.feed import PlayerFeed
from services.career.notice import RatingNotice
from services.career.notices import NoteRatingChanges, RatingNotices, moves_at
from services.career.reads import CareerModels
from services.career.rebuild import CareerRebuild, follower
from services.career.rows import MatchRow
from services.career.view import CareerView, MemoryCareerView
from services.game import GameService
from services.projections import rebuild
from services.ratings.boards import RatingModels
from services.ratings.rebuild import RatingsRebuild
from services.ratings.rows import HistoryRow
from services.ratings.runner import RatingsFollower
from services.ratings.view import MemoryRatingsView, RatingsView
from services.webhooks.outbox import WebhookOutbox
from tests.career.population import Careers
from tests.career.recorded import recorded, write_steps
from tests.commands import bus_of, register_webhook
from tests.conftest import Backend

Pair = tuple[UUID, UUID]
"""(player, match)."""


def models(backend: Backend, service: GameService) -> tuple[CareerModels, RatingModels]:
    career: CareerView
    ratings: RatingsView
    if backend.name == "popo":
        career, ratings = MemoryCareerView(), MemoryRatingsView()
    else:
        career = open_career_view(service, create=True)
        ratings = open_ratings_view(service, create=True)
    return (
        CareerModels(service, career, follower(service, career)),
        RatingModels(service, ratings, RatingsFollower(service, ratings)),
    )


def notices(service: GameService) -> list[RatingChanged]:
    found = service.recorder.select_notifications(0, 100_000, topics=[get_topic(RatingChanged)])
    events: list[Any] = [service.mapper.to_domain_event(n) for n in found]
    return events


def rated(ratings: RatingModels) -> set[Pair]:
    """Every (player, match) the ratings rated, as they stand."""
    return {(r.player_id, r.match_id) for r in ratings.view.rows() if isinstance(r, HistoryRow)}


def test_one_notice_per_player_and_rated_match_on_stream_and_webhook(backend: Backend) -> None:
    service = backend.service()
    register_webhook(service, "https://push.example/hook", "s" * 32, ("rating-changed",))
    career, ratings = models(backend, service)
    policy = RatingNotices(bus_of(service), career, ratings)
    seen: dict[str, set[Pair]] = {}

    def until_held(pop: Careers) -> None:
        policy.catch_up()
        seen["held"] = {(n.player_id, n.match_id) for n in notices(service)}
        seen["rated"] = rated(ratings)

    # the career population (tests.career.recorded) written a match at a time, the policy
    # run after each: it writes the notices
    recording = recorded()
    write_steps(recording, service, backend.clock, policy.catch_up, until_held=until_held)
    pop = recording.population
    policy.catch_up()
    sent = Counter((n.player_id, n.match_id) for n in notices(service))
    assert set(sent.values()) == {1}  # once each
    # R36: the tournament table is rated at its finish, told when its round completes
    held = {(p, m) for p, m in seen["rated"] if m == pop.held}
    assert len(held) == 4 and not held & seen["held"]
    # every rated match of every player, told as it finished (the erased player heard
    # nothing after the erasure; their rows are gone from the ratings)
    everyone = {(p, m) for p, m in sent if p != pop.erased}
    assert everyone == rated(ratings)
    assert {m for p, m in sent if p == pop.erased} <= set(pop.base.rated)
    positions = sorted(
        {r.released for r in career.view.rows() if isinstance(r, MatchRow) and r.released}
    )
    moves = tuple(m for at in positions for m in moves_at(career, ratings, at))
    assert {(m.player_id, m.match_id) for m in moves} == everyone

    # the player's stream: a frame per rated match of theirs, the notice as sent
    a = pop.people[0].id
    feed = PlayerFeed(service, a, 0)
    frames = []
    while True:
        batch = feed.poll()
        frames += [f for f in batch if f.kind == "rating-changed"]
        if feed.position >= (service.recorder.max_notification_id() or 0):
            break
    told = [msgspec.convert(f.data, RatingNotice) for f in frames]
    assert sorted(t.match_id for t in told) == sorted(str(m) for p, m in sent if p == a)
    assert all(t.delta == t.rating_after - t.rating_before for t in told)
    assert all("等级分" in t.text.zh_cn and "rating" in t.text.en for t in told)

    # the webhook: a delivery per player and rated match
    outbox = WebhookOutbox(outbox_env(backend.settings), leader=service)
    try:
        outbox.catch_up()
        assert deliveries(outbox) == Counter((str(p), str(m)) for p, m in sent)

        # rebuilt views, a second process's policy, the command again: nothing new
        for projection in (
            CareerRebuild(backend.service(), career.view),
            RatingsRebuild(backend.service(), ratings.view, "monthly"),
        ):
            done, _ = rebuild(service, [projection])
            for p in done:
                p.store()  # type: ignore[attr-defined]
        again = RatingNotices(bus_of(backend.service()), *models(backend, service))
        assert again.catch_up() == 0 and policy.catch_up() == 0
        last = service.recorder.max_notification_id() or 0
        assert bus_of(service).execute(NoteRatingChanges(last + 1, moves)).noted == 0
        outbox.catch_up()
        assert Counter(n.match_id for n in notices(service)) == Counter(m for _, m in sent)
        assert sum(deliveries(outbox).values()) == sum(sent.values())
    finally:
        outbox.close()


def deliveries(outbox: WebhookOutbox) -> Counter[tuple[str, str]]:
    """The outbox's ``rating-changed`` deliveries: (player, match) each."""
    found = outbox.recorder.select_notifications(0, 100_000, topics=[get_topic(Enqueued)])
    out: Counter[tuple[str, str]] = Counter()
    for n in found:
        event: Any = outbox.mapper.to_domain_event(n)
        body = json.loads(event.body)
        if body["kind"] == "rating-changed":
            out[body["playerId"], body["data"]["matchId"]] += 1
    return out
