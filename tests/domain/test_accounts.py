"""The players' aggregates (domain/accounts): accounts and their sessions and seats,
tickets, invites and webhook queues — given/when/then, one row per fact."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest

from domain.accounts.account import MAX_SESSIONS, Account
from domain.accounts.invite import Invite, invite_id, normal_code
from domain.accounts.ticket import Ticket
from domain.accounts.webhooks import Queue, Subscription
from domain.rules.errors import InvalidInputError
from tests.conftest import T0, given, kinds, rejects, when

A, S1, S2, M1, M2, T1 = (UUID(int=n) for n in range(1, 7))


def account() -> Account:
    return given(Account.create(A, "Mei", "en", S1, "h1", "phone", T0))


def test_sessions_open_rotate_and_end() -> None:
    a = account()
    assert kinds(when(a, lambda: a.open_session(S2, "h2", "tablet", T0))) == ["SessionOpened"]
    a = given(a)
    assert a.session_of("h2", str.__eq__) == S2
    assert kinds(when(a, lambda: a.rotate(S2, "h3", T0))) == ["SessionTokenRotated"]
    a = given(a)
    assert (a.session_of("h2", str.__eq__), a.session_of("h3", str.__eq__)) == (None, S2)
    when(a, lambda: a.end_session(S1, T0))
    a = given(a)
    assert a.session_of("h1", str.__eq__) is None
    rejects(a, lambda: a.end_session(S1, T0), "no-such-session")
    rejects(a, lambda: a.rotate(S1, "h4", T0), "no-such-session")


def test_at_most_max_sessions() -> None:
    a = account()
    for n in range(MAX_SESSIONS - 1):
        a.open_session(UUID(int=100 + n), f"x{n}", "", T0)
    a = given(a)
    rejects(a, lambda: a.open_session(UUID(int=999), "y", "", T0), "too-many-sessions")


def test_one_seat_per_match_and_one_ticket_at_a_time() -> None:
    a = account()
    a.claim_seat(M1, 2, T0)
    a = given(a)
    rejects(a, lambda: a.claim_seat(M1, 0, T0), "already-seated")  # R1
    a.claim_seat(M2, 0, T0)
    a.queue(T1, T0)
    a = given(a)
    rejects(a, lambda: a.queue(UUID(int=77), T0), "already-queued")
    a.claim_seat(UUID(int=88), 1, T0, ticket_id=T1)  # the ticket seated it: free again
    a = given(a)
    assert a.ticket is None and a.seats == {M1: 2, M2: 0, UUID(int=88): 1}


def test_erasure_ends_every_session_once() -> None:
    a = account()
    assert kinds(when(a, lambda: a.erase(T0))) == ["AccountErased"]
    a = given(a)
    assert a.sessions == {} and a.erased
    rejects(a, lambda: a.erase(T0), "player-erased")


@pytest.mark.parametrize(
    ("name", "locale", "label"),
    [
        ("", "en", ""),
        ("   ", "en", ""),
        ("x" * 101, "en", ""),
        ("Mei", "fr", ""),
        ("Mei", "en", "l" * 101),
    ],
)
def test_bad_accounts_are_invalid(name: str, locale: str, label: str) -> None:
    with pytest.raises(InvalidInputError):
        Account.create(A, name, locale, S1, "h", label, T0)


def test_a_ticket_closes_once() -> None:
    t = given(Ticket.open(T1, A, M1, None, None, None, "heuristic", T0))
    t.matched(M2, 3, T0)
    t = given(t)
    assert (t.status, t.match_id, t.seat) == ("matched", M2, 3)
    rejects(t, lambda: t.cancel(T0), "ticket-closed")
    rejects(t, lambda: t.matched(M2, 1, T0), "ticket-closed")


@pytest.mark.parametrize(
    ("partner", "bots_ms", "kind"),
    [
        (A, None, "heuristic"),
        (None, -1, "heuristic"),
        (None, 3_600_001, "heuristic"),
        (None, 0, "x"),
    ],
)
def test_bad_tickets_are_invalid(partner: UUID | None, bots_ms: int | None, kind: str) -> None:
    with pytest.raises(InvalidInputError):
        Ticket.open(T1, A, M1, None, partner, bots_ms, kind, T0)


@pytest.mark.parametrize(
    ("code", "normal"),
    [("k7qx-m2pa", "K7QXM2PA"), ("K7QX M2PA", "K7QXM2PA"), ("K7QXM2PA", "K7QXM2PA")],
)
def test_invite_codes_are_read_forgivingly(code: str, normal: str) -> None:
    assert normal_code(code) == normal and invite_id(code) == invite_id(normal)


@pytest.mark.parametrize("code", ["K7QX-M2P", "K7QX-M2PA1", "IOIO-1010", "K7QX-M2P!"])
def test_codes_that_cannot_be_are_invalid(code: str) -> None:
    with pytest.raises(InvalidInputError):
        normal_code(code)


def test_an_invite_expires() -> None:
    invite = given(Invite.create("K7QXM2PA", M1, timedelta(minutes=5), "organiser", T0))
    invite.check_open(T0 + timedelta(minutes=4))
    rejects(invite, lambda: invite.check_open(T0 + timedelta(minutes=5)), "invite-expired")


def test_a_queue_sends_its_head_until_delivered() -> None:
    q = given(Queue.open(A, "player:x", T0))
    q.enqueue("match-found", "{}", T0)
    q.enqueue("your-turn", "{}", T0)
    q = given(q)
    head = q.pending()
    assert head is not None and head.seq == 1
    q.failed(1, 503, "HTTP 503", T0 + timedelta(seconds=1), T0)
    q = given(q)
    again = q.pending()
    assert again is not None and again.seq == 1 and q.next_at == T0 + timedelta(seconds=1)
    q.delivered(1, 204, T0)
    q = given(q)
    nxt = q.pending()
    assert nxt is not None and nxt.seq == 2 and q.next_at is None
    assert [a.status for a in q.items[0].attempts] == [503, 204]


@pytest.mark.parametrize(
    ("url", "secret", "kinds_"),
    [
        ("ftp://x", "s" * 16, ("your-turn",)),
        ("https://x", "short", ("your-turn",)),
        ("https://x", "s" * 16, ()),
        ("https://x", "s" * 16, ("everything",)),
    ],
)
def test_bad_subscriptions_are_invalid(url: str, secret: str, kinds_: tuple[str, ...]) -> None:
    with pytest.raises(InvalidInputError):
        Subscription.register(A, url, secret, kinds_, T0)
