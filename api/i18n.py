"""Problem titles and details in English or Simplified Chinese.

The language is chosen by ``Accept-Language`` (:func:`prefers_chinese`): ``zh``,
``zh-CN``, ``zh-Hans`` (and other Simplified tags) → Chinese, q-values honoured, English
otherwise. Traditional tags (``zh-TW``, ``zh-HK``, ``zh-Hant``) are not served: they are
skipped, so the next preference decides.

Every error ``code`` has a :class:`Message`: an English and a Chinese title and one
Chinese sentence. The Chinese ``detail`` is all Chinese (docs/decisions.md D-contract):
that sentence, the rule (R-number), then the facts the English detail names in a form no
language owns — the cards in R4 notation (``5C 5C 7C``) exactly as the engine wrote them,
the seats, versions, quoted input and the field — with Chinese labels::

    必须按首家出牌的花色和牌型跟牌（R23）。牌：5C 7C；座位：2

A validation problem's ``errors[].message`` is put in Chinese too (:func:`field_message`).

This module imports nothing from the rest of the API (``api.problems`` imports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Message:
    """The human text of one error code."""

    title_en: str
    title_zh: str
    sentence_zh: str
    """Chinese sentence put before the rule and the English detail."""


def _m(title_en: str, title_zh: str, sentence_zh: str) -> Message:
    return Message(title_en, title_zh, sentence_zh)


MESSAGES: Final[dict[str, Message]] = {
    # -- transport and generic (api.problems.PROBLEM_TYPES) -------------------------------
    "bad-request": _m("Bad request", "请求错误", "请求格式不正确"),
    "invalid-input": _m("Invalid input", "输入无效", "输入的内容无法理解"),
    "invalid-card": _m("Invalid card notation", "牌面记法无效", "牌面须按 R4 记法书写"),
    "invalid-rule-set": _m("Invalid rule set", "规则设置无效", "规则设置（§10）无效"),
    "validation-failed": _m("Request validation failed", "请求校验失败", "请求中有字段未通过校验"),
    "illegal-move": _m("Move not allowed by the rules", "规则不允许此操作", "规则不允许此操作"),
    "not-found": _m("Not found", "未找到", "所请求的资源不存在"),
    "method-not-allowed": _m("Method not allowed", "不允许的方法", "此路径不支持该请求方法"),
    "unsupported-media-type": _m(
        "Unsupported media type", "不支持的媒体类型", "请求体的媒体类型不受支持"
    ),
    "not-acceptable": _m("Not acceptable", "无法提供所需格式", "无法以所要求的媒体类型应答"),
    "unauthorized": _m("Unauthorized", "未授权", "需要有效的令牌"),
    "forbidden": _m("Forbidden", "禁止访问", "此令牌无权执行该操作"),
    "payload-too-large": _m("Request body too large", "请求体过大", "请求体超过了大小限制"),
    "idempotency-key-reused": _m(
        "Idempotency-Key reused",
        "幂等键已被使用",
        "这个幂等键（`Idempotency-Key`）已用于另一个不同的请求，请换一个键",
    ),
    "idempotency-in-flight": _m(
        "Request with this Idempotency-Key in flight",
        "同一幂等键的请求正在处理",
        "使用同一幂等键（`Idempotency-Key`）的请求仍在处理中，请稍后重试",
    ),
    "rate-limited": _m("Too many requests", "请求过多", "请求过于频繁，请稍后再试"),
    "last-event-id-ahead": _m(
        "Last-Event-ID beyond the stream",
        "`Last-Event-ID` 超出范围",
        "`Last-Event-ID` 超出了该流当前的版本或位置，从未发送过这样的帧",
    ),
    "quota-exceeded": _m("Quota exceeded", "超出配额", "此类请求已超出每小时配额，请稍后再试"),
    "exports-busy": _m(
        "Exports busy", "导出繁忙", "服务器正在生成的导出已达上限，请按 Retry-After 稍后重试"
    ),
    "round-paused": _m("Round paused", "本轮已暂停", "本轮的时钟已暂停，请先恢复"),
    "round-not-paused": _m("Round not paused", "本轮未暂停", "本轮的时钟没有暂停，无需恢复"),
    "team-not-active": _m(
        "Team not active", "队伍不在赛中", "该队伍已退出或未报到，不能进行此操作"
    ),
    "table-taken": _m("Table number taken", "桌号已被占用", "该桌号已分配给另一支队伍"),
    "unknown-parameter": _m(
        "Unknown query parameter", "未知的查询参数", "此路由不接受该查询参数，请删除后重试"
    ),
    "invalid-name": _m("Name not accepted", "名称不可用", "名称含有不允许的字符或格式，或长度不符"),
    "subscription-exists": _m("Subscription exists", "订阅已存在", "同名的事件流订阅已经存在"),
    "lease-lost": _m(
        "Lease lost", "租约已失效", "此消费者对订阅的租约已过期或已被他人取得，请重新认领"
    ),
    "too-many-streams": _m(
        "Too many live streams", "实时流过多", "同时打开的实时流已达上限，请先关闭一个"
    ),
    "webhook-target-refused": _m(
        "Webhook target refused",
        "不允许的 Webhook 地址",
        "Webhook 只能发往公网的 https 地址；内部地址（回环、私有网络、链路本地）须在 "
        "`WEBHOOK_PRIVATE_TARGETS` 中列出",
    ),
    "internal-error": _m(
        "Internal server error", "服务器内部错误", "服务器未能处理此请求，未做任何更改"
    ),
    "not-ready": _m("Service not ready", "服务尚未就绪", "服务暂时无法访问存储，请稍后再试"),
    "shengji-error": _m("Request refused", "请求被拒绝", "请求被拒绝"),
    # -- services (services/errors.py, services/game.py, services/verify.py) ----------------
    "version-conflict": _m(
        "Version conflict", "版本冲突", "另一条命令已先修改了该对局，请重新读取后再试"
    ),
    "precondition-failed": _m(
        "Precondition failed", "前置条件不成立", "`If-Match` 中的版本不是当前版本"
    ),
    "verification-failed": _m(
        "Deal verification failed", "发牌校验失败", "发牌与其承诺或记录的手牌不符"
    ),
    "round-not-scored": _m("Round not scored yet", "本局尚未计分", "本局计分之前种子保密"),
    "deal-embargoed": _m(
        "Deal embargoed", "牌局暂不公开", "本轮比赛各桌打同样的牌，须等本轮全部结束后才能公开"
    ),
    "no-round": _m("No round in play", "没有进行中的一局", "四个座位坐满后才开始一局"),
    "match-finished": _m("Match finished", "比赛已结束", "比赛已经结束"),
    # -- game records (services/records/format.py) -----------------------------------------
    "record-invalid": _m("Record invalid", "棋谱无效", "无法读取该对局记录"),
    "record-tampered": _m("Record tampered", "棋谱被篡改", "该对局记录重放时被规则拒绝"),
    "record-unavailable": _m(
        "Record unavailable", "暂无棋谱", "对局结束后才能导出记录（记录会公开所有的牌）"
    ),
    "not-timed-out": _m("Not timed out yet", "尚未超时", "该座位还有时间，不能判其超时"),
    "no-turn-timer": _m("No turn timer", "没有计时", "现在没有座位在计时，无法判超时"),
    # -- table talk (domain/talk/table_talk.py; R37) ---------------------------------------
    "already-friends": _m("Already friends", "已是好友", "你们已经是好友了"),
    "already-requested": _m("Request already sent", "请求已发出", "你的好友请求正在等待回复"),
    "no-request": _m("No friend request", "没有好友请求", "这里没有等待回复的好友请求"),
    "not-friends": _m("Not friends", "不是好友", "你们不是好友"),
    "not-blocked": _m("Not blocked", "未屏蔽", "你没有屏蔽这位玩家"),
    "invitation-closed": _m("Invitation closed", "邀请已结束", "这份牌桌邀请已被接受、拒绝或撤回"),
    "invitation-expired": _m("Invitation expired", "邀请已过期", "这份牌桌邀请已经过期"),
    "free-text-off": _m("Free text not allowed", "不能自由发言", "这张牌桌只允许快捷语（R37）"),
    "no-such-message": _m("No such message", "没有这条消息", "这张牌桌没有这条消息"),
    "invalid-text": _m("Text not allowed", "文字不允许", "消息中含有不可见、控制或仿冒字符"),
    "talk-rate-limited": _m(
        "Talking too fast", "发言过于频繁", "每个座位每分钟的消息数有上限，请稍后再说"
    ),
    "reports-exceeded": _m("Too many reports", "举报次数过多", "在这张牌桌的举报已达上限"),
    # -- match and seats (domain/game/match.py) ---------------------------------------------
    "seat-taken": _m("Seat taken", "座位已被占用", "该座位已有人"),
    "seats-free": _m("Seats still free", "还有空座位", "需要四名玩家才能开始"),
    "round-in-progress": _m("Round in progress", "本局仍在进行", "上一局尚未结束"),
    "round-not-open": _m("Round not open", "该局未开放", "该局不是本场比赛当前的一局"),
    # -- the deal (domain/game/round.py) ---------------------------------------------------
    "already-dealt": _m("Already dealt", "已经发过牌", "本局已经发过牌"),
    "not-dealt": _m("Not dealt yet", "尚未发牌", "本局尚未发牌"),
    "still-dealing": _m("Still dealing", "仍在摸牌", "牌还没摸完，此时不能过"),
    "already-passed": _m("Already passed", "已经过了", "该座位已经过了"),
    "not-playing-yet": _m("Not playing yet", "尚未开始出牌", "主牌和底牌确定之后才能出牌"),
    # -- declaring and overcalling (domain/rules/bidding.py, shows.py, overcall.py) --------
    "already-declared": _m("Already declared", "已有人亮主", "已有人亮主，更强的亮牌须等反主"),
    "not-eligible-to-declare": _m(
        "Not eligible to declare", "不能亮主", "此时只有庄家一方可以亮主"
    ),
    "not-your-turn-to-declare": _m(
        "Not your turn to declare", "还没轮到你亮主", "还没轮到你亮主或过"
    ),
    "declaring-closed": _m("Declaring closed", "亮主已结束", "亮主只能在摸牌时进行，之后只能反主"),
    "jokers-cannot-declare": _m(
        "Jokers cannot declare", "王不能亮主", "单独的王不能亮主，对王只能反主"
    ),
    "deal-already-ended": _m("Deal already ended", "发牌已结束", "发牌已经结束"),
    "not-a-show": _m("Not a show", "不是有效的亮牌", "亮牌须为一张级牌、一对相同的级牌或对王"),
    "not-a-level-card": _m("Not a level card", "不是级牌", "亮牌只能用级牌"),
    "no-joker-of-matching-colour": _m(
        "Matching joker missing", "缺少同色的王", "亮牌须带上与花色同色的王"
    ),
    "declaration-too-weak": _m("Show too weak", "亮牌不够大", "反主必须比现有的亮牌更强"),
    "self-overcall-not-allowed": _m(
        "Self-overcall not allowed", "不能自己反自己", "不能反自己现有的亮牌"
    ),
    "not-your-turn-to-overcall": _m(
        "Not your turn to overcall", "还没轮到你反主", "还没轮到你反主或过"
    ),
    "overcall-window-closed": _m("Overcall window closed", "反主时机已过", "现在不能反主"),
    "weak-hand-redeal-off": _m(
        "Weak-hand redeal off", "未开启暴动", "本场规则没有暴动（手牌分少重发）"
    ),
    "weak-hand-too-strong": _m("Hand too strong", "手牌分数太高", "手牌分数太高，不能暴动"),
    "board-trump-fixed": _m(
        "The board's trump is fixed",
        "本副牌已定主",
        "本副牌的庄家、级牌和主牌已固定，不能亮主或反主",
    ),
    "board-redeal-shared": _m(
        "A board's redeal is shared",
        "本副牌不能单独暴动",
        "弱牌重发由本副牌的牌决定，各桌一起重发，不由玩家要求",
    ),
    "redeal-request-closed": _m(
        "Redeal request closed", "不能再要求暴动", "暴动只能在发牌后、扣底前提出"
    ),
    # -- burying (R21) ---------------------------------------------------------------------
    "not-burying-now": _m("Not burying now", "现在不扣底", "现在不是扣底的时候"),
    "not-your-turn-to-bury": _m("Not your turn to bury", "还没轮到你扣底", "还没轮到你扣底"),
    "bury-eight": _m("Bury eight cards", "须扣八张底牌", "必须正好扣八张底牌"),
    "illegal-bury": _m("Illegal bury", "扣底不合规则", "只能扣自己手中的八张牌"),
    # -- play (domain/rules/play.py) -------------------------------------------------------
    "not-your-turn": _m("Not your turn", "还没轮到你", "还没轮到你出牌"),
    "cards-not-in-hand": _m("Cards not in hand", "手中没有这些牌", "这些牌不全在你的手中"),
    "empty-play": _m("Empty play", "没有出牌", "出牌至少要一张"),
    "illegal-follow": _m("Illegal follow", "跟牌不合规则", "必须按首家出牌的花色和牌型跟牌"),
    "mixed-lead": _m("Mixed lead", "首家出牌混杂", "首家出牌必须属于同一门（同一花色或都是主牌）"),
    "round-over": _m("Round over", "本局已结束", "所有的牌都已出完"),
    # -- the rules oracle (api/rules_oracle.py) ---------------------------------------------
    "impossible-position": _m(
        "Impossible position",
        "不可能的牌面",
        "这些牌在规则下不可能出现（每种牌只有两张，首家出牌须同一门）",
    ),
    # -- tournaments (domain/tournament/tournament.py, api/tournaments/; R36) ----------------------
    "round-in-play": _m(
        "Round in play",
        "本轮比赛仍在进行",
        "本轮还有牌桌没有结果：各桌都结束前，本轮的牌局与成绩不公开，也不能开始下一轮",
    ),
    "tournament-over": _m("Tournament over", "比赛已全部结束", "所有轮次都已赛完"),
    "round-not-scheduled": _m("Round not scheduled", "该轮尚未编排", "该轮次尚未编排"),
    "round-not-current": _m("Not the current round", "不是当前轮次", "只能为当前轮次运行机器人"),
    "no-such-table": _m("No such table", "没有该牌桌", "该轮没有这张牌桌"),
    "table-not-seated": _m(
        "Table not seated", "牌桌尚未就座", "该桌尚未安排好座位，请再次编排本轮"
    ),
    "result-recorded": _m("Result recorded", "成绩已记录", "该桌成绩已记录，只能由组织者更正"),
    "result-not-recorded": _m("Result not recorded", "成绩尚未记录", "该桌还没有成绩，无法更正"),
    "table-closed": _m(
        "Table closed to spectators",
        "牌桌暂不开放观战",
        "本轮比赛各桌打同样的牌，本轮全部结束后才能观战",
    ),
    # -- the organiser's controls (domain/tournament/controls.py; R36) -------------
    "registration-open": _m(
        "Registration still open", "报名尚未截止", "报名仍在进行，请先开始比赛"
    ),
    "registration-closed": _m(
        "Registration closed", "报名已截止", "报名已经截止（只有组织者可在瑞士制比赛中补报）"
    ),
    "no-such-team": _m("No such team", "没有该队伍", "比赛中没有这个编号的队伍"),
    "team-name-taken": _m("Team name taken", "队名已被使用", "已有队伍使用这个名字"),
    "tournament-full": _m("Tournament full", "比赛名额已满", "参赛队伍已达上限"),
    "team-withdrawn": _m("Team withdrawn", "队伍已退赛", "该队伍已经退出比赛"),
    "too-few-teams": _m("Too few teams", "队伍不足", "到场的队伍不够，无法按设定的轮数开始比赛"),
    "pairing-invalid": _m(
        "Invalid pairing",
        "对阵安排无效",
        "对阵须让每支在赛队伍恰好出场一次，只有队数为奇数时才能轮空",
    ),
    "swiss-only": _m(
        "Swiss tournaments only", "仅限瑞士制", "循环赛每两队都要相遇，不能设置禁止对阵"
    ),
    "not-forbidden": _m("Pairing not forbidden", "未禁止该对阵", "这两支队伍并未被禁止相遇"),
    "round-started": _m(
        "Round already started", "该轮已经开始", "只能在下一轮开始之前设置它的对阵"
    ),
    # -- players, invites and the lobby (docs/players.md) ---------------------------------
    "not-seated": _m("Not seated", "未入座", "你在该对局中没有座位（或已离开）"),
    "left-match": _m("Left the match", "已离开对局", "你已离开该对局，现在由机器人代打你的座位"),
    # -- a table's life (docs/decisions.md D-table-life) -----------------------------------
    "not-begun": _m("Match not begun", "对局尚未开始", "对局还没开始，不能认输；可以离开牌桌"),
    "already-resigned": _m("Already resigned", "已经认输", "该座位已经认输，正在等待搭档也认输"),
    "match-not-finished": _m("Match not finished", "对局尚未结束", "对局结束之后才能再来一局"),
    "rematch-exists": _m("Rematch exists", "已有再来一局", "这场对局已经开了再来一局"),
    "rematch-confirmed": _m(
        "Rematch confirmed already", "已确认再来一局", "你已经确认过再来一局的座位"
    ),
    "tournament-table": _m(
        "Tournament table", "比赛牌桌", "比赛牌桌的下一场由比赛编排，不能再来一局"
    ),
    "already-seated": _m("Already seated", "已经入座", "你已经坐在这场比赛的一个座位上"),
    "too-many-sessions": _m("Too many sessions", "会话过多", "会话数量已达上限，请先结束一个"),
    "no-such-session": _m("No such session", "没有该会话", "该会话不存在或已结束"),
    "seat-free": _m("Seat not taken", "座位无人", "该座位还没有人，无法换发令牌"),
    "no-free-seat": _m("No free seat", "没有空座位", "这场比赛已经没有空座位"),
    "invite-expired": _m("Invite expired", "邀请码已失效", "该邀请码已经失效"),
    "ticket-closed": _m("Ticket closed", "排队票已关闭", "该排队票已经配对或已取消"),
    "already-queued": _m("Already queued", "已在排队", "你已经有一张排队中的票"),
    "account-required": _m(
        "Account required", "需要账号", "排位赛只对有账号的玩家开放：请用玩家令牌排队"
    ),
    "player-erased": _m("Player erased", "玩家已被抹除", "该玩家已被抹除"),
    "no-subscription": _m("No subscription", "没有该订阅", "该推送订阅（`webhook`）已停止"),
}

_FALLBACK_ZH_TITLE: Final = "请求未能完成"
_SIMPLIFIED: Final = "zh"
_ENGLISH: Final = "en"
_TRADITIONAL_SUBTAGS: Final = frozenset({"hant", "tw", "hk", "mo"})


def _language(tag: str) -> str | None:
    """``zh`` (Simplified Chinese), ``en``, or None for a language we do not serve."""
    if tag in {"*", "en"} or tag.startswith("en-"):
        return _ENGLISH
    if tag == "zh" or tag.startswith("zh-"):
        if _TRADITIONAL_SUBTAGS.intersection(tag.split("-")[1:]):
            return None
        return _SIMPLIFIED
    return None


def _quality(params: list[str]) -> float:
    for param in params:
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def prefers_chinese(accept_language: str | None) -> bool:
    """True when Simplified Chinese ranks above English in ``Accept-Language``.

    The highest q wins, the earlier entry on a tie; ``q=0`` means "not this one";
    languages we do not serve are skipped, ``*`` counts as English.
    """
    if not accept_language:
        return False
    best, best_q = _ENGLISH, 0.0
    for part in accept_language.split(","):
        tag, *params = part.split(";")
        language = _language(tag.strip().lower())
        q = _quality(params)
        if language is not None and q > best_q:
            best, best_q = language, q
    return best == _SIMPLIFIED


def title(code: str, *, chinese: bool) -> str:
    """The problem ``title`` of ``code``; unknown codes get a generic one."""
    m = MESSAGES.get(code)
    if m is not None:
        return m.title_zh if chinese else m.title_en
    return _FALLBACK_ZH_TITLE if chinese else code.replace("-", " ").capitalize()


def detail(
    code: str, english: str, *, chinese: bool, rule: str | None = None, facts: str | None = None
) -> str:
    """The problem ``detail``: ``english`` as is, or the Chinese sentence of ``code``, the
    rule and the facts of ``english`` (:func:`facts_zh`: cards, seats, input, field)."""
    if not chinese:
        return english
    m = MESSAGES.get(code)
    sentence = m.sentence_zh if m is not None else _FALLBACK_ZH_TITLE
    cited = f"（{rule}）" if rule else ""
    facts = facts_zh(english) if facts is None else facts
    return f"{sentence}{cited}。{facts}" if facts else f"{sentence}{cited}。"


_CARD = r"(?:10|[2-9JQKA])[SHCD]|[SB]J"
_CARDS = re.compile(rf"(?<![\w'`])(?:{_CARD})(?![\w'`])")
_QUOTED = re.compile(r"'[^'\s]{1,60}'|`[^`\s]{1,60}`")
_SEAT = re.compile(r"\bseats? \[?(\d(?:, \d)*)\]?")
_TOURNAMENT_ROUND = re.compile(r"\btournament round (\d+)")
_TEAM = re.compile(r"\bteams? \[?(\d+(?:(?:, | and )\d+)*)\]?")
_VERSION = re.compile(r"\bversions? (\d+(?:\.\.\d+)?)(?:, not (\d+))?")
_FIELD = re.compile(r"^([A-Za-z][\w.\[\]-]*): ")


_SEAT_FACTS: Final = tuple(
    (re.compile(pattern), zh)
    for pattern, zh in (
        (
            r"it is seat (\d)'s turn to (\w+)[^,]*, not seat (\d)'s",
            "轮到座位 {0}（{1}），不是座位 {2}",
        ),
        (r"seat (\d) is to bury, not seat (\d)", "由座位 {0} 扣底，不是座位 {1}"),
        (r"seats \[(\d(?:, \d)*)\] are free", "空座位：{0}"),
        (r"\bseat (\d) is taken", "座位 {0} 已有人"),
        (r"in seat (\d)'s hand", "座位 {0} 的手牌里没有这些牌"),
    )
)
"""What an English detail says about seats, in Chinese words (whose turn, not whose;
which are free or taken) — not just the seat numbers it names."""
_ACTIONS_ZH: Final = {"play": "出牌", "declare": "亮主或过", "overcall": "反主或过", "bury": "扣底"}


def facts_zh(english: str) -> str:
    """The facts an English detail names, with Chinese labels: its field (``rules.levelCap:
    …``), the cards in R4 notation, the seats, the versions and the quoted input."""
    parts: list[str] = []
    field = _FIELD.match(english)
    if field and not _CARDS.fullmatch(field.group(1)):
        parts.append(f"字段：{field.group(1)}")
    quoted = _QUOTED.findall(english)
    bare = _QUOTED.sub(" ", english)
    cards = _CARDS.findall(bare)
    if cards:
        parts.append("牌：" + " ".join(cards))
    said = [
        zh.format(*(_ACTIONS_ZH.get(g, g.replace(", ", "、")) for g in m.groups()))
        for pattern, zh in _SEAT_FACTS
        if (m := pattern.search(english))
    ]
    parts.extend(said)
    seats = [s for found in _SEAT.findall(english) for s in found.split(", ")]
    if seats and not said:
        parts.append("座位：" + "、".join(dict.fromkeys(seats)))
    rounds = _TOURNAMENT_ROUND.findall(english)
    if rounds:
        parts.append("比赛轮次：" + "、".join(dict.fromkeys(rounds)))
    teams = [t for found in _TEAM.findall(english) for t in re.split(", | and ", found)]
    if teams:
        parts.append("队伍：" + "、".join(dict.fromkeys(teams)))
    versions = [f"{v}（不是 {was}）" if was else v for v, was in _VERSION.findall(english)]
    if versions:
        parts.append("版本：" + "、".join(versions))
    if quoted:
        parts.append("输入：" + " ".join(dict.fromkeys(quoted)))
    return "；".join(parts)


_TYPES = {
    "int": "整数",
    "str": "字符串",
    "bool": "布尔值",
    "float": "数字",
    "array": "数组",
    "object": "对象",
    "null": "null",
}
_FIELD_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), zh)
    for pattern, zh in (
        (r"^Expected `([^`]+)`, got `([^`]+)`$", "应为{0}，收到的是{1}"),
        (r"^Expected `([^`]+)` (>=|<=|>|<) (\S+)$", "应为{0}，且 {1} {2}"),
        (r"^Expected `([^`]+)` of length (>=|<=) (\d+)$", "应为长度 {1} {2} 的{0}"),
        (r"^Expected `([^`]+)` matching regex (.+)$", "应为符合正则 {1} 的{0}"),
        (r"^Object missing required field `([^`]+)`$", "缺少必填字段 `{0}`"),
        (r"^Object contains unknown field `([^`]+)`$", "含有未知字段 `{0}`"),
        (r"^Invalid enum value (.+)$", "不是可选的值之一：{0}"),
        (r"^Expected `([^`]+)`$", "应为{0}"),
    )
)


def field_message(english: str, *, chinese: bool) -> str:
    """A validation error's ``message`` (msgspec's and Litestar's words) in the chosen
    language; an English message with no Chinese form gives a general sentence and its
    facts."""
    if not chinese:
        return english
    for pattern, zh in _FIELD_MESSAGES:
        m = pattern.match(english)
        if m is not None:
            return zh.format(*(_TYPES.get(g.split(" |")[0], g) for g in m.groups()))
    facts = facts_zh(english)
    return f"该字段的值无效。{facts}" if facts else "该字段的值无效"


_ROLES_ZH: Final = (
    ("an organiser token", "组织者令牌"),
    ("the organiser token", "组织者令牌"),
    ("organiser token", "组织者令牌"),
    ("a seat token", "座位令牌"),
    ("seat token", "座位令牌"),
    ("a player token", "玩家令牌"),
    ("player token", "玩家令牌"),
    ("a team token", "队伍令牌"),
    ("team token", "队伍令牌"),
    ("a seat or organiser token", "座位令牌或组织者令牌"),
)
_NEEDED = re.compile(
    r"(?:^|: )((?:an?|the) [a-z ]+? token(?: or (?:an?|the) [a-z ]+? token)?)"
    r"(?: of this \w+)? is needed"
)
_WRONG_ROLE = re.compile(r"^(an? [a-z ]+? token) cannot be used here")
_ACCESS_KINDS: Final = (
    (
        re.compile(r"session expired at (\S+): unused for more than (\d+) s"),
        "玩家会话已过期（{0}；闲置超过 {1} 秒），请重新登录",
    ),
    (re.compile(r"not valid \(unknown, rotated or revoked\)"), "令牌无效：未知、已轮换或已撤销"),
    (re.compile(r"^use Authorization: Bearer"), "`Authorization` 头应为 `Bearer <令牌>`"),
    (re.compile(r"^this is not a token of this service"), "这不是本服务签发的令牌"),
    (
        re.compile(r"is not (?:a|the) (?:seat|organiser|team) token of this (match|tournament)"),
        "令牌与此{0}不符",
    ),
    (re.compile(r"belongs to (?:another|something else)"), "该令牌属于别的对局或比赛"),
    (re.compile(r"holds no seat in match"), "该玩家在这场对局中没有座位"),
    (re.compile(r"is a private table"), "这是私人牌桌：只能凭邀请码（或由组织者）入座"),
    (re.compile(r"of this rematch is kept for"), "再来一局的这个座位为原对局中坐这里的人保留"),
)
_THINGS_ZH: Final = {"match": "对局", "tournament": "比赛"}


def access_facts_zh(english: str) -> str:
    """The kind of a 401 or 403 in Chinese words: which credential is missing or of the
    wrong role, or why the one sent opens nothing — then the facts (seats, versions)."""
    parts: list[str] = []
    for pattern, zh in _ACCESS_KINDS:
        m = pattern.search(english)
        if m is not None:
            parts.append(zh.format(*(_THINGS_ZH.get(g, g) for g in m.groups())))
    wrong = _WRONG_ROLE.search(english)
    needed = _NEEDED.search(english)
    if wrong is not None:
        parts.append(f"{_role_zh(wrong.group(1))}不能用于此操作")
    if needed is not None:
        roles = "或".join(_role_zh(r) for r in needed.group(1).split(" or "))
        parts.append(f"需要{roles}")
    facts = facts_zh(english)
    return "；".join([*parts, *([facts] if facts else [])])


def _role_zh(english: str) -> str:
    for en, zh in _ROLES_ZH:
        if english == en:
            return zh
    return english


def localize(
    code: str,
    english_detail: str,
    *,
    chinese: bool,
    rule: str | None = None,
    facts: str | None = None,
) -> tuple[str, str]:
    """``(title, detail)`` of a problem in the chosen language (``facts``: the Chinese
    detail's facts when the caller has them in Chinese already; a 401's or 403's kind is
    put in Chinese words, :func:`access_facts_zh`)."""
    if chinese and facts is None and code in ("unauthorized", "forbidden"):
        facts = access_facts_zh(english_detail)
    text = detail(code, english_detail, chinese=chinese, rule=rule, facts=facts)
    return title(code, chinese=chinese), text
