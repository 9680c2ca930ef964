"""No quick-chat phrase names a card, a suit, a rank, trumps, a pair or a tractor, in
English or in Chinese, nor holds a number or a card symbol (R37): a fixed phrase can carry
no hand to a partner."""

from __future__ import annotations

import re
import unicodedata

from domain.names import checked_text
from domain.talk.phrases import BY_ID, PHRASES

ENGLISH_WORDS = (
    # suits and their cards
    "spade", "spades", "heart", "hearts", "diamond", "diamonds", "club", "clubs", "suit",
    "suits", "trump", "trumps", "joker", "jokers", "card", "cards", "hand", "bottom",
    "kitty",
    # ranks, as words and as letters
    "ace", "aces", "king", "kings", "queen", "queens", "jack", "jacks", "knave",
    "a", "k", "q", "j", "one", "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "deuce", "deuces",
    # shapes and plays
    "pair", "pairs", "double", "doubles", "tractor", "tractors", "single", "singles",
    "throw", "lead", "follow", "ruff", "void", "points", "point", "level", "high", "low",
    "big", "small", "red", "black",
)  # fmt: skip
"""English words a phrase may not hold (whole words, case ignored)."""
CHINESE_WORDS = (
    "黑桃", "红桃", "红心", "方块", "方片", "梅花", "草花", "主", "副", "大王", "小王", "王",
    "对", "拖拉机", "拖", "甩", "毙", "杀", "垫", "底", "扣", "分", "级", "花色", "牌",
    "一", "二", "两", "三", "四", "五", "六", "七", "八", "九", "十", "尖", "勾", "圈",
    "老K", "黑", "红", "大", "小", "单",
)  # fmt: skip
"""Chinese words and characters a phrase may not hold (anywhere in it)."""
SYMBOLS = "♠♣♥♦♤♧♡♢❤♥️🃏🀄"
"""Suit and card symbols a phrase may not hold (and the playing-card block, below)."""


def _names_a_card(text: str) -> list[str]:
    found = []
    words = re.findall(r"[A-Za-z]+", text)
    found += [w for w in words if w.lower() in ENGLISH_WORDS]
    found += [w for w in CHINESE_WORDS if w in text]
    found += [ch for ch in text if ch in SYMBOLS]
    found += [ch for ch in text if 0x1F0A0 <= ord(ch) <= 0x1F0FF]  # playing cards
    found += [ch for ch in text if unicodedata.category(ch) == "Nd" or ch.isnumeric()]
    return found


def test_no_phrase_names_a_card_suit_or_rank_in_either_language() -> None:
    named = {
        (p.id, lang): hits
        for p in PHRASES
        for lang, text in (("en", p.en), ("zh", p.zh))
        if (hits := _names_a_card(text))
    }
    assert named == {}


def test_the_lists_catch_what_they_are_for() -> None:
    for text in (
        "Lead trumps!",
        "I have the A",
        "出红桃",
        "我有对子",
        "拖拉机",
        "10 please",
        "♥",
        "十",
    ):
        assert _names_a_card(text), text


def test_ids_are_unique_and_every_phrase_passes_the_text_policy() -> None:
    assert len(BY_ID) == len(PHRASES)
    for p in PHRASES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", p.id), p.id
        assert checked_text(p.en, "phrase", max_length=40) == p.en
        assert checked_text(p.zh, "phrase", max_length=40) == p.zh
        assert p.emote == (p.en == p.zh)
