"""Every variant of docs/rules.md section 9 (and the options of section 10 that
are implemented), one option at a time, plus their precedence, the rule-set
validation and random-play properties of every preset.

Outcomes are forced with "slot deals" (see :func:`plan_hand`): every seat holds
exactly four cards of each suit, so every trick is played in one suit and the
trump never matters; each suit is split into four blocks of three ranks
(3-5, 6-8, 9-J, Q-A) and the seat holding the top card of a block wins the
trick in which that block is played. The test decides which seat wins each
block, so it decides the tricks of every seat; the expected game results are
then derived from the rules, not read back from the engine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from helpers import make_deal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sm_env.core.cards import NUM_CARDS, make_card, parse_card
from sm_env.core.game import (
    AUCTION_QUOTAS,
    DISCARD,
    EXCHANGE,
    OVER,
    PLAY,
    TRUMP,
    TRUMP_ACTION_BASE,
    DealError,
    Game,
    GameOverError,
    IllegalActionError,
    chip_changes,
)
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.observation import encode
from sm_env.records import game_record, replay

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
BLOCKS = ((3, 4, 5), (6, 7, 8), (9, 10, 11), (12, 13, 14))
DEALER, ELDEST, MIDDLE = range(3)


def seat_of(role: int, dealer: int) -> int:
    return (dealer + role) % 3


def by_role(dealer: int, dealer_value, eldest_value, middle_value) -> list:
    """A seat-indexed list from values given by role."""
    out = [None, None, None]
    out[seat_of(DEALER, dealer)] = dealer_value
    out[seat_of(ELDEST, dealer)] = eldest_value
    out[seat_of(MIDDLE, dealer)] = middle_value
    return out


# --------------------------------------------------------------------- slot deals


@dataclass
class Plan:
    """A deal and the script that makes each seat take ``tricks[seat]`` tricks."""

    dealer: int
    tricks: list[int]
    deal: dict
    cards: list[dict]  # seat -> {slot: card it plays in that slot's trick}
    order: list[tuple[int, int]]  # slots (suit, block) in the order they are played
    discards: list[int]
    trump: int


def plan_hand(tricks: list[int], dealer: int, rules: RuleSet | str | dict | None = None) -> Plan:
    """A deal (by absolute seat) and script giving seat s exactly tricks[s] tricks."""
    rules = RuleSet.from_any(rules)
    assert sum(tricks) == rules.tricks_per_hand and min(tricks) >= 0
    counts = list(tricks)
    extra = None
    if rules.no_kitty_51:
        # Each seat also holds one 2 (D, H, S); after the 16 slot tricks those three
        # singletons make trick 17, won by its leader (clubs are trump, all gone).
        extra = max(range(3), key=lambda s: counts[s])
        counts[extra] -= 1
    slots = [(suit, block) for block in range(4) for suit in range(4)]
    winner: dict[tuple[int, int], int] = {}
    pool = iter(slots)  # the dealer's wins go to the low blocks first
    for seat in [dealer, (dealer + 1) % 3, (dealer + 2) % 3]:
        for _ in range(counts[seat]):
            winner[next(pool)] = seat
    cards: list[dict] = [{}, {}, {}]
    for slot, top_seat in winner.items():
        suit, block = slot
        low, mid, top = (make_card(suit, r) for r in BLOCKS[block])
        others = [s for s in range(3) if s != top_seat]
        cards[top_seat][slot] = top
        cards[others[0]][slot] = mid
        cards[others[1]][slot] = low
    hands = [sorted(cards[s].values()) for s in range(3)]
    if rules.no_kitty_51:
        for seat in range(3):
            hands[seat].append(make_card(seat + 1, 2))
        kitty: list[int] = []
        trump = CLUBS
        discards: list[int] = []
        order = [s for s in slots if winner[s] != extra] + [s for s in slots if winner[s] == extra]
    else:
        kitty = [make_card(suit, 2) for suit in range(4)]
        trump = SPADES
        order = list(slots)
        if rules.pickup_before_discard:
            discards = list(kitty)  # the dealer holds the kitty already and throws it away
        else:
            # Discard (blind) the dealer's card of the top block of each suit, a block it
            # does not win; it plays the 2 of that suit from the kitty there instead.
            discards = []
            for suit in range(4):
                slot = (suit, 3)
                assert winner[slot] != dealer, "slot deals give the dealer at most 12 tricks without pickup"
                discards.append(cards[dealer][slot])
                cards[dealer][slot] = make_card(suit, 2)
    deal = {"hands": hands, "kitty": kitty}
    return Plan(dealer, list(tricks), deal, cards, order, discards, trump)


def play_plan(game: Game, plan: Plan) -> None:
    """Play one planned hand from the trump decision to its last trick."""
    log = game.log
    assert game.dealer == plan.dealer and game.phase == TRUMP and game.current_player == plan.dealer
    assert sorted(map(sorted, log.deal_hands)) == sorted(map(sorted, plan.deal["hands"]))
    game.apply(TRUMP_ACTION_BASE + plan.trump)
    for card in plan.discards:
        assert game.phase == DISCARD
        game.apply(card)
    assert game.phase == PLAY
    for slot in plan.order:
        for _ in range(3):
            game.apply(plan.cards[game.current_player][slot])
    if game.rules.no_kitty_51:
        for _ in range(3):
            (only,) = game.legal_actions()
            game.apply(only)
    # the script works as designed (a check of the helper and of trick winning)
    assert log.tricks_won == plan.tricks


def planned_game(rules, tricks_by_hand: list[list[int]], first_dealer: int = 0, **kwargs) -> tuple[Game, list[Plan]]:
    """A game whose first hands are planned (tricks given by absolute seat)."""
    plans = [plan_hand(t, (first_dealer + i) % 3, rules) for i, t in enumerate(tricks_by_hand)]
    game = Game(rules=rules, seed=0, first_dealer=first_dealer, deals=[p.deal for p in plans], **kwargs)
    return game, plans


def play_planned(rules, tricks_by_hand: list[list[int]], first_dealer: int = 0, **kwargs) -> Game:
    game, plans = planned_game(rules, tricks_by_hand, first_dealer, **kwargs)
    for plan in plans:
        assert not game.is_over
        play_plan(game, plan)
    return game


def roles(dealer: int, d: int, e: int, m: int) -> list[int]:
    """Tricks by absolute seat from tricks by role."""
    return by_role(dealer, d, e, m)


# --------------------------------------------------------------------- references from the rules


def top_returns(hand: set[int], sent: list[int]) -> list[int]:
    """docs/rules.md 4, step 2: for each suit, the receiver's n_s highest cards of that
    suit, counting the received cards."""
    held = set(hand) | set(sent)
    back = []
    for suit in range(4):
        n = sum(1 for c in sent if c // 13 == suit)
        back += sorted((c for c in held if c // 13 == suit), reverse=True)[:n]
    return sorted(back)


def returns_from(held: set[int], sent: list[int]) -> list[int]:
    """docs/rules.md 4 and 10.1: for each suit, the n_s highest cards of ``held``, the receiver's
    hand as it stands (the sent cards already in it)."""
    back = []
    for suit in range(4):
        n = sum(1 for c in sent if c // 13 == suit)
        back += sorted((c for c in held if c // 13 == suit), reverse=True)[:n]
    return sorted(back)


def expected_exchanges(
    rules: RuleSet, quotas: list[int], dealer: int, previous, previous_log=None
) -> list[tuple[int, int, int]]:
    """(sender, receiver, count) in the order carried out: docs/rules.md 4, max_exchange and 10.6.

    Ties in current quota go in role order dealer, eldest, middle (rules.py); with four players in
    play order from the eldest (docs/rules.md 10.6)."""
    if previous is None or rules.no_exchange:
        return []
    n = rules.num_players
    ups = [s for s in range(n) if previous[s] > 0]
    downs = [s for s in range(n) if previous[s] < 0]
    if not ups:
        return []
    cap = 10**9 if rules.max_exchange is None else rules.max_exchange
    given, taken = [0] * n, [0] * n
    role = lambda s: (s - dealer) % 3  # noqa: E731
    pairs = []
    if n == 4:
        return four_player_exchanges(rules, quotas, dealer, previous, previous_log)
    if len(ups) == 1:
        pairs = [(ups[0], r, -previous[r]) for r in sorted(downs, key=lambda s: (quotas[s], role(s)))]
    else:
        senders = sorted(ups, key=lambda s: (-quotas[s], role(s)))
        if rules.first_up_exchanges_first and previous_log is not None:  # docs/rules.md 10.4
            senders = sorted(ups, key=lambda s: got_up_at(previous_log, s, rules.kitty_trick))
        pairs = [(u, downs[0], previous[u]) for u in senders]
    out = []
    for sender, receiver, want in pairs:
        k = min(want, cap - given[sender], cap - taken[receiver])
        if k > 0:
            out.append((sender, receiver, k))
            given[sender] += k
            taken[receiver] += k
    return out


def four_player_exchanges(rules: RuleSet, quotas, dealer: int, previous, previous_log) -> list[tuple[int, int, int]]:
    """docs/rules.md 10.6: up players by higher current quota, each serving its down players by lower
    current quota, count = min(remaining surplus, remaining deficit), max_exchange caps as they come."""
    play_order = [(dealer + 1 + k) % 4 for k in range(4)]  # eldest first: ties go in this order
    ups = sorted((s for s in play_order if previous[s] > 0), key=lambda s: -quotas[s])  # sort is stable
    if rules.first_up_exchanges_first and previous_log is not None:
        ups = sorted(ups, key=lambda s: got_up_at(previous_log, s, rules.kitty_trick))
    downs = sorted((s for s in play_order if previous[s] < 0), key=lambda s: quotas[s])
    surplus = {s: previous[s] for s in ups}
    deficit = {s: -previous[s] for s in downs}
    cap = rules.max_exchange
    moved = dict.fromkeys(range(4), 0)
    out = []
    for up in ups:
        for down in downs:
            k = min(surplus[up], deficit[down])
            if cap is not None:
                k = min(k, cap - moved[up], cap - moved[down])
            if k > 0:
                out.append((up, down, k))
                surplus[up] -= k
                deficit[down] -= k
                moved[up] += k
                moved[down] += k
    return out


def reference_order(rules: RuleSet) -> list[str]:
    """docs/rules.md 4, 5, 9 and 10.1 (and 10.5: the take of the face-up card comes last): the stages of a hand
    before the play, in order."""
    order = _reference_order(rules)
    return [*order, "take"] if rules.one_card_kitty else order


def _reference_order(rules: RuleSet) -> list[str]:
    kitty = ["kitty", "discard"] if rules.pickup_before_discard else ["discard", "kitty"]
    if rules.no_kitty_51 or rules.one_card_kitty:
        kitty = []
    if rules.kitty_before_exchange:  # kitty, discards, exchange; trump where its option puts it
        if rules.trump_before_exchange:
            return ["trump", "kitty", "discard", "exchange"]
        if rules.trump_after_kitty:
            return ["kitty", "trump", "discard", "exchange"]
        if rules.trump_after_send:
            return ["kitty", "discard", "send", "trump", "return"]
        return ["kitty", "discard", "exchange", "trump"]
    if rules.trump_before_exchange:
        return ["trump", "exchange", *kitty]
    if rules.trump_after_send:
        return ["send", "trump", "return", *kitty]
    if rules.trump_after_kitty:
        return ["exchange", "kitty", "trump", "discard"]
    return ["exchange", "trump", *kitty]


def got_up_at(log, seat: int, kitty_trick: bool = False) -> int:
    """The index of the trick in which ``seat`` won its (quota + 1)-th trick in that hand (-1: the kitty trick)."""
    won = 1 if kitty_trick and seat == log.dealer else 0
    if won == log.quotas[seat] + 1:
        return -1
    for index, trick in enumerate(log.tricks):
        won += trick.winner == seat
        if won == log.quotas[seat] + 1:
            return index
    raise AssertionError(f"seat {seat} was not up")


def expected_winners(rules: RuleSet, hand_number: int, dealer: int, quotas, tricks, balances, scores):
    """docs/rules.md 8 and 9: the winners at the end of a hand, or None if play goes on."""

    def top(seats, figure):
        best = max(figure[s] for s in seats)
        return sorted(s for s in seats if figure[s] == best)

    seats = range(rules.num_players)
    conditions = []
    if rules.win_tricks is not None:
        conditions.append(([s for s in seats if tricks[s] >= rules.win_tricks], tricks))
    if rules.win_margin is not None:
        conditions.append(([s for s in seats if balances[s] >= rules.win_margin], balances))
    if rules.target_score is not None:
        n = rules.target_score
        met = any(scores[s] >= n for s in seats) or (rules.target_symmetric and any(scores[s] <= -n for s in seats))
        conditions.append((list(seats) if met else [], scores))
    if rules.dealer_makes_quota:
        # true: at least its quota; "up" (docs/rules.md 10.7): more than its quota
        need = quotas[dealer] + (1 if rules.dealer_makes_quota == "up" else 0)
        met = hand_number >= rules.num_players and tricks[dealer] >= need  # after a full round of deals
        conditions.append(([dealer] if met else [], tricks))
    if rules.fixed_hands is not None:
        conditions.append((list(seats) if hand_number >= rules.fixed_hands else [], scores))
    if rules.calls:  # docs/rules.md 10.3: after hand 18 the highest running score wins
        conditions.append((list(seats) if hand_number >= 18 else [], scores))
    for hit, figure in conditions:
        if hit:
            return top(hit, figure)
    return None


def trick_winner(cards: list[int], leader: int, trump: int) -> int:
    led = cards[0] // 13
    n = len(cards)
    best = max(range(n), key=lambda i: (cards[i] // 13 == trump, cards[i] // 13 == led, cards[i]))
    return (leader + best) % n


def winners_of(game: Game):
    w = game.winner
    return None if w is None else ([w] if isinstance(w, int) else list(w))


def check_history(game: Game) -> None:
    """Replays the game's history against the rules, hand by hand."""
    rules = game.rules
    deck = set(range(1, NUM_CARDS)) if rules.no_kitty_51 else set(range(NUM_CARDS))
    size, kitty_size, n_tricks = rules.hand_size, rules.kitty_size, rules.tricks_per_hand
    n = rules.num_players
    previous = game.start_balances
    scores = [0] * n
    dealer = game.first_dealer
    skipped = 0  # passed-out deals so far: not hands for fixed_hands and dealer_makes_quota
    used = [set(), set(), set()]  # calls made by each seat (calls)
    for index, log in enumerate(game.history):
        last = index == len(game.history) - 1
        assert log.number == index + 1
        if log.passed_out:  # docs/rules.md 10.2: nobody bid; no hand, no score (test_variants_auction.py)
            assert rules.auction and log.dealer is None and log.tricks_won is None and log.tricks == []
            skipped += 1
            continue
        if log.auction is not None:  # hand 1 of an auction game: the highest bidder deals, quotas by its bid
            if log.dealer is None:
                assert last and not game.is_over
                return
            dealer = log.dealer
            bid = max(b for _, b in log.auction if b is not None)
            quotas = [(bid, *AUCTION_QUOTAS[bid])[(s - dealer) % 3] for s in range(3)]
        else:
            quotas = [rules.quotas[(s - dealer) % n] for s in range(n)]
        assert log.dealer == dealer
        if rules.dealer_assigns_quotas:  # docs/rules.md 10.7: any order of the rule set's quotas, chosen by the dealer
            assert log.assignment == [log.quotas[(dealer + r) % 3] for r in range(3)]
            assert sorted(log.assignment) == sorted(rules.quotas)
            quotas = list(log.quotas)
        else:
            assert log.assignment is None
        assert log.quotas == quotas and sum(quotas) == n_tricks
        # deal: sizes, every card once
        hands = [set(h) for h in log.deal_hands]
        kitty = set(log.kitty)
        assert [len(h) for h in log.deal_hands] == [size] * n and len(log.kitty) == rules.aside_size
        aside = set(log.kitty) if rules.one_card_kitty else set()  # out of play: the face-up card unless taken
        assert set().union(*hands, kitty) == deck and sum(map(len, hands)) + len(kitty) == len(deck)
        if log.tricks_won is None:
            assert last and not game.is_over
            return
        # exchange plan: who, how many, in which order
        plan = expected_exchanges(rules, quotas, dealer, previous, game.history[index - 1] if index else None)
        assert [(e.sender, e.receiver, e.count) for e in log.exchanges] == plan
        rounds = []  # the exchanges by sender, in order
        for e in log.exchanges:
            if rounds and rounds[-1][0].sender == e.sender:
                rounds[-1].append(e)
            else:
                rounds.append([e])
        given, taken = [0] * n, [0] * n
        for e in log.exchanges:
            assert len(e.sent) == e.count
            given[e.sender] += e.count
            taken[e.receiver] += e.count
        if rules.max_exchange is not None:
            assert max(given + taken) <= rules.max_exchange
        # the stages of the hand in their order, each checked on the hands as they stand
        discards = list(log.discards)
        shown = []
        returned = []  # exchanges whose cards have come back
        if rules.calls:  # docs/rules.md 10.3: each seat makes each call once; NT and Miz have no trump
            assert log.call not in used[dealer] and log.call in range(6)
            used[dealer].add(log.call)
            assert log.trump == (log.call if log.call < 4 else -1)
            assert log.maxima == ([[3, 5, 8][(s - dealer) % 3] for s in range(3)] if log.call == 5 else None)
        else:
            assert log.trump in range(4) and log.call == -1 and log.maxima is None
        for stage in reference_order(rules):
            if stage in ("exchange", "send"):
                for entries in rounds:
                    sender = entries[0].sender
                    chosen = [c for e in entries for c in e.sent]
                    assert len(set(chosen)) == len(chosen) and set(chosen) <= hands[sender]  # from its hand as it stood
                    for e in entries:
                        hands[sender] -= set(e.sent)
                        hands[e.receiver] |= set(e.sent)
                        if stage == "exchange":
                            want = returns_from(hands[e.receiver], e.sent)
                            assert sorted(e.returned) == want
                            hands[e.receiver] -= set(want)
                            hands[sender] |= set(want)
                            returned.append(e)
            elif stage == "return":  # every sent card is with its receiver; returns in order, hands as they stand
                for e in log.exchanges:
                    want = returns_from(hands[e.receiver], e.sent)
                    assert sorted(e.returned) == want
                    hands[e.receiver] -= set(want)
                    hands[e.sender] |= set(want)
                    returned.append(e)
            elif stage == "kitty":
                hands[dealer] |= kitty
                for e in returned:  # the show rule, on the exchanges made so far
                    if e.receiver == dealer and e.returned:
                        low = {}
                        for c in e.returned:
                            low[c // 13] = min(low.get(c // 13, NUM_CARDS), c)
                        cards = sorted(k for k in kitty if k // 13 in low and k > low[k // 13])
                        if cards:
                            shown.append((e.sender, cards))
            elif stage == "take":  # docs/rules.md 10.5: the holder of 2D, as the hands now stand
                face_up = log.kitty[0]
                if face_up == parse_card("2D"):
                    assert log.take is None
                    continue
                holder = next(s for s in range(3) if parse_card("2D") in hands[s])
                assert log.take is not None and log.take[0] == holder
                put_out = log.take[1]
                if put_out is not None:
                    assert put_out in hands[holder]
                    hands[holder] = hands[holder] - {put_out} | {face_up}
                    aside = {put_out}
            elif stage == "discard":
                assert len(discards) == kitty_size == len(set(discards))
                assert set(discards) <= hands[dealer]
                hands[dealer] -= set(discards)
        assert [len(h) for h in hands] == [size] * n
        assert sorted((s, sorted(c)) for s, c in log.shown) == sorted(shown)
        # tricks: leader, follow suit, winner
        assert len(log.tricks) == size  # a trick per card in hand (the kitty trick is not played)
        leader = (dealer + 1) % n
        tricks = [0] * n
        if rules.kitty_trick:  # docs/rules.md 10.4: the four discards are the dealer's first trick
            tricks[dealer] = 1
        played = set()
        for trick in log.tricks:
            assert trick.leader == leader and len(trick.cards) == n
            led = trick.cards[0] // 13
            for k, c in enumerate(trick.cards):
                seat = (leader + k) % n
                assert c in hands[seat]
                if c // 13 != led:
                    assert not any(h // 13 == led for h in hands[seat]), "did not follow suit"
                hands[seat].discard(c)
                played.add(c)
            winner = trick_winner(trick.cards, leader, log.trump)
            assert trick.winner == winner
            tricks[winner] += 1
            leader = winner
        assert hands == [set()] * n
        assert played | set(discards) | aside == deck and len(played) == n * size
        if rules.one_card_kitty:
            assert discards == [] and log.shown == []
        else:
            assert log.take is None
        # score: balances, or with chips every up player wins its surplus from every down player
        balances = [tricks[s] - quotas[s] for s in range(n)]
        if log.call == 5:  # misère: maximum - tricks
            balances = [log.maxima[s] - tricks[s] for s in range(3)]
        if rules.chips:
            chips = [0] * n
            for up in (s for s in range(n) if balances[s] > 0):
                for down in (s for s in range(n) if balances[s] < 0):
                    chips[up] += balances[up]
                    chips[down] -= balances[up]
            assert log.chips == chips
            scores = [scores[s] + chips[s] for s in range(n)]
        else:
            assert log.chips is None
            scores = [scores[s] + balances[s] for s in range(n)]
        assert log.tricks_won == tricks and log.balances == balances and log.scores == scores
        assert sum(balances) == 0 and sum(scores) == 0
        # end of the game exactly when an end condition is met
        won = expected_winners(rules, log.number - skipped, dealer, quotas, tricks, balances, scores)
        if not last:
            assert won is None, f"hand {log.number} met an end condition {won} but the game went on"
        elif game.is_over:
            assert winners_of(game) == won
            assert game.truncated == (won is None)
            if won is None:
                assert game.max_hands == log.number
        else:
            assert won is None
        previous = balances
        dealer = (dealer + 1) % n
    assert game.scores == scores


def random_game(rules, seed: int, max_hands: int | None = 200, **kwargs) -> Game:
    rng = random.Random(seed)
    game = Game(rules=rules, seed=seed, max_hands=max_hands, **kwargs)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return game


# --------------------------------------------------------------------- the helper itself


def test_slot_deals_force_the_planned_tricks():
    game = play_planned("standard", [roles(2, 11, 3, 2)], first_dealer=2)
    assert game.history[0].tricks_won == [3, 2, 11]
    assert game.history[0].balances == [-2, -1, 3]


# --------------------------------------------------------------------- pickup_before_discard, trump_after_kitty


def pickup_deal():
    rng = random.Random(5)
    deck = list(range(NUM_CARDS))
    rng.shuffle(deck)
    return {"hands": [sorted(deck[0:16]), sorted(deck[16:32]), sorted(deck[32:48])], "kitty": sorted(deck[48:])}


def test_standard_discards_blind_from_sixteen():
    deal = pickup_deal()
    game = Game(rules="standard", seed=1, first_dealer=0, deals=[deal])
    assert game.phase == TRUMP and game.current_player == 0
    game.apply(TRUMP_ACTION_BASE + HEARTS)
    assert game.phase == DISCARD
    assert game.legal_actions() == deal["hands"][0]
    with pytest.raises(IllegalActionError):
        game.apply(deal["kitty"][0])
    for c in deal["hands"][0][:4]:
        game.apply(c)
    assert game.phase == PLAY
    assert game.hands[0] == sum(1 << c for c in deal["hands"][0][4:] + deal["kitty"])


@pytest.mark.parametrize("after", [False, True])
def test_pickup_before_discard_takes_kitty_then_discards_four_of_twenty(after):
    deal = pickup_deal()
    rules = RuleSet(pickup_before_discard=True, trump_after_kitty=after)
    game = Game(rules=rules, seed=1, first_dealer=0, deals=[deal])
    own, kitty = deal["hands"][0], deal["kitty"]
    dealt = sum(1 << c for c in own)
    both = dealt | sum(1 << c for c in kitty)
    assert game.phase == TRUMP and game.current_player == 0
    if after:
        # kitty, then trump: the dealer sees the kitty before naming trump
        assert game.hands[0] == both
    else:
        # trump is still named before the dealer sees the kitty
        assert game.hands[0] == dealt
    assert game.legal_actions() == [52, 53, 54, 55]
    game.apply(TRUMP_ACTION_BASE + CLUBS)
    assert game.phase == DISCARD and game.current_player == 0
    assert game.legal_actions() == sorted(own + kitty)  # 20 cards
    chosen = [kitty[0], own[3], kitty[2], own[0]]  # kitty cards may be discarded
    for k, c in enumerate(chosen):
        assert game.phase == DISCARD
        game.apply(c)
        assert len(game.legal_actions() if game.phase == DISCARD else []) == (20 - k - 1 if k < 3 else 0)
    assert game.phase == PLAY and game.log.discards == chosen
    assert game.hands[0] == both & ~sum(1 << c for c in chosen)
    rng = random.Random(2)
    while game.hand_number == 1 and not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    played = {c for t in game.history[0].tricks for c in t.cards}
    assert not played & set(chosen)
    assert played == set(range(NUM_CARDS)) - set(chosen)


def test_trump_after_kitty_needs_pickup_before_discard():
    with pytest.raises(RulesError, match="pickup_before_discard"):
        RuleSet(trump_after_kitty=True)
    with pytest.raises(RulesError):
        Game(rules={"trump_after_kitty": True})


def test_show_rule_with_trump_after_kitty():
    # dealer (seat 0) is down 1 and returns its top heart; a higher heart in the kitty is shown at once
    hands = [
        [make_card(HEARTS, 10)]
        + [make_card(CLUBS, r) for r in range(2, 14)]
        + [make_card(DIAMONDS, r) for r in (2, 3, 4)],
        None,
        None,
    ]
    kitty = [make_card(HEARTS, 14), make_card(HEARTS, 2), make_card(SPADES, 14), make_card(SPADES, 2)]
    rest = sorted(set(range(NUM_CARDS)) - set(hands[0]) - set(kitty))
    hands[1], hands[2] = rest[:16], rest[16:]
    rules = RuleSet(pickup_before_discard=True, trump_after_kitty=True)
    deal = {"hands": hands, "kitty": kitty}
    game = Game(rules=rules, seed=0, first_dealer=0, deals=[deal], start_balances=[-1, 1, 0])
    assert game.phase == EXCHANGE and game.current_player == 1
    sent = min(c for c in hands[1] if c // 13 == HEARTS)
    game.apply(sent)
    assert game.log.exchanges[0].returned == [make_card(HEARTS, 10)]
    assert game.phase == TRUMP and game.log.shown == [(1, [make_card(HEARTS, 14)])]


# --------------------------------------------------------------------- quotas


@pytest.mark.parametrize("quotas", [(9, 5, 2), (9, 2, 5), (7, 7, 2), (4, 6, 6), (10, 3, 3), (6, 5, 5)])
@pytest.mark.parametrize("first_dealer", [0, 2])
def test_quotas_follow_the_roles_and_score(quotas, first_dealer):
    rules = RuleSet(quotas=quotas, no_exchange=True)
    # hand 1: each takes its quota plus/minus one; hand 2: the deal passed left
    t1 = roles(first_dealer, quotas[0] + 1, quotas[1] - 1, quotas[2])
    d2 = (first_dealer + 1) % 3
    t2 = roles(d2, quotas[0], quotas[1], quotas[2])
    game = play_planned(rules, [t1, t2], first_dealer=first_dealer)
    h1, h2 = game.history[0], game.history[1]
    assert h1.quotas == by_role(first_dealer, *quotas)
    assert h1.balances == by_role(first_dealer, 1, -1, 0)
    assert h2.dealer == d2 and h2.quotas == by_role(d2, *quotas)
    assert h2.balances == [0, 0, 0]
    assert game.scores == by_role(first_dealer, 1, -1, 0)


@given(st.tuples(st.integers(0, 16), st.integers(0, 16)).filter(lambda t: sum(t) <= 16), st.integers(0, 2))
@settings(max_examples=30, deadline=None, database=None, derandomize=True)
def test_any_quota_triple_summing_to_sixteen_is_played(pair, seed):
    quotas = (pair[0], pair[1], 16 - sum(pair))
    rules = RuleSet(quotas=quotas)
    assert rules.quotas == quotas
    game = random_game(rules, seed, max_hands=3)
    check_history(game)
    dealer = game.first_dealer
    assert game.history[0].quotas == by_role(dealer, *quotas)


@pytest.mark.parametrize("quotas", [(9, 5, 3), (8, 5, 2), (16, 1, 0), (17, 0, 0)])
def test_quotas_must_sum_to_the_tricks(quotas):
    with pytest.raises(RulesError, match="sum"):
        RuleSet(quotas=quotas)


def test_exchange_order_follows_current_quotas_not_roles():
    # one up (dealer), two down: the down player with the lower current quota is served first
    standard = Game(rules="standard", seed=0, first_dealer=0, start_balances=[2, -1, -1])
    assert standard.exchange_to_send() == (2, 1)  # middle has quota 3 < eldest 5
    game = Game(rules={"quotas": [9, 2, 5]}, seed=0, first_dealer=0, start_balances=[2, -1, -1])
    assert game.exchange_to_send() == (1, 1)  # eldest has quota 2 < middle 5
    # two up (eldest, middle), one down: the up player with the higher current quota goes first
    standard = Game(rules="standard", seed=0, first_dealer=0, start_balances=[-2, 1, 1])
    assert standard.current_player == 1  # eldest 5 > middle 3
    game = Game(rules={"quotas": [9, 2, 5]}, seed=0, first_dealer=0, start_balances=[-2, 1, 1])
    assert game.current_player == 2  # middle 5 > eldest 2
    game.apply(game.legal_actions()[0])
    assert game.phase == EXCHANGE and game.current_player == 1


def test_equal_quotas_go_in_role_order():
    # rules.py: where an order by current quota is needed, ties go dealer, eldest, middle
    two_up = Game(rules={"quotas": [6, 5, 5]}, seed=0, first_dealer=0, start_balances=[-3, 1, 2])
    assert two_up.current_player == 1  # eldest before middle
    two_up.apply(two_up.legal_actions()[0])
    assert two_up.current_player == 2
    one_up = Game(rules={"quotas": [6, 5, 5]}, seed=0, first_dealer=0, start_balances=[3, -1, -2])
    assert one_up.exchange_to_send() == (1, 1)  # eldest served first
    game = random_game({"quotas": [6, 5, 5]}, 3, max_hands=6, start_balances=[-3, 1, 2])
    check_history(game)


# --------------------------------------------------------------------- no_exchange


def test_no_exchange_even_after_unbalanced_hands():
    tricks = roles(0, 11, 3, 2)  # balances +3, -2, -1
    game, plans = planned_game({"no_exchange": True}, [tricks])
    play_plan(game, plans[0])
    assert game.history[0].balances == by_role(0, 3, -2, -1)
    assert game.hand_number == 2 and game.phase == TRUMP and game.current_player == 1
    assert game.log.exchanges == []
    assert game.hands == [sum(1 << c for c in h) for h in game.log.deal_hands]
    # the same hand in the standard game is followed by an exchange from the old dealer
    game, plans = planned_game("standard", [tricks])
    play_plan(game, plans[0])
    assert game.phase == EXCHANGE and game.current_player == 0
    assert game.exchange_to_send() == (2, 1)  # down 1, now eldest (quota 5); seat 1 now deals
    # start balances do not make an exchange either
    game = Game(rules="independent", seed=0, first_dealer=0, start_balances=[4, -2, -2])
    assert game.phase == TRUMP and game.log.exchanges == []


@pytest.mark.parametrize("seed", range(4))
def test_no_exchange_random_games_never_exchange(seed):
    game = random_game("independent", seed, max_hands=30)
    check_history(game)
    assert all(h.exchanges == [] for h in game.history)
    assert any(any(b != 0 for b in h.balances) for h in game.history if h.balances)


# --------------------------------------------------------------------- max_exchange


def exchange_deal(seed: int) -> dict:
    rng = random.Random(seed)
    deck = list(range(NUM_CARDS))
    rng.shuffle(deck)
    return {"hands": [deck[0:16], deck[16:32], deck[32:48]], "kitty": deck[48:]}


def run_exchange(game: Game, choose) -> None:
    """Play the exchange phase, checking that the sender picks from its hand as it
    stood when its round began and that nothing moves before its last card."""
    while game.phase == EXCHANGE:
        sender = game.current_player
        start = list(game.hands)
        round_index = game.exchange_round
        while game.phase == EXCHANGE and game.exchange_round == round_index:
            legal = game.legal_actions()
            assert set(legal) <= {c for c in range(NUM_CARDS) if start[sender] >> c & 1}
            for seat in range(3):
                if seat != sender:
                    assert game.hands[seat] == start[seat]  # nothing returned yet
            game.apply(choose(legal))


def exchange_summary(game: Game) -> list[tuple[int, int, int]]:
    return [(e.sender, e.receiver, len(e.sent)) for e in game.log.exchanges]


def check_returns(game: Game, deal: dict) -> None:
    hands = [set(h) for h in deal["hands"]]
    for e in game.log.exchanges:
        want = top_returns(hands[e.receiver], e.sent)
        assert sorted(e.returned) == want
        hands[e.receiver] = (hands[e.receiver] | set(e.sent)) - set(want)
        hands[e.sender] = (hands[e.sender] - set(e.sent)) | set(want)
    assert game.hands == [sum(1 << c for c in h) for h in hands]


@pytest.mark.parametrize("first_dealer", [0, 1, 2])
def test_max_exchange_example_two_up_one_down(first_dealer):
    # docs/rules.md 9: "8 up 2, 5 up 2, 3 down 4: 8 exchanges 2 with 3, then 5 exchanges 1 with 3"
    s8, s5, s3 = (seat_of(r, first_dealer) for r in (DEALER, ELDEST, MIDDLE))
    balances = by_role(first_dealer, 2, 2, -4)
    deal = exchange_deal(first_dealer)
    game = Game(rules={"max_exchange": 3}, seed=0, first_dealer=first_dealer, deals=[deal], start_balances=balances)
    assert game.current_player == s8 and game.exchange_to_send() == (s3, 2)
    run_exchange(game, min)
    assert exchange_summary(game) == [(s8, s3, 2), (s5, s3, 1)]
    check_returns(game, deal)
    assert game.phase == TRUMP
    # uncapped, the same balances exchange 2 and 2
    game = Game(rules="standard", seed=0, first_dealer=first_dealer, deals=[deal], start_balances=balances)
    run_exchange(game, min)
    assert exchange_summary(game) == [(s8, s3, 2), (s5, s3, 2)]
    check_returns(game, deal)


@pytest.mark.parametrize("first_dealer", [0, 1, 2])
def test_max_exchange_example_one_up_two_down(first_dealer):
    # docs/rules.md 9: "8 up 4, 5 and 3 down 2 each: 8 exchanges 2 with 3, then 1 with 5"
    s8, s5, s3 = (seat_of(r, first_dealer) for r in (DEALER, ELDEST, MIDDLE))
    balances = by_role(first_dealer, 4, -2, -2)
    deal = exchange_deal(10 + first_dealer)
    game = Game(rules="woburn", seed=0, first_dealer=first_dealer, deals=[deal], start_balances=balances)
    assert game.current_player == s8 and game.exchange_to_send() == (s3, 2)
    run_exchange(game, max)  # simultaneous: all three cards are chosen before anything comes back
    assert exchange_summary(game) == [(s8, s3, 2), (s8, s5, 1)]
    check_returns(game, deal)
    game = Game(rules="standard", seed=0, first_dealer=first_dealer, deals=[deal], start_balances=balances)
    run_exchange(game, max)
    assert exchange_summary(game) == [(s8, s3, 2), (s8, s5, 2)]
    check_returns(game, deal)


@pytest.mark.parametrize(("cap", "up", "want"), [(3, 5, 3), (3, 3, 3), (3, 2, 2), (1, 4, 1), (5, 6, 5)])
def test_max_exchange_one_up_one_down_is_capped(cap, up, want):
    deal = exchange_deal(cap * 7 + up)
    balances = [0, up, -up]
    game = Game(rules={"max_exchange": cap}, seed=0, first_dealer=0, deals=[deal], start_balances=balances)
    run_exchange(game, min)
    assert exchange_summary(game) == [(1, 2, want)]
    check_returns(game, deal)


@pytest.mark.parametrize(
    ("balances", "want"),
    [
        ([4, -2, -2], [(0, 2, 2), (0, 1, 2)]),  # 4 cards in all: capped at 3 for the sender
        ([-4, 2, 2], [(1, 0, 2), (2, 0, 2)]),  # 4 cards in all: capped at 3 for the receiver
        ([3, -1, -2], [(0, 2, 2), (0, 1, 1)]),
    ],
)
def test_max_exchange_caps_totals_of_each_player(balances, want):
    uncapped = Game(rules="standard", seed=0, first_dealer=0, start_balances=balances)
    run_exchange(uncapped, min)
    assert exchange_summary(uncapped) == want
    capped = Game(rules={"max_exchange": 3}, seed=0, first_dealer=0, start_balances=balances)
    run_exchange(capped, min)
    got = exchange_summary(capped)
    per_player = [0, 0, 0]
    for s, r, k in got:
        per_player[s] += k
        per_player[r] += k
    assert max(per_player) == min(3, max(abs(b) for b in balances))
    # the first pair is served fully, the second gets what the caps leave
    assert got[0] == want[0]
    assert sum(k for _, _, k in got) == min(3, sum(k for _, _, k in want))


# --------------------------------------------------------------------- win_tricks


def test_all_sixteen():
    game = play_planned("all-sixteen", [roles(0, 0, 16, 0)], max_hands=5)
    assert game.is_over and game.winner == 1 and not game.truncated
    # fifteen is not enough, nor is the standard 12
    for tricks in (roles(0, 0, 15, 1), roles(0, 0, 12, 4), roles(0, 12, 4, 0)):
        game = play_planned("all-sixteen", [tricks])
        assert not game.is_over and game.hand_number == 2


def test_dealer_takes_all_sixteen_with_pickup():
    # the dealer holds every spade and three aces, takes the kitty and throws it away
    dealer = [make_card(SPADES, r) for r in range(2, 15)] + [make_card(s, 14) for s in (CLUBS, DIAMONDS, HEARTS)]
    kitty = [make_card(CLUBS, 2), make_card(DIAMONDS, 2), make_card(HEARTS, 2), make_card(CLUBS, 3)]
    rest = sorted(set(range(NUM_CARDS)) - set(dealer) - set(kitty))
    deal = {"hands": [rest[:16], dealer, rest[16:]], "kitty": kitty}
    rules = RuleSet(win_tricks=16, pickup_before_discard=True)
    game = Game(rules=rules, seed=0, first_dealer=1, deals=[deal])
    game.apply(TRUMP_ACTION_BASE + SPADES)
    for c in kitty:
        game.apply(c)
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(max(legal) if game.current_player == 1 else min(legal))
    assert game.history[0].tricks_won == [0, 16, 0]
    assert game.winner == 1 and game.hand_number == 1


@pytest.mark.parametrize("first_dealer", [0, 1])
def test_low_win_tricks_highest_wins_and_ties_share(first_dealer):
    rules = {"win_tricks": 6}
    d, e, m = (seat_of(r, first_dealer) for r in (DEALER, ELDEST, MIDDLE))
    game = play_planned(rules, [roles(first_dealer, 6, 7, 3)], first_dealer=first_dealer)
    assert game.winner == e
    game = play_planned(rules, [roles(first_dealer, 6, 6, 4)], first_dealer=first_dealer)
    assert game.winner == sorted([d, e])
    game = play_planned(rules, [roles(first_dealer, 5, 5, 6)], first_dealer=first_dealer)
    assert game.winner == m
    game = play_planned(rules, [roles(first_dealer, 4, 6, 6)], first_dealer=first_dealer)
    assert game.winner == sorted([e, m])
    game = play_planned({"win_tricks": 7}, [roles(first_dealer, 5, 5, 6)], first_dealer=first_dealer)
    assert not game.is_over


def test_twelve_trick_rule_is_the_default():
    game = play_planned("standard", [roles(0, 4, 12, 0)])
    assert game.winner == 1
    game = play_planned("standard", [roles(0, 11, 5, 0)])
    assert not game.is_over


# --------------------------------------------------------------------- win_margin


@pytest.mark.parametrize("first_dealer", [0, 2])
def test_win_margin(first_dealer):
    d, e, m = (seat_of(r, first_dealer) for r in (DEALER, ELDEST, MIDDLE))
    margin3 = {"win_margin": 3}
    game = play_planned(margin3, [roles(first_dealer, 5, 8, 3)], first_dealer=first_dealer)
    assert game.winner == e  # 8 tricks is 3 over the eldest's quota of 5
    game = play_planned(margin3, [roles(first_dealer, 9, 7, 0)], first_dealer=first_dealer)
    assert not game.is_over  # +1 and +2
    game = play_planned(margin3, [roles(first_dealer, 4, 6, 6)], first_dealer=first_dealer)
    assert game.winner == m  # the middle's 6 is 3 over its quota of 3
    margin1 = {"win_margin": 1}
    game = play_planned(margin1, [roles(first_dealer, 9, 7, 0)], first_dealer=first_dealer)
    assert game.winner == e  # both reach it; +2 beats +1
    game = play_planned(margin1, [roles(first_dealer, 9, 6, 1)], first_dealer=first_dealer)
    assert game.winner == sorted([d, e])  # +1 and +1 share


def test_win_margin_replaces_the_twelve_trick_rule():
    # the dealer's 12 tricks are only 4 over its quota
    game = play_planned("margin-5", [roles(0, 12, 4, 0)])
    assert not game.is_over and game.hand_number == 2
    game = play_planned({"win_margin": 5, "win_tricks": 12}, [roles(0, 12, 4, 0)])
    assert game.winner == 0
    game = play_planned("margin-5", [roles(0, 4, 10, 2)])
    assert game.winner == 1


# --------------------------------------------------------------------- target_score


def test_target_score_reached_over_several_hands():
    rules = {"target_score": 3, "no_exchange": True}
    # scores after hand 1: [+2, -1, -1]; hand 2 (dealer 1): seat 0 is middle (quota 3)
    game, plans = planned_game(rules, [roles(0, 10, 4, 2), roles(1, 8, 5, 3), roles(2, 3, 9, 4)])
    play_plan(game, plans[0])
    assert game.scores == [2, -1, -1] and not game.is_over
    play_plan(game, plans[1])
    assert game.scores == [2, -1, -1] and not game.is_over
    play_plan(game, plans[2])
    # hand 3: dealer 2 (quota 8) takes 3, eldest 0 (quota 5) takes 9, middle 1 (quota 3) takes 4
    assert game.scores == [6, 0, -6]
    assert game.winner == 0 and game.hand_number == 3


def test_target_score_tie_is_shared_and_replaces_twelve():
    game = play_planned({"target_score": 2, "quotas": [6, 6, 4]}, [roles(0, 8, 8, 0)])
    assert game.winner == [0, 1]
    game = play_planned({"target_score": 10}, [roles(0, 4, 12, 0)])
    assert not game.is_over  # 12 tricks, +7: the 12-trick rule is replaced
    game = play_planned({"target_score": 10, "win_tricks": 12}, [roles(0, 4, 12, 0)])
    assert game.winner == 1


def test_target_symmetric():
    hand = [roles(0, 10, 6, 0)]  # +2, +1, -3
    assert not play_planned({"target_score": 3}, hand).is_over
    game = play_planned({"target_score": 3, "target_symmetric": True}, hand)
    assert game.winner == 0  # reaching -3 ends it; the highest score wins
    game = play_planned({"target_score": 2, "target_symmetric": True}, [roles(0, 9, 6, 1)])  # +1, +1, -2
    assert game.winner == [0, 1]
    game = play_planned({"target_score": 3, "target_symmetric": True}, [roles(0, 9, 6, 1)])
    assert not game.is_over


def test_target_symmetric_needs_target_score():
    with pytest.raises(RulesError, match="target_score"):
        RuleSet(target_symmetric=True)


# --------------------------------------------------------------------- dealer_makes_quota


def test_dealer_makes_quota_only_from_the_third_hand():
    rules = "dealer-makes-quota"
    even = [8, 5, 3]
    # hands 1 and 2: the dealer makes quota (balanced, so no exchange follows); no win yet
    # hand 3: the dealer (seat 2) takes exactly 8 while the eldest goes +1: the dealer wins
    game, plans = planned_game(rules, [roles(0, *even), roles(1, *even), roles(2, 8, 6, 2)])
    play_plan(game, plans[0])
    assert not game.is_over
    play_plan(game, plans[1])
    assert not game.is_over
    play_plan(game, plans[2])
    assert game.winner == 2 and game.scores == [1, -1, 0]


def test_dealer_makes_quota_missed_in_third_hand_goes_on():
    rules = {"dealer_makes_quota": True, "no_exchange": True}
    even = [8, 5, 3]
    game, plans = planned_game(rules, [roles(0, *even), roles(1, 12, 4, 0), roles(2, 7, 6, 3), roles(0, 9, 4, 3)])
    for plan in plans[:3]:
        play_plan(game, plan)
        assert not game.is_over  # hand 2: 12 tricks, not a win either: the 12-trick rule is replaced
    play_plan(game, plans[3])
    assert game.winner == 0 and game.hand_number == 4


def test_dealer_makes_quota_up_needs_more_than_the_quota():
    """docs/rules.md 10.7: with "up" the dealer must take more than its quota; true keeps "at least"."""
    even = [8, 5, 3]
    hands = [roles(0, *even), roles(1, 9, 4, 3), roles(2, 8, 6, 2), roles(0, 9, 5, 2)]
    up = {"dealer_makes_quota": "up", "no_exchange": True}
    game, plans = planned_game(up, hands)
    for plan in plans[:3]:
        play_plan(game, plan)
        # hand 2: +1 but before the third hand; hand 3: exactly the quota, not more
        assert not game.is_over
    play_plan(game, plans[3])
    assert game.winner == 0 and game.hand_number == 4 and not game.truncated
    made = {"dealer_makes_quota": True, "no_exchange": True}
    game = play_planned(made, hands[:3])
    assert game.winner == 2 and game.hand_number == 3  # the same third hand ends the game with "at least"


def test_dealer_makes_quota_values():
    assert RuleSet(dealer_makes_quota="made") == RuleSet(dealer_makes_quota=True) == PRESETS["dealer-makes-quota"]
    assert RuleSet(dealer_makes_quota=None).dealer_makes_quota is False
    up = PRESETS["dealer-makes-quota-up"]
    assert up.dealer_makes_quota == "up" and up.win_tricks is None and up.options()["dealer_makes_quota"] == "up"
    assert RuleSet.from_any({"dealer_makes_quota": "up"}).name == "dealer-makes-quota-up"
    assert RuleSet(dealer_makes_quota="up", quotas=(15, 1, 0)).quotas == (15, 1, 0)  # 16 > 15 can still be taken
    with pytest.raises(RulesError, match="more than its quota 16"):
        RuleSet(dealer_makes_quota="up", quotas=(16, 0, 0))


# --------------------------------------------------------------------- chips


@pytest.mark.parametrize(
    "balances, chips",
    [
        ([2, -1, -1], [4, -2, -2]),  # one up: wins its surplus from each of two down players
        ([1, 1, -2], [1, 1, -2]),  # two up: each wins its own surplus from the one down player
        ([3, 2, -5], [3, 2, -5]),
        ([0, 3, -3], [0, 3, -3]),  # a seat at zero neither wins nor pays
        ([-1, 4, -3], [-4, 8, -4]),  # every down player pays the whole surplus, whatever its deficit
        ([0, 0, 0], [0, 0, 0]),
    ],
)
def test_chip_changes(balances, chips):
    assert chip_changes(balances) == chips and sum(chip_changes(balances)) == 0


def test_chips_decide_fixed_hands_where_balances_would_tie():
    # hand 1: seat 0 deals and goes +2 against two downs (+4 chips); hand 2: seat 1 deals and goes +3
    # against one down, seat 0 at zero (+3 chips). Balances: 2, 2, -4 (a shared win); chips: 4, 1, -5.
    tricks = [roles(0, 10, 4, 2), roles(1, 11, 2, 3)]
    game = play_planned({"chips": True, "fixed_hands": 2, "no_exchange": True}, tricks)
    assert [log.balances for log in game.history] == [[2, -1, -1], [0, 3, -3]]
    assert [log.chips for log in game.history] == [[4, -2, -2], [0, 3, -3]]
    assert game.scores == [4, 1, -5] and game.winner == 0
    plain = play_planned({"fixed_hands": 2, "no_exchange": True}, tricks)
    assert plain.scores == [2, 2, -4] and plain.winner == [0, 1] and all(log.chips is None for log in plain.history)


def test_chips_reach_the_target_score():
    tricks = [roles(0, 10, 4, 2)]  # +2 against two downs: 4 chips, exactly the target
    game = play_planned({"chips": True, "target_score": 4}, tricks)
    assert game.is_over and game.winner == 0 and game.scores == [4, -2, -2]
    game = play_planned({"chips": True, "target_score": 5}, tricks)
    assert not game.is_over and game.scores == [4, -2, -2]
    game = play_planned({"target_score": 4}, tricks)
    assert not game.is_over and game.scores == [2, -1, -1]


def test_chips_12_preset():
    rules = PRESETS["chips-12"]
    assert rules.chips and rules.fixed_hands == 12 and rules.win_tricks is None
    game = random_game(rules, 5)
    check_history(game)
    assert game.hand_number == 12 and not game.truncated


def _caught(rules, seeds=range(40), max_hands: int = 30) -> bool:
    """True when check_history finds a planted engine bug in one of some random games."""
    for seed in seeds:
        try:
            check_history(random_game(rules, seed, max_hands=max_hands))
        except AssertionError:
            return True
    return False


def test_planted_bugs_in_section_10_options_are_caught(monkeypatch):
    assert not _caught("chips-12", range(3)) and not _caught("dealer-makes-quota-up", range(5))
    with monkeypatch.context() as patch:  # chips scored as plain balances
        patch.setattr("sm_env.core.game.chip_changes", lambda balances: list(balances))
        assert _caught("chips-12", range(3))
    with monkeypatch.context() as patch:  # a down player pays its own deficit instead of the surplus
        patch.setattr(
            "sm_env.core.game.chip_changes", lambda b: [x * sum(1 for y in b if y < 0) if x > 0 else x for x in b]
        )
        assert _caught("chips-12", range(5))
    original = Game._game_winners

    def at_least(self, balances):  # "up" read as "at least its quota"
        if self.hand_number >= 3 and self.tricks_won[self.dealer] == self.quotas[self.dealer]:
            return [self.dealer]
        return original(self, balances)

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_game_winners", at_least)
        assert _caught("dealer-makes-quota-up")


# --------------------------------------------------------------------- fixed_hands


def test_fixed_hands_highest_score_wins():
    rules = {"fixed_hands": 3, "no_exchange": True}
    game, plans = planned_game(rules, [roles(0, 4, 12, 0), roles(1, 8, 5, 3), roles(2, 9, 2, 5)])
    play_plan(game, plans[0])
    assert not game.is_over and game.scores == [-4, 7, -3]  # 12 tricks do not win
    play_plan(game, plans[1])
    assert not game.is_over
    play_plan(game, plans[2])
    assert game.scores == [-7, 9, -2]
    assert game.is_over and game.winner == 1 and game.hand_number == 3 and not game.truncated


def test_fixed_hands_ties_are_shared():
    game = play_planned({"fixed_hands": 1}, [roles(1, 9, 6, 1)], first_dealer=1)  # +1, +1, -2
    assert game.winner == [1, 2]
    game = play_planned({"fixed_hands": 2}, [roles(0, 8, 5, 3), roles(1, 8, 5, 3)])
    assert game.winner == [0, 1, 2] and game.scores == [0, 0, 0]


@pytest.mark.parametrize("preset", ["fixed-9", "fixed-12"])
def test_fixed_hands_plays_exactly_n_hands(preset):
    n = PRESETS[preset].fixed_hands
    for seed in range(3):
        game = random_game(preset, seed, max_hands=100)
        check_history(game)
        assert game.hand_number == n and len(game.history) == n and not game.truncated
        best = max(game.scores)
        assert winners_of(game) == [s for s in range(3) if game.scores[s] == best]


# --------------------------------------------------------------------- no_kitty_51


def test_no_kitty_51_rules():
    rules = RuleSet(no_kitty_51=True)
    assert rules.quotas == (8, 6, 3) and rules.hand_size == 17 and rules.kitty_size == 0
    assert rules.tricks_per_hand == 17
    assert PRESETS["6-3-8"].target_score == 10 and PRESETS["6-3-8"].no_kitty_51
    with pytest.raises(RulesError, match="sum"):
        RuleSet(no_kitty_51=True, quotas=(8, 5, 3))
    assert RuleSet(no_kitty_51=True, quotas=(9, 5, 3)).quotas == (9, 5, 3)
    with pytest.raises(RulesError):
        RuleSet(no_kitty_51=True, pickup_before_discard=True)


def test_no_kitty_51_random_deal_and_flow():
    game = Game(rules="6-3-8", seed=4, first_dealer=1)
    log = game.log
    assert [len(h) for h in log.deal_hands] == [17, 17, 17] and log.kitty == []
    assert 0 not in {c for h in log.deal_hands for c in h}
    assert game.phase == TRUMP
    game.apply(TRUMP_ACTION_BASE + HEARTS)
    assert game.phase == PLAY and log.discards == [] and log.shown == []
    assert game.current_player == 2  # the eldest leads at once: no discards


def test_no_kitty_51_hand_scores_against_8_6_3():
    game = play_planned({"no_kitty_51": True}, [roles(0, 8, 6, 3)])
    assert game.history[0].balances == [0, 0, 0] and len(game.history[0].tricks) == 17
    game = play_planned({"no_kitty_51": True}, [roles(1, 7, 5, 5)], first_dealer=1)
    assert game.history[0].balances == by_role(1, -1, -1, 2)
    assert game.history[0].quotas == by_role(1, 8, 6, 3)


def test_no_kitty_51_rejects_two_of_clubs_and_wrong_sizes():
    deck = list(range(1, NUM_CARDS))
    good = {"hands": [deck[0:17], deck[17:34], deck[34:51]], "kitty": []}
    Game(rules="6-3-8", seed=0, deals=[good])
    with_2c = {"hands": [[0] + deck[1:17], deck[17:34], deck[34:51]], "kitty": []}
    with pytest.raises(DealError, match="2C"):
        Game(rules="6-3-8", seed=0, deals=[with_2c])
    with pytest.raises(DealError):
        Game(rules="6-3-8", seed=0, deals=[{"hands": [deck[0:16], deck[16:32], deck[32:48]], "kitty": deck[48:]}])
    with pytest.raises(DealError):
        Game(rules="6-3-8", seed=0, deals=[{"hands": good["hands"], "kitty": [0]}])


# --------------------------------------------------------------------- precedence


def test_win_tricks_before_win_margin():
    hand = [roles(0, 9, 7, 0)]  # dealer 9 tricks (+1), eldest 7 (+2)
    assert play_planned({"win_tricks": 9, "win_margin": 2}, hand).winner == 0
    assert play_planned({"win_margin": 2}, hand).winner == 1
    assert play_planned({"win_tricks": 10, "win_margin": 2}, hand).winner == 1


def test_win_margin_before_target_score():
    hands = [roles(0, 9, 6, 1), roles(1, 3, 8, 5)]
    # after hand 1: [+1, +1, -2]; hand 2 (dealer 1, eldest 2, middle 0):
    # seat 2 takes 8 (+3), seat 0 takes 5 (+2) -> scores [3, -4, 1]
    both = play_planned({"win_margin": 2, "target_score": 3, "no_exchange": True}, hands)
    assert both.scores == [3, -4, 1] and both.winner == 2  # the margin decides
    target = play_planned({"target_score": 3, "no_exchange": True}, hands)
    assert target.winner == 0


def test_target_score_before_dealer_makes_quota():
    hands = [roles(0, 8, 5, 3), roles(1, 8, 5, 3), roles(2, 8, 6, 2)]  # hand 3: eldest (seat 0) +1
    both = play_planned({"target_score": 1, "dealer_makes_quota": True, "no_exchange": True}, hands)
    assert both.winner == 0
    dmq = play_planned({"dealer_makes_quota": True, "no_exchange": True}, hands)
    assert dmq.winner == 2


def test_dealer_makes_quota_before_fixed_hands():
    hands = [roles(0, 8, 5, 3), roles(1, 8, 5, 3), roles(2, 8, 6, 2)]
    both = play_planned({"fixed_hands": 3, "dealer_makes_quota": True}, hands)
    assert both.winner == 2 and both.scores == [1, -1, 0]
    fixed = play_planned({"fixed_hands": 3}, hands)
    assert fixed.winner == 0


def test_fixed_hands_comes_last():
    # hand 1: [+1, +1, -2]; hand 2 (dealer 1): seat 2 (eldest) +2, seat 0 (middle) +1 -> scores [2, -2, 0]
    hands = [roles(0, 9, 6, 1), roles(1, 5, 7, 4)]
    fixed = play_planned({"fixed_hands": 2, "no_exchange": True}, hands)
    assert fixed.scores == [2, -2, 0] and fixed.winner == 0
    assert play_planned({"fixed_hands": 2, "win_margin": 2, "no_exchange": True}, hands).winner == 2
    assert play_planned({"fixed_hands": 2, "target_score": 3, "no_exchange": True}, hands).winner == 0
    assert play_planned({"fixed_hands": 2, "target_score": 2, "no_exchange": True}, hands).winner == 0
    one = [roles(0, 9, 6, 1)]
    assert play_planned({"fixed_hands": 1}, one).winner == [0, 1]
    assert play_planned({"fixed_hands": 1, "win_tricks": 9}, one).winner == 0


def test_other_end_conditions_replace_twelve_unless_win_tricks_given():
    for option, value in [("win_margin", 5), ("target_score", 10), ("dealer_makes_quota", True), ("fixed_hands", 5)]:
        assert RuleSet(**{option: value}).win_tricks is None
        assert RuleSet(**{option: value, "win_tricks": 12}).win_tricks == 12
        game = play_planned({option: value}, [roles(0, 12, 4, 0)])
        assert not game.is_over, option
        game = play_planned({option: value, "win_tricks": 12}, [roles(0, 12, 4, 0)])
        assert game.winner == 0, option
    assert RuleSet().win_tricks == 12 and RuleSet(no_exchange=True, max_exchange=None).win_tricks == 12


# --------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "options",
    [
        {"foo": 1},
        {"pickup": True},
        {"quotas": [9, 5, 3]},
        {"quotas": [8, 5]},
        {"quotas": "853"},
        {"quotas": [8.0, 5, 3]},
        {"quotas": [9, 8, -1]},
        {"trump_after_kitty": True},
        {"no_exchange": "yes"},
        {"no_exchange": 1},
        {"pickup_before_discard": "false"},
        {"max_exchange": "3"},
        {"max_exchange": 2.5},
        {"max_exchange": True},
        {"max_exchange": 0},
        {"win_tricks": 17},
        {"win_tricks": 0},
        {"win_margin": 0},
        {"target_score": -10},
        {"target_symmetric": True},
        {"fixed_hands": 0},
        {"fixed_hands": "9"},
        {"no_exchange": True, "max_exchange": 3},
        {"no_kitty_51": True, "pickup_before_discard": True},
        {"dealer_makes_quota": "yes"},
        {"dealer_makes_quota": "UP"},
        {"dealer_makes_quota": 1},
        {"dealer_makes_quota": "up", "quotas": [16, 0, 0]},
        {"chips": "yes"},
        {"chips": 1},
    ],
)
def test_invalid_rule_sets_are_rejected(options):
    with pytest.raises(RulesError):
        RuleSet.from_any(options)
    with pytest.raises(RulesError):
        Game(rules=options)


def test_unknown_option_and_preset_names():
    with pytest.raises(RulesError, match="unknown rule option"):
        RuleSet.from_any({"max_bleed": 3})
    with pytest.raises(RulesError, match="unknown rule preset"):
        RuleSet.from_any("woburnn")
    with pytest.raises((RulesError, TypeError)):
        RuleSet(max_bleed=3)  # type: ignore[call-arg]


# --------------------------------------------------------------------- random play, every preset


RANDOM_GAMES = 100  # per preset; "all-sixteen" is rarely won, so its games are cut at fewer hands


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_games_follow_the_rules(preset):
    rules = PRESETS[preset]
    others = (rules.win_margin, rules.target_score, rules.fixed_hands)
    if preset != "all-sixteen":
        # docs/rules.md 8, 10.5 (13 of 17 tricks with one_card_kitty) and 10.6 (9 with four players)
        default = 9 if rules.num_players == 4 else 13 if rules.one_card_kitty else 12
        replaced = any(v is not None for v in others) or rules.dealer_makes_quota or rules.calls  # 10.3: 18 hands
        assert rules.win_tricks == (None if replaced else default)
    games, max_hands = (60, 60) if preset == "all-sixteen" else (RANDOM_GAMES, 200)
    won = 0
    for seed in range(games):
        game = random_game(preset, 1000 + seed, max_hands=max_hands)
        check_history(game)
        assert game.legal_mask() == 0 and game.current_player is None and game.phase == OVER
        with pytest.raises(GameOverError):
            game.apply(game.history[0].deal_hands[0][0])
        won += game.winner is not None
    if preset != "all-sixteen":
        assert won > games // 2  # the end condition is met in random play, and the game ends there


@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(sorted(PRESETS)))
@settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
def test_random_games_property(seed, preset):
    game = random_game(preset, seed, max_hands=12)
    check_history(game)


# --------------------------------------------------------------------- order of the phases (section 10.1)

# Dealer seat 0 is down 1 and seat 1 up 1 (start balances); seat 0's top heart is TH and the kitty
# holds AH: the standard show rule would show AH to seat 1.
SHOW_DEAL = make_deal("TH C:23456789TJQK D:234", "H:3456789 S:3456789TJ", None, "AH 2H AS 2S")


def _run(game: Game, choose) -> list[str]:
    """Play the hand to its first trick with ``choose(game)`` and return the phases met, in order."""
    names = ["exchange", "trump", "discard", "play"]
    seen: list[str] = []
    while game.phase != PLAY:
        if not seen or seen[-1] != names[game.phase]:
            seen.append(names[game.phase])
        game.apply(choose(game))
    return seen + ["play"]


def _lowest(game: Game) -> int:
    if game.phase == TRUMP:
        return TRUMP_ACTION_BASE + SPADES
    legal = game.legal_actions()
    if game.phase == DISCARD:  # keep the hearts: discard clubs first
        return min(legal, key=lambda c: (c // 13 == HEARTS, c))
    return min(legal, key=lambda c: (c // 13 != HEARTS, c))  # send the lowest heart


@pytest.mark.parametrize(
    "options, phases, returned, shown",
    [
        ({}, ["exchange", "trump", "discard"], "TH", ["AH"]),
        ({"trump_before_exchange": True}, ["trump", "exchange", "discard"], "TH", ["AH"]),
        (
            {"trump_before_exchange": True, "pickup_before_discard": True},
            ["trump", "exchange", "discard"],
            "TH",
            ["AH"],
        ),
        # the kitty comes before the exchange: AH is in the dealer's hand and goes back itself; no show rule
        ({"kitty_before_exchange": True}, ["discard", "exchange", "trump"], "AH", []),
        ({"kitty_before_exchange": True, "trump_before_exchange": True}, ["trump", "discard", "exchange"], "AH", []),
        ({"kitty_before_exchange": True, "trump_after_kitty": True}, ["trump", "discard", "exchange"], "AH", []),
        ({"kitty_before_exchange": True, "trump_after_send": True}, ["discard", "exchange", "trump"], "AH", []),
        ({"trump_after_send": True}, ["exchange", "trump", "discard"], "TH", ["AH"]),
    ],
    ids=str,
)
def test_phase_order_and_the_show_rule(options, phases, returned, shown):
    game = Game(rules=options, seed=0, first_dealer=0, deals=[SHOW_DEAL], start_balances=[-1, 1, 0])
    assert game.rules.pickup_before_discard == (
        bool(options.get("kitty_before_exchange")) or bool(options.get("pickup_before_discard"))
    )
    assert _run(game, _lowest) == [*phases, "play"]
    (entry,) = game.log.exchanges
    assert (entry.sender, entry.receiver, entry.sent) == (1, 0, [make_card(HEARTS, 3)])
    assert entry.returned == [parse_card(returned)]
    assert game.log.shown == ([(1, [parse_card(c) for c in shown])] if shown else [])
    assert game.log.trump == SPADES and len(game.log.discards) == 4
    assert [h.bit_count() for h in game.hands] == [16, 16, 16]
    check_history(_finish(game))


def _finish(game: Game) -> Game:
    rng = random.Random(0)
    game.max_hands = game.hand_number
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return game


def test_trump_before_exchange_senders_know_trump_and_the_dealer_discards_after():
    game = Game(
        rules={"trump_before_exchange": True}, seed=0, first_dealer=0, deals=[SHOW_DEAL], start_balances=[-1, 1, 0]
    )
    assert game.phase == TRUMP and game.current_player == 0 and game.legal_mask() == 0xF << TRUMP_ACTION_BASE
    with pytest.raises(IllegalActionError):
        game.apply(make_card(HEARTS, 3))  # seat 1 may not send yet
    game.apply(TRUMP_ACTION_BASE + HEARTS)
    assert game.phase == EXCHANGE and game.current_player == 1
    assert player_view(game, 1).trump == HEARTS and player_view(game, 1).exchange_pending
    game.apply(make_card(HEARTS, 3))
    assert game.phase == DISCARD and not player_view(game, 2).exchange_pending and game.log.shown is None
    for card in game.legal_actions()[:4]:
        game.apply(card)
    assert game.phase == PLAY and game.log.shown == [(1, [make_card(HEARTS, 14)])]  # shown on taking the kitty


# Seats 0 (dealer, quota 8) and 1 (quota 5) are up 1, seat 2 (quota 3) down 2. Seat 2's top club is KC.
SEND_DEAL = make_deal("C:23 D:23456789TJQKA H:2", "C:A H:3456789TJQKA S:234", "C:456789TJQK S:56789T", "S:JQKA")


@pytest.mark.parametrize("after_send, first_back, second_back", [(False, "KC", "AC"), (True, "AC", "KC")])
def test_trump_after_send_returns_from_every_sent_card(after_send, first_back, second_back):
    """docs/rules.md 10.1: with trump_after_send the first return may be a card the second up player sent."""
    rules = {"trump_after_send": after_send}
    game = Game(rules=rules, seed=0, first_dealer=0, deals=[SEND_DEAL], start_balances=[1, 1, -2])
    assert game.phase == EXCHANGE and game.current_player == 0  # the higher current quota first
    game.apply(parse_card("2C"))
    if after_send:
        # the card is in seat 2's hand; nothing has come back; the second up player sends next
        assert game.phase == EXCHANGE and game.current_player == 1
        assert game.hands[2] >> parse_card("2C") & 1 and game.hands[2].bit_count() == 17
        assert game.hands[0].bit_count() == 15 and game.log.exchanges[0].returned is None
        game.apply(parse_card("AC"))
        assert game.phase == TRUMP and game.current_player == 0 and game.exchange_pending
        assert [h.bit_count() for h in game.hands] == [15, 15, 18]
        assert all(e.returned is None for e in game.log.exchanges)
        game.apply(TRUMP_ACTION_BASE + DIAMONDS)
    else:
        assert game.log.exchanges[0].returned == [parse_card(first_back)]
        game.apply(parse_card("AC"))
        game.apply(TRUMP_ACTION_BASE + DIAMONDS)
    first, second = game.log.exchanges
    assert first.returned == [parse_card(first_back)] and second.returned == [parse_card(second_back)]
    assert game.phase == DISCARD and not game.exchange_pending
    assert [h.bit_count() for h in game.hands] == [16, 16, 16]
    check_history(_finish(game))


def test_trump_after_send_views_and_record_before_the_returns():
    game = Game(rules={"trump_after_send": True}, seed=0, first_dealer=0, deals=[SEND_DEAL], start_balances=[1, 1, -2])
    game.apply(parse_card("2C"))
    receiver, other = player_view(game, 2), player_view(game, 1)
    assert receiver.exchanges[0].sent == (parse_card("2C"),) and receiver.exchanges[0].returned is None
    assert receiver.got[0] == 1 << parse_card("2C") and receiver.hand >> parse_card("2C") & 1
    assert other.exchanges[0].sent is None and other.got == (0, 0, 0)  # the third player: counts only
    game.apply(parse_card("AC"))
    dealer = player_view(game, 0)
    assert dealer.phase == TRUMP and dealer.exchanges[0].sent == (parse_card("2C"),)
    assert dealer.exchanges[0].returned is None and dealer.got == (0, 0, 0) and dealer.exchange_pending
    record = game_record(game)
    assert [e["returned"] for e in record["hands"][0]["exchanges"]] == [None, None] and record["hands"][0][
        "trump"
    ] is None
    assert replay(record) == record
    game.apply(TRUMP_ACTION_BASE + DIAMONDS)
    assert player_view(game, 2).gave == (1 << parse_card("AC"), 1 << parse_card("KC"), 0)
    record = game_record(game)
    assert replay(record) == record


def test_what_the_second_sender_cannot_see_before_the_returns_does_not_change_its_observation():
    """Seat 0 sends 2C in one game and 3C in the other (swapped with seat 2): seat 1 cannot tell."""
    other = make_deal("C:3 D:23456789TJQKA H:2 C:K", "C:A H:3456789TJQKA S:234", "C:2456789TJQ S:56789T", "S:JQKA")
    seen = []
    for deal, sent in (
        (make_deal("C:2 D:23456789TJQKA H:2 C:K", "C:A H:3456789TJQKA S:234", "C:3456789TJQ S:56789T", "S:JQKA"), "2C"),
        (other, "3C"),
    ):
        game = Game(rules={"trump_after_send": True}, seed=0, first_dealer=0, deals=[deal], start_balances=[1, 1, -2])
        game.apply(parse_card(sent))
        game.apply(parse_card("AC"))
        seen.append(encode(player_view(game, 1)))
    assert (seen[0] == seen[1]).all()


@pytest.mark.parametrize(
    "options",
    [
        {"trump_before_exchange": True},
        {"trump_before_exchange": True, "pickup_before_discard": True, "max_exchange": 2},
        {"kitty_before_exchange": True},
        {"kitty_before_exchange": True, "trump_before_exchange": True},
        {"kitty_before_exchange": True, "trump_after_kitty": True},
        {"kitty_before_exchange": True, "trump_after_send": True},
        {"trump_after_send": True},
        {"trump_after_send": True, "pickup_before_discard": True},
        {"trump_after_send": True, "no_kitty_51": True, "quotas": [8, 6, 3]},
        {"trump_before_exchange": True, "no_kitty_51": True, "quotas": [8, 6, 3]},
    ],
    ids=str,
)
def test_phase_order_random_games_follow_the_rules(options):
    exchanged = 0
    for seed in range(40):
        game = random_game(options, 500 + seed, max_hands=40)
        check_history(game)
        record = game_record(game)
        assert replay(record) == record
        exchanged += sum(len(log.exchanges) for log in game.history)
    assert exchanged > 40


def test_phase_order_validation():
    assert RuleSet(kitty_before_exchange=True).pickup_before_discard  # implied
    assert PRESETS["9-2-5-variation"].quotas == (9, 2, 5) and PRESETS["9-2-5-variation"].target_symmetric
    assert (
        RuleSet.from_any(
            {
                "quotas": [9, 2, 5],
                "kitty_before_exchange": True,
                "trump_after_send": True,
                "target_score": 15,
                "target_symmetric": True,
            }
        ).name
        == "9-2-5-variation"
    )
    assert PRESETS["9-2-5"].quotas == (9, 2, 5) and not PRESETS["9-2-5"].kitty_before_exchange
    for options, words in [
        ({"trump_before_exchange": True, "trump_after_send": True}, "at most one"),
        ({"trump_after_send": True, "trump_after_kitty": True, "pickup_before_discard": True}, "at most one"),
        ({"trump_before_exchange": True, "no_exchange": True}, "no_exchange"),
        ({"kitty_before_exchange": True, "no_exchange": True}, "no_exchange"),
        ({"kitty_before_exchange": True, "no_kitty_51": True}, "no_kitty_51 has none"),
        ({"trump_after_send": "yes"}, "true or false"),
    ]:
        with pytest.raises(RulesError, match=words):
            RuleSet.from_any(options)


def test_planted_bugs_in_the_phase_order_are_caught(monkeypatch):
    import sm_env.core.game

    original = sm_env.core.game.hand_order
    rules = {"trump_after_send": True}
    assert not _caught(rules, range(10))
    with monkeypatch.context() as patch:  # returns made at once, as in a plain exchange
        patch.setattr(
            "sm_env.core.game.hand_order",
            lambda r: tuple("exchange" if s == "send" else s for s in original(r) if s != "return"),
        )
        assert _caught(rules)
    with monkeypatch.context() as patch:  # the kitty after the exchange although kitty_before_exchange
        patch.setattr("sm_env.core.game.hand_order", lambda r: original(r.replace(kitty_before_exchange=False)))
        assert _caught({"kitty_before_exchange": True})


# --------------------------------------------------------------------- dealer_assigns_quotas (section 10.7)


def test_assignment_actions_follow_the_table_of_section_10_8():
    from sm_env.core.game import ASSIGN, assignment_of

    rules = PRESETS["dealer-assigns"]
    table = {68: [8, 5, 3], 69: [8, 3, 5], 70: [5, 8, 3], 71: [5, 3, 8], 72: [3, 8, 5], 73: [3, 5, 8]}
    assert {a: assignment_of(a, rules) for a in table} == table
    assert rules.num_actions == 74 and PRESETS["standard"].num_actions == 56
    for action, by_role in table.items():
        game = Game(rules=rules, seed=3, first_dealer=1)
        assert game.phase == ASSIGN and game.current_player == 1 and game.legal_actions() == list(table)
        assert game.quotas is None and game.log.quotas is None and game_record(game)["hands"][0]["quotas"] is None
        with pytest.raises(IllegalActionError, match="assign the quotas"):
            game.apply(TRUMP_ACTION_BASE)
        game.apply(action)
        assert game.log.assignment == by_role
        assert game.quotas == [by_role[2], by_role[0], by_role[1]]  # seats 1, 2, 0 are dealer, eldest, middle
        assert game.phase == TRUMP and game.current_player == 1


def test_assigned_quotas_score_the_hand_and_order_the_next_exchange():
    # hand 1 (dealer 0) assigns 3-8-5: dealer 3, eldest 8, middle 5. Seat 0 takes 5 (+2), seat 1 takes 7 (-1),
    # seat 2 takes 4 (-1). With the standard quotas the same tricks would give -3, +2, +1.
    rules = {"dealer_assigns_quotas": True, "win_tricks": 16}
    plan = plan_hand([5, 7, 4], 0, rules)
    game = Game(rules=rules, seed=0, first_dealer=0, deals=[plan.deal, plan_hand([8, 5, 3], 1, rules).deal])
    game.apply(72)
    play_plan(game, plan)
    assert game.history[0].balances == [2, -1, -1] and game.scores == [2, -1, -1]
    # hand 2 (dealer 1): seat 0 is the only one up. It assigns 5-8-3: dealer 5, eldest (seat 2) 8, middle (seat 0) 3.
    # Seat 0 serves the lower current quota first: seat 1 (5) before seat 2 (8); standard would serve seat 2 (3) first.
    assert game.phase == ASSIGN_PHASE and game.current_player == 1
    game.apply(70)
    assert game.quotas == [3, 5, 8]
    assert game.cards_to_send() == ((1, 1), (2, 1))
    assert player_view(game, 2).quotas == (3, 5, 8) and player_view(game, 1).exchange_pending


ASSIGN_PHASE = 5


def test_assignment_in_the_record_and_replay():
    game = random_game("dealer-assigns", 4, max_hands=6)
    record = game_record(game)
    assert replay(record) == record
    for hand in record["hands"]:
        assert sorted(hand["assignment"]) == [3, 5, 8]
        assert hand["assignment"] == [hand["quotas"][(hand["dealer"] + r) % 3] for r in range(3)]
    wrong = json_copy(record)
    wrong["hands"][1]["assignment"] = [8, 8, 0]
    with pytest.raises(Exception, match="hand 2, assignment: the record has \\[8, 8, 0\\], but the dealer gives"):
        replay(wrong)
    other = next(a for a in ([8, 5, 3], [3, 5, 8]) if a != record["hands"][1]["assignment"])
    wrong = json_copy(record)
    wrong["hands"][1]["assignment"] = other  # a legal assignment, but not the quotas the record shows
    with pytest.raises(Exception, match="hand 2, (quotas|exchange|assignment)"):
        replay(wrong)
    wrong = json_copy(record)
    wrong["hands"][0]["quotas"] = None
    with pytest.raises(Exception, match="hand 1, quotas: null exactly while the assignment is null"):
        replay(wrong)
    plain = game_record(random_game("standard", 4, max_hands=2))
    plain["hands"][0]["assignment"] = [8, 5, 3]
    with pytest.raises(Exception, match="hand 1, assignment: a record has 'assignment' only when"):
        replay(plain)
    start = Game(rules="dealer-assigns", seed=1)
    assert game_record(start)["hands"][0]["assignment"] is None and replay(game_record(start)) == game_record(start)


def json_copy(value):
    import json

    return json.loads(json.dumps(value))


def test_heuristic_assignment_takes_the_lowest_quota_and_gives_the_middle_the_highest():
    from agents.players.heuristic import choose_assignment, heuristic_action
    from sm_env.core.game import assignment_of

    rules = PRESETS["dealer-assigns"]
    game = Game(rules=rules, seed=0, first_dealer=0)
    view = player_view(game, 0)
    assert assignment_of(heuristic_action(view), rules) == [3, 5, 8]  # dealer 3, eldest 5, middle 8
    object.__setattr__(view, "scores", (0, 4, -4))
    # whatever the scores (docs/results/heuristic-ab.md A/B)
    assert assignment_of(heuristic_action(view), rules) == [3, 5, 8]
    assert assignment_of(choose_assignment(view, high_to="leader"), rules) == [3, 8, 5]  # the rule it replaced


def test_planted_bug_in_the_assignment_is_caught(monkeypatch):
    from sm_env.core.game import assignment_of

    assert not _caught("dealer-assigns", range(5), max_hands=6)

    def by_seat(self, action):  # the quotas given by seat instead of by role
        by_role = assignment_of(action, self.rules)
        self.quotas = list(by_role)
        self.log.quotas = list(by_role)
        self.log.assignment = by_role
        self._exchange_rounds = self._exchange_plan(self.previous_balances)
        self._next_stage()

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_assign", by_seat)
        assert _caught("dealer-assigns", range(5), max_hands=6)


def test_assignment_validation_and_start_balances():
    from sm_env.core.game import check_start_balances

    assert RuleSet(dealer_assigns_quotas=True).name == "dealer-assigns"
    with pytest.raises(RulesError, match="true or false"):
        RuleSet.from_any({"dealer_assigns_quotas": "yes"})
    # any seat may have held any quota in the imaginary previous hand: -7, 11, -4 needs quotas 8, 3, 5 by
    # seat, which no dealer gives with 8-5-3 by role, but an assignment can
    with pytest.raises(ValueError, match="cannot come from a hand"):
        check_start_balances([-7, 11, -4], RuleSet())
    assert check_start_balances([-7, 11, -4], RuleSet(dealer_assigns_quotas=True)) == [-7, 11, -4]


# --------------------------------------------------------------------- first_up_exchanges_first (section 10.4)


@pytest.mark.parametrize("first_up", [False, True])
def test_the_player_that_got_up_first_exchanges_first(first_up):
    # hand 1 (dealer 0, quotas 8-5-3): seat 0 wins the first 9 tricks (up at trick 9), seat 1 the next 6
    # (up at trick 15), seat 2 one. Hand 2 (dealer 1): seat 1 has quota 8, seat 0 quota 3.
    rules = {"first_up_exchanges_first": first_up}
    plan = plan_hand([9, 6, 1], 0, rules)
    game = Game(rules=rules, seed=0, first_dealer=0, deals=[plan.deal])
    play_plan(game, plan)
    assert [t.winner for t in game.history[0].tricks] == [0] * 9 + [1] * 6 + [2]
    assert game.hand_number == 2 and game.phase == EXCHANGE
    first = 0 if first_up else 1  # the usual order: the higher current quota (seat 1) first
    assert game.current_player == first and game.cards_to_send() == ((2, 1),)
    while game.phase == EXCHANGE:
        game.apply(game.legal_actions()[0])
    assert [(e.sender, e.receiver) for e in game.log.exchanges] == [(first, 2), (1 - first, 2)]


def test_first_up_exchanges_first_random_games_and_validation():
    rules = {"first_up_exchanges_first": True, "max_exchange": 3}
    two_up = 0
    for seed in range(60):
        game = random_game(rules, 900 + seed, max_hands=30)
        check_history(game)
        two_up += sum(len({e.sender for e in log.exchanges}) == 2 for log in game.history)
    assert two_up > 10
    with pytest.raises(RulesError, match="no_exchange"):
        RuleSet(first_up_exchanges_first=True, no_exchange=True)
    # start balances have no previous hand to look at: the usual order
    game = Game(rules=rules, seed=0, first_dealer=0, start_balances=[1, 1, -2])
    assert game.current_player == 0


def test_planted_bug_in_first_up_is_caught(monkeypatch):
    rules = {"first_up_exchanges_first": True}
    assert not _caught(rules, range(20))
    with monkeypatch.context() as patch:  # the usual order instead
        patch.setattr(Game, "_up_at", lambda self: None)
        assert _caught(rules, range(20))


# --------------------------------------------------------------------- kitty_trick, 3-5-9 (section 10.4)


@pytest.mark.parametrize("played, over", [(11, True), (10, False)])
def test_the_kitty_trick_counts_for_the_dealer_and_for_the_twelve(played, over):
    """3-5-9: the four discards are the dealer's first trick; 11 played + the kitty trick = 12 wins."""
    rules = PRESETS["3-5-9"]
    tricks = [played, 16 - played - 3, 3]
    plan = plan_hand(tricks, 0, {"pickup_before_discard": True})  # the 16 played tricks
    game = Game(rules=rules, seed=0, first_dealer=0, deals=[plan.deal], max_hands=1)
    game.apply(TRUMP_ACTION_BASE + plan.trump)
    assert game.picked_up and game.hands[0].bit_count() == 20  # kitty first, then 4 discards of 20
    for card in plan.discards:
        assert game.tricks_won[0] == 0
        game.apply(card)
    assert game.tricks_won == [1, 0, 0] and game.tricks_played == 0 and player_view(game, 1).tricks_won == (1, 0, 0)
    for slot in plan.order:
        for _ in range(3):
            game.apply(plan.cards[game.current_player][slot])
    log = game.log
    assert len(log.tricks) == 16 and log.tricks_won == [played + 1, tricks[1], 3] and sum(log.tricks_won) == 17
    assert log.balances == [played + 1 - 9, tricks[1] - 5, 0]
    assert (game.winner == 0) == over and game.truncated != over


def test_kitty_trick_rules():
    rules = RuleSet(kitty_trick=True)
    assert rules.quotas == (9, 5, 3) and rules.tricks_per_hand == 17 and rules.hand_size == 16
    assert rules.pickup_before_discard and rules.win_tricks == 12
    assert PRESETS["3-5-9"].first_up_exchanges_first and PRESETS["3-5-9"].quotas == (9, 5, 3)
    with pytest.raises(RulesError, match="sum to 16, but a hand has 17"):
        RuleSet(kitty_trick=True, quotas=(8, 5, 3))
    with pytest.raises(RulesError, match="kitty_trick takes the kitty, but no_kitty_51"):
        RuleSet(kitty_trick=True, no_kitty_51=True, quotas=(8, 6, 3))


def test_the_discards_of_the_kitty_trick_stay_the_dealers():
    """Two deals that differ only in which cards the dealer throws away look the same to the others."""
    seen = []
    for discards in ("2C 3C 4C 5C", "2D 3D 4D 5D"):
        deal = make_deal("C:2345 D:2345 H:AKQJ S:AKQJ", "C:6789 D:6789 H:T987 S:T987", None, "C:AKQJ")
        game = Game(rules="3-5-9", seed=0, first_dealer=0, deals=[deal])
        game.apply(TRUMP_ACTION_BASE + SPADES)
        for card in discards.split():
            game.apply(parse_card(card))
        assert game.phase == PLAY and game.tricks_won == [1, 0, 0]
        seen.append([encode(player_view(game, seat)) for seat in (1, 2)])
        assert player_view(game, 1).discards is None and player_view(game, 1).discard_count == 4
    assert all((a == b).all() for a, b in zip(seen[0], seen[1], strict=True))


def test_planted_bug_in_the_kitty_trick_is_caught(monkeypatch):
    assert not _caught("3-5-9", range(5))
    original = Game._discard

    def no_trick(self, card):  # the kitty trick not counted
        original(self, card)
        if self.rules.kitty_trick and self.log.discards is not None and len(self.log.discards) == 4:
            self.tricks_won[self.dealer] -= 1

    with monkeypatch.context() as patch:
        patch.setattr(Game, "_discard", no_trick)
        assert _caught("3-5-9", range(5))


@pytest.mark.parametrize(
    "options",
    [
        {"kitty_trick": True, "trump_after_kitty": True},
        {"kitty_trick": True, "kitty_before_exchange": True, "trump_after_send": True},
        {
            "kitty_trick": True,
            "dealer_assigns_quotas": True,
            "first_up_exchanges_first": True,
            "chips": True,
            "fixed_hands": 6,
        },
        {
            "dealer_assigns_quotas": True,
            "trump_after_send": True,
            "kitty_before_exchange": True,
            "dealer_makes_quota": "up",
        },
        {"trump_before_exchange": True, "dealer_assigns_quotas": True, "quotas": [6, 5, 5]},
    ],
    ids=str,
)
def test_section_10_options_combine(options):
    for seed in range(20):
        game = random_game(options, seed, max_hands=30)
        check_history(game)
        record = game_record(game)
        assert replay(record) == record
