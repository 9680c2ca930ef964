"""The app's read routes, with their path parameters filled from the population."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from api.streams import EVENT_STREAM
from services.access import Credential
from tests.integrity.population import OPERATOR, Population, auth

_PARAM = re.compile(r"\{([a-z_]+):[a-z]+\}")
DOCS = re.compile(r"^/schema")
"""The OpenAPI pages: they serve the document, not the store (their own tests)."""
NOBODY = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True)
class Read:
    """One GET: the route's path, a concrete URL and the headers it is sent with."""

    route: str
    url: str
    headers: dict[str, str]


def get_routes(app: Litestar) -> list[tuple[str, bool]]:
    """(path, is a stream) of every GET route but the documentation pages."""
    found = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or DOCS.match(route.path):
            continue
        for handler in route.route_handlers:
            if isinstance(handler, HTTPRouteHandler) and "GET" in handler.http_methods:
                found.append((route.path, handler.media_type == EVENT_STREAM))
    return sorted(found)


def _rounds(c: TestClient[Litestar], match_id: str) -> list[int]:
    body = c.get(f"/v1/matches/{match_id}").json()
    return [r["number"] for r in body.get("rounds") or []] or [1]


def _tournament_rounds(c: TestClient[Litestar], tid: str) -> list[int]:
    return [r["number"] for r in c.get(f"/v1/tournaments/{tid}").json().get("rounds") or []]


def reads(c: TestClient[Litestar], pop: Population, path: str) -> Iterator[Read]:
    """Every GET of ``path`` the population gives, each with every credential that may
    read it (and none)."""
    names = _PARAM.findall(path)

    def url(**values: object) -> str:
        return _PARAM.sub(lambda m: str(values[m.group(1)]), path)

    anonymous: dict[str, str] = {}
    if "match_id" in names:
        for match_id in pop.all_matches():
            who = [anonymous, auth(OPERATOR)]
            for token in (pop.seats.get(match_id), pop.organisers.get(match_id)):
                if token:
                    who.append(auth(token))
            numbers = _rounds(c, match_id) if "number" in names else [0]
            for number in numbers:
                for headers in who:
                    yield Read(path, url(match_id=match_id, number=number), headers)
        yield Read(path, url(match_id=NOBODY, number=1), anonymous)
    elif "tournament_id" in names:
        for tid in pop.tournaments.values():
            numbers = _tournament_rounds(c, tid) if "number" in names else [0]
            boards = (1, 2, 99) if "board" in names else (0,)  # a traveller: played, or not
            for number in numbers:
                for board in boards:
                    at = url(tournament_id=tid, number=number, board=board)
                    for headers in (anonymous, auth(pop.organisers[tid])):
                        yield Read(path, at, headers)
        yield Read(path, url(tournament_id=NOBODY, number=1, board=1), anonymous)
    elif "ticket_id" in names:
        for token, ticket_id in pop.tickets:
            yield Read(path, url(ticket_id=ticket_id), auth(token))
            yield Read(path, url(ticket_id=ticket_id), anonymous)
    elif "code" in names:
        for code in [*pop.invites, "AAAA-AAAA"]:
            yield Read(path, url(code=code), anonymous)
    elif "subscription_id" in names:
        yield Read(path, url(subscription_id=NOBODY), auth(OPERATOR))
    elif "table_file" in names:  # the analysts' dumps: every table in both formats, and nonsense
        for table in ("matches", "rounds", "declarations", "tricks", "plays", "results"):
            for fmt in ("parquet", "csv"):
                for headers in (anonymous, auth(OPERATOR)):
                    yield Read(path, url(table_file=f"{table}.{fmt}"), headers)
        yield Read(path, url(table_file="tournament_tables.parquet"), anonymous)
        yield Read(path, url(table_file="nonsense.xlsx"), anonymous)
    elif "name" in names:
        for name in ("standard", "tuolaji", "duijia", "declare_with_joker", "nonsense"):
            yield Read(path, url(name=name), anonymous)
    elif "number" in names:  # the rule book
        for rule in ("R1", "R36", "R99"):
            yield Read(path, url(number=rule), anonymous)
    elif "player_id" in names:  # a player's ratings, profile, matches: each player's, read by
        # anyone and with their own token (their private tables too), and nobody's
        for token in pop.players:
            player = Credential.parse(token).owner
            yield Read(path, url(player_id=player), anonymous)
            yield Read(path, url(player_id=player), auth(token))
        yield Read(path, url(player_id=NOBODY), anonymous)
    elif "family" in names:  # the rating boards: each family, and one that is none
        for family in ("standard", "tuolaji", "duijia", "nonsense"):
            yield Read(path, url(family=family), anonymous)
            for token in pop.players[:1]:
                yield Read(path, url(family=family), auth(token))
    elif path.startswith("/v1/players/me"):
        for token in pop.players:
            yield Read(path, path, auth(token))
        yield Read(path, path, anonymous)
    else:
        assert not names, f"{path}: no values for {names}"
        for headers in (anonymous, auth(OPERATOR)):
            yield Read(path, path, headers)
        if path == "/v1/matches":
            yield Read(path, f"{path}?limit=100", anonymous)
        if path == "/v1/records":
            for tid in pop.tournaments.values():
                yield Read(path, f"{path}?tournamentId={tid}", anonymous)


def example_url(c: TestClient[Litestar], pop: Population, path: str) -> str:
    """One concrete URL of ``path``."""
    return next(iter(reads(c, pop, path))).url
