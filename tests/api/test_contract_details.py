"""The smaller parts of the client contract (D-contract): answers all in Chinese under
``Accept-Language: zh-CN`` (the detail and every ``errors[].message``), 415 for a body
that is not JSON, a problem naming an id that is not a UUID, one charset on text answers."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.ops.test_languages import english_words
from tests.api.rest import Table, auth
from tests.api.test_rest_tournaments import create

ZH = {"Accept-Language": "zh-CN"}
CJK = re.compile(r"[\u4e00-\u9fff]")
PROBLEM = "application/problem+json"


@pytest.mark.parametrize(
    "body",
    [
        {"name": 5},
        {"name": "x", "rules": {"levelCap": "3"}},
        {"name": "x", "colour": "red"},
        {"preset": "chess"},
        {"name": "x" * 201},
    ],
)
def test_validation_problems_are_all_chinese(c: TestClient[Litestar], body: object) -> None:
    r = c.post("/v1/matches", json=body, headers=ZH)
    assert r.status_code == 422, r.text
    problem = r.json()
    assert CJK.search(problem["detail"]) and not english_words(problem["detail"]), problem
    assert problem["errors"], problem
    for error in problem["errors"]:
        assert CJK.search(error["message"]), error
        assert not english_words(error["message"]), error
    en = c.post("/v1/matches", json=body).json()  # English stays English
    assert not CJK.search(en["detail"]) and not CJK.search(en["errors"][0]["message"])


def test_rule_refusals_are_all_chinese(c: TestClient[Litestar]) -> None:
    table = Table.seat_four(c)
    expected = table.public()["expected"]
    seat = 0 if expected["seat"] is None else (expected["seat"] + 1) % 4
    r = c.post(
        f"{table.url}/actions/play",
        json={"cards": ["AS"]},
        headers={**auth(table.tokens[seat]), **ZH},
    )
    assert r.status_code in (409, 422), r.text
    detail = r.json()["detail"]
    assert CJK.search(detail) and not english_words(detail), detail


@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("text/plain", 415),
        ("application/x-www-form-urlencoded", 415),
        ("application/xml", 415),
        ("application/json", 201),
        ("application/json; charset=utf-8", 201),
        ("application/merge-patch+json", 201),
    ],
)
def test_a_body_that_is_not_json_is_a_415(
    c: TestClient[Litestar], content_type: str, status: int
) -> None:
    r = c.post("/v1/matches", content=b'{"name":"x"}', headers={"content-type": content_type})
    assert r.status_code == status, r.text
    if status == 415:
        assert r.headers["content-type"].startswith(PROBLEM)
        assert r.json()["code"] == "unsupported-media-type"
        assert r.json()["type"].endswith("/unsupported-media-type")


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/v1/matches/not-a-uuid", "not-a-uuid"),
        ("/v1/matches/12345/public", "12345"),
        ("/v1/matches/abc/view", "abc"),
        ("/v1/tournaments/zz/standings", "zz"),
        ("/v1/matches/0b5c3a6e-8d5f-4f39-9a41-2f1c6f0e7d21/rounds/first", "first"),
    ],
)
def test_a_bad_id_is_named(c: TestClient[Litestar], path: str, named: str) -> None:
    r = c.get(path)
    assert r.status_code == 404
    assert r.headers["content-type"].startswith(PROBLEM)
    problem = r.json()
    assert problem["code"] == "not-found" and f"'{named}'" in problem["detail"]
    assert "UUID" in problem["detail"] or "whole number" in problem["detail"]
    zh = c.get(path, headers=ZH).json()
    assert f"'{named}'" in zh["detail"] and CJK.search(zh["detail"])


# every text answer, by the query after the tournament's path (or an absolute path), and
# its one media type: Litestar adds the charset to a text/ type, so a handler must not
TEXT_ANSWERS = [
    ("standings?format=csv", "text/csv; charset=utf-8"),
    ("results?format=csv", "text/csv; charset=utf-8"),
    ("adjustments?format=csv", "text/csv; charset=utf-8"),
    ("rounds/1/sheet", "text/plain; charset=utf-8"),
    ("rounds/1/sheet?format=csv", "text/csv; charset=utf-8"),
    ("/metrics", "text/plain; version=0.0.4; charset=utf-8"),
]


@pytest.mark.parametrize(("path", "media_type"), TEXT_ANSWERS)
def test_text_answers_say_one_charset(c: TestClient[Litestar], path: str, media_type: str) -> None:
    tid, organiser = create(c)
    scheduled = c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(organiser))
    assert scheduled.status_code == 201, scheduled.text
    url = path if path.startswith("/") else f"/v1/tournaments/{tid}/{path}"
    answer = c.get(url)
    assert answer.status_code == 200, answer.text
    # a duplicate parameter is not a media type (RFC 9110 §8.3.1): Prometheus 3 refuses it
    assert answer.headers["content-type"] == media_type


# path, body, rule: well-formed cards the rules say cannot occur are the rules' answer
IMPOSSIBLE = [
    ("/v1/rules/shape", {"cards": ["5C", "5C", "5C"]}, "R3"),  # two copies of each card
    ("/v1/rules/trick", {"plays": [["AS", "KC"], ["2C", "3C"]]}, "R15"),  # R15/R22: one category
    ("/v1/rules/trick", {"plays": [["AS"], ["2C", "3C"]]}, "R23"),  # as many as the lead
    ("/v1/rules/follow", {"lead": ["AS"], "hand": ["3C"], "play": ["2C"]}, None),  # not held
    ("/v1/rules/bottom-multiplier", {"lastLead": ["5C", "5C", "5C"]}, "R3"),
]


@pytest.mark.parametrize(("path", "body", "rule"), IMPOSSIBLE)
def test_impossible_positions_are_the_rules_answer(
    c: TestClient[Litestar], path: str, body: dict[str, object], rule: str | None
) -> None:
    r = c.post(path, json={"level": "2", "trumpSuit": "H", **body})
    assert r.status_code == 409, r.text
    problem = r.json()
    assert problem["code"] == "impossible-position" and problem.get("rule") == rule
    assert r.headers["content-type"].startswith(PROBLEM)


@pytest.mark.parametrize("path", ["/v1/rules/shape", "/v1/rules/throw"])
def test_a_card_is_needed_where_the_schema_says_so(c: TestClient[Litestar], path: str) -> None:
    field = "cards" if path.endswith("shape") else "throw"
    body = {"level": "2", "trumpSuit": "H", field: [], "otherHands": ["", "", ""]}
    r = c.post(path, json=body)
    assert r.status_code == 422 and r.json()["code"] == "validation-failed", r.text


# every HTML answer: the director's pages (their inline script and style allowed by hash
# only) and the API's documentation pages under /schema
HTML_ANSWERS = [
    "/tournaments/{tid}",
    "/tournaments/{tid}?lang=zh-CN",
    "/tournaments/{tid}/rounds/1/pairings",
    "/tournaments/{tid}/rounds/1/scoresheets",
    "/tournaments/{tid}/crosstable",
    "/schema",
    "/schema/swagger",
    "/schema/elements",
    "/schema/rapidoc",
]


def policy(header: str) -> dict[str, list[str]]:
    """A Content-Security-Policy header's directives."""
    directives = [d.split() for d in header.split(";") if d.strip()]
    return {d[0]: d[1:] for d in directives}


@pytest.mark.parametrize("path", HTML_ANSWERS)
def test_html_answers_carry_a_content_security_policy(c: TestClient[Litestar], path: str) -> None:
    """Every HTML answer says ``nosniff`` and a CSP that is never framed, runs no plugin
    and no base or form elsewhere; a director's page runs only its own inline script and
    style (their sha256 in the policy: an injected script would not run)."""
    tid, organiser = create(c)
    assert c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(organiser)).status_code == 201
    answer = c.get(path.format(tid=tid))
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["x-content-type-options"] == "nosniff"
    csp = policy(answer.headers["content-security-policy"])
    assert csp["frame-ancestors"] == ["'none'"] and csp["object-src"] == ["'none'"]
    assert csp["base-uri"] == ["'none'"] and csp["form-action"] == ["'none'"]
    if path.startswith("/schema"):
        return
    assert csp["default-src"] == ["'none'"] and csp["connect-src"] == ["'self'"]
    for tag, directive in (("script", "script-src"), ("style", "style-src")):
        for body in re.findall(rf"<{tag}>(.*?)</{tag}>", answer.text, re.S):
            digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in csp[directive], (tag, path)
        assert "'unsafe-inline'" not in csp[directive]


@pytest.mark.parametrize(("path", "media_type"), TEXT_ANSWERS)
def test_text_answers_say_nosniff(c: TestClient[Litestar], path: str, media_type: str) -> None:
    tid, organiser = create(c)
    assert c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(organiser)).status_code == 201
    url = path if path.startswith("/") else f"/v1/tournaments/{tid}/{path}"
    assert c.get(url).headers["x-content-type-options"] == "nosniff"
