"""Problems in English and Chinese: ``Accept-Language``, details that keep the rule and the
cards, and Chinese text for every code raised in domain/ and services/.
"""

from __future__ import annotations

import ast
import re

import pytest
from litestar.testing import TestClient

from api.i18n import MESSAGES, detail, localize, prefers_chinese, title
from api.problems import PROBLEM_TYPES
from services.limits import RateLimiter
from tests.api.ops.small_app import ROOT, FakeClock, failing_probe, is_problem, small_app


@pytest.mark.parametrize(
    ("header", "chinese"),
    [
        (None, False),
        ("", False),
        ("en", False),
        ("zh", True),
        ("zh-CN", True),
        ("zh-Hans", True),
        ("zh-Hans-CN", True),
        ("ZH-cn", True),
        ("zh-SG", True),
        ("zh-TW", False),
        ("zh-Hant", False),
        ("zh-HK", False),
        ("en-US,en;q=0.9,zh-CN;q=0.8", False),
        ("zh-CN,zh;q=0.9,en;q=0.8", True),
        ("en;q=0.5,zh;q=0.8", True),
        ("en;q=0.8,zh;q=0.8", False),
        ("zh;q=0.8,en;q=0.8", True),
        ("zh;q=0", False),
        ("zh;q=0, en;q=0.1", False),
        ("fr,zh;q=0.5", True),
        ("fr,*;q=0.5,zh;q=0.4", False),
        ("zh-TW,zh-CN;q=0.5", True),
        ("zh;q=abc", False),
        ("zh;q=2", False),
        ("zh; Q=0.9, en;q=0.5", True),
    ],
)
def test_prefers_chinese(header: str | None, chinese: bool) -> None:
    assert prefers_chinese(header) is chinese


@pytest.mark.parametrize(
    ("code", "english", "rule", "title_zh", "keeps"),
    [
        ("illegal-follow", "5C 7C: R23: must follow clubs", "R23", "跟牌不合规则", "5C 7C"),
        (
            "not-your-turn",
            "it is seat 2's turn to play, not seat 1's",
            "R22",
            "还没轮到你",
            "轮到座位 2（出牌），不是座位 1",
        ),
        (
            "seats-free",
            "four players are needed; seats [0, 1] are free",
            "R1",
            "还有空座位",
            "空座位：0、1",
        ),
        ("seat-taken", "seat 2 is taken", "R1", "座位已被占用", "座位 2 已有人"),
        (
            "precondition-failed",
            "the match is at version 12, not 11",
            None,
            "前置条件不成立",
            "版本：12（不是 11）",
        ),
        (
            "unauthorized",
            "the player session expired at 2026-01-01T00:00:00+00:00: unused for more than 600 s; "
            "sign in again",
            None,
            "未授权",
            "玩家会话已过期（2026-01-01T00:00:00+00:00；闲置超过 600 秒），请重新登录",
        ),
        (
            "forbidden",
            "a player token cannot be used here: an organiser token is needed",
            None,
            "禁止访问",
            "玩家令牌不能用于此操作；需要组织者令牌",
        ),
        ("cards-not-in-hand", "BJ BJ: not all of these cards", "R3", "手中没有这些牌", "BJ BJ"),
        ("mixed-lead", "5C AS: a lead must be of one suit", "R22", "首家出牌混杂", "5C AS"),
        ("invalid-card", "'11H' is not a card in R4 notation", "R4", "牌面记法无效", "'11H'"),
        ("declaration-too-weak", "7H does not beat the standing 7S 7S", "R20", "亮牌不够大", "7S"),
        ("validation-failed", "level: Expected `str`", None, "请求校验失败", "level"),
    ],
)
def test_chinese_details_keep_the_rule_and_the_cards(
    code: str, english: str, rule: str | None, title_zh: str, keeps: str
) -> None:
    assert localize(code, english, chinese=False, rule=rule) == (MESSAGES[code].title_en, english)
    zh_title, zh_detail = localize(code, english, chinese=True, rule=rule)
    assert zh_title == title_zh
    assert zh_detail.startswith(MESSAGES[code].sentence_zh)
    assert keeps in zh_detail
    if rule:
        assert f"（{rule}）" in zh_detail
    assert not english_words(zh_detail), zh_detail  # D-contract: all Chinese


LANGUAGE_FREE = re.compile(
    r"R[0-9]+(?:\.[0-9]+)*|§[0-9]+|'[^']*'|`[^`]*`|(?:10|[2-9JQKA])[SHCD]|[SB]J|"
    r"\b[a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9\[\]]+)*(?=：|；|$)"
)


def english_words(text: str) -> list[str]:
    """Words of English left in a Chinese text once the rule numbers, cards in R4
    notation, quoted input and field names (all language-free) are taken out."""
    return re.findall(r"[A-Za-z]{2,}", LANGUAGE_FREE.sub(" ", text))


def test_an_unknown_code_still_gets_text_in_both_languages() -> None:
    assert title("brand-new-thing", chinese=False) == "Brand new thing"
    assert title("brand-new-thing", chinese=True) == "请求未能完成"
    assert detail("brand-new-thing", "why", chinese=True, rule="R9") == "请求未能完成（R9）。"


def raised_codes() -> dict[str, str]:
    """Every error code written in domain/ and services/: ``code="…"`` keywords, class
    attributes ``code = "…"``, and positional arguments of helpers with a ``code`` parameter
    (e.g. ``_illegal(detail, "not-a-show")``); both branches of ``a if c else b``."""

    def strings(node: ast.expr | None) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.IfExp):
            return strings(node.body) + strings(node.orelse)
        return []

    found: dict[str, str] = {}
    for package in ("domain", "services"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = str(path.relative_to(ROOT))
            helpers = {
                f.name: [a.arg for a in (*f.args.posonlyargs, *f.args.args)].index("code")
                for f in ast.walk(tree)
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                and "code" in [a.arg for a in (*f.args.posonlyargs, *f.args.args)]
            }
            for node in ast.walk(tree):
                values: list[ast.expr | None] = []
                if isinstance(node, ast.Call):
                    values += [k.value for k in node.keywords if k.arg == "code"]
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                    if name in helpers and len(node.args) > helpers[name]:
                        values.append(node.args[helpers[name]])
                elif isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        if (
                            isinstance(stmt, ast.Assign)
                            and any(
                                isinstance(t, ast.Name) and t.id == "code" for t in stmt.targets
                            )
                        ) or (
                            isinstance(stmt, ast.AnnAssign)
                            and isinstance(stmt.target, ast.Name)
                            and stmt.target.id == "code"
                        ):
                            values.append(stmt.value)
                for value in values:
                    for code in strings(value):
                        found.setdefault(code, where)
    return found


CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_code_raised_in_domain_and_services_has_chinese_text() -> None:
    codes = raised_codes()
    assert {"illegal-follow", "not-a-show", "round-over", "not-playing-yet"} <= set(codes)
    assert len(codes) > 40
    missing = {code: where for code, where in codes.items() if code not in MESSAGES}
    assert not missing, f"add these codes to api.i18n.MESSAGES: {missing}"


@pytest.mark.parametrize(
    "code",
    [
        "illegal-follow", "not-your-turn", "cards-not-in-hand", "mixed-lead", "round-over",
        "empty-play", "illegal-move", "invalid-card", "invalid-input", "invalid-rule-set",
        "validation-failed", "version-conflict", "precondition-failed", "not-found",
        "payload-too-large", "rate-limited", "not-ready", "internal-error",
        *sorted(PROBLEM_TYPES),
    ],
)  # fmt: skip
def test_the_api_codes_have_chinese_text(code: str) -> None:
    m = MESSAGES[code]
    assert CJK.search(m.title_zh) and CJK.search(m.sentence_zh)
    assert m.title_en and not CJK.search(m.title_en)


def test_problems_made_here_speak_chinese_when_asked() -> None:
    limiter = RateLimiter(1, clock=FakeClock())
    zh = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}
    with TestClient(small_app(limiter=limiter, probe=failing_probe)) as c:
        c.get("/healthz", headers=zh)
        c.get("/boom")
        r = c.get("/boom", headers=zh)
        body = is_problem(r, "rate-limited", 429)
        assert body["title"] == "请求过多"
        assert body["detail"].startswith("请求过于频繁")
        assert r.headers["content-language"] == "zh-CN"
        body = is_problem(c.get("/readyz", headers=zh), "not-ready", 503)
        assert body["title"] == "服务尚未就绪"
        body = is_problem(c.get("/readyz"), "not-ready", 503)
        assert body["title"] == "Service not ready"
