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
from sm_env.core.game import ROLE_NAMES  # noqa: E402
from sm_env.core.rules import PRESETS  # noqa: E402
from sm_env.envs.aec import AGENTS  # noqa: E402
from sm_env.envs.rllib_env import TurnBasedEnv  # noqa: E402


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
    if PRESETS[preset].num_players != 3:
        with pytest.raises(ValueError, match="plays three players"):
            TurnBasedEnv({"rules": preset, "episode": "hand"})
        return
    env = TurnBasedEnv({"rules": preset, "episode": "hand"})
    aec = sm_env.env(rules=preset)
    aec_space = aec.observation_space("player_0")
    for agent in env.possible_agents:
        space = env.observation_spaces[agent]
        assert set(space.spaces) == {"observations", "action_mask"}
        assert space["observations"].shape == aec_space["observation"].shape
        assert env.action_spaces[agent].n == aec.action_space("player_0").n
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

    from agents.players.rllib_module import ActionMaskingPPOModule

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
    """A few PPO iterations on the local Ray instance; the exported policy plays through make_agent and beats
    random (6 iterations: +0.490 [+0.247, +0.740] and +0.603 [+0.367, +0.840] in two runs on 200 deals)."""
    from agents import make_agent
    from training.evaluation.evaluate import evaluate
    from training.rllib.config import rllib_config_from_dict
    from training.rllib.trainer import latest_checkpoint, train_rllib

    cfg = rllib_config_from_dict(
        {
            "env": {"episode": "hand"},
            "league": {"mix": {"self": 0.5, "random": 0.5, "snapshots": 0.2}, "snapshot_every": 5, "pool_size": 1},
            "ppo": {"lr": 1e-3, "train_batch_size": 2000, "minibatch_size": 500, "num_epochs": 4, "hiddens": [64]},
            "train": {"iterations": 6, "checkpoint_every": 3, "keep_checkpoints": 1},
            "eval": {"opponents": ["random"], "final_deals": 0},
        }
    )
    run = str(tmp_path / "run")
    summary = train_rllib(cfg, run, quiet=True)
    assert summary["iterations"] == 6 and os.path.isdir(summary["policy"])
    assert latest_checkpoint(run).endswith("iter_000006")
    assert len(os.listdir(os.path.join(run, "checkpoints"))) == 1  # keep_checkpoints
    assert json.load(open(os.path.join(run, "summary.json")))["env_steps"] >= 6 * 2000

    agent = make_agent(f"rllib:{summary['policy']}")
    assert agent.needs_observation
    result = evaluate([f"rllib:{summary['policy']}", "random"], deals=200, workers=1, progress=False, seed=3)
    diff = result.pairwise[tuple(result.agents)]
    assert diff.lo > 0, f"the trained policy does not beat random: {diff.text()}"

    # resume: continue the same run for 1 more iteration from its checkpoint
    cfg.train.iterations = 7
    more = train_rllib(cfg, run, resume=True, quiet=True)
    assert more["iterations"] == 7 and latest_checkpoint(run).endswith("iter_000007")
    assert more["env_steps"] > summary["env_steps"]


def test_rllib_agent_spec_errors():
    from agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match="needs an exported policy"):
        make_agent("rllib:")
    with pytest.raises(AgentSpecError, match="not found"):
        make_agent("rllib:/no/such/policy")


def test_league_env_hides_opponent_seats_and_pays_the_learner_everything():
    from training.rllib.league import LeagueEnv, collect_stats_on_runner

    for seed in range(3):
        env = LeagueEnv({"episode": "game", "max_hands": 2, "league": {"mix": {"random": 1.0}}})
        obs, _ = env.reset(seed=seed)
        rng = random.Random(seed)
        (learner,) = obs
        total = 0.0
        while True:
            assert set(obs) == {learner}, "only the learner seat is seen when both others are league opponents"
            obs, rewards, terminated, truncated, _ = env.step(
                {learner: int(rng.choice(np.flatnonzero(obs[learner]["action_mask"])))}
            )
            assert set(rewards) <= {learner}
            total += sum(rewards.values())
            if terminated["__all__"] or truncated["__all__"]:
                assert set(obs) == {learner}
                break
        assert total == env.aec.game.scores[AGENTS.index(learner)]  # every hand's balance, opponents' moves too
        stats = collect_stats_on_runner(type("Runner", (), {"env": env})())
        assert sum(stats["counts"]) == len(env.aec.game.history)


def test_the_first_league_env_of_a_process_runs_the_kernels_while_it_is_built(monkeypatch):
    """So that RLlib's first sample does not wait for numba (it did on a fresh node: an empty first iteration)."""
    from sm_env.compiled import single
    from training.rllib import league

    acted = []
    real_act = league.act
    monkeypatch.setattr(league, "act", lambda agent, view: acted.append(agent) or real_act(agent, view))
    monkeypatch.setattr(league, "_warmed", set(), raising=False)  # as in a fresh process
    monkeypatch.setattr(single, "_compiled", [])
    config = {"league": {"mix": {"self": 0.5, "heuristic": 0.5}}}
    first = league.LeagueEnv(config)
    assert single._compiled and len(acted) >= 10, "one hand played, the opponents acting, before any sample"
    warmed = len(acted)
    second = league.LeagueEnv(config)
    assert len(acted) == warmed, "once per process"
    for seed in (4, 5):  # the warm-up seeds nothing: the episodes of an env that did not warm up
        (obs_a, _), (obs_b, _) = first.reset(seed=seed), second.reset(seed=seed)
        assert obs_a.keys() == obs_b.keys()
        for agent in obs_a:
            np.testing.assert_array_equal(obs_a[agent]["observations"], obs_b[agent]["observations"])


def test_an_iteration_that_samples_nothing_says_so_in_one_line(monkeypatch, capsys):
    from training.rllib.config import load_rllib_config
    from training.rllib.trainer import RLlibTrainer

    sampled = iter([0, 120])  # the first iteration's runners still busy, the second's not

    class Algo:  # what RLlibTrainer.train reads of an RLlib algorithm
        config = type("Config", (), {"sample_timeout_s": 60.0})()
        env_runner_group = type("Group", (), {"foreach_env_runner": staticmethod(lambda call: [])})()

        def train(self):
            return {"env_runners": {"num_env_steps_sampled": next(sampled)}}

    run = RLlibTrainer.__new__(RLlibTrainer)  # the run without Ray: its algorithm and writer are stand-ins
    run.cfg = load_rllib_config("configs/rllib_quickstart.yaml", ["train.iterations=2", "eval.every=0"])
    run.quiet, run.iteration, run.env_steps, run.wall, run.ids, run.checkpoint = False, 0, 0, 0.0, ["shared"], None
    run.algo = Algo()
    run.writer = type("Writer", (), {"add_scalar": staticmethod(lambda *args: None)})()
    monkeypatch.setattr(run, "save_checkpoint", lambda: "checkpoint")
    run.train()
    err = capsys.readouterr().err
    assert "iteration 1/2 sampled no env steps: no env runner returned a sample within RLlib's sample timeout " in err
    assert "(60.0 s)" in err
    assert "iteration 2/2 sampled no env steps" not in err and "iteration 2/2: 120 env steps" in err


def test_league_snapshots_join_and_leave_the_pool():
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.players.rllib_module import ActionMaskingPPOModule
    from training.rllib.league import LeagueEnv, add_snapshot_on_runner

    env = LeagueEnv({"episode": "hand", "league": {"mix": {"snapshots": 1.0}}})
    module = RLModuleSpec(
        module_class=ActionMaskingPPOModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"fcnet_hiddens": [8]},
    ).build()
    runner = type("Runner", (), {"env": env, "module": {"shared": module}})()
    obs, _ = env.reset(seed=0)
    assert len(obs) == 1  # no snapshot yet: 'snapshots' falls back to self-play (all three seats learn)
    state = {k: np.zeros_like(v) for k, v in module.get_state().items()}
    for i in (1, 2, 3):
        assert add_snapshot_on_runner(runner, f"snapshot_{i}", {"shared": state}, keep=2) == min(i, 2)
    assert sorted(env.snapshots) == ["snapshot_2", "snapshot_3"]
    frozen = env.snapshots["snapshot_3"].modules["shared"]
    assert all(torch.count_nonzero(p) == 0 for p in frozen.parameters())
    assert any(torch.count_nonzero(p) for p in module.parameters()), "the learner's own module is not touched"
    env.reset(seed=1)
    seen, rng = set(), random.Random(1)
    obs, _ = env.reset(seed=2)
    while obs:
        (agent,) = obs
        seen.add(agent)
        obs, _, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))})
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert len(seen) == 1  # the two other seats were frozen copies


def test_per_role_training_exports_one_module_per_role(local_ray, tmp_path):
    from agents import make_agent
    from training.rllib.config import rllib_config_from_dict
    from training.rllib.trainer import train_rllib

    cfg = rllib_config_from_dict(
        {
            "env": {"episode": "hand"},
            "policies": "per_role",
            "league": {"mix": {"self": 1.0, "heuristic": 1.0}, "snapshot_every": 0},
            "ppo": {"train_batch_size": 300, "minibatch_size": 100, "num_epochs": 1, "hiddens": [16]},
            "train": {"iterations": 1},
            "eval": {"opponents": ["random"], "final_deals": 3},
        }
    )
    summary = train_rllib(cfg, str(tmp_path / "run"), quiet=True)
    assert set(ROLE_NAMES) <= set(os.listdir(summary["policy"]))
    assert set(make_agent(f"rllib:{summary['policy']}").modules) == set(ROLE_NAMES)
    assert set(summary["final_eval"]["random"]) == {*ROLE_NAMES, "all"}
    from training.common.tables import format_table

    assert "random     all " in format_table(summary["final_eval"])  # the table every trainer ends with
    assert json.load(open(os.path.join(tmp_path, "run", "summary.json")))["progress"] == 1
    rows = [json.loads(line) for line in open(os.path.join(tmp_path, "run", "eval.jsonl"))]  # the learning curve
    assert [(r["iteration"], r["final"]) for r in rows] == [(1, True)] and rows[0]["wall"] > 0
    assert rows[0]["results"] == summary["final_eval"]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = EventAccumulator(str(tmp_path / "run" / "tb")).Reload().Tags()["scalars"]
    for tag in ("rollout/balance_dealer", "rollout/quota_rate", "time/decisions_per_second"):
        assert tag in tags
    for tag in ("eval/random/dealer_balance", "eval/random/middle_advantage", "eval/random/win_rate"):
        assert tag in tags
    assert any(t.startswith("train/dealer/") for t in tags)


def test_rllib_config_errors_name_the_key():
    from training.common.errors import ConfigError
    from training.rllib.config import rllib_config_from_dict

    with pytest.raises(ConfigError, match="policies: 'per_role' needs env.episode: hand"):
        rllib_config_from_dict({"env": {"episode": "game"}, "policies": "per_role"})
    with pytest.raises(ConfigError, match="ppo.minibatch_size"):
        rllib_config_from_dict({"ppo": {"train_batch_size": 100, "minibatch_size": 200}})
    with pytest.raises(ConfigError, match="unknown"):
        rllib_config_from_dict({"ppo": {"learning_rate": 1}})


@pytest.fixture
def exported_policy(tmp_path):
    """An (untrained) module saved as RLlib saves one: a folder holding a ``shared`` module checkpoint."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.players.rllib_module import ActionMaskingPPOModule

    env = TurnBasedEnv({"episode": "hand"})
    module = RLModuleSpec(
        module_class=ActionMaskingPPOModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"fcnet_hiddens": [8]},
    ).build()
    path = tmp_path / "policy"
    module.save_to_path(str(path / "shared"))
    return str(path)


def test_exported_policy_plays_whole_games_as_an_agent(exported_policy):
    from agents import make_agent
    from training.evaluation.evaluate import evaluate

    for path in (exported_policy, os.path.join(exported_policy, "shared"), os.path.relpath(exported_policy)):
        assert set(make_agent(f"rllib:{path}").modules) == {"shared"}  # a relative path too (RUN/policy)
    result = evaluate(
        [f"rllib:{exported_policy}", "random"], deals=2, mode="game", max_hands=2, workers=1, progress=False
    )
    assert result.counts[result.agents[0]]["all"]["hands"] > 0


def test_browser_takes_a_trusted_rllib_policy_only(exported_policy):
    from sm_web.sessions import WebError, build_game

    spec = f"rllib:{exported_policy}"
    game = build_game({"opponents": [spec, "random"], "seed": 1}, trusted=[spec])
    assert game is not None
    with pytest.raises(WebError, match="rllib:PATH agent can be chosen only if the server was started with it"):
        build_game({"opponents": [spec, "random"], "seed": 1})


def test_a_folder_without_a_module_is_a_clear_error(tmp_path):
    from agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match="holds no RLlib module checkpoint"):
        make_agent(f"rllib:{tmp_path}")


def test_train_command_line_errors_are_one_line(tmp_path, capsys):
    from training.cli import main

    assert main(["--backend", "rllib", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "sergeant-major train --backend rllib: error: config file not found" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text("policies: per_role\nenv: {episode: game}\n")
    assert main(["--backend", "rllib", "--config", str(config)]) == 2
    assert "policies: 'per_role' needs env.episode: hand" in capsys.readouterr().err
    assert main(["--backend", "rllib", "--resume", str(tmp_path)]) == 2
    assert "sergeant-major train --backend rllib: error: cannot resume" in capsys.readouterr().err


def test_an_rllib_policy_on_rules_it_cannot_play_fails_up_front_in_one_line(exported_policy, tmp_path, capsys):
    from sm_cli import main as cli_main

    argv = ["eval", "--agents", f"rllib:{exported_policy}", "random", "--rules", "calls", "--deals", "1"]
    assert cli_main(argv + ["--workers", "1", "--no-progress", "--out", str(tmp_path / "ev")]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sergeant-major eval: error: "), err
    assert "cannot play the rule set 'calls'" in err and "it plays: standard, " in err


def test_the_critic_state_comes_beside_the_observation_and_is_the_hidden_cards():
    """critic_state=True: every infos entry holds the cards hidden from its agent (the engine's, as
    VectorGame.full_state lays them out), the observations are those of the env without it."""
    from sm_env.observation import full_state

    plain, full = TurnBasedEnv({"episode": "hand"}), TurnBasedEnv({"episode": "hand", "critic_state": True})
    (obs_a, info_a), (obs_b, info_b) = plain.reset(seed=3), full.reset(seed=3)
    rng, steps = random.Random(0), 0
    while True:
        assert obs_a.keys() == obs_b.keys() and info_a.keys() == info_b.keys()
        for agent in obs_b:
            assert set(obs_b[agent]) == {"observations", "action_mask"}  # never inside the observation
            np.testing.assert_array_equal(obs_a[agent]["observations"], obs_b[agent]["observations"])
            assert "critic_state" not in info_a[agent]
            seat = AGENTS.index(full.seat_of(agent))
            hidden = info_b[agent]["critic_state"]
            np.testing.assert_array_equal(hidden, full_state(full.aec.game, seat))
            own = full.aec.game.hands[seat]
            assert not any(own >> card & 1 for card in np.flatnonzero(hidden[:104]))  # other hands only
        if len(obs_b) > 1:
            break
        (agent,) = obs_b
        action = int(rng.choice(np.flatnonzero(obs_b[agent]["action_mask"])))
        obs_a, _, _, _, info_a = plain.step({agent: action})
        obs_b, _, _, _, info_b = full.step({agent: action})
        steps += 1
    assert steps > 40
    with pytest.raises(ValueError, match="critic_state must be true or false"):
        TurnBasedEnv({"critic_state": "yes"})


def test_the_critic_state_connector_adds_one_row_per_observation_or_says_what_is_missing():
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode

    from training.rllib.critic_state import AddCriticState

    def episode(infos):
        return SingleAgentEpisode(
            observations=[0, 1, 2], actions=[0, 1], rewards=[0.0, 1.0], infos=infos, len_lookback_buffer=0
        ).to_numpy()

    rows = [{"critic_state": np.full(4, i, np.float32)} for i in range(3)]
    batch = AddCriticState()(rl_module=None, batch={}, episodes=[episode(rows)], shared_data={})
    (column,) = batch["critic_state"].values()
    np.testing.assert_array_equal(np.concatenate(column), [[0.0] * 4, [1.0] * 4])  # one row per step
    with pytest.raises(ValueError, match="observation 1 came without its 'critic_state' info"):
        AddCriticState()(rl_module=None, batch={}, episodes=[episode([rows[0], {}, rows[2]])], shared_data={})


def test_a_full_critic_run_trains_and_its_policy_acts_without_the_hidden_cards(local_ray, tmp_path):
    """ppo.critic: full: the value function reads the hidden cards in the learner (GAE and the value loss fail
    without them), the exported policy plays from its observation alone."""
    import torch

    from agents import make_agent
    from agents.players.rllib_module import FullCriticPPOModule
    from training.rllib.config import rllib_config_from_dict
    from training.rllib.trainer import train_rllib

    cfg = rllib_config_from_dict(
        {
            "env": {"episode": "hand"},
            "league": {"mix": {"self": 1.0, "heuristic": 1.0}, "snapshot_every": 0},
            "ppo": {"train_batch_size": 300, "minibatch_size": 100, "num_epochs": 1, "hiddens": [16], "critic": "full"},
            "train": {"iterations": 1},
            "eval": {"opponents": ["random"], "final_deals": 3},
        }
    )
    summary = train_rllib(cfg, str(tmp_path / "run"), quiet=True)
    agent = make_agent(f"rllib:{summary['policy']}")
    (module,) = agent.modules.values()
    assert isinstance(module, FullCriticPPOModule) and module.full_critic[0].in_features == 789 + 156
    assert set(summary["final_eval"]["random"]) == {*ROLE_NAMES, "all"}  # played from its observations alone
    obs = {"observations": torch.zeros(2, 789), "action_mask": torch.ones(2, 56)}
    with pytest.raises(KeyError, match="critic_state"):
        module.compute_values({"obs": obs})
    seen = module.compute_values({"obs": obs, "critic_state": torch.ones(2, 156)})
    assert seen.shape == (2,) and not torch.equal(
        seen, module.compute_values({"obs": obs, "critic_state": torch.zeros(2, 156)})
    )
