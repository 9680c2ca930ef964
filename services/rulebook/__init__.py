"""The rule book as data: one section per rule (R1, R2, …), per §10 variant and per preset.

The rule book is ``docs/rules/en.md`` and ``docs/rules/zh-CN.md``. This package holds
them as package data (``en.md`` and ``zh-CN.md`` here are links to those files in the
repository; a built wheel carries their text), so an installed service reads them
without the repository around it.

A section starts at a level-2 heading of one of these forms and runs to the next
level-2 heading (any other ``##`` heading ends it and starts no section)::

    ## R23 — Following suit                  ## R23 — 跟牌
    ## Variant: self_overcall — …            ## 变体：self_overcall — …
    ## Preset: tuolaji — …                   ## 预设：tuolaji — …

The rule number or the variant/preset name is the section's stable key; the text after
the dash is its title in that language; the body is Markdown. A book that breaks the
form (a key twice, an empty section) raises ``ValueError`` when it is read.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Final


class Language(StrEnum):
    """The languages of the rule book (BCP 47 tags, as in ``Content-Language``)."""

    EN = "en"
    ZH_CN = "zh-CN"


class Kind(StrEnum):
    RULE = "rule"
    VARIANT = "variant"
    PRESET = "preset"


_DASH: Final = r" — "
_HEADINGS: Final[dict[Language, tuple[tuple[Kind, re.Pattern[str]], ...]]] = {
    language: (
        (Kind.RULE, re.compile(rf"## (R[1-9][0-9]*){_DASH}(\S.*)")),
        (Kind.VARIANT, re.compile(rf"## {variant}([a-z_]+){_DASH}(\S.*)")),
        (Kind.PRESET, re.compile(rf"## {preset}([a-z_]+){_DASH}(\S.*)")),
    )
    for language, variant, preset in (
        (Language.EN, "Variant: ", "Preset: "),
        (Language.ZH_CN, "变体：", "预设："),
    )
}


@dataclass(frozen=True, slots=True)
class Section:
    """One section of the rule book in one language."""

    kind: Kind
    key: str
    """``R23``, a §10 field name (``self_overcall``) or a preset name (``tuolaji``)."""
    title: str
    text: str
    """The Markdown body, without its heading."""
    etag: str = field(default="")
    """A strong ETag of the section's language, key, title and text (quoted)."""


@dataclass(frozen=True, slots=True)
class Book:
    """The rule book in one language, in the order of the file."""

    language: Language
    sections: tuple[Section, ...]
    etag: str
    """A strong ETag of the whole book (quoted): it changes when any section does."""

    def of(self, kind: Kind) -> tuple[Section, ...]:
        return tuple(s for s in self.sections if s.kind is kind)

    def find(self, kind: Kind, key: str) -> Section | None:
        return next((s for s in self.sections if s.kind is kind and s.key == key), None)


def _tag(*parts: str) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()
    return f'"{digest[:32]}"'


def parse(text: str, language: Language) -> Book:
    """The sections of a rule book's Markdown ``text`` (see the module docstring)."""
    patterns = _HEADINGS[language]
    sections: list[Section] = []
    seen: set[tuple[Kind, str]] = set()
    current: tuple[Kind, str, str] | None = None
    body: list[str] = []

    def close() -> None:
        if current is None:
            return
        kind, key, title = current
        markdown = "\n".join(body).strip()
        if not markdown:
            raise ValueError(f"rule book ({language}): section {key} is empty")
        tag = _tag(language, kind, key, title, markdown)
        sections.append(Section(kind, key, title, markdown, tag))

    for line in text.splitlines():
        if not line.startswith("## "):
            if current is not None:
                body.append(line)
            continue
        close()
        current, body = None, []
        for kind, pattern in patterns:
            m = pattern.fullmatch(line.rstrip())
            if m is not None:
                if (kind, m.group(1)) in seen:
                    raise ValueError(f"rule book ({language}): {m.group(1)} twice")
                seen.add((kind, m.group(1)))
                current = (kind, m.group(1), m.group(2).strip())
                break
    close()
    book_tag = _tag(language, *(s.etag for s in sections))
    return Book(language, tuple(sections), book_tag)


def source(language: Language) -> str:
    """The Markdown of the rule book in ``language``, as shipped with the package."""
    return (resources.files(__name__) / f"{language.value}.md").read_text(encoding="utf-8")


@lru_cache(maxsize=len(Language))
def book(language: Language) -> Book:
    """The rule book in ``language`` (read and parsed once per process)."""
    return parse(source(language), language)
