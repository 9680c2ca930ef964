"""Every record the service exports re-imports and verifies (docs/records.md): each line
of the bulk export (``GET /v1/records``), each tournament archive line — two-deal tables
of a round robin and a Swiss tournament, dealt from seat 0 (R16, R36) — each match's
record and each scored round's record, from an app opened afresh on the population."""

from __future__ import annotations

from litestar.testing import TestClient

from tests.integrity.population import JSON, Population


def test_every_exported_record_reimports(population: Population) -> None:
    with TestClient(population.app()) as c:
        exported: dict[str, list[bytes]] = {"bulk": [], "archive": [], "match": [], "round": []}
        exported["bulk"] = [line for line in c.get("/v1/records").content.splitlines() if line]
        for tid in population.tournaments.values():
            r = c.get(f"/v1/tournaments/{tid}/archive")
            assert r.status_code == 200 and not r.headers["tournament-pending-tables"]
            exported["archive"] += [line for line in r.content.splitlines() if line]
        for match_id in population.all_matches():
            r = c.get(f"/v1/matches/{match_id}/record")
            found = c.get(f"/v1/matches/{match_id}")
            if found.status_code == 404:  # a private table: nothing of it is public (D-hidden)
                assert r.status_code == 404, r.text
                continue
            if r.status_code == 200:
                exported["match"].append(r.content)
            for summary in found.json()["rounds"]:
                r = c.get(f"/v1/matches/{match_id}/rounds/{summary['number']}/record")
                if r.status_code == 200:
                    exported["round"].append(r.content)
        counts = {kind: len(lines) for kind, lines in exported.items()}
        print(f"\nrecords re-imported: {counts}")
        # the tournaments' tables are in the bulk export and the archives, with the
        # finished plain, names and imported matches
        assert counts["archive"] == len(population.matches["tournament"]) == 7
        assert counts["bulk"] >= counts["archive"] + 4 and counts["round"] > counts["match"]
        # a match's record, its bulk line and its archive line are the same bytes: each
        # distinct record is imported once
        assert set(exported["archive"]) <= set(exported["bulk"]) == set(exported["match"])
        distinct = {line: kind for kind in ("round", "bulk") for line in exported[kind]}
        refused = []
        for line, kind in distinct.items():
            r = c.post("/v1/records", content=line, headers=JSON)
            if r.status_code != 200 or not r.json()["digest"].startswith("sha256:"):
                refused.append(f"{kind}: {r.status_code} {r.text[:300]}")
        assert not refused, "\n".join(refused)
