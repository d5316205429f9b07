"""Property tests over thousands of random games (random legal play).

Every finished hand is re-derived from its deal with an independent
implementation of docs/rules.md sections 1-8 (exchange plan and returns, show rule,
follow suit, trick winners, scores, end of the game); a subset of games is also
checked after every single action (cards accounted for, hand sizes, masks).
"""

from __future__ import annotations

import random

from helpers import snapshot

from sm_env.core.cards import FULL_DECK
from sm_env.core.game import DISCARD, EXCHANGE, OVER, PLAY, TRUMP, TRUMP_MASK, Game

QUOTAS = (8, 5, 3)  # dealer, eldest, middle (docs/rules.md 1)
SUITS = range(4)


def suit(c: int) -> int:
    return c // 13


def expected_plan(balances: list[int] | None, quotas: list[int]) -> list[list[tuple[int, int, int]]]:
    """Exchange rounds [(sender, receiver, count), ...] from docs/rules.md 4."""
    if balances is None:
        return []
    ups = [s for s in range(3) if balances[s] > 0]
    downs = [s for s in range(3) if balances[s] < 0]
    if not ups:
        return []
    if len(ups) == 1:  # simultaneous: lower current quota first
        return [[(ups[0], r, -balances[r]) for r in sorted(downs, key=lambda s: quotas[s])]]
    (receiver,) = downs  # two up: higher current quota first, one round each
    return [[(s, receiver, balances[s])] for s in sorted(ups, key=lambda s: -quotas[s])]


def trick_winner(cards: list[int], leader: int, trump: int) -> int:
    led = suit(cards[0])
    best = max(range(3), key=lambda i: (suit(cards[i]) == trump, suit(cards[i]) == led, cards[i] % 13))
    return (leader + best) % 3


class Stats:
    def __init__(self) -> None:
        self.cases: dict[str, int] = {}

    def saw(self, case: str) -> None:
        self.cases[case] = self.cases.get(case, 0) + 1


def check_hand(log, number: int, dealer: int, previous, scores_before: list[int], stats: Stats) -> list[int]:
    """Re-derive one finished hand; returns the running scores after it."""
    assert log.number == number
    assert log.dealer == dealer
    assert log.quotas == [QUOTAS[(s - dealer) % 3] for s in range(3)]

    # 3. deal: 16 + 16 + 16 + 4, every card once
    hands = [set(h) for h in log.deal_hands]
    assert [len(h) for h in hands] == [16, 16, 16] and len(log.kitty) == 4
    assert set().union(*hands, log.kitty) == set(range(52))

    # 4. exchange
    balances = None if previous is None else previous.balances
    plan = expected_plan(balances, log.quotas)
    assert [(e.sender, e.receiver, e.count) for e in log.exchanges] == [x for rnd in plan for x in rnd]
    if balances is not None:
        ups = sum(b > 0 for b in balances)
        stats.saw({0: "no exchange", 1: f"one up {sum(b < 0 for b in balances)} down", 2: "two up"}[ups])
    done = 0
    for rnd in plan:
        entries = log.exchanges[done : done + len(rnd)]
        done += len(rnd)
        sender = rnd[0][0]
        sent_all = [c for e in entries for c in e.sent]
        assert len(set(sent_all)) == len(sent_all)
        assert set(sent_all) <= hands[sender]  # chosen from the hand before anything returns
        back = set()
        for e in entries:
            assert len(e.sent) == e.count
            receiver = hands[e.receiver] | set(e.sent)
            expected = []
            for s in SUITS:
                n = sum(suit(c) == s for c in e.sent)
                expected += sorted((c for c in receiver if suit(c) == s), reverse=True)[:n]
            assert sorted(e.returned) == sorted(expected)
            if set(e.returned) & set(e.sent):
                stats.saw("a sent card came back")
            hands[e.receiver] = receiver - set(expected)
            back |= set(expected)
        hands[sender] = (hands[sender] - set(sent_all)) | back
    assert [len(h) for h in hands] == [16, 16, 16]

    # 5. trump, discards (from the hand before the kitty), kitty, show rule
    assert log.trump in SUITS
    assert len(log.discards) == 4 and len(set(log.discards)) == 4
    assert set(log.discards) <= hands[dealer]
    hands[dealer] = (hands[dealer] - set(log.discards)) | set(log.kitty)
    shown = []
    for e in log.exchanges:
        if e.receiver != dealer:
            continue
        lowest = {s: min(c for c in e.returned if suit(c) == s) for s in {suit(c) for c in e.returned}}
        above = [k for k in log.kitty if suit(k) in lowest and k > lowest[suit(k)]]
        if above:
            shown.append((e.sender, sorted(above)))
    assert sorted((s, sorted(c)) for s, c in log.shown) == sorted(shown)
    if shown:
        stats.saw("shown")

    # 6. tricks
    assert len(log.tricks) == 16
    leader = (dealer + 1) % 3
    won = [0, 0, 0]
    for k, trick in enumerate(log.tricks):
        assert [len(h) for h in hands] == [16 - k] * 3
        assert trick.leader == leader
        assert len(trick.cards) == 3
        led = suit(trick.cards[0])
        for i, c in enumerate(trick.cards):
            seat = (leader + i) % 3
            assert c in hands[seat]
            if suit(c) != led:
                assert not any(suit(h) == led for h in hands[seat]), "did not follow suit"
                if suit(c) != log.trump:
                    stats.saw("discarded off-suit without trumping")
            hands[seat].remove(c)
        winner = trick_winner(trick.cards, leader, log.trump)
        assert trick.winner == winner
        won[winner] += 1
        leader = winner
    assert hands == [set(), set(), set()]

    # 7. score
    assert log.tricks_won == won
    assert log.balances == [won[s] - log.quotas[s] for s in range(3)]
    assert sum(log.balances) == 0
    scores = [scores_before[s] + log.balances[s] for s in range(3)]
    assert log.scores == scores and sum(scores) == 0
    return scores


def check_game(game: Game, stats: Stats, max_hands: int | None = None, start_balances: list[int] | None = None) -> None:
    """Re-derive a finished game from its history."""
    assert game.phase == OVER
    logs = game.history
    dealer = game.first_dealer
    scores = [0, 0, 0]
    # start_balances act as the balances of an imaginary hand 0
    previous = None if start_balances is None else type("Hand0", (), {"balances": start_balances})()
    for n, log in enumerate(logs, start=1):
        scores = check_hand(log, n, dealer, previous, scores, stats)
        twelve = [s for s in range(3) if log.tricks_won[s] >= 12]
        if n < len(logs):
            assert not twelve, "the game goes on after someone took 12 tricks"
        previous = log
        dealer = (dealer + 1) % 3
    assert game.scores == scores
    last = logs[-1]
    twelve = [s for s in range(3) if last.tricks_won[s] >= 12]
    assert len(twelve) <= 1
    if twelve:
        assert game.winner == twelve[0] and not game.truncated
        stats.saw("won")
    else:
        assert game.winner is None and game.truncated and len(logs) == max_hands
        stats.saw("truncated")
    assert game.current_player is None and game.legal_mask() == 0 and game.legal_actions() == []


def popcount(x: int) -> int:
    return x.bit_count()


def check_step(game: Game) -> None:
    """Invariants of the state between two actions."""
    log = game.log
    phase = game.phase
    legal = game.legal_mask()
    if phase == OVER:
        assert legal == 0 and game.current_player is None
        return
    hands = game.hands
    discards = 0 if log.discards is None else sum(1 << c for c in log.discards)
    played = sum(1 << c for t in (log.tricks or []) for c in t.cards)
    pending = sum(1 << c for e in log.exchanges if e.returned is None for c in e.sent)
    kitty_taken = log.discards is not None and len(log.discards) == 4
    kitty = 0 if kitty_taken else sum(1 << c for c in log.kitty)
    parts = [*hands, discards, played, pending, kitty]
    assert sum(popcount(p) for p in parts) == 52, "a card is lost or in two places"
    union = 0
    for p in parts:
        union |= p
    assert union == FULL_DECK
    seat = game.current_player
    if phase == EXCHANGE:
        assert legal == hands[seat] and game.exchange_to_send()[1] > 0
        assert [popcount(h) for h in hands] == [16 - popcount(pending) if s == seat else 16 for s in range(3)]
    elif phase == TRUMP:
        assert legal == TRUMP_MASK and seat == game.dealer
        assert [popcount(h) for h in hands] == [16, 16, 16]
    elif phase == DISCARD:
        assert seat == game.dealer and legal == hands[seat] and legal & kitty == 0
        assert popcount(hands[seat]) == 16 - len(log.discards)
    else:
        assert phase == PLAY
        trick = log.tricks[-1]
        assert trick.winner is None
        assert seat == (trick.leader + len(trick.cards)) % 3
        played_by = [0, 0, 0]
        for t in log.tricks:
            for i in range(len(t.cards)):
                played_by[(t.leader + i) % 3] += 1
        assert [popcount(h) for h in hands] == [16 - p for p in played_by]
        if trick.cards:
            led = game.hands[seat] & (0x1FFF << 13 * suit(trick.cards[0]))
            assert legal == (led or hands[seat])
        else:
            assert legal == hands[seat]
        assert legal & ~hands[seat] == 0


def play_random(game: Game, seed: int, each_step: bool = False) -> None:
    rng = random.Random(seed)
    while game.current_player is not None:
        if each_step:
            check_step(game)
        game.apply(rng.choice(game.legal_actions()))
    if each_step:
        check_step(game)


def test_full_games_rederived():
    stats = Stats()
    for seed in range(500):
        game = Game(seed=seed, max_hands=150)
        play_random(game, seed)
        check_game(game, stats, max_hands=150)
    assert stats.cases["won"] > 450 and stats.cases["won"] + stats.cases.get("truncated", 0) == 500
    for case in ("no exchange", "one up 1 down", "one up 2 down", "two up", "shown", "a sent card came back"):
        assert stats.cases.get(case, 0) > 0, (case, stats.cases)


def _possible_balances(balances: list[int]) -> bool:
    """Balances some 8-5-3 hand of 16 tricks could have produced (whoever dealt it)."""
    quotas = (8, 5, 3)
    return any(all(-quotas[(s - d) % 3] <= balances[s] <= 16 - quotas[(s - d) % 3] for s in range(3)) for d in range(3))


def test_short_games_with_exchanges_from_the_start():
    stats = Stats()
    rng = random.Random(2024)
    for seed in range(1500):
        a = rng.randint(-8, 8)
        b = rng.randint(-8, 8)
        if not _possible_balances([a, b, -a - b]):
            continue  # no real hand gives these (the engine rejects them; see test_game)
        game = Game(seed=seed, max_hands=2, start_balances=[a, b, -a - b])
        play_random(game, seed)
        check_game(game, stats, max_hands=2, start_balances=[a, b, -a - b])
    assert stats.cases["truncated"] > 1000 and stats.cases["won"] > 0
    for case in ("no exchange", "one up 1 down", "one up 2 down", "two up", "shown"):
        assert stats.cases.get(case, 0) > 0, (case, stats.cases)


def test_every_step_invariants():
    for seed in range(1000, 1100):
        game = Game(seed=seed, max_hands=30)
        play_random(game, seed, each_step=True)


def test_every_step_invariants_with_start_exchange():
    for seed in range(200):
        game = Game(seed=seed, max_hands=1, start_balances=[(seed % 7) - 3, 3 - (seed % 7), 0])
        play_random(game, seed, each_step=True)


def test_same_seed_same_actions_same_history():
    for seed in range(40):
        a, b = Game(seed=seed), Game(seed=seed)
        play_random(a, seed)
        play_random(b, seed)
        assert snapshot(a) == snapshot(b)


def test_clone_is_independent_and_continues_identically():
    rng = random.Random(7)
    checked_phases = set()
    for seed in range(60):
        game = Game(seed=seed, start_balances=[2, -1, -1] if seed % 2 else None)
        steps = rng.randrange(0, 200)
        play = random.Random(seed)
        for _ in range(steps):
            if game.current_player is None:
                break
            game.apply(play.choice(game.legal_actions()))
        checked_phases.add(game.phase)
        before = snapshot(game)
        twin = game.clone()
        assert snapshot(twin) == before
        # drive the clone on: the original must not move
        actions = []
        mover = random.Random(seed + 1)
        for _ in range(120):
            if twin.current_player is None:
                break
            action = mover.choice(twin.legal_actions())
            actions.append(action)
            twin.apply(action)
        assert snapshot(game) == before
        # the original, given the same actions, ends in the same state
        for action in actions:
            game.apply(action)
        assert snapshot(game) == snapshot(twin)
        # and from there on, including random deals, they stay equal
        if game.current_player is not None:
            g2 = game.clone()
            play_random(game, seed + 2)
            play_random(g2, seed + 2)
            assert snapshot(game) == snapshot(g2)
    assert {EXCHANGE, TRUMP, DISCARD, PLAY} <= checked_phases
