"""What a rating notice says (docs/decisions.md D-career): the ``rating-changed`` frame of
the player's stream and the webhook delivery of the same name carry the same
:class:`RatingNotice`, with the words a phone shows in English and in Chinese."""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec
from msgspec import Meta

from domain.accounts.rating_change import RatingChanged
from services import field_docs

FAMILY_WORDS: Final = {
    "standard": ("standard", "标准规则"),
    "tuolaji": ("tuolaji", "拖拉机"),
    "duijia": ("duijia", "打对家"),
}
"""Each family's name in English and in Chinese (the rule book's presets)."""


class NoticeText(msgspec.Struct, frozen=True, kw_only=True):
    """The notice as a sentence, in each language a player may read."""

    en: Annotated[str, Meta(description="In English.")]
    zh_cn: Annotated[str, Meta(description="In Simplified Chinese.")] = msgspec.field(name="zh-CN")


class RatingNotice(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A rated match moved the player's rating (sent once per player and match)."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    family: Annotated[str, Meta(description="The rule-set family: standard, tuolaji or duijia.")]
    rating_before: Annotated[int, Meta(description="The shown rating before the match.")]
    rating_after: Annotated[int, Meta(description="The shown rating after it.")]
    delta: Annotated[int, Meta(description="ratingAfter − ratingBefore.")]
    deviation: Annotated[int, Meta(description="The rating's uncertainty after the match.")]
    provisional: Annotated[
        bool, Meta(description="Still fewer rated matches than an established player has.")
    ]
    model: Annotated[str, Meta(description="The rating model and its version.")]
    text: Annotated[NoticeText, Meta(description="The notice as a sentence to show.")]


def notice_of(event: RatingChanged) -> RatingNotice:
    """The notice of ``event``: the match, the family, the rating before and after, the
    move, and a sentence in each language."""
    delta = event.rating_after - event.rating_before
    en, zh = FAMILY_WORDS.get(event.family, (event.family, event.family))
    moved = f"{event.rating_before} → {event.rating_after}"
    return RatingNotice(
        match_id=str(event.match_id),
        family=event.family,
        rating_before=event.rating_before,
        rating_after=event.rating_after,
        delta=delta,
        deviation=event.deviation,
        provisional=event.provisional,
        model=event.model,
        text=NoticeText(
            en=f"Your {en} rating: {moved} ({delta:+d})",
            zh_cn=f"你的{zh}等级分：{moved}（{delta:+d}）",
        ),
    )


def notice_data(event: RatingChanged) -> dict[str, Any]:
    """:func:`notice_of` as JSON-ready values (a frame's, a delivery's ``data``)."""
    data: dict[str, Any] = msgspec.to_builtins(notice_of(event))
    return data
