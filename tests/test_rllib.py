"""RLlib: the turn-based MultiAgentEnv adapter, the masking module, training and the rllib:PATH agent.

Skipped, saying so, when ``ray[rllib]`` is not installed; CI installs the
``ecosystem`` extra, so there they run.
"""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install -e '.[rllib]')")

import sm_env  # noqa: E402
from sm_env.env import AGENTS  # noqa: E402
from sm_env.game import NUM_ACTIONS, ROLE_NAMES  # noqa: E402
from sm_env.rllib_env import TurnBasedEnv  # noqa: E402
from sm_env.rules import PRESETS  # noqa: E402


def play_turn_based(env: TurnBasedEnv, seed: int, rng: random.Random) -> tuple[dict[str, float], list[int]]:
    """Play one episode with random legal actions, checking the turn-based protocol at every step.

    Returns the rewards summed per agent and the actions taken.
    """
    obs, infos = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    actions = []
    while True:
        assert len(obs) == 1, "only the agent to act gets an observation"
        (agent,) = obs
        assert set(infos) == {agent}
        assert env.observation_spaces[agent].contains(obs[agent])
        mask = obs[agent]["action_mask"]
        assert mask.any()
        action = int(rng.choice(np.flatnonzero(mask)))
        actions.append(action)
        obs, rewards, terminated, truncated, infos = env.step({agent: action})
        assert "__all__" in terminated and "__all__" in truncated
        assert set(rewards) <= set(env.possible_agents)
        for name, value in rewards.items():
            totals[name] += value
        if terminated["__all__"] or truncated["__all__"]:
            assert set(obs) == set(env.possible_agents) == set(rewards)  # a final observation and reward for all
            assert set(terminated) == set(truncated) == {*env.possible_agents, "__all__"}
            for name in obs:
                assert not obs[name]["action_mask"].any()
            return totals, actions
        assert not any(v for k, v in terminated.items() if k != "__all__")
        (nxt,) = obs
        assert nxt in rewards, "the agent to act always gets a reward key"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"episode": "hand"},
        {"reward": "result", "max_hands": 4},
        {"max_hands": 2},
        {"episode": "hand", "agent_names": "roles"},
    ],
)
def test_adapter_follows_the_turn_based_protocol_and_pays_the_aec_rewards(kwargs):
    """Rewards over an episode equal the AEC env's cumulative rewards for the same actions."""
    for seed in range(3):
        env = TurnBasedEnv(kwargs)
        totals, actions = play_turn_based(env, seed, random.Random(seed))
        aec_kwargs = {k: v for k, v in kwargs.items() if k != "agent_names"}
        aec = sm_env.env(**aec_kwargs)
        aec.reset(seed=seed)
        cumulative = dict.fromkeys(AGENTS, 0.0)
        for action in actions:
            aec.step(action)
            for agent, reward in aec.rewards.items():
                cumulative[agent] += reward
        assert aec.unwrapped.game.is_over
        by_seat = {env.seat_of(name): value for name, value in totals.items()}
        assert by_seat == pytest.approx(cumulative)
        assert aec.unwrapped.record() == env.aec.record()


def test_adapter_pays_non_acting_seats_when_a_hand_ends():
    env = TurnBasedEnv({"episode": "game", "max_hands": 3})
    obs, _ = env.reset(seed=5)
    rng = random.Random(5)
    paid_without_obs = False
    while True:
        (agent,) = obs
        obs, rewards, terminated, truncated, _ = env.step(
            {agent: int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))}
        )
        if terminated["__all__"] or truncated["__all__"]:
            break
        paid_without_obs |= any(name not in obs and value != 0 for name, value in rewards.items())
    assert paid_without_obs


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_variant_has_working_spaces(preset):
    env = TurnBasedEnv({"rules": preset, "episode": "hand"})
    aec_space = sm_env.env(rules=preset).observation_space("player_0")
    for agent in env.possible_agents:
        space = env.observation_spaces[agent]
        assert set(space.spaces) == {"observations", "action_mask"}
        assert space["observations"].shape == aec_space["observation"].shape
        assert env.action_spaces[agent].n == NUM_ACTIONS
    play_turn_based(env, 0, random.Random(0))


def test_roles_name_agents_by_role():
    env = TurnBasedEnv({"episode": "hand", "agent_names": "roles"})
    assert env.possible_agents == list(ROLE_NAMES)
    for seed in range(4):
        env.reset(seed=seed)
        dealer = env.aec.game.dealer
        assert env.seat_of("dealer") == AGENTS[dealer]
        assert env.seat_of("eldest") == AGENTS[(dealer + 1) % 3]


def test_adapter_rejects_bad_config_and_actions():
    with pytest.raises(ValueError, match="agent_names='roles' needs episode='hand'"):
        TurnBasedEnv({"agent_names": "roles"})
    with pytest.raises(ValueError, match="unknown env_config key"):
        TurnBasedEnv({"bogus": 1})
    env = TurnBasedEnv()
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    other = next(a for a in env.possible_agents if a != agent)
    with pytest.raises(ValueError, match=f"it is {agent}'s turn"):
        env.step({other: 0})
    illegal = int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])
    before = env.aec.record()
    with pytest.raises(sm_env.IllegalEnvActionError):
        env.step({agent: illegal})
    assert env.aec.record() == before


def test_masking_module_never_picks_an_illegal_action():
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import ActionMaskingPPOModule

    env = TurnBasedEnv({"episode": "hand"})
    space = env.observation_spaces["player_0"]
    module = RLModuleSpec(
        module_class=ActionMaskingPPOModule,
        observation_space=space,
        action_space=env.action_spaces["player_0"],
        model_config={"fcnet_hiddens": [16]},
    ).build()
    obs, _ = env.reset(seed=1)
    (agent,) = obs
    batch = {
        Columns.OBS: {
            "observations": torch.from_numpy(obs[agent]["observations"][None]),
            "action_mask": torch.from_numpy(obs[agent]["action_mask"][None]),
        }
    }
    kept = dict(batch[Columns.OBS])
    for forward in (module.forward_exploration, module.forward_inference, module.forward_train):
        logits = forward(batch)[Columns.ACTION_DIST_INPUTS][0]
        probs = torch.softmax(logits, -1).detach().numpy()
        assert probs[obs[agent]["action_mask"] == 0].sum() < 1e-6
        assert batch[Columns.OBS] == kept  # the module does not pop the keys out of the caller's batch
    values = module.compute_values(batch)
    assert values.shape == (1,)


def test_training_writes_a_checkpoint_that_plays_as_an_agent_and_beats_random(local_ray, tmp_path):
    """A few PPO iterations on the local Ray instance; the exported policy plays through make_agent."""
    from agents import make_agent
    from training.evaluate import evaluate
    from training.rllib_config import rllib_config_from_dict
    from training.rllib_trainer import latest_checkpoint, train_rllib

    cfg = rllib_config_from_dict(
        {
            "env": {"episode": "hand"},
            "league": {"mix": {"self": 0.5, "random": 0.5, "snapshots": 0.2}, "snapshot_every": 5, "pool_size": 1},
            "ppo": {"lr": 1e-3, "train_batch_size": 2000, "minibatch_size": 500, "num_epochs": 4, "hiddens": [64]},
            "train": {"iterations": 10, "checkpoint_every": 5, "keep_checkpoints": 1},
            "eval": {"opponents": ["random"], "final_deals": 0},
        }
    )
    run = str(tmp_path / "run")
    summary = train_rllib(cfg, run, quiet=True)
    assert summary["iterations"] == 10 and os.path.isdir(summary["policy"])
    assert latest_checkpoint(run).endswith("iter_000010")
    assert len(os.listdir(os.path.join(run, "checkpoints"))) == 1  # keep_checkpoints
    assert json.load(open(os.path.join(run, "summary.json")))["env_steps"] >= 10 * 2000

    agent = make_agent(f"rllib:{summary['policy']}")
    assert agent.needs_observation
    result = evaluate([f"rllib:{summary['policy']}", "random"], deals=200, workers=1, progress=False, seed=3)
    diff = result.pairwise[tuple(result.agents)]
    assert diff.lo > 0, f"the trained policy does not beat random: {diff.text()}"

    # resume: continue the same run for 2 more iterations from its checkpoint
    cfg.train.iterations = 12
    more = train_rllib(cfg, run, resume=True, quiet=True)
    assert more["iterations"] == 12 and latest_checkpoint(run).endswith("iter_000012")
    assert more["env_steps"] > summary["env_steps"]


def test_rllib_agent_spec_errors():
    from agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match="needs an exported policy"):
        make_agent("rllib:")
    with pytest.raises(AgentSpecError, match="not found"):
        make_agent("rllib:/no/such/policy")
