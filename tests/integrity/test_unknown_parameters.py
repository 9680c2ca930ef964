"""An unknown query parameter is refused on every GET route — a 400 RFC 9457 problem
``unknown-parameter`` naming it — never silently dropped; the routes' own parameters
still answer (docs/decisions.md D-integrity)."""

from __future__ import annotations

from litestar.testing import TestClient

from tests.integrity.population import Population
from tests.integrity.routes import get_routes, reads

JUNK = ("junk", "matchid", "type")
"""A parameter no route takes, a misspelt one (names are case-sensitive), and one that
only the event log takes."""


def test_every_get_route_refuses_an_unknown_parameter(population: Population) -> None:
    with TestClient(population.app()) as c:
        routes = get_routes(c.app)
        refused = 0
        for path, _ in routes:
            read = next(iter(reads(c, population, path)))
            for junk in JUNK:
                if path.startswith("/v1/events") and junk == "type":
                    continue
                sep = "&" if "?" in read.url else "?"
                r = c.get(f"{read.url}{sep}{junk}=1", headers=read.headers)
                assert r.status_code == 400, f"{path} ?{junk}: {r.status_code} {r.text[:200]}"
                assert r.headers["content-type"].startswith("application/problem+json")
                assert r.json()["code"] == "unknown-parameter" and junk in r.json()["detail"]
                refused += 1
        print(f"\n{refused} unknown parameters refused over {len(routes)} GET routes")
        assert len(routes) > 40


def test_the_routes_own_parameters_still_answer() -> None:
    from tests.apps import make_app  # noqa: PLC0415

    with TestClient(make_app()) as c:
        for url in (
            "/v1/matches?limit=5&after=0",
            "/v1/events?after=0&limit=10&type=CardPlayed",
            "/v1/records?preset=standard",
            "/v1/matches?origin=imported",
        ):
            r = c.get(url)
            assert r.status_code == 200, f"{url}: {r.text[:200]}"
