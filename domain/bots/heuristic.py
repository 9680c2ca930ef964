"""A fast rule-of-thumb player (RULES R17–R28), for simulations in bulk.

Following (R23, R24): feed points (送分: 5, 10, K) to a partner whose play is sure to win;
otherwise win a trick that carries points with the cheapest combination that does it
(in the led category, or by trumping when void, 毙牌); otherwise part with low non-point
cards of short suits and keep high trumps and pairs for the end.

Leading (R22): from strength — a throw (甩牌) only when every component is a boss as
seen from the played cards (so it cannot fail), then plain tractors, boss pairs and boss
singles (aces), trump combinations when long in trump, else a low card of a short suit.

Burying (R21): low plain non-point cards of short suits. Declaring (R17, R20): with the
longest suit. No legal-play enumeration: candidates are built from the hand
(:mod:`domain.bots.tactics`) and each must pass ``follow.meets``; the fallback is
``follow.random_follow``, so every play returned is legal.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from domain.bots.base import BURY_SIZE
from domain.bots.combos import run_cards, runs
from domain.bots.knowledge import Knowledge
from domain.bots.tactics import components_above, fill_play, trump_cover
from domain.bots.view import BidView, BotView
from domain.rules.cards import POINTS, SJ, Card
from domain.rules.context import TRUMP
from domain.rules.follow import Obligation, meets, obligation, pair_kinds, random_follow
from domain.rules.shapes import Shape, ShapeKind, decompose
from domain.rules.shows import Show
from domain.rules.trick import decisive_key, trick_winner


class HeuristicPlayer:
    """Stateless heuristic bot; every play it returns is legal (R22, R23)."""

    name = "heuristic"

    # -- declaring (R17, R20) and the weak-hand redeal (§10) ---------------------------

    def declare(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R17: declare the longest suit once it is long enough for the cards drawn so far;
        on the last card, whatever suit is offered (better than R19's bottom card)."""
        suited = [s for s in options if s.trump is not None]
        if not suited:
            return None
        lengths = _suit_lengths(view.hand, view.level)
        best = max(suited, key=lambda s: (lengths[s.trump or 0], s.strength))
        length = lengths[best.trump or 0]
        if view.to_draw == 0:
            return best
        if length < max(lengths):
            return None
        return best if length >= max(2, len(view.hand) // 4) else None

    def overcall(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R20: overcall an opponent's show when a clearly better trump is in hand."""
        standing = view.standing
        if not options or (standing is not None and standing.seat % 2 == view.seat % 2):
            return None
        lengths = _suit_lengths(view.hand, view.level)
        common = sum(1 for c in view.hand if c >= SJ or c % 13 == view.level)

        def score(trump: int | None) -> float:
            return common * 1.5 + 2 if trump is None else lengths[trump] + common

        now = score(standing.trump) if standing is not None else 0.0
        best = max(options, key=lambda s: score(s.trump))
        return best if score(best.trump) >= now + 3 else None

    def request_redeal(self, view: BidView, rng: random.Random) -> bool:
        """§10 暴动: ask when the weak hand is also short of jokers and level cards."""
        return sum(1 for c in view.hand if c >= SJ or c % 13 == view.level) < 3

    # -- burying (R21) -----------------------------------------------------------------

    def bury(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R21: the 8 cheapest cards to lose: low plain non-point cards of short suits."""
        kn = Knowledge(view)
        return sorted(view.hand, key=kn.bury_key)[:BURY_SIZE]

    # -- playing (R22–R25) -------------------------------------------------------------

    def play(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R22 lead from strength, or R23 follow: feed, win or discard low."""
        kn = Knowledge(view)
        if view.lead_shape is None:
            return self._lead(view, kn)
        return self._follow(view, view.lead_shape, kn, rng)

    def _lead(self, view: BotView, kn: Knowledge) -> list[Card]:
        """R22: lead from strength; never a throw that could fail."""
        ctx = view.ctx
        groups = kn.groups
        throw = self._safe_throw(view, kn)
        if throw is not None:
            return throw
        plain_pairs = [_pairs(groups[category], kn.counts) for category in range(4)]
        order = ctx.order
        for pairs in plain_pairs:
            tractor = _highest_plain_tractor(pairs, order)
            if tractor:
                return tractor
        for category, pairs in enumerate(plain_pairs):
            if pairs and kn.component_boss(category, 1, order[pairs[-1]]):
                return [pairs[-1], pairs[-1]]
        for category in range(4):
            cards = groups[category]
            if cards and kn.single_boss(cards[-1]):
                return [cards[-1]]
        trumps = groups[TRUMP]
        plain = len(view.hand) - len(trumps)
        if trumps and len(trumps) >= plain:
            kinds = pair_kinds(ctx, TRUMP, trumps)
            found = runs(kinds)
            if found:
                start, length = found[-1]
                return run_cards(kinds, start, length)
            pairs = _pairs(trumps, kn.counts)
            if pairs and kn.component_boss(TRUMP, 1, order[pairs[-1]]):
                return [pairs[-1], pairs[-1]]
            if kn.single_boss(trumps[-1]):
                return [trumps[-1]]
        if plain:
            return [min((c for c in view.hand if ctx.category[c] != TRUMP), key=kn.discard_key)]
        return [min(trumps, key=kn.discard_key)]

    def _safe_throw(self, view: BotView, kn: Knowledge) -> list[Card] | None:
        """The longest plain throw whose every component is a boss (R15, R22).

        Taken from the top of each plain suit while each pair is a boss among pairs and
        each single among singles; in a plain suit, tractors of boss pairs are bosses too.
        """
        ctx = view.ctx
        order = ctx.order
        counts = kn.counts
        best: list[Card] | None = None
        for category in range(4):
            cards = kn.groups[category]
            chosen: list[Card] = []
            i = len(cards) - 1
            while i >= 0:
                c = cards[i]
                width = counts[c] - 1
                if not kn.component_boss(category, width, order[c]):
                    break
                chosen += cards[i - width : i + 1]
                i -= width + 1
            if len(chosen) < 2 or (best is not None and len(chosen) <= len(best)):
                continue
            shape = decompose(ctx, chosen)
            if shape.kind is ShapeKind.THROW and kn.components_boss(category, shape.components):
                best = chosen
        return best

    def _follow(self, view: BotView, lead: Shape, kn: Knowledge, rng: random.Random) -> list[Card]:
        """R23: feed a partner who holds the trick, win a point trick, else discard low."""
        ctx = view.ctx
        hand = view.hand
        n = lead.size
        ob = obligation(ctx, lead, hand)
        plays: list[Sequence[Card]] = [cards for _, cards in view.trick]
        me = len(plays)
        cur = trick_winner(ctx, plays, lead)
        partner_winning = (me - cur) % 2 == 0
        last = me == 3
        points = sum(POINTS[c] for p in plays for c in p)
        best = plays[cur]
        best_cat = ctx.category[best[0]]
        best_key = lead.components[0].top if cur == 0 else decisive_key(ctx, lead, best)
        width = lead.components[0].width

        if partner_winning and (last or kn.component_boss(best_cat, width, best_key)):
            gift = fill_play(ctx, ob, n, hand, kn.gift_key)
            if gift is not None and meets(ctx, ob, gift, n):
                return gift

        win = self._winning_play(view, lead, kn, ob=ob, best_cat=best_cat, best_key=best_key)
        if win is not None and meets(ctx, ob, win, n):
            trumping = lead.category != TRUMP and ctx.category[win[0]] == TRUMP
            worth = points + sum(POINTS[c] for c in win) > 0 or not trumping
            if worth and (not partner_winning or points > 0):
                plays.append(win)
                if trick_winner(ctx, plays, lead) == me:
                    return win
                plays.pop()

        low = fill_play(ctx, ob, n, hand, kn.discard_key)
        if low is not None and meets(ctx, ob, low, n):
            return low
        return random_follow(ctx, lead, hand, rng)  # pragma: no cover - safety net

    def _winning_play(
        self,
        view: BotView,
        lead: Shape,
        kn: Knowledge,
        *,
        ob: Obligation,
        best_cat: int,
        best_key: int,
    ) -> list[Card] | None:
        """The cheapest play beating the current winner (R24), in the led category or by
        trumping when void (毙牌); when others play after us, only a boss will do."""
        ctx = view.ctx
        last = len(view.trick) == 3
        lead_cat = lead.category
        assert lead_cat is not None
        in_category = ob.in_category
        if len(lead.components) > 1:
            # A standing throw cannot be beaten in its own category (R22): trump it.
            if in_category or lead_cat == TRUMP:
                return None
            return trump_cover(ctx, lead, kn.groups[TRUMP], kn.discard_key)
        width = lead.components[0].width
        if in_category and not (ob.short and len(in_category) < lead.size):
            if best_cat != lead_cat:
                return None
            options = components_above(ctx, lead_cat, in_category, width, best_key)
            category = lead_cat
        elif not in_category and lead_cat != TRUMP:
            above = best_key if best_cat == TRUMP else -1
            options = components_above(ctx, TRUMP, kn.groups[TRUMP], width, above)
            category = TRUMP
        else:
            return None
        if not options:
            return None
        if last or (category == TRUMP and lead_cat != TRUMP):
            return options[0][1]
        for top, cards in options:
            if kn.component_boss(category, width, top):
                return cards
        return None


def _pairs(cards: Sequence[Card], counts: Sequence[int]) -> list[Card]:
    """Kinds held as an identical pair (R13), in the order of ``cards`` (sorted low to high)."""
    return [c for i, c in enumerate(cards) if counts[c] == 2 and (i == 0 or cards[i - 1] != c)]


def _highest_plain_tractor(pairs: Sequence[Card], order: Sequence[int]) -> list[Card]:
    """The highest longest run of pairs at consecutive orders in a plain suit (R14)."""
    best_start = best_len = 0
    start = 0
    for i in range(1, len(pairs) + 1):
        if i == len(pairs) or order[pairs[i]] != order[pairs[i - 1]] + 1:
            if i - start >= max(best_len, 2):
                best_start, best_len = start, i - start
            start = i
    return [c for c in pairs[best_start : best_start + best_len] for _ in range(2)]


def _suit_lengths(hand: Sequence[Card], level: int) -> list[int]:
    """Plain cards of each suit, level cards left out (they are trump whatever the suit)."""
    lengths = [0, 0, 0, 0]
    for c in hand:
        if c < SJ and c % 13 != level:
            lengths[c // 13] += 1
    return lengths
