"""The rule book, served: ``GET /v1/rules`` and the text of each rule, variant and preset.

The text is ``docs/rules/en.md`` or ``docs/rules/zh-CN.md`` (:mod:`services.rulebook`), in
the language ``Accept-Language`` prefers (:func:`api.i18n.prefers_chinese`: Simplified
Chinese or English). Every answer says its language (``Content-Language``, ``Vary:
Accept-Language``), carries a strong ``ETag`` of its text (``If-None-Match`` → 304) and may
be cached for an hour (``Cache-Control: public, max-age=3600``). Problems link here
(``ruleUrl``, :func:`api.problems.rule_url`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

import msgspec
from litestar import Controller, Response, get
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import HeaderParameter, PathParameter
from msgspec import Meta

from api.dto import problems
from api.etag import not_modified
from api.i18n import prefers_chinese
from api.problems import PROBLEM_MEDIA_TYPE, RULES_PATH, Problem
from api.routes import route
from domain.rules.ruleset import PRESETS
from services.errors import NotFoundError
from services.rulebook import Book, Kind, Language, Section, book
from services.view_types import RulesView, rules_view

CACHE_CONTROL = "public, max-age=3600"

AcceptLang = Annotated[
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


def _name(about: str, summary: str, value: str, max_length: int = 40) -> Any:
    """A path parameter naming a section of the rule book (an unknown one is 404), with
    one example."""
    return PathParameter(
        description=f"{about} (an unknown one is 404)",
        max_length=max_length,
        examples=[Example(summary=summary, value=value)],
    )


RuleNumber = Annotated[str, _name("A rule number, R1 to R37", "Following suit", "R23", 20)]
Variant = Annotated[
    str,
    _name(
        "A §10 variant, snake_case as in a rule set", "Declaring with a joker", "declare_with_joker"
    ),
]
Preset = Annotated[
    str, _name("A preset: standard, tuolaji or duijia", "Seed 001 (拖拉机)", "tuolaji")
]


def _field(description: str, *examples: str) -> Any:
    return msgspec.Meta(description=description, examples=list(examples))


Number = Annotated[str, _field("The rule number", "R23")]
Title = Annotated[str, _field("The title in the answer's language", "Following suit", "跟牌")]
Url = Annotated[str, _field("Where its text is served", "/v1/rules/R23")]
VariantKey = Annotated[
    str, _field("The rule-set field, snake_case (camelCase in request bodies)", "self_overcall")
]
PresetKey = Annotated[str, _field("The preset, as `preset` in POST /v1/matches", "tuolaji")]
LanguageTag = Annotated[str, _field("`en` or `zh-CN` (as Content-Language)", "zh-CN")]
Markdown = Annotated[
    str,
    _field(
        "The section in Markdown, its heading left out (that is `title`); cards in R4 "
        "notation in code spans",
        "每人出的张数都与首家相同，并且：\n\n1. **先跟同一门。** 手里有首家出的那一门牌……",
    ),
]


class RuleRef(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A rule of the rule book and where its text is."""

    number: Number
    title: Title
    url: Url


class VariantRef(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A §10 variant and where its text is."""

    name: VariantKey
    title: Annotated[str, _field("The title", "Reinforcing and switching your own declaration")]
    url: Annotated[str, _field("Its text", "/v1/rules/variants/self_overcall")]


class PresetRef(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A named rule set (§10) and where its text is."""

    name: PresetKey
    title: Annotated[str, _field("The title", "拖拉机 (seed 001)")]
    url: Annotated[str, _field("Its text", "/v1/rules/presets/tuolaji")]
    rules: Annotated[RulesView, Meta(description="The preset's value of every §10 variant.")]


class RuleBookIndex(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The rule book's contents: rules, variants and presets."""

    language: LanguageTag
    rules: Annotated[list[RuleRef], Meta(description="R1 … R37, in order.")]
    variants: Annotated[
        list[VariantRef], Meta(description="The §10 variants, in the order of a rule set's fields.")
    ]
    presets: Annotated[list[PresetRef], Meta(description="The named rule sets (§10 presets)")]


class RuleText(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A rule's text (Markdown) in the language asked for."""

    number: Number
    title: Title
    language: LanguageTag
    text: Markdown


class SectionText(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A variant's or a preset's text (Markdown) in the language asked for."""

    name: Annotated[str, _field("The variant's or preset's name", "declare_with_joker")]
    title: Annotated[str, _field("The title", "Declaring with a joker", "带王报主")]
    language: LanguageTag
    text: Markdown


def _language(accept_language: str | None) -> Language:
    return Language.ZH_CN if prefers_chinese(accept_language) else Language.EN


def _url(section: Section) -> str:
    if section.kind is Kind.RULE:
        return f"{RULES_PATH}/{section.key}"
    return f"{RULES_PATH}/{section.kind.value}s/{section.key}"


@lru_cache(maxsize=len(Language))
def _index(rules: Book) -> RuleBookIndex:
    return RuleBookIndex(
        language=rules.language.value,
        rules=[RuleRef(number=s.key, title=s.title, url=_url(s)) for s in rules.of(Kind.RULE)],
        variants=[
            VariantRef(name=s.key, title=s.title, url=_url(s)) for s in rules.of(Kind.VARIANT)
        ],
        presets=[
            PresetRef(name=s.key, title=s.title, url=_url(s), rules=rules_view(PRESETS[s.key]))
            for s in rules.of(Kind.PRESET)
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


def _problem(description: str) -> ResponseSpec:
    """A problem answer of the rule book's own (a 404, a 405), documented."""
    return ResponseSpec(
        data_container=Problem,
        media_type=PROBLEM_MEDIA_TYPE,
        description=description,
        generate_examples=False,
    )


NOT_FOUND = _problem("The rule book has no such rule, variant or preset (the problem names it)")
RESPONSES: dict[int, ResponseSpec] = {304: NOT_MODIFIED, **problems(), 404: NOT_FOUND}
ORACLE_NAME = _problem(
    "A name of the rules oracle (`follow`, `throw`, …): that path takes POST only"
)
ANSWERED = "The text, in the language of Accept-Language"
TEXT_ROUTE: dict[str, Any] = {"response_description": ANSWERED, "response_headers": HEADERS}
"""The route arguments of a text of the rule book: its language and ETag."""


class RuleBookController(Controller):
    path = RULES_PATH
    tags = ["rule book"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @get(
        "/",
        summary="The rule book's contents: rules, variants and presets",
        description="Every rule (R1–R37) with its title, every §10 variant, and every "
        "preset with the value it gives each variant; titles in the language of "
        "`Accept-Language` (English or Simplified Chinese).",
        responses={304: NOT_MODIFIED, **problems()},
        response_description=ANSWERED,
        response_headers=HEADERS,
    )
    async def get_rule_book(
        self, accept_language: AcceptLang = None, if_none_match: IfNoneMatch = None
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
        responses={**RESPONSES, 405: ORACLE_NAME},
        response_description=ANSWERED,
        response_headers=HEADERS,
    )
    async def get_rule(
        self,
        number: RuleNumber,
        accept_language: AcceptLang = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response[RuleText]:
        section, language = _section(Kind.RULE, number, accept_language)
        text = RuleText(
            number=section.key, title=section.title, language=language.value, text=section.text
        )
        return _answer(text, section.etag, language, if_none_match)

    @route("/variants/{name:str}", responses=RESPONSES, **TEXT_ROUTE)
    async def get_variant(
        self, name: Variant, accept_language: AcceptLang = None, if_none_match: IfNoneMatch = None
    ) -> Response[SectionText]:
        """One §10 variant's text (Markdown), in English or Chinese

        What the variant changes, its values and default, and which seed it comes from. A
        match's rule set names its variants (`rules` in a match).
        """
        return _named(Kind.VARIANT, name, accept_language, if_none_match)

    @route("/presets/{name:str}", responses=RESPONSES, **TEXT_ROUTE)
    async def get_preset(
        self, name: Preset, accept_language: AcceptLang = None, if_none_match: IfNoneMatch = None
    ) -> Response[SectionText]:
        """One preset's text (Markdown), in English or Chinese

        Which seed the preset follows and why it sets each variant as it does; the values
        themselves are in `GET /v1/rules` (`presets[].rules`).
        """
        return _named(Kind.PRESET, name, accept_language, if_none_match)


def _named(
    kind: Kind, name: str, accept_language: str | None, if_none_match: str | None
) -> Response[SectionText]:
    section, language = _section(kind, name, accept_language)
    text = SectionText(
        name=section.key, title=section.title, language=language.value, text=section.text
    )
    return _answer(text, section.etag, language, if_none_match)
