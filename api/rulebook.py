"""The rule book, served: ``GET /v1/rules`` and the text of each rule, variant and preset.

The text is ``docs/rules/en.md`` or ``docs/rules/zh-CN.md`` (:mod:`services.rulebook`), in
the language ``Accept-Language`` prefers (:func:`api.i18n.prefers_chinese`: Simplified
Chinese or English). Every answer says its language (``Content-Language``, ``Vary:
Accept-Language``), carries a strong ``ETag`` of its text (``If-None-Match`` → 304) and may
be cached for an hour (``Cache-Control: public, max-age=3600``). Problems link here
(``ruleUrl``, :func:`api.problems.rule_url`).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Response, get
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import HeaderParameter, PathParameter

from api.dto import problems
from api.etag import not_modified
from api.i18n import prefers_chinese
from api.problems import RULES_PATH
from domain.rules.ruleset import PRESETS, RuleSet
from services.errors import NotFoundError
from services.rulebook import Book, Kind, Language, Section, book
from services.view_types import RulesView, rules_view

CACHE_CONTROL = "public, max-age=3600"

AcceptLanguage = Annotated[
    str | None,
    HeaderParameter(
        name="Accept-Language",
        description="`zh-CN` (or `zh`, `zh-Hans`) for Simplified Chinese; English otherwise",
        examples=[
            Example(summary="Chinese", value="zh-CN"),
            Example(summary="English", value="en"),
        ],
    ),
]
IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match", description="The ETag of an earlier answer: 304 if still current"
    ),
]
RuleNumber = Annotated[
    str,
    PathParameter(
        description="A rule number, R1 to R36 (an unknown one is 404)",
        max_length=20,
        examples=[Example(summary="Following suit", value="R23")],
    ),
]
VariantName = Annotated[
    str,
    PathParameter(
        description="A §10 variant, snake_case as in a rule set (an unknown one is 404)",
        max_length=40,
        examples=[Example(summary="Declaring with a joker", value="declare_with_joker")],
    ),
]
PresetName = Annotated[
    str,
    PathParameter(
        description="A preset: standard, tuolaji or duijia (an unknown one is 404)",
        max_length=40,
        examples=[Example(summary="Seed 001 (拖拉机)", value="tuolaji")],
    ),
]


class RuleRef(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    number: str
    title: str
    url: str


class VariantRef(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    name: str
    """The rule-set field, snake_case (camelCase in request bodies)."""
    title: str
    url: str


class PresetRef(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    name: str
    title: str
    url: str
    rules: RulesView
    """The preset's value of every §10 variant."""


class RuleBookIndex(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    language: str
    rules: list[RuleRef]
    variants: list[VariantRef]
    presets: list[PresetRef]


class RuleText(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    number: str
    title: str
    language: str
    text: str
    """The rule in Markdown (its heading left out: that is ``title``)."""


class SectionText(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    name: str
    title: str
    language: str
    text: str
    """The section in Markdown (its heading left out: that is ``title``)."""


def _language(accept_language: str | None) -> Language:
    return Language.ZH_CN if prefers_chinese(accept_language) else Language.EN


def _url(section: Section) -> str:
    if section.kind is Kind.RULE:
        return f"{RULES_PATH}/{section.key}"
    return f"{RULES_PATH}/{section.kind.value}s/{section.key}"


def _index(rules: Book) -> RuleBookIndex:
    presets: dict[str, RuleSet] = dict(PRESETS)
    return RuleBookIndex(
        language=rules.language.value,
        rules=[RuleRef(number=s.key, title=s.title, url=_url(s)) for s in rules.of(Kind.RULE)],
        variants=[
            VariantRef(name=s.key, title=s.title, url=_url(s)) for s in rules.of(Kind.VARIANT)
        ],
        presets=[
            PresetRef(name=s.key, title=s.title, url=_url(s), rules=rules_view(presets[s.key]))
            for s in rules.of(Kind.PRESET)
            if s.key in presets
        ],
    )


def _answer(content: Any, tag: str, language: Language, if_none_match: str | None) -> Response[Any]:
    headers = {
        "ETag": tag,
        "Cache-Control": CACHE_CONTROL,
        "Content-Language": language.value,
        "Vary": "Accept-Language",
    }
    if not_modified(if_none_match, tag):
        return Response(None, status_code=304, headers=headers)
    return Response(content, headers=headers)


def _section(kind: Kind, key: str, accept_language: str | None) -> tuple[Section, Language]:
    language = _language(accept_language)
    found = book(language).find(kind, key)
    if found is None:
        known = book(language).of(kind)
        raise NotFoundError(
            f"the rule book has no {kind.value} {key!r}; known: {', '.join(s.key for s in known)}"
        )
    return found, language


HEADERS = [
    ResponseHeader(
        name="ETag",
        value='"5f2c…"',
        description="A strong tag of the text in this language: send it as If-None-Match",
        documentation_only=True,
    ),
    ResponseHeader(
        name="Cache-Control", value=CACHE_CONTROL, description="Cacheable", documentation_only=True
    ),
    ResponseHeader(
        name="Content-Language",
        value="zh-CN",
        description="`en` or `zh-CN`, by Accept-Language",
        documentation_only=True,
    ),
]
NOT_MODIFIED = ResponseSpec(
    data_container=None,
    description="Not Modified: If-None-Match matches the current ETag (no body)",
    generate_examples=False,
)
R23_EXAMPLE = {
    "number": "R23",
    "title": "跟牌",
    "language": "zh-CN",
    "text": "每人出的张数都与首家相同。\n\n1. 手里有首家出的那一门牌，就必须跟这一门……",
}
INDEX_EXAMPLE = {
    "language": "en",
    "rules": [{"number": "R23", "title": "Following suit", "url": "/v1/rules/R23"}],
    "variants": [
        {
            "name": "self_overcall",
            "title": "Reinforcing and switching your own declaration",
            "url": "/v1/rules/variants/self_overcall",
        }
    ],
    "presets": [
        {
            "name": "tuolaji",
            "title": "拖拉机 (seed 001)",
            "url": "/v1/rules/presets/tuolaji",
            "rules": msgspec.to_builtins(rules_view(PRESETS["tuolaji"])),
        }
    ],
}

VARIANT_EXAMPLE = {
    "name": "declare_with_joker",
    "title": "Declaring with a joker",
    "language": "en",
    "text": "**Values:** `false` (default), `true`. **From:** seed 000. …",
}
PRESET_EXAMPLE = {
    "name": "duijia",
    "title": "打对家 (seed 003)",
    "language": "en",
    "text": "Exponential bottom bonus and the match is won by defending at A. …",
}


def _ok(data: type[msgspec.Struct], summary: str, value: dict[str, Any]) -> ResponseSpec:
    return ResponseSpec(
        data_container=data,
        description="The text, in the language of Accept-Language",
        examples=[Example(summary=summary, value=value)],
        generate_examples=False,
    )


class RuleBookController(Controller):
    path = RULES_PATH
    tags = ["rule book"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @get(
        "/",
        summary="The rule book's contents: rules, variants and presets",
        description="Every rule (R1–R36) with its title, every §10 variant, and every "
        "preset with the value it gives each variant; titles in the language of "
        "`Accept-Language` (English or Simplified Chinese).",
        responses={
            200: _ok(RuleBookIndex, "Contents (abridged)", INDEX_EXAMPLE),
            304: NOT_MODIFIED,
            **problems(),
        },
        response_headers=HEADERS,
    )
    async def index(
        self, accept_language: AcceptLanguage = None, if_none_match: IfNoneMatch = None
    ) -> Response[RuleBookIndex]:
        language = _language(accept_language)
        rules = book(language)
        return _answer(_index(rules), rules.etag, language, if_none_match)

    @get(
        "/{number:str}",
        summary="One rule's text (Markdown), in English or Chinese",
        description="The section of the rule book for one rule number, as cited by "
        "problems (`rule`, `ruleUrl`), docstrings and tests. 404 for a number the book "
        "does not have. `POST /v1/rules/{trick,follow,…}` is the rules oracle.",
        responses={
            200: _ok(RuleText, "R23 in Chinese (abridged)", R23_EXAMPLE),
            304: NOT_MODIFIED,
            **problems(404),
        },
        response_headers=HEADERS,
    )
    async def rule(
        self,
        number: RuleNumber,
        accept_language: AcceptLanguage = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response[RuleText]:
        section, language = _section(Kind.RULE, number, accept_language)
        text = RuleText(
            number=section.key, title=section.title, language=language.value, text=section.text
        )
        return _answer(text, section.etag, language, if_none_match)

    @get(
        "/variants/{name:str}",
        summary="One §10 variant's text (Markdown), in English or Chinese",
        description="What the variant changes, its values and default, and which seed it "
        "comes from. A match's rule set names its variants (`rules` in a match).",
        responses={
            200: _ok(SectionText, "A variant", VARIANT_EXAMPLE),
            304: NOT_MODIFIED,
            **problems(404),
        },
        response_headers=HEADERS,
    )
    async def variant(
        self,
        name: VariantName,
        accept_language: AcceptLanguage = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response[SectionText]:
        return _named(Kind.VARIANT, name, accept_language, if_none_match)

    @get(
        "/presets/{name:str}",
        summary="One preset's text (Markdown), in English or Chinese",
        description="Which seed the preset follows and why it sets each variant as it "
        "does; the values themselves are in `GET /v1/rules` (`presets[].rules`).",
        responses={
            200: _ok(SectionText, "A preset", PRESET_EXAMPLE),
            304: NOT_MODIFIED,
            **problems(404),
        },
        response_headers=HEADERS,
    )
    async def preset(
        self,
        name: PresetName,
        accept_language: AcceptLanguage = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response[SectionText]:
        return _named(Kind.PRESET, name, accept_language, if_none_match)


def _named(
    kind: Kind, name: str, accept_language: str | None, if_none_match: str | None
) -> Response[SectionText]:
    section, language = _section(kind, name, accept_language)
    text = SectionText(
        name=section.key, title=section.title, language=language.value, text=section.text
    )
    return _answer(text, section.etag, language, if_none_match)
