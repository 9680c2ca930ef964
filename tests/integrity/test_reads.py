"""Every read route answers every stored match — plain, quick play, private, tournament,
imported, erased, seated with hostile names — with 2xx/4xx, never 5xx, on an app opened
afresh on the population's file (a restart: nothing comes from a warm cache), and again
with its caches warm (docs/decisions.md D-integrity)."""

from __future__ import annotations

from collections import Counter

from litestar.testing import TestClient

from tests.integrity.population import HOSTILE_NAMES, Population
from tests.integrity.routes import get_routes, reads


def test_every_read_route_answers_every_match_without_5xx(
    population: Population, record_property: object
) -> None:
    with TestClient(population.app()) as c:
        routes = [path for path, stream in get_routes(c.app) if not stream]
        assert len(routes) > 30
        statuses: Counter[int] = Counter()
        failures: list[str] = []
        for warm in (False, True):
            for path in routes:
                for read in reads(c, population, path):
                    r = c.get(read.url, headers=read.headers)
                    statuses[r.status_code] += 1
                    if r.status_code >= 500:
                        failures.append(f"{read.url} {r.status_code} warm={warm}: {r.text[:200]}")
        print(f"\n{sum(statuses.values())} reads over {len(routes)} routes: {dict(statuses)}")
        assert not failures, "\n".join(failures[:20])
        assert statuses[200] > 500


def test_names_read_as_written(population: Population) -> None:
    """A seat name that looks like a sealed value is plain text: shown as written (NFC),
    by every route that shows names, after a restart."""
    with TestClient(population.app()) as c:
        shown = set()
        for match_id in population.matches["names"]:
            summary = c.get(f"/v1/matches/{match_id}").json()
            shown |= {s["name"] for s in summary["seats"] if s}
            history = c.get(f"/v1/matches/{match_id}/history").json()
            assert history["items"]
        assert shown == {"Café" if n == "Cafe\u0301" else n for n in HOSTILE_NAMES}
        imported = population.matches["imported"][1]
        seats = c.get(f"/v1/matches/{imported}").json()["seats"]
        assert seats[0]["name"] == HOSTILE_NAMES[0]
        erased = population.matches["erased"][0]
        assert c.get(f"/v1/matches/{erased}").json()["seats"][0]["name"] == "erased player"
