"""One smoke test per RL library users reach the environment with (the ``ecosystem`` extra).

Each builds the environment the way docs/ecosystem.md shows, steps it with the
mask and, where cheap, takes a few training steps. A library that cannot be
imported skips its test and says so; CI installs the extra, so there they run.
RLlib has its own module (tests/test_rllib.py).
"""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

import sm_env
from sm_env.core.game import NUM_ACTIONS
from sm_env.envs.wrappers import FlatObservationWrapper, ObservationKeysWrapper, mask_in_info, rllib_observation_keys
from sm_env.observation import OBSERVATION_SIZE


def _needs(module: str):
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[ecosystem]')")


def _play_with_info_mask(e, rng: random.Random) -> int:
    """Random legal actions read from ``info["action_mask"]`` until the game ends; the number of steps."""
    steps = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        assert obs.shape == e.observation_space(agent).shape
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
    return steps


# ----------------------------------------------------------------------------- sm_env.envs.wrappers (no extra needed)


def test_flat_observation_wrapper_moves_the_mask_to_the_info():
    e = mask_in_info(sm_env.env(max_hands=2))
    assert e.observation_space("player_0").shape == (OBSERVATION_SIZE,)
    e.reset(seed=1)
    plain = sm_env.env(max_hands=2)
    plain.reset(seed=1)
    rng = random.Random(1)
    while e.agents:
        agent = e.agent_selection
        obs, _, term, trunc, info = e.last()
        ref = plain.observe(agent)
        np.testing.assert_array_equal(obs, ref["observation"])
        np.testing.assert_array_equal(info["action_mask"], ref["action_mask"])
        for other in e.infos:
            if other != agent:
                assert not e.infos[other]["action_mask"].any()
        action = None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"])))
        e.step(action)
        plain.step(action)
    assert e.unwrapped.record() == plain.unwrapped.record()


@pytest.mark.parametrize("infos_first", [True, False])
def test_flat_observation_wrapper_infos_hold_every_agents_mask(infos_first):
    """Whichever is read first (``infos`` or ``last()``), every agent's info mask is ``action_mask(agent)``."""
    e = mask_in_info(sm_env.env(episode="hand"))
    e.reset(seed=3)
    rng = random.Random(3)
    while e.agents:
        infos = e.infos if infos_first else None
        _, _, term, trunc, info = e.last()
        infos = infos or e.infos
        assert info is infos[e.agent_selection]
        for agent in e.possible_agents:
            if agent in infos:
                np.testing.assert_array_equal(infos[agent]["action_mask"], e.unwrapped.action_mask(agent))
                assert infos[agent]["action_mask"].dtype == np.int8
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"]))))


def test_flat_observation_wrapper_infos_are_new_after_a_step():
    e = FlatObservationWrapper(sm_env.env())
    e.reset(seed=0)
    agent = e.agent_selection
    mask = e.infos[agent].pop("action_mask")  # as TorchRL does
    e.step(int(np.flatnonzero(mask)[0]))
    assert "action_mask" in e.infos[e.agent_selection]


def test_observation_keys_wrapper_renames_for_rllib():
    e = rllib_observation_keys(sm_env.env())
    assert set(e.observation_space("player_0").spaces) == {"observations", "action_mask"}
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    assert set(obs) == {"observations", "action_mask"} and obs["observations"].shape == (OBSERVATION_SIZE,)
    assert e.observation_space("player_0").contains(obs)


def test_observation_keys_wrapper_rejects_bad_keys():
    with pytest.raises(ValueError, match="cannot rename observation key.*'nope'.*the keys are"):
        ObservationKeysWrapper(sm_env.env(), {"nope": "x"})
    with pytest.raises(ValueError, match="two observation entries one name"):
        ObservationKeysWrapper(sm_env.env(), {"observation": "action_mask"})


@pytest.mark.filterwarnings(
    "ignore:Observation is not a NumPy array:UserWarning",
    "ignore:unknown reset option:UserWarning",
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Action mask numpy array is all zeros:UserWarning",
)
@pytest.mark.parametrize("wrap", [mask_in_info, rllib_observation_keys])
def test_wrappers_pass_the_pettingzoo_api_test(wrap):
    from pettingzoo.test import api_test

    api_test(wrap(sm_env.env(max_hands=3)), num_cycles=200)


def test_terminate_illegal_wrapper_is_the_way_out_for_mask_blind_sampling():
    from pettingzoo.utils.wrappers import TerminateIllegalWrapper

    e = TerminateIllegalWrapper(sm_env.env(), illegal_reward=-1)
    e.reset(seed=0)
    agent = e.agent_selection
    illegal = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    e.step(illegal)
    assert all(e.terminations.values()) and e.rewards[agent] == -1


# ----------------------------------------------------------------------------- SuperSuit


def test_supersuit_observation_wrappers():
    ss = _needs("supersuit")
    e = mask_in_info(sm_env.env(max_hands=2))
    e = ss.dtype_v0(e, np.float32)
    e = ss.normalize_obs_v0(e, env_min=0.0, env_max=1.0)
    e = ss.flatten_v0(e)
    e = ss.frame_stack_v1(e, 2)
    e = ss.agent_indicator_v0(e)
    e = ss.pad_observations_v0(e)
    assert e.observation_space("player_0").shape == (2 * OBSERVATION_SIZE + 3,)
    e.reset(seed=0)
    assert _play_with_info_mask(e, random.Random(0)) > 100
    assert e.unwrapped.game.is_over


# ----------------------------------------------------------------------------- SB3 (through SingleSeatEnv)


def test_sb3_maskable_ppo_on_single_seat_env():
    _needs("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_checker import check_env

    from training.sb3.single_agent import SingleSeatEnv

    with pytest.raises(sm_env.IllegalEnvActionError):  # the checker samples without the mask: refused by default
        check_env(SingleSeatEnv(episode="hand", opponents={"random": 1.0}), warn=False)
    check_env(SingleSeatEnv(episode="hand", opponents={"random": 1.0}, illegal_action="lowest_legal"), warn=False)
    env = SingleSeatEnv(episode="hand", opponents={"random": 1.0})
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(32)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


# ----------------------------------------------------------------------------- TorchRL


@pytest.mark.parametrize("wrap", [None, mask_in_info])
def test_torchrl_pettingzoo_wrapper(wrap):
    _needs("torchrl")
    import torch
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    base = sm_env.env(max_hands=2)
    env = PettingZooWrapper(base if wrap is None else wrap(base), use_mask=True, categorical_actions=True, seed=0)
    rollout = env.rollout(120)  # random actions drawn from the masked action spec, until the game ends
    steps = rollout.batch_size[0]
    assert steps > 30 and rollout.batch_size == torch.Size([steps])
    for agent in ("player_0", "player_1", "player_2"):
        group = rollout[agent]
        acting = group["mask"].squeeze(-1)
        actions = group["action"].squeeze(-1)[acting]
        masks = group["action_mask"].squeeze(-2)[acting]
        assert masks.shape[-1] == NUM_ACTIONS
        assert masks.gather(-1, actions.unsqueeze(-1)).all()  # every action taken was legal
        info = group["info"]
        assert info["winners"].shape[-1] == 3 and info["phase"].dtype.is_floating_point
    total = sum(int(rollout[a]["mask"].sum()) for a in ("player_0", "player_1", "player_2"))
    assert total == steps  # exactly one seat acts per step


def test_torchrl_collector_with_the_masked_random_policy():
    """docs/ecosystem.md's TorchRL collector snippet, run as written: every action collected is legal."""
    _needs("torchrl")
    import os
    import re

    page = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "ecosystem.md")
    text = open(page, encoding="utf-8").read()
    (snippet,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "Collector(" in b]
    snippet = "\n".join(line[2:] if line.startswith("  ") else line for line in snippet.splitlines())
    scope: dict = {}
    exec(snippet, scope)
    collector = scope["collector"]
    steps = 0
    for batch in collector:
        for agent in ("player_0", "player_1", "player_2"):
            group = batch[agent]
            acting = group["mask"].squeeze(-1)
            actions = group["action"].squeeze(-1)[acting]
            assert group["action_mask"].squeeze(-2)[acting].gather(-1, actions.unsqueeze(-1)).all()
            steps += int(acting.sum())
    collector.shutdown()
    assert steps == 128


# ----------------------------------------------------------------------------- Tianshou


def test_tianshou_collects_and_trains_dqn(monkeypatch):
    if "numba" not in sys.modules:
        # Tianshou's buffers and returns are numba functions whose compilation takes ~20 s, far more than
        # this small test's work: run them as plain Python (numba reads this when it is first imported).
        monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    _needs("tianshou")
    import torch
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step

    torch.manual_seed(0)
    env = PettingZooEnv(sm_env.env(episode="hand"))
    net = Net(state_shape=OBSERVATION_SIZE, action_shape=NUM_ACTIONS, hidden_sizes=[32])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, observation_space=env.observation_space, eps_training=0.1
    )
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), target_update_freq=10)
    others = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in range(2)]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn, *others], env=env)
    envs = DummyVectorEnv([lambda: env])
    envs.seed(0)
    buffer = VectorReplayBuffer(500, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True, raise_on_nan_in_buffer=True)
    stats = collector.collect(n_episode=1, reset_before_collect=True)  # infos with NaNs would raise here
    assert stats.n_collected_episodes == 1 and len(buffer) > 50
    stored = buffer.sample_indices(0)
    assert buffer.obs.mask[stored, buffer.act[stored]].all()  # the masked policies only chose legal actions
    before = [p.detach().clone() for p in net.parameters()]
    with policy_within_training_step(algorithm.policy):
        for _ in range(3):
            algorithm.update(buffer=buffer, sample_size=32)
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, net.parameters(), strict=True))
