"""A generated population of finished matches of every kind, made through the services
(no HTTP): plain matches of each preset between bot kinds, a quick-play match (the lobby
seats a player with bots), a tournament whose round is complete and one whose table is
finished while its round is not (R36), a match ended in its first round (R32) and an
imported record."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from uuid import UUID

from domain.rules.ruleset import STANDARD, MatchEnd, MatchEndKind, preset
from services.access import Credential
from services.accounts.commands import ErasePlayer
from services.accounts.lobby import TicketRequest
from services.bots import next_move
from services.game import GameService
from services.records.export import export_match
from tests.archive.matches import bot_teams, ended_match
from tests.commands import (
    act,
    bus_of,
    claim_as_player,
    claim_deadlines,
    create_match,
    create_player,
    import_record,
    open_ticket,
    run_bots,
    take_seat,
)
from tests.driving import play_round
from tests.tournaments import Tournaments

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
EVERY_SEAT = {seat: "random" for seat in range(4)}


@dataclass
class Population:
    service: GameService
    plain: list[UUID] = field(default_factory=list)
    quick_play: UUID | None = None
    tournament: UUID | None = None
    embargoed: UUID | None = None
    """A finished table whose tournament round is not complete (R36)."""
    ended: UUID | None = None
    imported: UUID | None = None
    player: UUID | None = None
    """The quick-play match's person (an account)."""
    player_token: str = ""
    rated: UUID | None = None
    """A match of two people and two bots (rated, D-ratings), one of them erased since."""
    kept: UUID | None = None
    """Its person who is not erased."""
    erased: UUID | None = None
    """Its person erased after it."""


def rules_of(name: str, rounds: int) -> object:
    return dataclasses.replace(preset(name), match_end=MatchEnd(MatchEndKind.ROUNDS, rounds))


def kinds_match(service: GameService, preset_name: str, kinds: list[str], rounds: int) -> UUID:
    """A match of bots of ``kinds`` (seats 0–3) played to its end (``rounds:N``)."""
    mid = create_match(
        service,
        rules_of(preset_name, rounds),  # type: ignore[arg-type]
        name=f"{preset_name} {'/'.join(kinds)}",
        preset=preset_name,
    )
    for seat, kind in enumerate(kinds):
        take_seat(service, mid, seat, f"{kind}{seat}", kind)
    run_bots(service, mid, 100_000)
    assert service.get_match(mid).finished
    return mid


def play_out(service: GameService, mid: UUID) -> None:
    """Every seat of ``mid`` — people's too — moves as a random bot until the match ends."""
    for _ in range(100_000):
        match = service.get_match(mid)
        if match.finished:
            return
        round_ = service.current_round(match)
        assert round_ is not None
        now = service.clock()
        move = next_move(match, round_, now, EVERY_SEAT)
        if move is None:
            claim_deadlines(service, mid)
            continue
        act(service, mid, move.seat, move.action)
    raise AssertionError("the match did not end")


def quick_play(service: GameService) -> tuple[UUID, UUID, str]:
    """A player's quick-play ticket seated with bots at once (docs/players.md): the match,
    the player and the player's token."""
    account, token = create_player(service, "Mei", "en")
    rules = rules_of("standard", 1)
    _, made = open_ticket(
        service,
        TicketRequest(account.id, rules, "standard", None, 0, "heuristic"),  # type: ignore[arg-type]
    )
    assert made is not None
    play_out(service, made)
    return made, account.id, token


def rated_then_erased(service: GameService) -> tuple[UUID, UUID, UUID]:
    """Two people with two bots, played to its end (a rated match); then the second
    person is erased: the match, the person kept, the person erased."""
    kept, _ = create_player(service, "Lan", "zh-CN")
    gone, token = create_player(service, "Wei", "en")
    mid = create_match(service, rules_of("standard", 1), name="rated", preset="standard")  # type: ignore[arg-type]
    claim_as_player(service, kept, mid, 0)
    take_seat(service, mid, 1, "bot1", "heuristic")
    claim_as_player(service, gone, mid, 2)
    take_seat(service, mid, 3, "bot3", "random")
    play_out(service, mid)
    bus_of(service).execute(ErasePlayer(), Credential.parse(token))
    return mid, kept.id, gone.id


def generate() -> Population:
    service = GameService(POPO)
    pop = Population(service)
    kinds = [
        ["heuristic", "random", "heuristic", "random"],
        ["random", "heuristic", "random", "heuristic"],
        ["random", "random", "random", "random"],
    ]
    for preset_name in ("standard", "tuolaji", "duijia"):
        for k in kinds:
            pop.plain.append(kinds_match(service, preset_name, k, 2))
    pop.quick_play, pop.player, pop.player_token = quick_play(service)
    ts = Tournaments(service)
    done = ts.create(
        name="cup", rules=STANDARD, teams=bot_teams(4), fmt="round_robin", match_length=1
    )
    ts.schedule_next(done.id)
    assert play_round(ts, done.id).completed
    pop.tournament = done.id
    open_cup = ts.create(
        name="open cup", rules=STANDARD, teams=bot_teams(4), fmt="round_robin", match_length=1
    )
    ts.schedule_next(open_cup.id)
    first = ts.get(open_cup.id).rounds[0].tables[0].match_id
    run_bots(service, first, 100_000)
    assert service.get_match(first).finished
    pop.embargoed = first
    pop.ended = ended_match(service)
    pop.rated, pop.kept, pop.erased = rated_then_erased(service)
    scratch = GameService(POPO)
    source = kinds_match(scratch, "standard", ["random"] * 4, 1)
    stored = import_record(service, export_match(scratch, source), store=True)
    pop.imported = stored.match_id
    return pop
