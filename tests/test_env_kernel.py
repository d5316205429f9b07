"""raw_env's compiled path (sm_env.compiled.single) in lockstep with its pure-Python path (``compiled=False``).

Every decision of random games under every section 9 preset: agent to act,
observation and mask of every agent, rewards, terminations, truncations,
infos, legal actions; and at the end the game record. The Game behind the
compiled path is brought up to date only when read.
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

from sm_env import replay
from sm_env.compiled.support import supported_presets
from sm_env.core.game import GameOverError
from sm_env.core.rules import PRESETS
from sm_env.envs import aec
from sm_env.envs.aec import EnvGameOverError, IllegalEnvActionError


def raw_env(**kwargs) -> aec.raw_env:
    """The env on the compiled path unless told otherwise: this file tests the kernels, whatever numba's cache
    holds (the default, compiled="auto", may play on the Python engine while they compile)."""
    return aec.raw_env(**{"compiled": True, **kwargs})


AGENTS = ("player_0", "player_1", "player_2")


def _state(e: raw_env) -> tuple:
    """Everything an agent loop can read, with the observations and masks of every agent."""
    seen = []
    for agent in e.possible_agents:
        obs = e.observe(agent)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        seen.append((obs["observation"].tobytes(), obs["action_mask"].tobytes(), e.action_mask(agent).tobytes()))
    infos = {a: (i["phase"], i["hand"], i["winners"].tobytes(), i["truncated"]) for a, i in e.infos.items()}
    return (
        e.agent_selection,
        list(e.agents),
        dict(e.rewards),
        dict(e._cumulative_rewards),
        dict(e.terminations),
        dict(e.truncations),
        infos,
        e.legal_actions(),
        e.action_mask().tobytes(),
        seen,
    )


def _lockstep(
    kwargs: dict, seed: int, options: dict | None = None, illegal_every: int = 0, pass_rate: float = 0.0
) -> int:
    """Play one random game in both paths (``pass_rate``: the chance of action 58 where it is legal); returns the
    number of decisions."""
    fast, slow = raw_env(**kwargs), raw_env(compiled=False, **kwargs)
    fast.reset(seed=seed, options=options)
    slow.reset(seed=seed, options=options)
    assert fast._engine.fast is not None and slow._engine.fast is None
    rng = random.Random(seed)
    decisions = 0
    while True:
        assert _state(fast) == _state(slow), f"decision {decisions}"
        agent = slow.agent_selection
        if slow.terminations[agent] or slow.truncations[agent]:
            break
        legal = slow.legal_actions()
        if illegal_every and decisions % illegal_every == 0:
            bad = rng.choice([a for a in range(56) if a not in legal])
            with pytest.raises(IllegalEnvActionError) as slow_err:
                slow.step(bad)
            with pytest.raises(IllegalEnvActionError) as fast_err:
                fast.step(bad)
            assert str(fast_err.value) == str(slow_err.value)
        action = 58 if 58 in legal and rng.random() < pass_rate else rng.choice(legal)
        fast.step(action)
        slow.step(action)
        decisions += 1
    assert fast._engine.pending  # the Game was never read: it is behind
    assert fast.record() == slow.record()
    assert fast.game.phase == slow.game.phase and not fast._engine.pending
    return decisions


@pytest.mark.parametrize("preset", supported_presets())
def test_lockstep_every_preset(preset: str) -> None:
    fixed = PRESETS[preset].fixed_hands
    max_hands = fixed + 1 if fixed else 3
    for seed in range(2):
        assert _lockstep({"rules": preset, "max_hands": max_hands}, seed) > 0
    assert _lockstep({"rules": preset, "episode": "hand"}, 7) > 0
    assert _lockstep({"rules": preset, "episode": "game", "reward": "result", "max_hands": max_hands}, 8) > 0


@pytest.mark.parametrize(
    "rules",
    [
        {"no_kitty_51": True, "max_exchange": 2, "target_score": 6, "target_symmetric": True},
        {"pickup_before_discard": True, "trump_after_kitty": True, "win_margin": 4},
        {"trump_before_exchange": True, "pickup_before_discard": True, "chips": True, "target_score": 8},
        {"trump_after_send": True, "first_up_exchanges_first": True, "max_exchange": 2},
        {"kitty_before_exchange": True, "trump_after_kitty": True, "dealer_makes_quota": "up"},
    ],
    ids=["no-kitty-51", "trump-after-kitty", "trump-before-exchange", "trump-after-send", "kitty-before-exchange"],
)
def test_lockstep_option_sets_beyond_the_presets(rules: dict) -> None:
    for seed in range(2):
        assert _lockstep({"rules": rules, "max_hands": 4}, seed) > 0
    _lockstep({"rules": rules, "episode": "hand"}, 5, {"start_balances": [2, -1, -1]})


@pytest.mark.parametrize("seed", range(3))
def test_lockstep_whole_standard_games(seed: int) -> None:
    assert _lockstep({}, 100 + seed, illegal_every=37) > 50


def test_lockstep_whole_calls_games() -> None:
    fast = raw_env(rules="calls", max_hands=30)
    for seed in range(2):
        assert _lockstep({"rules": "calls", "max_hands": 30}, 40 + seed, illegal_every=97) > 18 * 40
    fast.reset(seed=40)
    _play(fast, random.Random(40), 100_000)
    assert fast.game.hand_number == 18 and fast.game.winners  # every seat made its six calls


def test_lockstep_auctions_with_passed_out_deals() -> None:
    passed_out = 0
    for seed in range(4):  # random deals, then given ones (the compiled path asks for each, passed out or not)
        options = {"deals": _deals(seed, 3)} if seed >= 2 else None
        _lockstep({"rules": "woburn-auction", "max_hands": 4}, seed, options, pass_rate=0.6)
        e = raw_env(rules="woburn-auction", max_hands=4)
        e.reset(seed=seed, options=options)
        rng = random.Random(seed)
        while e.agents and not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
            legal = e.legal_actions()
            e.step(58 if 58 in legal and rng.random() < 0.6 else rng.choice(legal))
        passed_out += e.game.passed_out
    assert passed_out >= 2


def test_lockstep_with_reset_options() -> None:
    _lockstep({"max_hands": 4}, 1, {"first_dealer": 2, "deals": _deals(5, 2)})
    _lockstep({"episode": "hand"}, 2, {"start_balances": [3, -1, -2]})
    _lockstep({"rules": "canadian", "episode": "hand"}, 3, {"start_balances": [-2, 4, -2], "first_dealer": 1})


def test_unseeded_resets_deal_the_same_games() -> None:
    fast, slow = raw_env(max_hands=2), raw_env(compiled=False, max_hands=2)
    fast.reset(seed=9)
    slow.reset(seed=9)
    for _ in range(3):
        fast.reset()
        slow.reset()
        assert _state(fast) == _state(slow)
        assert fast.record() == slow.record()


def _play(e: raw_env, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            return
        e.step(rng.choice(e.legal_actions()))


def test_game_read_mid_game_stays_current() -> None:
    fast, slow = raw_env(max_hands=5), raw_env(compiled=False, max_hands=5)
    fast.reset(seed=3)
    slow.reset(seed=3)
    rng_a, rng_b = random.Random(4), random.Random(4)
    _play(fast, rng_a, 70)
    _play(slow, rng_b, 70)
    game = fast.game  # brought up to date, then stepped with the env
    assert fast._engine.pending is None
    for _ in range(120):
        _play(fast, rng_a, 1)
        _play(slow, rng_b, 1)
        assert game.hand_number == slow.game.hand_number and game.hands == slow.game.hands
        assert _state(fast) == _state(slow)
    assert fast.record() == slow.record()
    fast.reset(seed=3)
    assert fast._engine.pending == [] and fast.game is not game


def _deals(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    deals = []
    for _ in range(count):
        deck = list(range(52))
        rng.shuffle(deck)
        deals.append({"hands": [deck[:16], deck[16:32], deck[32:48]], "kitty": deck[48:]})
    return deals


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("deals", [0, 4])
def test_copies_mid_game_continue_identically(how: str, deals: int) -> None:
    e = raw_env(max_hands=6)
    e.reset(seed=11, options={"deals": _deals(3, deals)} if deals else None)
    _play(e, random.Random(0), 70)
    assert e._engine.fast.deal_queue or not deals  # given deals still to come
    other = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
    assert other._engine.fast is not None and _state(other) == _state(e)
    _play(e, random.Random(1), 10_000)
    _play(other, random.Random(1), 10_000)
    assert _state(other) == _state(e)
    assert other.record() == e.record()


@pytest.mark.parametrize(
    "action", [np.int64(60), np.int8(3), -1, 56, 2**70, True, 1.0, "3", None], ids=lambda a: f"{type(a).__name__}:{a}"
)
def test_bad_actions_get_the_pure_python_error(action: object) -> None:
    fast, slow = raw_env(), raw_env(compiled=False)
    fast.reset(seed=2)
    slow.reset(seed=2)
    with pytest.raises(IllegalEnvActionError) as slow_err:
        slow.step(action)
    with pytest.raises(IllegalEnvActionError) as fast_err:
        fast.step(action)
    assert str(fast_err.value) == str(slow_err.value)
    assert _state(fast) == _state(slow) and not fast._engine.pending


def test_numpy_integer_actions_are_played() -> None:
    e = raw_env()
    e.reset(seed=2)
    action = np.int64(e.legal_actions()[0])
    e.step(action)
    assert e.game.history[0].exchanges or e.game.trump >= 0 or e.game.log.discards


def test_compiled_false_uses_the_pure_python_path() -> None:
    for rules in ("woburn-auction", "calls", "standard"):
        assert raw_env(rules=rules)._use_kernel  # the compiled engine runs these rule sets
        e = raw_env(rules=rules, compiled=False)
        e.reset(seed=1)
        assert e._engine.fast is None
        _play(e, random.Random(0), 300)
        replay(e.record())  # a valid record of the game played
    with pytest.raises(ValueError, match="compiled must be True, False or 'auto'"):
        raw_env(compiled="yes")


@pytest.mark.parametrize("preset", ["four-5-3-2-2", "four-6-3-2-1"])
def test_four_players_on_the_compiled_path(preset: str) -> None:
    e = raw_env(rules=preset, max_hands=2)
    e.reset(seed=2)
    assert e._engine.fast is not None and e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    _play(e, random.Random(1), 100_000)
    assert not e.agents or e.terminations[e.agent_selection] or e.truncations[e.agent_selection]
    assert [len(hand) for hand in e.game.history[-1].deal_hands] == [12, 12, 12, 12]
    replay(e.record())  # a valid record of the four-player game played
    # every shape of the four-player exchange (one up serving three, two and two, three up serving one), capped
    for k, balances in enumerate(([3, -1, -1, -1], [-2, 2, 1, -1], [1, 1, 1, -3], [-3, 2, -1, 2])):
        for rules in (
            preset,
            {"players": 4, "max_exchange": 2, "trump_after_send": True, "first_up_exchanges_first": True},
        ):
            _lockstep({"rules": rules, "max_hands": 3}, 10 + k, {"start_balances": balances, "first_dealer": k})


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("rules, max_hands", [("standard", 1), ({"win_tricks": 9, "quotas": [7, 5, 4]}, 50)])
def test_step_after_the_end_is_a_clear_error(compiled: bool, rules: object, max_hands: int) -> None:
    e = raw_env(rules=rules, max_hands=max_hands, compiled=compiled)
    e.reset(seed=3)
    rng = random.Random(3)
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)  # PettingZoo's dead step: removes the agent
        else:
            e.step(rng.choice(e.legal_actions()))
    record = e.record()
    with pytest.raises(EnvGameOverError, match=r"after the game has ended \(.+\): no agents remain") as err:
        e.step(0)
    assert isinstance(err.value, GameOverError) and isinstance(err.value, IllegalEnvActionError)
    assert ("won by" in str(err.value)) == (max_hands == 50)
    assert e.agents == [] and e.record() == record  # nothing changed
    e.reset(seed=4)
    assert e.agents == list(AGENTS)
