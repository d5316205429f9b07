"""The PettingZoo environment (sm_env/envs/aec.py): API conformance, options, errors, rewards, episodes."""

from __future__ import annotations

import functools
import pickle
import random
import warnings

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils.wrappers import BaseWrapper, OrderEnforcingWrapper

import sm_env
from sm_env import sergeant_major_v0
from sm_env.core.cards import CARD_TEXT, from_mask
from sm_env.core.game import NUM_ACTIONS, PHASE_NAMES, DealError, IllegalActionError
from sm_env.core.rules import PRESETS, RulesError
from sm_env.envs.aec import AGENTS, IllegalEnvActionError, raw_env
from sm_env.observation import OBSERVATION_SIZE
from sm_env.records import game_record, replay

# PettingZoo's api_test warns for every dict observation of an env it does not list
# as a classic dict-observation env (it lists its own by name); the dict is the
# classic convention that docs/interface.md requires.
API_WARNINGS = [
    "ignore:Observation is not a NumPy array:UserWarning",
    "ignore:unknown reset option:UserWarning",
    "ignore:Observation space for each agent probably should be:UserWarning",
]


class _SeededByDefault(BaseWrapper):
    """Resets without a seed use ``default_seed``, so api_test plays one chosen game."""

    def __init__(self, env, default_seed):
        super().__init__(env)
        self.default_seed = default_seed

    def reset(self, seed=None, options=None):
        self.env.reset(seed=self.default_seed if seed is None else seed, options=options)


def play_random(e, rng: random.Random, steps: int | None = None) -> int:
    """Random legal actions (dead agents step None) until the game ends or ``steps`` actions; returns actions taken."""
    taken = 0
    while e.agents and (steps is None or taken < steps):
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)
            continue
        mask = e.observe(agent)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
        taken += 1
    return taken


def play_to_end(e, rng: random.Random) -> None:
    """Random legal actions until the game is over (agents not yet removed)."""
    u = e.unwrapped
    while u.game.current_player is not None:
        u.step(rng.choice(u.legal_actions()))


def snapshot(e) -> tuple:
    """Everything observable about an env: record, every agent's observation, PettingZoo dicts, the RNG."""
    u = e.unwrapped
    obs = tuple((a, u.observe(a)["observation"].tobytes(), u.observe(a)["action_mask"].tobytes()) for a in AGENTS)
    return (
        repr(u.record()),
        obs,
        u.agent_selection,
        list(u.agents),
        dict(u.rewards),
        dict(u._cumulative_rewards),
        dict(u.terminations),
        dict(u.truncations),
        repr(u.infos),
        u.game.rng.getstate(),
        u._seed_rng.getstate(),
    )


# ---------------------------------------------------------------------- PettingZoo conformance


@pytest.mark.filterwarnings(*API_WARNINGS)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"episode": "hand"},
        {"reward": "result", "max_hands": 5},
        {"rules": "woburn"},
        {"rules": "canadian"},
        {"rules": "6-3-8"},
        {"rules": {"pickup_before_discard": True, "trump_after_kitty": True}},
    ],
    ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default",
)
def test_api_test(kwargs):
    api_test(sm_env.env(**kwargs), num_cycles=400)


@pytest.mark.filterwarnings(*API_WARNINGS)
def test_api_test_raw_env():
    api_test(raw_env(max_hands=3), num_cycles=200)


@pytest.mark.filterwarnings(*API_WARNINGS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_api_test_seeded_games(seed):
    """A whole seeded game (several hands, exchanges) through the api_test play loop."""
    api_test(_SeededByDefault(sm_env.env(max_hands=4), default_seed=seed), num_cycles=2000)


def test_seed_test():
    seed_test(sm_env.env, num_cycles=400)
    seed_test(functools.partial(sm_env.env, rules="woburn", episode="hand"), num_cycles=200)


def test_render_test(capsys):
    render_test(sm_env.env)
    assert "Sergeant Major" in capsys.readouterr().out  # the "human" mode printed the table


def test_env_is_order_enforced():
    e = sm_env.env()
    assert isinstance(e, OrderEnforcingWrapper)
    assert isinstance(e.unwrapped, raw_env)
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        _ = e.agent_selection
    with pytest.raises(Exception, match="reset"):
        e.step(0)
    with pytest.raises(Exception, match="reset"):
        e.observe("player_0")
    e.reset(seed=1)
    assert e.agent_selection in AGENTS
    assert str(e) == "sergeant_major_v0"


def test_raw_env_before_reset_is_a_clear_error():
    e = raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        e.observe("player_0")
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)


def test_spaces_are_cached_and_describe_observations():
    e = sm_env.env()
    e.reset(seed=3)
    for agent in AGENTS:
        assert e.observation_space(agent) is e.observation_space(agent)
        assert e.action_space(agent) is e.action_space(agent)
        assert e.action_space(agent).n == NUM_ACTIONS == 56
        space = e.observation_space(agent)
        assert space["observation"].shape == (OBSERVATION_SIZE,) == (789,)
        assert space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (56,) and space["action_mask"].dtype == np.int8
        obs = e.observe(agent)
        assert space.contains(obs)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert e.observation_space("player_0") is not e.observation_space("player_1")


def test_metadata_and_entry_module():
    assert raw_env.metadata == {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "sergeant_major_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }
    assert sergeant_major_v0.env is sm_env.env and sergeant_major_v0.raw_env is sm_env.raw_env
    e = sergeant_major_v0.env()
    e.reset(seed=0)
    assert e.possible_agents == ["player_0", "player_1", "player_2"]


def test_pettingzoo_make_through_the_registry():
    assert "sm_env/sergeant_major-v0" in pettingzoo.aec_registry
    e = pettingzoo.make("aec", "sm_env/sergeant_major-v0")
    assert isinstance(e.unwrapped, raw_env)
    e.reset(seed=5)
    assert e.agent_selection in AGENTS
    e = pettingzoo.make("aec", "sm_env/sergeant_major_v0", rules="woburn", episode="hand")
    assert e.unwrapped.rules.name == "woburn" and e.unwrapped.episode == "hand"
    e = pettingzoo.make("aec", "sm_env/sergeant_major")  # unversioned: the latest version
    assert isinstance(e.unwrapped, raw_env)
    with pytest.warns(UserWarning, match="ignores max_cycles"):
        e = pettingzoo.make("aec", "sm_env/sergeant_major-v0", max_cycles=50)
    assert e.unwrapped.max_hands == 100


def test_importing_again_does_not_warn():
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(sm_env)
    assert "sm_env/sergeant_major-v0" in pettingzoo.aec_registry


def test_package_exports():
    assert sm_env.replay is replay
    assert sm_env.game_record is game_record
    for name in ("env", "raw_env", "RuleSet", "Game", "PRESETS", "parse_card", "DealError"):
        assert hasattr(sm_env, name)
    with pytest.raises(AttributeError):
        _ = sm_env.no_such_name


# ---------------------------------------------------------------------- pickling, determinism


def test_pickle_round_trip_mid_game_continues_identically():
    rng = random.Random(0)
    e = sm_env.env(max_hands=6)
    e.reset(seed=11)
    play_random(e, rng, steps=170)  # into hand 3, with exchanges behind
    copy = pickle.loads(pickle.dumps(e))
    assert snapshot(copy) == snapshot(e)
    rng_a, rng_b = random.Random(1), random.Random(1)
    play_random(e, rng_a)
    play_random(copy, rng_b)
    assert e.unwrapped.record() == copy.unwrapped.record()
    assert e.unwrapped.game.hand_number > 2


def test_pickle_raw_env_and_after_reset():
    e = raw_env(rules="woburn", reward="result")
    e.reset(seed=4)
    copy = pickle.loads(pickle.dumps(e))
    assert snapshot(copy) == snapshot(e)
    e.reset()
    copy.reset()  # the unseeded stream continues identically too
    assert snapshot(copy) == snapshot(e)


def _trajectory(e, seed: int, actions_seed: int, steps: int) -> tuple[list, dict]:
    e.reset(seed=seed)
    rng = random.Random(actions_seed)
    out = []
    for _ in range(steps):
        if not e.agents:
            break
        agent = e.agent_selection
        obs, reward, term, trunc, info = e.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc, repr(info)))
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out, e.unwrapped.record()


def test_determinism_same_seed_same_actions():
    a = _trajectory(sm_env.env(), 21, 5, 600)
    b = _trajectory(sm_env.env(), 21, 5, 600)
    assert a == b
    c = _trajectory(sm_env.env(), 22, 5, 600)
    assert c[1]["hands"][0]["deal"] != a[1]["hands"][0]["deal"]


def test_seed_is_recorded_and_unseeded_resets_continue_a_stream():
    e = sm_env.env()
    e.reset(seed=7)
    assert e.unwrapped.record()["seed"] == 7
    e.reset()
    first = e.unwrapped.record()
    assert first["seed"] is None  # docs/interface.md: null when reset got no seed
    e.reset()
    second = e.unwrapped.record()
    assert first["hands"][0]["deal"] != second["hands"][0]["deal"]
    e.reset(seed=7)
    e.reset()
    assert e.unwrapped.record()["hands"][0]["deal"] == first["hands"][0]["deal"]
    e.reset(seed=np.int64(7))  # numpy integers are seeds too
    assert e.unwrapped.record()["seed"] == 7
    with pytest.raises(ValueError, match="seed must be an integer"):
        e.reset(seed="seven")


def test_record_of_a_played_game_replays():
    e = sm_env.env(rules="woburn")
    e.reset(seed=9)
    play_random(e, random.Random(2), steps=300)
    record = e.unwrapped.record()
    assert replay(record)["hands"] == record["hands"]
    e.reset()
    play_random(e, random.Random(3))
    record = e.unwrapped.record()
    assert record["seed"] is None
    replay(record)


# ---------------------------------------------------------------------- reset options


def _deal_text(seed: int = 0) -> tuple[list[list[str]], list[str]]:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    hands = [sorted(deck[16 * i : 16 * (i + 1)]) for i in range(3)]
    return [[CARD_TEXT[c] for c in h] for h in hands], [CARD_TEXT[c] for c in deck[48:]]


def test_reset_options_first_dealer_and_deals_as_text_and_ids():
    hands, kitty = _deal_text(1)
    e = sm_env.env()
    for first_dealer in range(3):
        e.reset(seed=3, options={"first_dealer": first_dealer, "deals": [{"hands": hands, "kitty": kitty}]})
        record = e.unwrapped.record()
        assert record["first_dealer"] == first_dealer
        assert record["hands"][0]["dealer"] == first_dealer
        assert record["hands"][0]["deal"]["hands"] == hands
        assert sorted(record["hands"][0]["deal"]["kitty"]) == sorted(kitty)
        assert e.agent_selection == f"player_{first_dealer}"  # the dealer names trump
        for seat in range(3):
            own = e.observe(f"player_{seat}")["observation"][:52]
            assert sorted(CARD_TEXT[c] for c in np.flatnonzero(own)) == sorted(hands[seat])
    ids = [[sm_env.parse_card(c) for c in h] for h in hands]
    e.reset(options={"first_dealer": 1, "deals": [{"hands": ids, "kitty": [sm_env.parse_card(c) for c in kitty]}]})
    assert e.unwrapped.record()["hands"][0]["deal"]["hands"] == hands
    # lower case and "10" spellings
    mixed = [[c.lower().replace("t", "10") for c in h] for h in hands]
    e.reset(options={"deals": [{"hands": mixed, "kitty": kitty}]})
    assert e.unwrapped.record()["hands"][0]["deal"]["hands"] == hands


def test_deals_cover_given_hands_then_random():
    deals = [{"hands": _deal_text(s)[0], "kitty": _deal_text(s)[1]} for s in (1, 2)]
    e = sm_env.env()
    e.reset(seed=4, options={"deals": deals})
    play_random(e, random.Random(0), steps=150)
    record = e.unwrapped.record()
    assert len(record["hands"]) >= 3
    assert record["hands"][0]["deal"]["hands"] == deals[0]["hands"]
    assert record["hands"][1]["deal"]["hands"] == deals[1]["hands"]


def test_start_balances_option_gives_hand_one_an_exchange():
    e = sm_env.env(episode="hand")
    e.reset(seed=2, options={"first_dealer": 0, "start_balances": [2, -1, -1]})
    assert e.unwrapped.game.phase == 0  # exchange
    sender = e.agent_selection
    e.step(int(np.flatnonzero(e.observe(sender)["action_mask"])[0]))
    assert e.agent_selection == sender  # the same agent chooses its next card
    play_random(e, random.Random(1))
    record = e.unwrapped.game
    assert len(game_record(record)["hands"][0]["exchanges"]) == 2
    replay(game_record(record))


# ---------------------------------------------------------------------- bad inputs leave the env unchanged


def _env_in_play(seed: int = 5) -> tuple:
    """An env in the play phase, in the middle of a trick (so that following suit matters)."""
    e = sm_env.env()
    e.reset(seed=seed)
    u = e.unwrapped
    rng = random.Random(seed)
    while not (u.game.phase == 3 and len(u.game.trick) == 1 and u.game.legal_mask() != u.game.hands[u.game.current]):
        u.step(rng.choice(u.legal_actions()))
    return e, u


def test_illegal_card_raises_naming_action_and_legal_ones_state_unchanged():
    e, u = _env_in_play()
    before = snapshot(e)
    seat = u.game.current
    legal = from_mask(u.game.legal_mask())
    not_held = next(c for c in range(52) if not u.game.hands[seat] >> c & 1)
    with pytest.raises(IllegalEnvActionError) as info:
        e.step(not_held)
    message = str(info.value)
    assert str(not_held) in message and CARD_TEXT[not_held] in message
    assert "legal actions: " + " ".join(CARD_TEXT[c] for c in legal) in message
    assert isinstance(info.value, IllegalActionError) and isinstance(info.value, ValueError)
    assert snapshot(e) == before
    # a held card that does not follow suit
    off_suit = next(c for c in from_mask(u.game.hands[seat]) if c not in legal)
    with pytest.raises(IllegalActionError, match="must follow"):
        e.step(off_suit)
    assert snapshot(e) == before
    e.step(legal[0])  # and the env goes on normally
    assert snapshot(e) != before


@pytest.mark.parametrize("action", [52, 55, 56, 1000, -1, "AS", 3.0, None, [1]])
def test_wrong_phase_out_of_range_and_malformed_actions(action):
    e, u = _env_in_play(6)
    before = snapshot(e)
    with pytest.raises(IllegalActionError, match="action"):
        e.step(action)
    assert snapshot(e) == before


def test_card_in_trump_phase_is_illegal():
    e = sm_env.env()
    e.reset(seed=8)
    assert e.unwrapped.game.phase == 1  # trump
    before = snapshot(e)
    with pytest.raises(IllegalEnvActionError, match="must name trump"):
        e.step(0)
    assert snapshot(e) == before
    e.step(np.int64(54))  # numpy integers are actions too
    assert e.unwrapped.game.trump == 2


@pytest.mark.parametrize(
    "options, error, match",
    [
        ({"first_dealer": 3}, ValueError, "first_dealer"),
        ({"deals": [{"hands": [["AS"] * 16] * 3, "kitty": []}]}, DealError, "deals\\[0\\]"),
        ({"deals": [{"hands": _deal_text(1)[0][:2], "kitty": _deal_text(1)[1]}]}, DealError, "3 hands"),
        ({"deals": [{"hands": _deal_text(1)[0], "kitty": ["ZZ", "AS", "KS", "QS"]}]}, DealError, "unknown card"),
        ({"deals": {"hands": []}}, DealError, "list of deals"),
        ({"start_balances": [1, 1, 1]}, ValueError, "start_balances"),
    ],
)
def test_bad_reset_options_raise_and_leave_the_env_as_it_was(options, error, match):
    e = sm_env.env()
    e.reset(seed=12)
    play_random(e, random.Random(0), steps=40)
    before = snapshot(e)
    with pytest.raises(error, match=match):
        e.reset(seed=99, options=options)
    assert snapshot(e) == before
    with pytest.raises(error, match=match):
        e.reset(options=options)  # unseeded: the stream is not advanced either
    assert snapshot(e) == before


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="episode"):
        raw_env(episode="match")
    with pytest.raises(ValueError, match="reward"):
        raw_env(reward="points")
    with pytest.raises(ValueError, match="episode='hand'"):
        raw_env(reward="result", episode="hand")
    with pytest.raises(ValueError, match="max_hands"):
        raw_env(max_hands=0)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb")
    with pytest.raises(RulesError, match="unknown rule preset"):
        raw_env(rules="nope")
    with pytest.raises(RulesError, match="unknown rule option"):
        sm_env.env(rules={"max_exchang": 3})


def test_dead_agent_step_must_be_none():
    e = sm_env.env(episode="hand")
    e.reset(seed=1)
    play_to_end(e, random.Random(0))
    assert all(e.terminations.values())
    with pytest.raises(ValueError, match="dead"):
        e.step(0)
    while e.agents:
        e.step(None)
    assert e.agents == []


# ---------------------------------------------------------------------- masks, infos


def test_masks_zero_for_agents_not_to_act_and_after_the_end():
    e = sm_env.env(max_hands=2)
    e.reset(seed=13)
    rng = random.Random(0)
    u = e.unwrapped
    while u.game.current_player is not None:
        acting = e.agent_selection
        assert acting == f"player_{u.game.current_player}"
        for agent in AGENTS:
            mask = e.observe(agent)["action_mask"]
            if agent == acting:
                assert list(np.flatnonzero(mask)) == u.game.legal_actions()
                np.testing.assert_array_equal(mask, u.action_mask())
            else:
                assert not mask.any()
                assert not u.action_mask(agent).any()
        e.step(rng.choice(u.legal_actions()))
    for agent in AGENTS:
        assert not e.observe(agent)["action_mask"].any()
        assert e.observe(agent)["observation"].any()
    assert u.legal_actions() == []


def test_observe_returns_fresh_arrays():
    e = sm_env.env()
    e.reset(seed=2)
    agent = e.agent_selection
    first = e.observe(agent)
    kept = first["observation"].copy(), first["action_mask"].copy()
    first["observation"][:] = 0.5
    first["action_mask"][:] = 1
    second = e.observe(agent)
    np.testing.assert_array_equal(second["observation"], kept[0])
    np.testing.assert_array_equal(second["action_mask"], kept[1])
    e.step(int(np.flatnonzero(second["action_mask"])[0]))
    np.testing.assert_array_equal(second["observation"], kept[0])  # not overwritten by a later decision


def test_infos_hold_only_public_information():
    e = sm_env.env(max_hands=3)
    e.reset(seed=3)
    rng = random.Random(4)
    seen_phases = set()
    while e.agents:
        agent = e.agent_selection
        for info in e.infos.values():
            assert set(info) == {"phase", "hand", "winners", "truncated"}
            assert type(info["phase"]) is int and type(info["hand"]) is int and type(info["truncated"]) is bool
            assert info["winners"].dtype == np.int8 and info["winners"].shape == (3,)
            assert info["hand"] == e.unwrapped.game.hand_number
            assert info["truncated"] == e.truncations[agent]
        info = e.infos[agent]
        seen_phases.add(PHASE_NAMES[info["phase"]])
        if e.terminations[agent] or e.truncations[agent]:
            assert PHASE_NAMES[info["phase"]] == "over"
            winners = e.unwrapped.game.winners or []
            assert info["winners"].tolist() == [int(seat in winners) for seat in range(3)]
            e.step(None)
        else:
            assert not info["winners"].any()
            e.step(rng.choice(e.unwrapped.legal_actions()))
    assert {"trump", "discard", "play", "over"} <= seen_phases


def test_infos_are_fresh_per_agent():
    e = sm_env.env()
    e.reset(seed=3)
    e.infos["player_0"]["winners"][:] = 1
    assert not e.infos["player_1"]["winners"].any()


@pytest.mark.parametrize("seed", range(6))
def test_hand_episode_infos_agree_with_terminations(seed):
    e = sm_env.env(episode="hand")
    e.reset(seed=seed)
    play_to_end(e, random.Random(seed))
    assert all(e.terminations.values()) and not any(e.truncations.values())
    for info in e.infos.values():
        assert info["truncated"] is False and PHASE_NAMES[info["phase"]] == "over"


def test_won_game_infos_name_the_winners():
    e = sm_env.env(rules={"target_score": 2})
    for seed in range(20):
        e.reset(seed=seed)
        play_to_end(e, random.Random(seed))
        if e.unwrapped.game.winners is not None:
            expected = [int(seat in e.unwrapped.game.winners) for seat in range(3)]
            assert e.infos["player_0"]["winners"].tolist() == expected and sum(expected) >= 1
            assert e.infos["player_0"]["truncated"] is False
            return
    raise AssertionError("no won game found")


def test_same_agent_acts_several_times_in_a_row():
    e = sm_env.env()
    e.reset(seed=0)
    u = e.unwrapped
    dealer = e.agent_selection
    e.step(52)  # trump clubs
    for _ in range(4):  # four discards, one at a time
        assert e.agent_selection == dealer and u.game.phase == 2
        e.step(from_mask(u.game.legal_mask())[0])
    assert u.game.phase == 3 and e.agent_selection != dealer


# ---------------------------------------------------------------------- rewards and episodes


def _run_collecting_rewards(e, rng: random.Random) -> dict[str, float]:
    """Play to the end, summing env.rewards after every step (as a trainer would)."""
    totals = dict.fromkeys(AGENTS, 0.0)
    hands_rewarded = []
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)
            continue
        hand = e.unwrapped.game.hand_number
        e.step(rng.choice(e.unwrapped.legal_actions()))
        rewards = dict(e.rewards)
        if any(rewards.values()):
            assert sum(rewards.values()) == pytest.approx(0.0)
            hands_rewarded.append((hand, rewards))
        for a, r in rewards.items():
            totals[a] += r
    totals["_hands"] = hands_rewarded
    return totals


def test_balance_rewards_are_the_hand_balances_and_sum_to_zero():
    e = sm_env.env(max_hands=8)
    e.reset(seed=17)
    result = _run_collecting_rewards(e, random.Random(3))
    record = e.unwrapped.record()
    by_hand = {hand["number"]: hand["balances"] for hand in record["hands"]}
    nonzero_hands = [h for h in record["hands"] if any(h["balances"])]
    assert len(result["_hands"]) == len(nonzero_hands)
    for hand, rewards in result["_hands"]:
        assert [rewards[a] for a in AGENTS] == by_hand[hand]
    final_scores = record["hands"][-1]["scores"]
    assert [result[a] for a in AGENTS] == final_scores


def test_balance_rewards_reach_agents_through_last():
    """An agent that did not end the hand sees its balance in last() at its next turn."""
    e = sm_env.env(max_hands=3)
    e.reset(seed=23)
    rng = random.Random(0)
    pending = dict.fromkeys(AGENTS, 0.0)
    while e.agents:
        agent = e.agent_selection
        _, reward, term, trunc, _ = e.last()
        assert reward == pending[agent]
        pending[agent] = 0.0
        if term or trunc:
            e.step(None)
            continue
        e.step(rng.choice(e.unwrapped.legal_actions()))
        for a, r in e.rewards.items():
            pending[a] += r


def _won_game(e, rng: random.Random, shared: bool | None = None, tries: int = 200):
    for seed in range(tries):
        e.reset(seed=seed)
        totals = _run_collecting_rewards(e, rng)
        winner = e.unwrapped.game.winners
        if winner is not None and (shared is None or (len(winner) > 1) == shared):
            return totals, winner
    raise AssertionError("no such game found")


def test_result_rewards_single_winner():
    e = sm_env.env(reward="result", rules={"target_score": 3})
    totals, winners = _won_game(e, random.Random(1), shared=False)
    assert e.unwrapped.record()["winner"] == winners[0]
    for seat, agent in enumerate(AGENTS):
        assert totals[agent] == (1.0 if seat in winners else -0.5)
    # rewards come only at the end of the game
    assert len(totals["_hands"]) == 1


def test_result_rewards_shared_win():
    e = sm_env.env(reward="result", rules={"fixed_hands": 1})
    totals, winners = _won_game(e, random.Random(2), shared=True)
    assert len(winners) == 2
    assert e.unwrapped.record()["winner"] == sorted(winners)
    for seat, agent in enumerate(AGENTS):
        assert totals[agent] == (0.5 if seat in winners else -1.0)


def test_result_rewards_zero_at_truncation():
    e = sm_env.env(reward="result", max_hands=2)
    for seed in range(20):
        e.reset(seed=seed)
        totals = _run_collecting_rewards(e, random.Random(seed))
        if e.unwrapped.game.truncated:
            assert all(totals[a] == 0.0 for a in AGENTS)
            return
    raise AssertionError("no truncated game found")


def test_max_hands_truncation_sets_truncations_not_terminations():
    e = sm_env.env(max_hands=2)
    for seed in range(20):
        e.reset(seed=seed)
        play_to_end(e, random.Random(seed))
        if e.unwrapped.game.truncated:
            assert all(e.truncations.values()) and not any(e.terminations.values())
            assert e.unwrapped.record()["truncated"] is True
            assert len(e.unwrapped.record()["hands"]) == 2
            info = e.infos["player_0"]
            assert (info["phase"], info["hand"], info["truncated"]) == (PHASE_NAMES.index("over"), 2, True)
            assert info["winners"].tolist() == [0, 0, 0]
            return
    raise AssertionError("no truncated game found")


def test_won_game_sets_terminations():
    e = sm_env.env(rules={"target_score": 2})
    for seed in range(20):
        e.reset(seed=seed)
        play_to_end(e, random.Random(seed))
        if e.unwrapped.game.winners is not None:
            assert all(e.terminations.values()) and not any(e.truncations.values())
            return
    raise AssertionError("no won game found")


@pytest.mark.parametrize("rules", ["standard", "independent", "6-3-8", "canadian"])
def test_episode_hand_is_one_hand_ending_in_terminations(rules):
    e = sm_env.env(episode="hand", rules=rules)
    for seed in range(3):
        e.reset(seed=seed)
        result = _run_collecting_rewards(e, random.Random(seed))
        record = e.unwrapped.record()
        assert len(record["hands"]) == 1
        assert e.agents == []
        assert [result[a] for a in AGENTS] == record["hands"][0]["balances"]
        replay(record)


def test_episode_hand_flags():
    e = sm_env.env(episode="hand")
    e.reset(seed=0)
    play_to_end(e, random.Random(0))
    assert all(e.terminations.values()) and not any(e.truncations.values())


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_play_render_and_replay(name):
    e = sm_env.env(rules=name, max_hands=3, render_mode="ansi")
    e.reset(seed=1)
    play_random(e, random.Random(1))
    text = e.render()
    assert f"Sergeant Major [{name}]" in text and "Game over:" in text
    record = e.unwrapped.record()
    assert record["rules"]["name"] == name
    assert replay(record) == record


@pytest.mark.filterwarnings(*API_WARNINGS)
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_api_test_every_preset(name):
    api_test(sm_env.env(rules=name), num_cycles=300)


# ---------------------------------------------------------------------- rendering


def test_render_ansi_is_the_acting_players_view_then_the_whole_table():
    e = sm_env.env(render_mode="ansi", max_hands=1)
    e.reset(seed=4)
    u = e.unwrapped
    text = e.render()
    seat = u.game.current_player
    assert f"player_{seat} hand (16)" in text and "you, to act" in text
    others = [s for s in range(3) if s != seat]
    for s in others:
        assert f"player_{s} hand" not in text  # nobody else's cards
    play_to_end(e, random.Random(0))
    text = e.render()
    assert "whole table" in text and "Game over" in text
    for s in range(3):
        assert f"player_{s} hand (0)" in text


def test_render_human_prints_and_returns_none(capsys):
    e = sm_env.env(render_mode="human")
    e.reset(seed=4)
    assert e.render() is None
    e.step(52)  # human mode also prints after every step
    out = capsys.readouterr().out
    assert out.count("Sergeant Major [standard]") == 2


def test_render_without_mode_warns():
    e = sm_env.env()
    e.reset(seed=4)
    with pytest.warns(UserWarning, match="render mode"):
        assert e.render() is None
    e.close()


def test_render_table_views_and_whole_table():
    from sm_env.core.game import Game
    from sm_env.core.knowledge import player_view
    from sm_env.display.render import hand_text, render_table

    assert hand_text(sm_env.to_mask(sm_env.parse_cards("AS 2S KH 3C TC"))) == "S: A 2  H: K  D: -  C: T 3"
    game = Game(seed=6, first_dealer=0, start_balances=[2, -1, -1])
    game.apply(game.legal_actions()[0])  # the dealer sends a first card (to player_2)
    whole = render_table(game)
    assert "(whole table)" in whole and all(f"player_{s} hand (" in whole for s in range(3))
    assert "Kitty (face down): " in whole and "returned (not yet)" in whole
    for seat in range(3):
        text = render_table(game, seat)
        assert text == render_table(player_view(game, seat))
        assert [f"player_{s} hand (" in text for s in range(3)] == [s == seat for s in range(3)]
        assert "Kitty (face down)" not in text
        assert ("sent " in text) == (seat == 0)  # only the sender sees its chosen card before the round completes
    assert "To act: player_0 (exchange: choose 1 card for player_1) - legal: " in render_table(game, 0)
    with pytest.raises(ValueError, match="seat"):
        render_table(player_view(game, 1), 2)
    with pytest.raises(ValueError, match="seat"):
        render_table(game, 3)
    with pytest.raises(TypeError, match="PlayerView or a Game"):
        render_table("table")


def test_unknown_reset_option_warns_and_is_ignored():
    e = sm_env.env()
    with pytest.warns(UserWarning, match=r"unknown reset option\(s\) \['first_deeler'\] ignored; the options are"):
        e.reset(seed=3, options={"first_deeler": 0})
    plain = sm_env.env()
    plain.reset(seed=3)
    assert e.unwrapped.record()["hands"] == plain.unwrapped.record()["hands"]


@pytest.mark.parametrize("agent", ["player_9", "player_3", 0, None, "Player_0"])
def test_bad_agent_names_get_a_clear_error(agent: object) -> None:
    from sm_env import env as make_env

    e = make_env()
    e.reset(seed=1)
    calls = [e.observe, e.observation_space, e.action_space]
    if agent is not None:  # action_mask(None) means "the agent to act"
        calls.append(e.unwrapped.action_mask)
    for call in calls:
        with pytest.raises(ValueError, match=r"unknown agent .*player_0.*player_1.*player_2"):
            call(agent)


def test_spaces_follow_the_rule_set():
    """docs/interface.md: Discrete(56) and 789 entries unless the rules need actions 56-73 (then 74 and 791)."""
    for name, actions, size in (
        ("standard", 56, 789),
        ("chips-12", 56, 789),
        ("dealer-assigns", 74, 791),
        ("9-5-3-one-card", 74, 900),
        ("woburn-auction", 74, 809),
        ("calls", 74, 816),
    ):
        e = sm_env.env(rules=name)
        e.reset(seed=3)
        assert e.action_space("player_1") == spaces.Discrete(actions)
        obs = e.observe(e.agent_selection)
        assert obs["observation"].shape == (size,) and obs["action_mask"].shape == (actions,)
        assert e.observation_space("player_0").contains(obs)
        assert e.unwrapped.action_mask("player_2").shape == (actions,)
    e = sm_env.env(rules="dealer-assigns")
    e.reset(seed=3)
    assert list(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])) == list(range(68, 74))
    e.step(70)
    assert e.unwrapped.record()["hands"][0]["assignment"] == [5, 8, 3]
