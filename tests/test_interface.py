"""Conformance tests of the public contract (docs/interface.md), written as an outside user.

Only public names are used: ``sm_env.env``, ``raw_env``, ``replay`` (and
``RuleSet``, the "rule-set object" the contract names), PettingZoo and
gymnasium. Card ids, trick winners, exchanges and the show rule are
re-derived here from docs/rules.md, independently of the engine, and every
record and mask the environment produces along a few games is checked
against that reference.

Observation offsets used below are those of the documented layout table
(``sm_env.observation``): hand at 0 (52), gave[left, right] at 364 (2 x 52),
got[left, right] at 468 (2 x 52), shown at 572 (52); relative seats: left = next clockwise.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from collections import Counter
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest

import sm_env
from sm_env import RuleSet, env, raw_env, replay

AGENTS = ["player_0", "player_1", "player_2"]
RANKS = "23456789TJQKA"
SUITS = "CDHS"
FORMAT = "sergeant-major-record/1"
TOP_KEYS = {"format", "rules", "seed", "first_dealer", "hands", "winner", "truncated"}
HAND_KEYS = {
    "number",
    "dealer",
    "quotas",
    "deal",
    "exchanges",
    "trump",
    "discards",
    "shown",
    "tricks",
    "tricks_won",
    "balances",
    "scores",
}
# docs/rules.md section 9, by name (quotas 9-5-2 / 9-2-5 are the one option "quotas"; the symmetric flag of
# target_score is "target_symmetric")
SECTION_9 = {
    "pickup_before_discard",
    "trump_after_kitty",
    "quotas",
    "no_exchange",
    "max_exchange",
    "win_tricks",
    "win_margin",
    "target_score",
    "target_symmetric",
    "dealer_makes_quota",
    "fixed_hands",
    "no_kitty_51",
}
# the options of section 10 implemented so far (every option is listed in a record's rules)
SECTION_10 = {
    "chips",
    "trump_before_exchange",
    "kitty_before_exchange",
    "trump_after_send",
    "dealer_assigns_quotas",
    "first_up_exchanges_first",
    "kitty_trick",
    "one_card_kitty",
    "auction",
    "calls",
    "players",
}
STANDARD_RULES = {
    "name": "standard",
    "pickup_before_discard": False,
    "trump_after_kitty": False,
    "quotas": [8, 5, 3],
    "no_exchange": False,
    "max_exchange": None,
    "win_tricks": 12,
    "win_margin": None,
    "target_score": None,
    "target_symmetric": False,
    "dealer_makes_quota": False,
    "fixed_hands": None,
    "no_kitty_51": False,
    "chips": False,
    "trump_before_exchange": False,
    "kitty_before_exchange": False,
    "trump_after_send": False,
    "dealer_assigns_quotas": False,
    "first_up_exchanges_first": False,
    "kitty_trick": False,
    "one_card_kitty": False,
    "auction": False,
    "calls": False,
    "players": 3,
}
QUOTAS = (8, 5, 3)  # dealer, eldest, middle
HAND, GAVE, GOT, SHOWN = 0, 364, 468, 572


# ---------------------------------------------------------------------- an independent reference (docs/rules.md)


def cid(text: Any) -> int:
    """Card id of docs/rules.md section 2: suit * 13 + rank - 2 (C, D, H, S; 2..A)."""
    t = str(text).strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    assert len(t) == 2 and t[0] in RANKS and t[1] in SUITS, f"not a card: {text!r}"
    return SUITS.index(t[1]) * 13 + RANKS.index(t[0])


def ctext(card: int) -> str:
    return RANKS[card % 13] + SUITS[card // 13]


def ids(texts: list[str]) -> list[int]:
    return [cid(c) for c in texts]


def quotas_of(dealer: int) -> list[int]:
    return [QUOTAS[(seat - dealer) % 3] for seat in range(3)]


def exchange_plan(prev: list[int] | None, quotas: list[int]) -> list[tuple[int, list[tuple[int, int]]]]:
    """Rounds [(sender, [(receiver, count), ...])] of docs/rules.md section 4 (standard rules)."""
    if prev is None:
        return []
    ups = [s for s in range(3) if prev[s] > 0]
    downs = [s for s in range(3) if prev[s] < 0]
    if not ups:
        return []
    if len(ups) == 1:  # simultaneous: the receiver with the lower current quota first
        return [(ups[0], [(r, -prev[r]) for r in sorted(downs, key=lambda s: quotas[s])])]
    return [(s, [(downs[0], prev[s])]) for s in sorted(ups, key=lambda s: -quotas[s])]


def returned_cards(receiver_hand: set[int], sent: list[int]) -> list[int]:
    """For each suit s: the receiver's n_s highest cards of s, the received cards included."""
    hand = receiver_hand | set(sent)
    out: list[int] = []
    for suit in range(4):
        n = sum(1 for c in sent if c // 13 == suit)
        out += sorted((c for c in hand if c // 13 == suit), reverse=True)[:n]
    return out


def trick_winner(leader: int, cards: list[int], trump: int) -> int:
    led = cards[0] // 13
    best = max(range(3), key=lambda k: (cards[k] // 13 == trump, cards[k] // 13 == led, cards[k]))
    return (leader + best) % 3


def follow(hand: set[int], led: int | None) -> set[int]:
    if led is None:
        return set(hand)
    same = {c for c in hand if c // 13 == led}
    return same or set(hand)


def check_text(cards: list[str]) -> list[int]:
    out = []
    for c in cards:
        assert isinstance(c, str) and ctext(cid(c)) == c, f"card not written as two-character text: {c!r}"
        out.append(cid(c))
    return out


def check_hand(hand: dict[str, Any], index: int, record: dict[str, Any], prev: list[int] | None, scores: list[int]):
    """Check one hand entry against docs/rules.md; return None when finished, else the state to act in."""
    where = f"hand {index + 1}"
    assert HAND_KEYS <= set(hand), f"{where}: missing {HAND_KEYS - set(hand)}"
    assert hand["number"] == index + 1
    dealer = record["first_dealer"] if index == 0 else (record["hands"][index - 1]["dealer"] + 1) % 3
    assert hand["dealer"] == dealer, where
    quotas = quotas_of(dealer)
    assert hand["quotas"] == quotas, f"{where}: quotas by absolute seat"
    finished = hand["scores"] is not None
    if finished:
        for key in HAND_KEYS:
            assert hand[key] is not None, f"{where}: a finished hand has every field, {key} is null"

    def in_progress(phase: str, to_act: int, legal: set[int], null: tuple[str, ...]) -> dict[str, Any]:
        assert not finished, f"{where}: finished, but the reference says it is in the {phase} phase"
        for key in ("tricks_won", "balances", "scores", *null):
            assert hand[key] is None, f"{where}: {key} is not yet known in the {phase} phase, so null"
        return {"phase": phase, "to_act": to_act, "legal": legal, "hand": index + 1, "held": held}

    deal = hand["deal"]
    assert set(deal) == {"hands", "kitty"}
    dealt = [check_text(h) for h in deal["hands"]]
    kitty = check_text(deal["kitty"])
    assert [len(h) for h in dealt] == [16, 16, 16] and len(kitty) == 4
    assert sorted(c for h in dealt for c in h) == sorted(set(range(52)) - set(kitty)), f"{where}: not a deal"
    held = [set(h) for h in dealt]

    # the exchange, round by round, in the order carried out
    exchanges = hand["exchanges"]
    assert isinstance(exchanges, list)
    position = 0
    for sender, targets in exchange_plan(prev, quotas):
        entries = exchanges[position : position + len(targets)]
        chosen: list[int] = []
        for (receiver, count), entry in zip(targets, entries, strict=False):
            assert set(entry) >= {"from", "to", "sent", "returned"}
            assert (entry["from"], entry["to"]) == (sender, receiver), f"{where}: exchange order {exchanges}"
            assert len(entry["sent"]) <= count
            chosen += check_text(entry["sent"])
        assert len(set(chosen)) == len(chosen) and set(chosen) <= held[sender], f"{where}: sent cards not held"
        done = len(entries) == len(targets) and all(
            len(e["sent"]) == k for (_, k), e in zip(targets, entries, strict=False)
        )
        if not done:
            assert all(e["returned"] is None for e in entries), f"{where}: returned before the cards move"
            assert all(len(e["sent"]) == k for (_, k), e in zip(targets, entries[:-1], strict=False))
            assert position + len(entries) == len(exchanges), f"{where}: an exchange listed before its turn"
            return in_progress(
                "exchange", sender, held[sender] - set(chosen), ("trump", "discards", "shown", "tricks")
            ) | {"round": (sender, targets)}
        back: list[int] = []
        for (receiver, _), entry in zip(targets, entries, strict=True):
            sent = ids(entry["sent"])
            expected = returned_cards(held[receiver], sent)
            assert entry["returned"] is not None, f"{where}: the round is complete, returned must be known"
            assert sorted(check_text(entry["returned"])) == sorted(expected), f"{where}: returned cards"
            held[receiver] = (held[receiver] | set(sent)) - set(expected)
            back += expected
        held[sender] = (held[sender] - set(chosen)) | set(back)
        position += len(targets)
    assert position == len(exchanges), f"{where}: exchanges nobody was due: {exchanges}"

    # trump, discards (before seeing the kitty), the kitty and the show rule
    if hand["trump"] is None:
        return in_progress("trump", dealer, {52, 53, 54, 55}, ("discards", "shown", "tricks"))
    assert hand["trump"] in ("C", "D", "H", "S")
    trump = SUITS.index(hand["trump"])
    discards = check_text(hand["discards"] or [])
    assert len(discards) <= 4 and len(set(discards)) == len(discards) and set(discards) <= held[dealer]
    if len(discards) < 4:
        return in_progress("discard", dealer, held[dealer] - set(discards), ("shown", "tricks"))
    held[dealer] = (held[dealer] - set(discards)) | set(kitty)
    expected_shown = {}
    for entry in exchanges:
        if entry["to"] == dealer:
            lowest: dict[int, int] = {}
            for c in ids(entry["returned"]):
                lowest[c // 13] = min(lowest.get(c // 13, 99), c)
            cards = sorted(k for k in kitty if k // 13 in lowest and k > lowest[k // 13])
            if cards:
                expected_shown[entry["from"]] = cards
    assert hand["shown"] is not None, f"{where}: the kitty is taken, shown is known"
    tos = [entry["to"] for entry in hand["shown"]]
    assert len(tos) == len(set(tos)), f"{where}: one entry per player shown something"
    assert {e["to"]: sorted(check_text(e["cards"])) for e in hand["shown"]} == expected_shown, f"{where}: shown"

    # the tricks, in play order from the leader
    leader = (dealer + 1) % 3
    won = [0, 0, 0]
    tricks = hand["tricks"] or []
    for t, trick in enumerate(tricks):
        assert trick["leader"] == leader, f"{where}, trick {t + 1}: leader"
        cards = check_text(trick["cards"])
        seat = leader
        for k, c in enumerate(cards):
            assert c in follow(held[seat], cards[0] // 13 if k else None), f"{where}, trick {t + 1}: illegal card"
            held[seat].discard(c)
            seat = (seat + 1) % 3
        if len(cards) < 3:
            assert t == len(tricks) - 1 and trick["winner"] is None, f"{where}: the current trick has winner null"
            return in_progress("play", seat, follow(held[seat], cards[0] // 13 if cards else None), ())
        winner = trick_winner(leader, cards, trump)
        assert trick["winner"] == winner, f"{where}, trick {t + 1}: winner"
        won[winner] += 1
        leader = winner
    if len(tricks) < 16:
        return in_progress("play", leader, set(held[leader]), ())
    assert finished and hand["tricks_won"] == won, f"{where}: tricks_won"
    assert hand["balances"] == [won[s] - quotas[s] for s in range(3)], f"{where}: balances"
    for s in range(3):
        scores[s] += hand["balances"][s]
    assert hand["scores"] == scores, f"{where}: scores"
    return None


def check_record(record: dict[str, Any], max_hands: int | None = 100) -> dict[str, Any] | None:
    """Check a standard-rules record against docs/rules.md and docs/interface.md; return who acts now (None: over)."""
    assert TOP_KEYS <= set(record), f"missing {TOP_KEYS - set(record)}"
    assert record["format"] == FORMAT
    assert record["rules"] == STANDARD_RULES
    assert record["first_dealer"] in (0, 1, 2)
    assert isinstance(record["truncated"], bool)
    assert json.loads(json.dumps(record)) == record, "a record is plain JSON"
    hands = record["hands"]
    assert hands, "a record holds hand 1 from the start"
    over = record["winner"] is not None or record["truncated"]
    scores = [0, 0, 0]
    prev = None
    state = None
    for i, hand in enumerate(hands):
        state = check_hand(hand, i, record, prev, scores)
        last = i == len(hands) - 1
        if not last:
            assert state is None, f"hand {i + 1} is not finished, but hand {i + 2} follows"
            assert max(hand["tricks_won"]) < 12, f"hand {i + 1} won the game, but the record goes on"
        prev = hand["balances"]
    last = hands[-1]
    if not over:
        assert state is not None, "a hand ended without ending the game: the next hand's entry must be present"
        return state
    assert state is None, "the game is over, so its last hand is finished"
    hit = [s for s in range(3) if last["tricks_won"][s] >= 12]
    assert record["winner"] == (hit[0] if hit else None)
    assert record["truncated"] == (not hit) and (hit or len(hands) == max_hands)
    return None


# ---------------------------------------------------------------------- helpers


def plane(obs: dict[str, np.ndarray], offset: int) -> set[int]:
    return {int(c) for c in np.flatnonzero(obs["observation"][offset : offset + 52])}


def rel_plane(obs: dict[str, np.ndarray], base: int, seat: int, other: int) -> set[int]:
    """gave/got plane of ``seat`` for ``other`` (relative seat 1 = left, 2 = right)."""
    return plane(obs, base + 52 * ((other - seat) % 3 - 1))


def legal(e) -> list[int]:
    """The legal actions of the agent to act, read from its mask."""
    return [int(a) for a in np.flatnonzero(e.observe(e.agent_selection)["action_mask"])]


def over(e) -> bool:
    return any(e.terminations.values()) or any(e.truncations.values())


def observe_all(e) -> dict[int, dict[str, np.ndarray]]:
    return {seat: e.observe(agent) for seat, agent in enumerate(AGENTS)}


def check_masks(e, state: dict[str, Any] | None, obs: dict[int, dict[str, np.ndarray]]) -> None:
    """The mask is exactly the legal set for the player to act, all zero for everyone else."""
    for seat, agent in enumerate(AGENTS):
        mask = obs[seat]["action_mask"]
        assert mask.shape == (e.action_space(agent).n,) == (56,)
        assert set(np.unique(mask)) <= {0, 1}
        assert e.observation_space(agent).contains(obs[seat]), f"{agent}: observation outside its space"
        if state is not None and seat == state["to_act"]:
            assert e.agent_selection == agent
            assert {int(a) for a in np.flatnonzero(mask)} == state["legal"], f"{agent}: mask != legal actions"
        else:
            assert not mask.any(), f"{agent} is not to act, its mask must be all zero"


def check_exchange_timing(before_obs, after_obs, before_state, action: int, record, stats: Counter) -> None:
    """docs/interface.md: the cards of a round move when the sender has chosen its last card for that round."""
    sender, targets = before_state["round"]
    hand = record["hands"][before_state["hand"] - 1]
    entries = {(e["from"], e["to"]): e for e in hand["exchanges"]}
    done = all(
        (sender, r) in entries and len(entries[sender, r]["sent"]) == k and entries[sender, r]["returned"] is not None
        for r, k in targets
    )
    receivers = [r for r, _ in targets]
    third = [s for s in range(3) if s != sender and s not in receivers]
    for s in third:  # not in this round: sees no card of it
        assert plane(after_obs[s], HAND) == plane(before_obs[s], HAND)
        for base in (GAVE, GOT):
            for other in range(3):
                if other != s:
                    assert rel_plane(after_obs[s], base, s, other) == rel_plane(before_obs[s], base, s, other)
    if not done:
        if len(targets) == 2 and (sender, receivers[0]) in entries:
            if len(entries[sender, receivers[0]]["sent"]) == targets[0][1]:
                stats["first receiver complete, round not"] += 1
        stats["round incomplete"] += 1
        for r in receivers:
            assert plane(after_obs[r], HAND) == plane(before_obs[r], HAND), "the receiver got cards too early"
            assert rel_plane(after_obs[r], GOT, r, sender) == set(), "the receiver sees sent cards too early"
            assert rel_plane(after_obs[r], GAVE, r, sender) == set()
            assert rel_plane(after_obs[sender], GOT, sender, r) == set(), "the sender sees returned cards too early"
        assert plane(after_obs[sender], HAND) == plane(before_obs[sender], HAND) - {action}
        return
    stats["round complete"] += 1
    stats[f"round with {len(targets)} receiver(s)"] += 1
    back: set[int] = set()
    for r in receivers:
        sent, returned = set(ids(entries[sender, r]["sent"])), set(ids(entries[sender, r]["returned"]))
        assert rel_plane(after_obs[r], GOT, r, sender) == sent
        assert rel_plane(after_obs[r], GAVE, r, sender) == returned
        assert plane(after_obs[r], HAND) == (plane(before_obs[r], HAND) | sent) - returned
        assert rel_plane(after_obs[sender], GOT, sender, r) == returned
        assert rel_plane(after_obs[sender], GAVE, sender, r) == sent
        back |= returned
    assert plane(after_obs[sender], HAND) == (plane(before_obs[sender], HAND) - {action}) | back


def walk(e, rng: random.Random, stats: Counter, max_hands: int = 100, replay_every: int = 41) -> dict[str, Any]:
    """Play a game with random legal actions, checking record, masks and exchange timing after every step."""
    record = e.unwrapped.record()
    state = check_record(record, max_hands)
    obs = observe_all(e)
    check_masks(e, state, obs)
    for seat in range(3):  # right after reset: hand 1 with its deal, as the players hold it
        assert plane(obs[seat], HAND) == set(ids(record["hands"][0]["deal"]["hands"][seat]))
    steps = 0
    actions: dict[int, list[int]] = {}
    while state is not None:
        action = rng.choice(sorted(state["legal"]))
        e.step(action)
        steps += 1
        new_record = e.unwrapped.record()
        # the record holds the actions of the hand as taken: sent cards and discards in the order chosen,
        # trick cards in play order; each card is its action id
        actions.setdefault(state["hand"], []).append(action)
        h = new_record["hands"][state["hand"] - 1]
        stream = [cid(c) for entry in h["exchanges"] for c in entry["sent"]]
        stream += [52 + SUITS.index(h["trump"])] if h["trump"] is not None else []
        stream += ids(h["discards"] or []) + [cid(c) for t in h["tricks"] or [] for c in t["cards"]]
        assert stream == actions[state["hand"]]
        new_state = check_record(new_record, max_hands)
        new_obs = observe_all(e)
        check_masks(e, new_state, new_obs)
        if state["phase"] == "exchange":
            check_exchange_timing(obs, new_obs, state, action, new_record, stats)
        if len(new_record["hands"]) > len(record["hands"]):
            stats["hands"] += 1
            deal = new_record["hands"][-1]["deal"]["hands"]
            for seat in range(3):  # "deal is the hands as dealt, before the exchange"
                assert plane(new_obs[seat], HAND) == set(ids(deal[seat]))
        shown = new_record["hands"][-1]["shown"] or []
        for seat in range(3):  # what it was shown (plane 572), and nothing else
            expected = {cid(c) for entry in shown if entry["to"] == seat for c in entry["cards"]}
            assert plane(new_obs[seat], SHOWN) == expected
            stats["shown"] += bool(expected)
        if steps % replay_every == 0:
            assert replay(json.loads(json.dumps(new_record))) == new_record
        record, state, obs = new_record, new_state, new_obs
    assert replay(json.loads(json.dumps(record))) == record
    return record


# ---------------------------------------------------------------------- Actions


@pytest.mark.parametrize("factory", [env, raw_env])
def test_one_discrete_action_space_of_56_for_every_agent(factory):
    e = factory()
    e.reset(seed=0)
    spaces = [e.action_space(a) for a in e.possible_agents]
    assert e.possible_agents == AGENTS
    assert all(isinstance(s, gymnasium.spaces.Discrete) for s in spaces)
    assert all(s == spaces[0] for s in spaces) and spaces[0].n == 56 and spaces[0].start == 0


@pytest.mark.parametrize("preset", ["woburn", "canadian", "6-3-8", "fixed-9", "independent"])
def test_mask_has_one_entry_per_action_in_every_rule_set(preset):
    e = env(rules=preset)
    e.reset(seed=1)
    for agent in AGENTS:
        n = e.action_space(agent).n
        assert n >= 56  # 0-55 keep their meaning; 56 and up only for variants that need more
        assert e.observe(agent)["action_mask"].shape == (n,)
        assert e.observation_space(agent).contains(e.observe(agent))


def _built_deal() -> dict[str, Any]:
    # seat 0 deals. Seat 0: every club, 2D 3D 4D. Seat 1: 5D-AD, 2H-7H. Seat 2: 8H-AH, 2S-TS. Kitty JS-AS.
    return {
        "hands": [
            [f"{r}C" for r in RANKS] + ["2D", "3D", "4D"],
            [f"{r}D" for r in RANKS[3:]] + [f"{r}H" for r in RANKS[:6]],
            [f"{r}H" for r in RANKS[6:]] + [f"{r}S" for r in RANKS[:9]],
        ],
        "kitty": ["JS", "QS", "KS", "AS"],
    }


@pytest.mark.parametrize("trump", range(4))
def test_action_ids_through_a_hand_built_deal(trump):
    """0-51 are cards by suit * 13 + rank - 2, 52-55 name trump C, D, H, S; the mask is the legal set."""
    deal = _built_deal()
    e = env()
    e.reset(seed=5, options={"first_dealer": 0, "deals": [deal]})
    held = [set(ids(h)) for h in deal["hands"]]
    assert e.agent_selection == "player_0"
    mask = e.observe("player_0")["action_mask"]
    assert list(np.flatnonzero(mask)) == [52, 53, 54, 55]  # the trump phase: exactly 52-55
    e.step(52 + trump)
    record = e.unwrapped.record()
    assert record["hands"][0]["trump"] == "CDHS"[trump]
    # discards: any card of the dealer's 16 (not the kitty), ids 0 = 2C, 12 = AC, 13 = 2D
    assert {int(a) for a in np.flatnonzero(e.observe("player_0")["action_mask"])} == held[0]
    assert held[0] == set(range(0, 16))
    for action in (0, 12, 13, 11):
        e.step(action)
    assert e.unwrapped.record()["hands"][0]["discards"] == ["2C", "AC", "2D", "KC"]
    assert e.unwrapped.record()["hands"][0]["shown"] == []
    # the eldest (seat 1) leads with any card; 25 = AD
    assert e.agent_selection == "player_1"
    assert {int(a) for a in np.flatnonzero(e.observe("player_1")["action_mask"])} == held[1]
    e.step(25)
    # seat 2 has no diamond: any card; it plays 2S = 39
    assert {int(a) for a in np.flatnonzero(e.observe("player_2")["action_mask"])} == held[2]
    e.step(39)
    # the dealer must follow diamonds: 3D 4D = 14, 15 (it took the kitty, AS = 51 among its cards)
    assert list(np.flatnonzero(e.observe("player_0")["action_mask"])) == [14, 15]
    assert 51 in plane(e.observe("player_0"), HAND)
    open_trick = e.unwrapped.record()["hands"][0]["tricks"]
    assert open_trick == [{"leader": 1, "cards": ["AD", "2S"], "winner": None}]
    e.step(15)
    trick = e.unwrapped.record()["hands"][0]["tricks"][0]
    assert trick == {"leader": 1, "cards": ["AD", "2S", "4D"], "winner": 2 if trump == 3 else 1}
    assert e.agent_selection == f"player_{trick['winner']}"


# ---------------------------------------------------------------------- Observations


def test_observe_is_the_classic_dict_and_matches_its_space():
    e = env()
    e.reset(seed=3)
    for agent in AGENTS:
        obs = e.observe(agent)
        assert isinstance(obs, dict) and set(obs) == {"observation", "action_mask"}
        assert isinstance(obs["observation"], np.ndarray) and isinstance(obs["action_mask"], np.ndarray)
        space = e.observation_space(agent)
        assert isinstance(space, gymnasium.spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}
        assert space.contains(obs)
    last_obs = e.last()[0]  # PettingZoo's last() gives the same dict for the agent to act
    now = e.observe(e.agent_selection)
    assert all(np.array_equal(last_obs[k], now[k]) for k in now)


def _find_game(kind: str, max_seed: int = 400) -> tuple[int, int]:
    """A seed whose hand 2 starts with an exchange of this kind, when hand 1 is played with random.Random(seed)."""
    for seed in range(max_seed):
        e = env()
        e.reset(seed=seed)
        rng = random.Random(seed)
        u = e.unwrapped
        steps = 0
        while len(u.record()["hands"]) == 1 and u.record()["winner"] is None:
            e.step(rng.choice(legal(e)))
            steps += 1
        record = u.record()
        if record["winner"] is not None:
            continue
        balances = record["hands"][0]["balances"]
        ups, downs = sum(b > 0 for b in balances), sum(b < 0 for b in balances)
        if (ups, downs) == {"simultaneous": (1, 2), "one-to-one": (1, 1), "two-up": (2, 1)}[kind]:
            return seed, steps
    raise AssertionError(f"no {kind} exchange found")


def _replayed(seed: int, steps: int):
    """The env after the same seed and the same first ``steps`` random actions (a game re-made from scratch)."""
    e = env()
    e.reset(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        e.step(rng.choice(legal(e)))
    return e


def _same_obs(a, b, seat: int) -> bool:
    x, y = a.observe(AGENTS[seat]), b.observe(AGENTS[seat])
    return all(np.array_equal(x[k], y[k]) for k in x)


def test_what_a_receiver_cannot_see_yet_does_not_change_its_observation():
    """Simultaneous exchange: two games that differ only in the card chosen for the first receiver.

    Until the sender has chosen its last card for the round, the first receiver's
    observation is the same in both; once the cards move, it differs.
    """
    seed, steps = _find_game("simultaneous")
    a, b = _replayed(seed, steps), _replayed(seed, steps)
    record = a.unwrapped.record()
    sender = int(a.agent_selection[-1])
    first = record["hands"][1]["exchanges"]  # nothing chosen yet
    assert first == []
    balances = record["hands"][0]["balances"]
    targets = exchange_plan(balances, record["hands"][1]["quotas"])[0][1]
    (r1, k1), (r2, k2) = targets
    choices = legal(a)
    # choose different cards for r1 in the two games, then the same cards for r2 but the last one
    picks_a, picks_b = choices[:k1], choices[-k1:]
    assert picks_a != picks_b
    rest = [c for c in choices if c not in picks_a + picks_b][:k2]
    for game, picks in ((a, picks_a), (b, picks_b)):
        for c in picks + rest[:-1]:
            game.step(c)
    assert a.agent_selection == b.agent_selection == AGENTS[sender]
    for seat in (r1, r2):
        assert _same_obs(a, b, seat), f"player_{seat} sees the exchange before the cards move"
    assert not _same_obs(a, b, sender)  # the sender sees its own choice
    for game in (a, b):
        game.step(rest[-1])
    assert not _same_obs(a, b, r1)  # now it has received different cards


@pytest.mark.parametrize("kind", ["one-to-one", "two-up"])
def test_a_player_outside_an_exchange_sees_only_counts(kind):
    """Two games that differ only in the cards an up player sends: the third player sees no difference."""
    seed, steps = _find_game(kind)
    a, b = _replayed(seed, steps), _replayed(seed, steps)
    sender = int(a.agent_selection[-1])
    record = a.unwrapped.record()
    [(_, [(receiver, count)]), *_] = exchange_plan(record["hands"][0]["balances"], record["hands"][1]["quotas"])
    third = 3 - sender - receiver
    choices = legal(a)
    for game, picks in ((a, choices[:count]), (b, choices[-count:])):
        for c in picks:
            game.step(c)
    assert choices[:count] != choices[-count:]
    assert _same_obs(a, b, third)
    assert not _same_obs(a, b, sender) and not _same_obs(a, b, receiver)


def test_discards_are_seen_by_the_dealer_only():
    """Two games that differ only in the dealer's discards (hidden): the others observe the same."""
    a, b = env(), env()
    for e in (a, b):
        e.reset(seed=31, options={"first_dealer": 2})
        e.step(54)
    choices = legal(a)
    for k in range(4):
        a.step(choices[k])
        b.step(choices[-1 - k])
        for seat in (0, 1):
            assert _same_obs(a, b, seat), f"player_{seat} sees a discard"
    assert a.unwrapped.record()["hands"][0]["discards"] != b.unwrapped.record()["hands"][0]["discards"]
    for seat in (0, 1):
        assert _same_obs(a, b, seat)
    assert not _same_obs(a, b, 2)


# ---------------------------------------------------------------------- Entry points, reset options


def test_same_seed_same_actions_same_game_on_one_env():
    e = env()
    runs = []
    for _ in range(2):
        e.reset(seed=7)
        rng = random.Random(3)
        trace = []
        for _ in range(250):
            agent = e.agent_selection
            obs = e.observe(agent)
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
            if not e.agents or e.terminations[agent] or e.truncations[agent]:
                break
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        runs.append((trace, e.unwrapped.record()))
    assert runs[0] == runs[1]
    assert runs[0][1]["seed"] == 7
    e.reset(seed=8)
    assert e.unwrapped.record()["hands"][0]["deal"] != runs[0][1]["hands"][0]["deal"]


def test_reset_deals_accept_ids_and_text_in_any_mix():
    deal = _built_deal()
    mixed = {
        "hands": [
            ids(deal["hands"][0]),  # ids
            deal["hands"][1],  # "TH" text
            [c.lower().replace("t", "10") for c in deal["hands"][2]],  # "10h"
        ],
        "kitty": [cid("JS"), "qs", "KS", 51],
    }
    e = env()
    e.reset(seed=1, options={"first_dealer": 2, "deals": [mixed]})
    record = e.unwrapped.record()
    assert record["first_dealer"] == 2 and record["hands"][0]["dealer"] == 2
    got = record["hands"][0]["deal"]
    assert [sorted(ids(h)) for h in got["hands"]] == [sorted(ids(h)) for h in deal["hands"]]
    assert sorted(ids(got["kitty"])) == sorted(ids(deal["kitty"]))
    for seat in range(3):
        assert plane(e.observe(AGENTS[seat]), HAND) == set(ids(deal["hands"][seat]))


def _lowest_until_hand(e, number: int) -> None:
    while len(e.unwrapped.record()["hands"]) < number and e.unwrapped.record()["winner"] is None:
        e.step(min(legal(e)))


def _shuffled_deal(seed: int) -> dict[str, Any]:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    return {"hands": [[ctext(c) for c in deck[16 * i : 16 * i + 16]] for i in range(3)], "kitty": deck[48:]}


def test_hands_beyond_the_deals_list_are_dealt_at_random():
    deal = _shuffled_deal(42)
    later = {}
    for seed in (1, 2, 1):
        e = env()
        e.reset(seed=seed, options={"first_dealer": 0, "deals": [deal]})
        _lowest_until_hand(e, 2)
        hands = e.unwrapped.record()["hands"]
        assert len(hands) == 2, "the scripted hand 1 should not end the game"
        assert [sorted(ids(h)) for h in hands[0]["deal"]["hands"]] == [sorted(ids(h)) for h in deal["hands"]]
        d2 = hands[1]["deal"]
        assert sorted([c for h in d2["hands"] for c in ids(h)] + ids(d2["kitty"])) == list(range(52))
        later.setdefault(seed, []).append(d2)
    assert later[1][0] == later[1][1]  # the random deals come from the seed
    assert later[1][0] != later[2][0]


def test_record_right_after_reset_holds_hand_one_with_its_deal():
    deal = _built_deal()
    e = env()
    e.reset(seed=4, options={"first_dealer": 1, "deals": [deal]})
    record = e.unwrapped.record()
    assert record["seed"] == 4 and record["first_dealer"] == 1
    assert record["winner"] is None and record["truncated"] is False
    [hand] = record["hands"]
    assert hand["number"] == 1 and hand["dealer"] == 1 and hand["quotas"] == [3, 8, 5]
    assert [sorted(ids(h)) for h in hand["deal"]["hands"]] == [sorted(ids(h)) for h in deal["hands"]]
    assert hand["exchanges"] == []
    for key in ("trump", "discards", "shown", "tricks", "tricks_won", "balances", "scores"):
        assert hand[key] is None, key
    e.reset()
    assert e.unwrapped.record()["seed"] is None


# ---------------------------------------------------------------------- the record, step by step


WALK_SEEDS = (0, 1, 2, 3, 9, 10)  # 9 and 10: won within 5 hands; the others are truncated


@functools.cache
def _walked_game(seed: int) -> tuple[dict[str, Any], Counter, dict[str, bool], dict[str, bool]]:
    stats: Counter = Counter()
    e = env(max_hands=5)
    e.reset(seed=seed)
    record = walk(e, random.Random(seed), stats, max_hands=5)
    return record, stats, dict(e.terminations), dict(e.truncations)


@pytest.mark.parametrize("seed", WALK_SEEDS)
def test_records_masks_and_exchange_timing_along_whole_games(seed):
    """Every step of a few games: the record is the game of docs/rules.md as docs/interface.md writes it,

    the mask is exactly the legal set of the player to act, and exchange cards move only when
    the sender has chosen its last card of the round. At the end: terminations for a won game,
    truncations for a game stopped at max_hands.
    """
    record, _, terminations, truncations = _walked_game(seed)
    if record["winner"] is not None:
        assert all(terminations.values()) and not any(truncations.values())
    else:
        assert record["truncated"] and all(truncations.values()) and not any(terminations.values())


def test_the_walked_games_covered_every_exchange_case():
    """Guard for the test above: its games went through every situation it checks."""
    total = sum((_walked_game(seed)[1] for seed in WALK_SEEDS), Counter())
    assert total["first receiver complete, round not"] > 0
    assert total["round with 1 receiver(s)"] > 0 and total["round with 2 receiver(s)"] > 0
    assert total["round incomplete"] > 0 and total["hands"] > 10 and total["shown"] > 0
    outcomes = {_walked_game(seed)[0]["winner"] is None for seed in WALK_SEEDS}
    assert outcomes == {True, False}, "both a won and a truncated game"


def test_record_of_an_unseeded_full_game_replays_to_itself():
    e = env()
    e.reset()
    rng = random.Random(11)
    while not over(e):
        e.step(rng.choice(legal(e)))
    record = json.loads(json.dumps(e.unwrapped.record()))
    assert record["seed"] is None
    check_record(record)
    assert replay(record) == record
    if record["truncated"]:  # an unseeded game may run into max_hands (rarely): then it is truncated
        assert record["winner"] is None and all(e.truncations.values())
    else:
        assert isinstance(record["winner"], int) and all(e.terminations.values())
    for agent in AGENTS:
        assert not e.observe(agent)["action_mask"].any()


def test_replay_of_a_record_with_only_the_interface_fields_equals_it():
    """A record another tool wrote with exactly the fields of docs/interface.md replays to an equal record."""
    e = env()
    e.reset(seed=9)
    rng = random.Random(9)
    for _ in range(200):
        if over(e):
            break
        e.step(rng.choice(legal(e)))
    record = {k: v for k, v in e.unwrapped.record().items() if k in TOP_KEYS}
    assert replay(copy.deepcopy(record)) == record


def _long_record() -> dict[str, Any]:
    for seed in range(50):
        e = env()
        e.reset(seed=seed)
        rng = random.Random(seed)
        while not over(e):
            e.step(rng.choice(legal(e)))
        record = json.loads(json.dumps(e.unwrapped.record()))
        if len(record["hands"]) >= 3 and record["hands"][1]["exchanges"]:
            return record
    raise AssertionError("no game with an exchange in hand 2")


def _corrupt(record: dict[str, Any], how: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    r = copy.deepcopy(record)
    h2 = r["hands"][1]
    if how == "illegal card":
        tricks = h2["tricks"]
        tricks[3]["cards"][1] = tricks[0]["cards"][0]  # already played
        return r, ("hand 2", "trick 4", "card 2")
    if how == "trick winner":
        h2["tricks"][5]["winner"] = (h2["tricks"][5]["winner"] + 1) % 3
        return r, ("hand 2", "trick 6", "winner")
    if how == "leader":
        h2["tricks"][0]["leader"] = (h2["tricks"][0]["leader"] + 1) % 3
        return r, ("hand 2", "trick 1", "leader")
    if how == "returned":
        entry = h2["exchanges"][0]
        entry["returned"][0] = h2["deal"]["kitty"][0]
        return r, ("hand 2", "exchange 1", "returned")
    if how == "scores":
        h2["scores"][0] += 1
        h2["scores"][1] -= 1
        return r, ("hand 2", "scores")
    if how == "game winner":
        r["winner"] = (r["winner"] + 1) % 3
        return r, ("winner",)
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["illegal card", "trick winner", "leader", "returned", "scores", "game winner"])
def test_replay_names_hand_and_step_of_the_first_problem(how):
    record = _long_record()
    assert replay(copy.deepcopy(record)) == record
    broken, words = _corrupt(record, how)
    with pytest.raises(ValueError) as info:
        replay(broken)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    head = message.split(":")[0]
    assert words[0] in head, f"the message should start by naming where: {message!r}"


# ---------------------------------------------------------------------- record fields


def test_record_rules_of_the_standard_game_list_every_section_9_and_10_option():
    e = env()
    e.reset(seed=0)
    rules = e.unwrapped.record()["rules"]
    assert set(rules) == SECTION_9 | SECTION_10 | {"name"}
    assert rules == STANDARD_RULES


@pytest.mark.parametrize(
    "rules, name, win_tricks",
    [
        ("standard", "standard", 12),
        ("woburn", "woburn", 12),
        ("all-sixteen", "all-sixteen", 16),
        ("margin-5", "margin-5", None),
        ("target-10", "target-10", None),
        ("fixed-9", "fixed-9", None),
        ("dealer-makes-quota", "dealer-makes-quota", None),
        ({"target_score": 10, "win_tricks": 12}, "custom", 12),
        ({"max_exchange": 2}, "custom", 12),
        ({"quotas": [9, 2, 5]}, "9-2-5", 12),
        ({}, "standard", 12),
        (RuleSet(target_score=7, target_symmetric=True), "custom", None),
    ],
    ids=repr,
)
def test_record_rules_name_and_win_tricks(rules, name, win_tricks):
    e = env(rules=rules)
    e.reset(seed=0)
    got = e.unwrapped.record()["rules"]
    assert set(got) == SECTION_9 | SECTION_10 | {"name"}
    assert got["name"] == name and got["win_tricks"] == win_tricks
    assert isinstance(got["quotas"], list) and len(got["quotas"]) == 3


@pytest.mark.parametrize(
    "rules",
    [RuleSet(name="my house rules"), {"name": "house", "max_exchange": 2}, {"name": "custom"}],
    ids=repr,
)
def test_record_rules_name_is_standard_a_preset_or_custom(rules):
    """docs/interface.md: name is "standard" when no option is on, else the preset's name or "custom"."""
    e = env(rules=rules)
    e.reset(seed=0)
    name = e.unwrapped.record()["rules"]["name"]
    assert name in ("standard", "custom", "woburn", "9-2-5", "canadian")
    expected = "custom" if isinstance(rules, dict) and "max_exchange" in rules else "standard"
    assert name == expected


def test_quotas_in_rules_are_dealer_eldest_middle_and_in_hands_by_absolute_seat():
    e = env(rules="9-2-5")
    e.reset(seed=0, options={"first_dealer": 2})
    record = e.unwrapped.record()
    assert record["rules"]["quotas"] == [9, 2, 5]
    assert record["hands"][0]["quotas"] == [2, 5, 9]  # seat 2 deals, seat 0 eldest, seat 1 middle


@pytest.mark.parametrize("factory", [env, raw_env])
@pytest.mark.parametrize("preset", ["standard", "woburn", "canadian", "6-3-8", "target-10"])
def test_constructor_rules_as_preset_object_or_record_dict(factory, preset):
    by_name = factory(rules=preset)
    by_name.reset(seed=2)
    options = by_name.unwrapped.record()["rules"]
    by_dict = factory(rules=copy.deepcopy(options))
    by_dict.reset(seed=2)
    assert by_dict.unwrapped.record() == by_name.unwrapped.record()
    without_name = {k: v for k, v in options.items() if k != "name"}
    plain = factory(rules=without_name)
    plain.reset(seed=2)
    assert plain.unwrapped.record()["rules"] == options
    obj = factory(rules=RuleSet(**{**without_name, "quotas": tuple(without_name["quotas"])}))
    obj.reset(seed=2)
    assert obj.unwrapped.record()["rules"] == options


def test_rules_default_is_standard_for_both_constructors():
    for factory in (env, raw_env):
        e = factory()
        e.reset(seed=0)
        assert e.unwrapped.record()["rules"] == STANDARD_RULES


def test_shared_win_is_a_sorted_list_of_seats():
    for seed in range(200):
        e = env(rules={"fixed_hands": 1})
        e.reset(seed=seed)
        rng = random.Random(seed)
        while not over(e):
            e.step(rng.choice(legal(e)))
        winner = e.unwrapped.record()["winner"]
        if isinstance(winner, list):
            assert winner == sorted(winner) and len(winner) >= 2 and set(winner) <= {0, 1, 2}
            scores = e.unwrapped.record()["hands"][-1]["scores"]
            assert [s for s in range(3) if scores[s] == max(scores)] == winner
            assert all(e.terminations.values())
            return
        assert winner in (0, 1, 2)
    raise AssertionError("no shared win found")


def test_show_rule_entry_in_the_record():
    """shown has one entry per player shown something: found in real games and checked by the reference."""
    found = 0
    for seed in range(60):
        e = env(max_hands=6)
        e.reset(seed=seed)
        rng = random.Random(seed)
        while not over(e):
            e.step(rng.choice(legal(e)))
        record = e.unwrapped.record()
        check_record(record, max_hands=6)
        for hand in record["hands"]:
            for entry in hand["shown"]:
                assert set(entry) >= {"to", "cards"} and entry["cards"]
                found += 1
        if found >= 3:
            return
    raise AssertionError("no shown cards in 60 games")


# ---------------------------------------------------------------------- episodes, flags, registry


@pytest.mark.parametrize("factory", [env, raw_env])
def test_max_hands_defaults_to_100_and_truncates(factory):
    e = factory(rules={"win_tricks": 16})  # random play practically never takes all 16 tricks
    e.reset(seed=3)
    rng = random.Random(0)
    u = e.unwrapped
    while not over(e):
        e.step(rng.choice(legal(e)))
    record = u.record()
    assert len(record["hands"]) == 100 and record["truncated"] is True and record["winner"] is None
    assert all(e.truncations[a] for a in AGENTS) and not any(e.terminations[a] for a in AGENTS)
    for agent in AGENTS:
        assert not e.observe(agent)["action_mask"].any()


@pytest.mark.parametrize("factory", [env, raw_env])
def test_max_hands_keyword(factory):
    e = factory(max_hands=2, rules="all-sixteen")
    e.reset(seed=1)
    rng = random.Random(1)
    while not over(e):
        e.step(rng.choice(legal(e)))
    assert len(e.unwrapped.record()["hands"]) == 2 and all(e.truncations.values())


@pytest.mark.parametrize("factory", [env, raw_env])
def test_episode_hand_is_one_hand(factory):
    e = factory(episode="hand")
    e.reset(seed=2)
    rng = random.Random(2)
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)
        else:
            e.step(rng.choice(legal(e)))
    record = e.unwrapped.record()
    assert len(record["hands"]) == 1 and record["hands"][0]["scores"] is not None
    game = factory(episode="game")
    game.reset(seed=2)
    rng = random.Random(2)
    for _ in range(60):  # the same hand, then the game goes on
        game.step(rng.choice(legal(game)))
    same = game.unwrapped.record()
    assert same["hands"][0] == record["hands"][0]
    assert same["winner"] is not None or len(same["hands"]) == 2


def test_env_is_raw_env_wrapped():
    e = env()
    assert isinstance(e, pettingzoo.AECEnv) and not isinstance(e, raw_env)
    assert isinstance(e.unwrapped, raw_env)
    assert isinstance(raw_env(), pettingzoo.AECEnv)


def test_pettingzoo_make_after_import():
    ids_ = [k for k in pettingzoo.aec_registry if k.startswith("sm_env/")]
    assert sm_env.ENV_ID in ids_
    e = pettingzoo.make("aec", sm_env.ENV_ID, rules={"max_exchange": 3}, max_hands=7)
    e.reset(seed=7)
    assert isinstance(e.unwrapped, raw_env)
    assert e.unwrapped.record()["rules"]["name"] == "woburn"
    plain = env(rules="woburn")
    plain.reset(seed=7)
    assert plain.unwrapped.record()["hands"] == e.unwrapped.record()["hands"]
