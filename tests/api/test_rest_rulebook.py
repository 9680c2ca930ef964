"""The rule book over HTTP (api/rulebook.py) and the problems that link to it.

``GET /v1/rules`` lists the rules, variants and presets; ``GET /v1/rules/R23`` answers one
rule's Markdown in English or, with ``Accept-Language: zh-CN``, Chinese; answers are
cacheable (ETag → 304). A refused move names its rule and links to it (``ruleUrl``).
The rules oracle's POST routes under the same path still answer.
"""

from __future__ import annotations

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.problems import rule_url
from domain.rules.ruleset import FIELDS, PRESETS
from services.view_types import rules_view
from tests.api.rest import Table, client

PROBLEM = "application/problem+json"
ZH = {"Accept-Language": "zh-CN"}


def test_an_illegal_follow_links_to_r23_whose_text_comes_back_in_chinese() -> None:
    with client() as http:
        table = Table.seat_four(http)
        while not (table.public()["phase"] == "playing" and table.public()["trick"]):
            assert table.step()
        seat = table.public()["expected"]["seat"]
        view = table.view(seat)
        legal = view["legal"]
        assert legal["followCount"] == 1 and not legal["moreFollows"]
        illegal = next(card for card in view["hand"] if [card] not in legal["follows"])
        r = table.act(seat, "play", [illegal], **ZH)
        assert r.status_code == 409 and r.headers["content-type"].startswith(PROBLEM)
        problem = r.json()
        assert (problem["code"], problem["rule"]) == ("illegal-follow", "R23")
        assert problem["ruleUrl"] == "/v1/rules/R23"

        rule = http.get(problem["ruleUrl"], headers=ZH)
        assert rule.status_code == 200
        assert rule.headers["content-language"] == "zh-CN"
        body = rule.json()
        assert (body["number"], body["title"], body["language"]) == ("R23", "跟牌", "zh-CN")
        assert "首家" in body["text"] and "R23.1" in body["text"]


def test_the_contents_list_every_rule_variant_and_preset(c: TestClient[Litestar]) -> None:
    r = c.get("/v1/rules")
    assert r.status_code == 200 and r.headers["content-language"] == "en"
    body = r.json()
    assert body["language"] == "en"
    assert [rule["number"] for rule in body["rules"]] == [f"R{n}" for n in range(1, 38)]
    assert body["rules"][22] == {
        "number": "R23",
        "title": "Following suit",
        "url": "/v1/rules/R23",
    }
    assert [v["name"] for v in body["variants"]] == list(FIELDS)
    presets = {p["name"]: p for p in body["presets"]}
    assert set(presets) == set(PRESETS)
    for name, rules in PRESETS.items():
        assert presets[name]["rules"] == _camel(rules_view(rules))
        assert c.get(presets[name]["url"]).json()["name"] == name
    assert presets["tuolaji"]["rules"]["selfOvercall"] is True


def _camel(view: object) -> dict[str, object]:
    return dict(msgspec.json.decode(msgspec.json.encode(view)))


def test_titles_follow_the_language(c: TestClient[Litestar]) -> None:
    zh = c.get("/v1/rules", headers=ZH).json()
    assert zh["language"] == "zh-CN"
    assert zh["rules"][22]["title"] == "跟牌"
    assert zh["variants"][1]["title"] == "自保与自反"


@pytest.mark.parametrize(
    ("accept_language", "language"),
    [
        (None, "en"),
        ("en", "en"),
        ("zh-CN", "zh-CN"),
        ("zh", "zh-CN"),
        ("zh-Hans-CN, en;q=0.5", "zh-CN"),
        ("zh-TW", "en"),  # Traditional is not served: English
        ("fr, zh;q=0.3", "zh-CN"),
    ],
)
def test_the_language_is_negotiated(
    c: TestClient[Litestar], accept_language: str | None, language: str
) -> None:
    headers = {} if accept_language is None else {"Accept-Language": accept_language}
    r = c.get("/v1/rules/R1", headers=headers)
    assert r.json()["language"] == r.headers["content-language"] == language


@pytest.mark.parametrize(
    "path",
    ["/v1/rules", "/v1/rules/R23", "/v1/rules/variants/level_cap", "/v1/rules/presets/duijia"],
)
@pytest.mark.parametrize("headers", [{}, ZH])
def test_answers_are_cacheable(c: TestClient[Litestar], path: str, headers: dict[str, str]) -> None:
    r = c.get(path, headers=headers)
    assert r.status_code == 200
    tag = r.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"')
    assert r.headers["cache-control"] == "public, max-age=3600"
    vary = [v.strip() for v in r.headers["vary"].split(",")]
    assert "Accept-Language" in vary  # (and Accept-Encoding: answers are compressed on ask)
    again = c.get(path, headers={**headers, "If-None-Match": tag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag)
    other = c.get(path, headers={**headers, "If-None-Match": '"stale"'})
    assert other.status_code == 200


def test_the_etag_differs_by_language(c: TestClient[Litestar]) -> None:
    en, zh = c.get("/v1/rules/R23"), c.get("/v1/rules/R23", headers=ZH)
    assert en.headers["etag"] != zh.headers["etag"]
    r = c.get("/v1/rules/R23", headers={**ZH, "If-None-Match": en.headers["etag"]})
    assert r.status_code == 200 and r.json()["language"] == "zh-CN"


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("/v1/rules/R99", "'R99'"),
        ("/v1/rules/r23", "'r23'"),
        ("/v1/rules/variants/no_such_variant", "'no_such_variant'"),
        ("/v1/rules/presets/house", "'house'"),
    ],
)
def test_an_unknown_rule_is_a_404_problem_naming_it(
    c: TestClient[Litestar], path: str, names: str
) -> None:
    r = c.get(path)
    assert r.status_code == 404 and r.headers["content-type"].startswith(PROBLEM)
    problem = r.json()
    assert problem["code"] == "not-found" and names in problem["detail"]


@pytest.mark.parametrize(
    ("kind", "name", "title_en", "title_zh"),
    [
        ("variants", "declare_with_joker", "Declaring with a joker", "带王报主"),
        ("presets", "tuolaji", "拖拉机 (seed 001)", "拖拉机（来源 001）"),
    ],
)
def test_variants_and_presets_have_text(
    c: TestClient[Litestar], kind: str, name: str, title_en: str, title_zh: str
) -> None:
    en = c.get(f"/v1/rules/{kind}/{name}").json()
    zh = c.get(f"/v1/rules/{kind}/{name}", headers=ZH).json()
    assert (en["name"], en["title"], zh["title"]) == (name, title_en, title_zh)
    assert en["text"] and zh["text"] and en["text"] != zh["text"]


def test_the_rules_oracle_still_answers_beside_the_book(c: TestClient[Litestar]) -> None:
    r = c.post(
        "/v1/rules/follow",
        json={
            "level": "2",
            "trumpSuit": "H",
            "lead": ["9D", "9D"],
            "hand": ["3D", "3D", "KD"],
            "play": ["KD", "3D"],
        },
    )
    assert r.status_code == 200 and r.json()["rule"] == "R23"
    assert c.get("/v1/rules/follow").status_code == 405
    assert c.post("/v1/rules/R23").status_code == 405


@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("R23", "/v1/rules/R23"),
        ("R23.1", "/v1/rules/R23"),
        ("R4", "/v1/rules/R4"),
        ("§10", "/v1/rules"),
        (None, None),
        ("", None),
        ("house rule", None),
    ],
)
def test_rule_urls(rule: str | None, url: str | None) -> None:
    assert rule_url(rule) == url


def test_a_problem_without_a_rule_has_no_link(c: TestClient[Litestar]) -> None:
    problem = c.get("/v1/matches/00000000-0000-4000-8000-000000000000").json()
    assert "rule" not in problem and "ruleUrl" not in problem


def test_a_bad_card_links_to_r4(c: TestClient[Litestar]) -> None:
    body = {"level": "2", "trumpSuit": None, "cards": ["AS", "11H"]}
    r = c.post("/v1/rules/shape", json=body, headers=ZH)
    assert r.status_code == 422, r.text
    problem = r.json()
    assert (problem["code"], problem["rule"], problem["ruleUrl"]) == (
        "invalid-card",
        "R4",
        "/v1/rules/R4",
    )
    assert c.get(problem["ruleUrl"], headers=ZH).json()["title"] == "牌的写法"
