"""The rule book (docs/rules/en.md, zh-CN.md; services/rulebook) says what the code cites.

Every R-number written anywhere in domain/, services/ and api/ has its section, in both
languages, and every section's number is cited there: the sets are equal. The variant
sections are the §10 fields of ``RuleSet`` and the preset sections its presets. The
two languages have the same sections in the same order; cards in code spans are R4
notation; the README and docs/ link only inside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain.rules.cards import parse_cards
from domain.rules.errors import InvalidCardError
from domain.rules.ruleset import FIELDS, PRESETS
from services.rulebook import Book, Kind, Language, book, parse, source

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"(?<![A-Za-z0-9_])R([0-9]+)(?![0-9])")
"""An R-number as code cites it: ``R23``, ``R23.1``, ``(R17, R20)``, ``"R4"``."""
CARDISH = re.compile(r"(?:[0-9]+|[JQKA])[SHCD]|[SB]J")
"""A token that looks like a card (so ``11H`` is caught, and ``R23`` or ``null`` are not)."""


def cited_in(*packages: str) -> set[str]:
    found: set[str] = set()
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            found |= {f"R{n}" for n in CITED.findall(path.read_text(encoding="utf-8"))}
    return found


def keys(rules: Book, kind: Kind) -> list[str]:
    return [s.key for s in rules.of(kind)]


@pytest.mark.parametrize("language", list(Language))
def test_every_rule_the_code_cites_has_a_section_and_every_section_is_cited(
    language: Language,
) -> None:
    cited = cited_in("domain", "services", "api")
    sections = set(keys(book(language), Kind.RULE))
    assert sections - cited == set(), "sections no code cites"
    assert cited - sections == set(), "rules cited without a section"


def test_the_rules_run_from_r1_without_a_gap() -> None:
    numbers = keys(book(Language.EN), Kind.RULE)
    assert numbers == [f"R{n}" for n in range(1, len(numbers) + 1)]


@pytest.mark.parametrize("language", list(Language))
def test_the_variants_are_the_rule_sets_fields_and_the_presets_its_presets(
    language: Language,
) -> None:
    assert keys(book(language), Kind.VARIANT) == list(FIELDS)
    assert set(keys(book(language), Kind.PRESET)) == set(PRESETS)


def test_both_languages_have_the_same_sections_in_the_same_order() -> None:
    en, zh = book(Language.EN), book(Language.ZH_CN)
    assert [(s.kind, s.key) for s in en.sections] == [(s.kind, s.key) for s in zh.sections]
    for english, chinese in zip(en.sections, zh.sections, strict=True):
        assert re.search(r"[\u4e00-\u9fff]", chinese.title + chinese.text), chinese.key
        assert english.etag != chinese.etag


def test_the_docs_cite_only_rules_the_book_has() -> None:
    sections = set(keys(book(Language.EN), Kind.RULE))
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        cited = {f"R{n}" for n in CITED.findall(path.read_text(encoding="utf-8"))}
        assert cited <= sections, (path.name, sorted(cited - sections))


@pytest.mark.parametrize("language", list(Language))
def test_cards_in_code_spans_are_r4_notation(language: Language) -> None:
    spans = re.findall(r"`([^`]+)`", source(language))
    tokens = [t for span in spans for t in span.split() if CARDISH.fullmatch(t)]
    assert len(tokens) > 300
    bad = []
    for token in tokens:
        try:
            parse_cards(token)
        except InvalidCardError:
            bad.append(token)
    assert bad == ["11H", "1S"]  # R4's own examples of what is refused


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_and_docs_link_only_inside_the_repository() -> None:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text and "RULES.md" not in text, path.name
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address, not a file
            resolved = (path.parent / target).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), (path.name, target)


@pytest.mark.parametrize(
    ("text", "sections"),
    [
        ("# Book\n\n## R1 — Seats\n\nFour.\n", [("rule", "R1", "Seats", "Four.")]),
        (
            "intro\n## R2 — Partners\n\nA\n\n## Words\n\nnot a section\n## R3 — Cards\nB\n",
            [("rule", "R2", "Partners", "A"), ("rule", "R3", "Cards", "B")],
        ),
        (
            "## Variant: level_cap — Cap\nSix.\n## Preset: duijia — 打对家\nA.\n",
            [("variant", "level_cap", "Cap", "Six."), ("preset", "duijia", "打对家", "A.")],
        ),
        ("## R0 — Zero\nx\n## R4 - hyphen\ny\n", []),
    ],
)
def test_sections_are_read_from_their_headings(
    text: str, sections: list[tuple[str, str, str, str]]
) -> None:
    read = parse(text, Language.EN).sections
    assert [(s.kind.value, s.key, s.title, s.text) for s in read] == sections


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("## R1 — A\nx\n## R1 — B\ny\n", "R1 twice"),
        ("## R1 — A\n\n## R2 — B\ny\n", "R1 is empty"),
    ],
)
def test_a_malformed_book_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(text, Language.EN)


def test_chinese_headings_use_chinese_markers() -> None:
    text = "## R23 — 跟牌\n必须跟。\n## 变体：self_overcall — 自保与自反\n可以。\n"
    read = parse(text, Language.ZH_CN)
    assert [(s.kind, s.key, s.title) for s in read.sections] == [
        (Kind.RULE, "R23", "跟牌"),
        (Kind.VARIANT, "self_overcall", "自保与自反"),
    ]
    assert parse(text, Language.EN).of(Kind.VARIANT) == ()
