"""The one exception → RFC 9457 problem+json table of the whole API.

Every error leaves as ``application/problem+json`` with a stable ``type`` URI per error
``code`` (``PROBLEM_BASE`` + code), a short ``title``, a human ``detail`` naming the rule
(R-number) and the cards, and the right status. Titles and details are in English or
Simplified Chinese by ``Accept-Language``. Only 5xx are logged with ``exc_info``.

A problem that names a rule links to its text in the rule book (``ruleUrl``,
:func:`rule_url`: ``"rule": "R23"`` → ``"ruleUrl": "/v1/rules/R23"``, served by
:mod:`api.rulebook`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from api.i18n import localize, prefers_chinese

PROBLEM_BASE = "https://shengji.example/problems/"
PROBLEM_MEDIA_TYPE = "application/problem+json"
RULES_PATH = "/v1/rules"
_RULE_NUMBER = re.compile(r"(R[1-9][0-9]*)(?:\.[0-9]+)*")


def rule_url(rule: str | None) -> str | None:
    """Where the rule a problem names is explained: ``R23`` (or ``R23.1``) →
    ``/v1/rules/R23``; ``§10`` (a rule set) → ``/v1/rules``, which lists the variants and
    presets; None for no rule."""
    if not rule:
        return None
    m = _RULE_NUMBER.fullmatch(rule)
    if m is not None:
        return f"{RULES_PATH}/{m.group(1)}"
    return RULES_PATH if rule.startswith("§10") else None


@dataclass(frozen=True, slots=True)
class ProblemType:
    code: str
    status: int
    title_en: str
    title_zh: str


PROBLEM_TYPES: dict[str, ProblemType] = {
    p.code: p
    for p in (
        ProblemType("invalid-input", 422, "Invalid input", "输入无效"),
        ProblemType("invalid-card", 422, "Invalid card notation", "牌面记法无效"),
        ProblemType("invalid-rule-set", 422, "Invalid rule set", "规则设置无效"),
        ProblemType("validation-failed", 422, "Request validation failed", "请求校验失败"),
        ProblemType("illegal-move", 409, "Move not allowed by the rules", "规则不允许此操作"),
        ProblemType("not-found", 404, "Not found", "未找到"),
        ProblemType("method-not-allowed", 405, "Method not allowed", "不允许的方法"),
        ProblemType("unsupported-media-type", 415, "Unsupported media type", "不支持的媒体类型"),
        ProblemType("payload-too-large", 413, "Request body too large", "请求体过大"),
        ProblemType("rate-limited", 429, "Too many requests", "请求过多"),
        ProblemType("quota-exceeded", 429, "Quota exceeded", "超出配额"),
        ProblemType("too-many-streams", 429, "Too many live streams", "实时流过多"),
        ProblemType("internal-error", 500, "Internal server error", "服务器内部错误"),
        ProblemType("bad-request", 400, "Bad request", "请求错误"),
        ProblemType("invalid-name", 422, "Name not allowed", "名称不允许"),
        ProblemType("invalid-text", 422, "Text not allowed", "文字不允许"),
        ProblemType("talk-rate-limited", 429, "Talking too fast", "发言过于频繁"),
        ProblemType("reports-exceeded", 429, "Too many reports", "举报次数过多"),
        ProblemType("unknown-parameter", 400, "Unknown query parameter", "未知的查询参数"),
        ProblemType("not-ready", 503, "Service not ready", "服务尚未就绪"),
        ProblemType("exports-busy", 503, "Exports busy", "导出繁忙"),
    )
}


class Problem(msgspec.Struct, omit_defaults=True, rename="camel"):
    """RFC 9457 problem details (plus the rule, code and cards concerned)."""

    type: Annotated[str, Meta(description="The problem type: a URI ending in its code (stable)")]
    title: Annotated[
        str, Meta(description="A short summary of the problem type, in the language asked for")
    ]
    status: Annotated[int, Meta(description="The HTTP status")]
    detail: Annotated[
        str,
        Meta(
            description=(
                "What happened, naming the rule (R-number) and the cards, in the language asked for"
            ),
            examples=["what happened"],
        ),
    ]
    code: Annotated[str, Meta(description="The problem's code (the last part of `type`)")]
    rule: Annotated[
        str | None,
        Meta(description="The rule (R-number or §10) that refused it; absent when none applies"),
    ] = None
    rule_url: Annotated[
        str | None,
        Meta(
            description=(
                "The rule's text in the rule book (`/v1/rules/R23`), when the problem names one."
            )
        ),
    ] = None
    instance: Annotated[str | None, Meta(description="The request path")] = None
    errors: Annotated[
        list[dict[str, Any]] | None,
        Meta(description="For a validation problem: each field refused (key, message, source)"),
    ] = None


def wants_chinese(accept_language: str | None) -> bool:
    """True when Simplified Chinese ranks above English in ``Accept-Language``."""
    return prefers_chinese(accept_language)


def make_problem(
    code: str,
    detail: str,
    *,
    status: int | None = None,
    rule: str | None = None,
    chinese: bool = False,
    instance: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    facts_zh: str | None = None,
) -> Problem:
    kind = PROBLEM_TYPES.get(code)
    if kind is not None:
        status = status or kind.status
    title, detail = localize(code, detail, chinese=chinese, rule=rule, facts=facts_zh)
    return Problem(
        type=PROBLEM_BASE + code,
        title=title,
        status=status or 400,
        detail=detail,
        code=code,
        rule=rule,
        rule_url=rule_url(rule),
        instance=instance,
        errors=errors,
    )
