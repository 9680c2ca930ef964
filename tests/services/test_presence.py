"""Presence (docs/decisions.md D-social): derived from streams and commands, pushed to
watchers on each change, moved along by one sweep, hidden by the player's choice, merged
across processes from what each relays."""

from __future__ import annotations

from uuid import uuid4

from services.social.presence import Presence, PresenceBoard


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def board() -> tuple[PresenceBoard, Ticks]:
    ticks = Ticks()
    return PresenceBoard(away_after_s=60, offline_after_s=10, clock=ticks), ticks


def test_online_away_offline_as_streams_and_commands_say() -> None:
    b, ticks = board()
    mei = uuid4()
    heard: list[str] = []
    b.watch(mei, lambda _, p: heard.append(p.state))
    assert b.of(mei).state == "offline"
    b.opened(mei)
    assert b.of(mei).state == "online"
    ticks.now += 61
    assert b.sweep() == 1 and b.of(mei).state == "away"
    b.acted(mei)
    assert b.of(mei).state == "online"
    match = uuid4()
    b.playing(mei, match, public=True)
    assert b.of(mei) == Presence(state="in-match", match_id=str(match))
    b.playing(mei, match, public=False)
    assert b.of(mei) == Presence(state="in-match", match_id=None)
    b.playing(mei, None, public=False)
    ticks.now += 61
    b.sweep()
    b.closed(mei)
    ticks.now += 5
    b.sweep()
    assert b.of(mei).state == "away"  # the last stream closed: not yet offline
    ticks.now += 6
    b.sweep()
    assert b.of(mei).state == "offline"
    assert heard == [
        *("online", "away", "online", "in-match", "in-match"),
        *("online", "away", "offline"),
    ]
    assert b.sweep() == 0  # nothing is kept of an offline player


def test_a_command_alone_is_online_for_a_while() -> None:
    b, ticks = board()
    mei = uuid4()
    b.acted(mei)
    assert b.of(mei).state == "online"
    ticks.now += 61
    b.sweep()
    assert b.of(mei).state == "offline"  # no stream was ever open


def test_appearing_offline_hides_the_player_and_is_relayed() -> None:
    one, _ = board()
    other, _ = board()
    sent: list[bytes] = []
    one.relay = sent.append
    mei = uuid4()
    one.opened(mei)
    one.hide(mei, True)
    assert one.of(mei).state == "offline"
    for message in sent:
        other.heard(message)
    assert other.of(mei).state == "offline"  # hidden there too
    one.hide(mei, False)
    for message in sent[-1:]:
        other.heard(message)
    assert other.of(mei).state == "online"


def test_the_liveliest_process_wins_and_its_own_messages_are_passed_over() -> None:
    one, ticks = board()
    two, _ = board()
    wire: list[bytes] = []
    one.relay = two.relay = wire.append
    mei = uuid4()
    one.opened(mei)
    for message in wire:
        two.heard(message)
        one.heard(message)  # its own: passed over
    assert two.of(mei).state == "online"
    two.opened(mei)
    one.closed(mei)
    ticks.now += 11
    one.sweep()
    for message in wire:
        two.heard(message)
    assert two.of(mei).state == "online"  # two's own stream is still open
    two.heard(b"not json")  # ignored
