"""The quick-chat catalogue: the phrases and emotes anyone at a table may send, in English
and Chinese, declared once (R37).

None of them names a card, a suit, a rank, trumps, a pair or a tractor in either language,
nor holds a number: a fixed phrase can carry no hand to a partner (a test checks every
text against lists of such words and symbols, ``tests/domain/test_phrases.py``). The
catalogue only grows: a phrase once sent keeps its id and words, since messages name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True, slots=True)
class Phrase:
    """One quick-chat phrase or emote: its id and its words in each language."""

    id: str
    en: str
    zh: str
    emote: bool = False


PHRASES: Final = (
    Phrase("hello", "Hello", "你好"),
    Phrase("good-luck", "Good luck", "祝好运"),
    Phrase("have-fun", "Have fun", "玩得开心"),
    Phrase("well-played", "Well played", "打得漂亮"),
    Phrase("nice", "Nice!", "厉害！"),
    Phrase("thanks", "Thanks", "谢谢"),
    Phrase("sorry", "Sorry", "抱歉"),
    Phrase("oops", "Oops", "哎呀"),
    Phrase("hurry-up", "Hurry up please", "请快点"),
    Phrase("thinking", "Let me think", "让我想想"),
    Phrase("be-right-back", "Be right back", "马上回来"),
    Phrase("good-game", "Good game", "打得好"),
    Phrase("rematch", "Rematch?", "再战？"),
    Phrase("goodbye", "Goodbye", "再见"),
    Phrase("thumbs-up", "👍", "👍", emote=True),
    Phrase("smile", "😄", "😄", emote=True),
    Phrase("surprised", "😮", "😮", emote=True),
    Phrase("sad", "😢", "😢", emote=True),
    Phrase("clap", "👏", "👏", emote=True),
    Phrase("wave", "👋", "👋", emote=True),
)
"""Every phrase, in the order apps show them."""

BY_ID: Final = MappingProxyType({p.id: p for p in PHRASES})
"""The catalogue by id."""
