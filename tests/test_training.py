"""Training: the single-seat wrapper, the config schema, checkpoints and resume,
the trained-policy agent, and a short run that must learn something."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

from agents import act, make_agent  # noqa: E402
from agents.players.ppo_agent import (  # noqa: E402
    NumpyPolicy,
    PolicyLoadError,
    PPOAgent,
    export_policy,
)
from sm_env import IllegalEnvActionError  # noqa: E402
from sm_env.core.game import NUM_ACTIONS, Game  # noqa: E402
from sm_env.core.knowledge import player_view  # noqa: E402
from sm_env.observation import OBSERVATION_SIZE, encode  # noqa: E402
from sm_env.observation import action_mask as legal_mask_array  # noqa: E402
from training.cli import main  # noqa: E402
from training.sb3.config import config_from_dict  # noqa: E402
from training.sb3.single_agent import ActionMaskVecEnv, SingleSeatEnv, make_vec_env  # noqa: E402
from training.sb3.trainer import Trainer, numpy_policy, policy_arrays, train  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_config(**sections):
    """A config small enough for a test: small net, short rollouts, no evaluation."""
    data = {
        "env": {"exchange_start": 0.5},
        "opponents": {
            "mix": {"random": 1.0, "heuristic": 1.0, "snapshots": 2.0},
            "snapshot_every": 128,
            "pool_size": 2,
        },
        "ppo": {"n_steps": 64, "batch_size": 64, "net_arch": [32], "lr_schedule": "linear"},
        "train": {
            "total_timesteps": 512,
            "n_envs": 2,
            "segment_steps": 128,
            "checkpoint_every": 256,
            "progress_bar": False,
            "keep_checkpoints": 1,
        },
        "eval": {"final_deals": 0, "deals": 5, "opponents": ["random"]},
    }
    for key, value in sections.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    return config_from_dict(data)


def random_snapshot(seed: int = 0, hidden: int = 16) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "mlp_extractor.policy_net.0.weight": rng.normal(size=(hidden, OBSERVATION_SIZE)).astype(np.float32) * 0.1,
        "mlp_extractor.policy_net.0.bias": np.zeros(hidden, np.float32),
        "action_net.weight": rng.normal(size=(NUM_ACTIONS, hidden)).astype(np.float32),
        "action_net.bias": np.zeros(NUM_ACTIONS, np.float32),
    }


# ---------------------------------------------------------------------------- the wrapper


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"episode": "game", "max_hands": 4, "dense_reward": True},
        {"exchange_start": 1.0, "learner_seats": ["dealer"], "opponents": {"heuristic": 1.0}},
        {"episode": "game", "max_hands": 3, "reward": "result"},
    ],
)
def test_env_passes_gymnasium_checker(kwargs):
    """The checker samples without the mask: it passes where an illegal action is replaced (an explicit choice)."""
    check_env(SingleSeatEnv(**kwargs, illegal_action="lowest_legal"), skip_render_check=True)


def test_env_checker_fails_by_default_on_a_mask_blind_action():
    """By default an illegal action is refused, so a tool (or plain PPO) that ignores the mask finds out."""
    with pytest.raises(IllegalEnvActionError, match="legal actions: .*illegal_action='lowest_legal'"):
        check_env(SingleSeatEnv(), skip_render_check=True)


def test_the_single_seat_env_has_a_gymnasium_id_that_the_checker_accepts():
    """gymnasium.make(GYM_ID, **kwargs) is SingleSeatEnv(**kwargs), registered when its module is imported (or by
    gymnasium's "module:id" form); check_env passes on it with the checker's setting for masked envs."""
    import subprocess
    import sys

    import gymnasium

    from training.sb3.single_agent import GYM_ID

    env = gymnasium.make(GYM_ID, illegal_action="lowest_legal", opponents={"random": 1.0})
    assert GYM_ID == "sm_env/SergeantMajorSingleSeat-v0" and env.spec.id == GYM_ID
    assert isinstance(env.unwrapped, SingleSeatEnv) and env.unwrapped.pool.mix == {"random": 1.0}
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)  # through gymnasium's wrappers (the passive checker, the order enforcer)
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert obs.shape == (OBSERVATION_SIZE,) and not truncated
    code = (
        "import gymnasium, sm_env; print('sm_env/SergeantMajorSingleSeat-v0' in gymnasium.registry); "
        "e = gymnasium.make('training.sb3.single_agent:sm_env/SergeantMajorSingleSeat-v0'); "
        "print(type(e.unwrapped).__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "SingleSeatEnv"]  # not by import sm_env: the layer below training


def test_the_single_seat_env_puts_torch_on_one_thread_unless_told_otherwise(tmp_path):
    """torch_threads=1 by default (small networks: a thread pool costs more than it saves), N for N, None leaves
    torch as it is (the trainer, which sets train.torch_threads itself); anything else is refused by name."""
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        SingleSeatEnv()
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        SingleSeatEnv(torch_threads=None)
        assert torch.get_num_threads() == 2
        SingleSeatEnv(torch_threads=3)
        assert torch.get_num_threads() == 3
        for bad in (0, -1, 1.5, True, "2"):
            with pytest.raises(ValueError, match="torch_threads must be a whole number >= 1, or None"):
                SingleSeatEnv(torch_threads=bad)
        trainer = Trainer(tiny_config(train={"torch_threads": 2}), str(tmp_path), quiet=True)
        assert torch.get_num_threads() == 2  # the trainer's envs (and its warm start) keep train.torch_threads
        trainer.close()
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_mask_is_never_zero_and_matches_the_engine(episode):
    env = SingleSeatEnv(
        episode=episode, max_hands=5, exchange_start=0.5, opponents={"random": 1.0, "heuristic": 1.0, "snapshots": 1.0}
    )
    env.add_snapshot("s0", random_snapshot())
    rng = np.random.default_rng(1)
    steps = 0
    for episode_index in range(25 if episode == "hand" else 4):
        obs, info = env.reset(seed=episode_index)
        done = False
        total = 0.0
        while not done:
            mask = env.action_masks()
            assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
            assert mask.any(), "the learner was handed an all-zero mask"
            assert env.game.current == env.seat
            assert np.array_equal(mask, legal_mask_array(env.game.legal_mask()))
            assert np.array_equal(mask, info["action_mask"])
            assert np.array_equal(obs, encode(player_view(env.game, env.seat)))
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert "illegal_action" not in info
            total += reward
            done = terminated or truncated
            steps += 1
        assert env.action_masks().any()  # after the end: all ones, never zero
        assert total == env.game.scores[env.seat]  # balance rewards sum to the learner's score
    assert steps > 100


def test_dense_reward_pays_the_same_total_sooner():
    totals = {}
    for dense in (False, True):
        env = SingleSeatEnv(dense_reward=dense, opponents={"heuristic": 1.0})
        obs, _ = env.reset(seed=3)
        rewards = []
        while True:
            obs, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
            rewards.append(reward)
            if terminated or truncated:
                break
        totals[dense] = rewards
    assert sum(totals[False]) == sum(totals[True])
    assert all(r == 0 for r in totals[False][:-1])
    assert sum(1 for r in totals[True][:-1] if r > 0) > 0 or sum(totals[True]) <= 0


def test_learner_role_and_seeding():
    env = SingleSeatEnv(learner_seats=["middle"])
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["role"] == "middle"
    a, b = SingleSeatEnv(), SingleSeatEnv()
    oa, _ = a.reset(seed=42)
    ob, _ = b.reset(seed=42)
    assert np.array_equal(oa, ob) and a.seat == b.seat


@pytest.mark.parametrize("compiled", [True, False])
def test_an_illegal_action_is_refused_and_changes_nothing(compiled):
    env = SingleSeatEnv(compiled=compiled)
    env.reset(seed=0)
    mask = env.action_masks().copy()
    legal = [int(a) for a in np.flatnonzero(mask)]
    for bad in (int(np.flatnonzero(mask == 0)[0]), NUM_ACTIONS, -1):
        with pytest.raises(IllegalEnvActionError, match=r"illegal_action='lowest_legal'") as info:
            env.step(bad)
        assert f"(ids {legal})" in str(info.value) and str(bad) in str(info.value)
        assert np.array_equal(env.action_masks(), mask)
    obs, _, _, _, info = env.step(legal[0])  # the game goes on from where it was
    assert "illegal_action" not in info and env.decisions > 0


@pytest.mark.parametrize("compiled", [True, False])
def test_lowest_legal_replaces_an_illegal_action_and_flags_it(compiled):
    replaced = SingleSeatEnv(compiled=compiled, illegal_action="lowest_legal")
    refused = SingleSeatEnv(compiled=compiled)
    replaced.reset(seed=0)
    refused.reset(seed=0)
    mask = replaced.action_masks()
    illegal = next(a for a in range(NUM_ACTIONS) if not mask[a])
    got = replaced.step(illegal)
    want = refused.step(int(np.flatnonzero(mask)[0]))  # the same step with the lowest legal action
    assert got[4]["illegal_action"] is True and np.array_equal(got[0], want[0]) and got[1:4] == want[1:4]
    with pytest.raises(ValueError, match=r"illegal_action must be one of \['raise', 'lowest_legal'\], got 'skip'"):
        SingleSeatEnv(illegal_action="skip")


def test_vec_env_mask_cache_matches_the_envs():
    venv = make_vec_env({"episode": "hand"}, 3, "dummy", seed=5, pool_kwargs={"mix": {"random": 1.0}})
    venv.reset()
    inner = venv.venv
    assert isinstance(inner, ActionMaskVecEnv)
    rng = np.random.default_rng(0)
    for _ in range(60):
        masks = np.stack(venv.env_method("action_masks"))
        direct = np.stack([e.action_masks() for e in inner.venv.envs])
        assert np.array_equal(masks, direct) and masks.any(axis=1).all()
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    venv.close()


def test_main_reports_config_errors(tmp_path, capsys):
    assert main(["--config", str(tmp_path / "nope.yaml")]) == 2
    assert "config file not found" in capsys.readouterr().err
    path = tmp_path / "c.yaml"
    path.write_text("opponents:\n  mix: {heuristc: 1}\n")
    assert main(["--config", str(path), "--run-dir", str(tmp_path / "run")]) == 2
    assert "opponents.mix" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path / "nothing-here")]) == 2


# ---------------------------------------------------------------------------- checkpoints


def _params(trainer):
    return {k: v.clone() for k, v in trainer.model.policy.state_dict().items()}


def test_resume_continues_exactly(tmp_path):
    cfg = tiny_config()
    whole = train(cfg, str(tmp_path / "whole"), quiet=True)
    whole.close()
    part = train(cfg, str(tmp_path / "part"), quiet=True, stop_after_segments=2)
    assert part.model.num_timesteps == 256
    part.close()
    resumed = train(cfg, str(tmp_path / "part"), resume=True, quiet=True)
    resumed.close()
    assert resumed.model.num_timesteps == whole.model.num_timesteps == 512
    a, b = _params(whole), _params(resumed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    oa = whole.model.policy.optimizer.state_dict()["state"]
    ob = resumed.model.policy.optimizer.state_dict()["state"]
    assert all(torch.equal(oa[k]["exp_avg"], ob[k]["exp_avg"]) for k in oa)
    assert [n for n, _ in whole.snapshots] == [n for n, _ in resumed.snapshots] == ["step_384", "step_512"]
    # and the run really moved: the weights differ from a fresh model's
    fresh = Trainer(cfg, str(tmp_path / "fresh"))
    assert not all(torch.equal(a[k], fresh.model.policy.state_dict()[k]) for k in a)
    fresh.close()


def test_checkpoint_contents_and_atomic_files(tmp_path):
    cfg = tiny_config(train={"total_timesteps": 256})
    trainer = train(cfg, str(tmp_path), quiet=True)
    trainer.close()
    latest = tmp_path / "checkpoints" / "latest.zip"
    with zipfile.ZipFile(latest) as archive:
        names = set(archive.namelist())
        meta = json.loads(archive.read("sm_policy.json"))
    assert {"policy.pth", "policy.optimizer.pth", "sm_training_state.pt", "sm_policy.json"} <= names
    assert meta["observation_size"] == OBSERVATION_SIZE and meta["action_count"] == NUM_ACTIONS
    assert not [f for f in os.listdir(tmp_path / "checkpoints") if f.startswith(".tmp")]
    from training.sb3.checkpoint import read_training_state

    state = read_training_state(str(latest))
    assert state["num_timesteps"] == 256 and set(state["rng"]) == {"python", "numpy", "torch"}
    assert len(state["snapshots"]) == 2


# ---------------------------------------------------------------------------- the policy agent


def test_ppo_agent_loads_and_plays_legal_actions(tmp_path):
    cfg = tiny_config(train={"total_timesteps": 128})
    trainer = train(cfg, str(tmp_path), quiet=True)
    final = trainer.save_final()
    trainer.close()
    for path in (final, str(tmp_path / "final_policy.pt"), str(tmp_path / "checkpoints" / "latest.zip")):
        agent = make_agent(f"ppo:{path}", seed=3)
        assert agent.needs_observation
        others = [make_agent("heuristic", 0), make_agent("random", 1)]
        for seed in range(3):
            game = Game(seed=seed, max_hands=2)
            while not game.is_over:
                seat = game.current
                view = player_view(game, seat)
                action = act(agent, view) if seat == 0 else act(others[seat - 1], view)
                assert game.legal_mask() >> action & 1
                game.apply(action)
    # the numpy forward pass equals SB3's own (argmax of the masked logits)
    agent = PPOAgent(final)
    game = Game(seed=9)
    view = player_view(game, game.current)
    obs = encode(view)
    sb3_action, _ = trainer.model.predict(obs, deterministic=True, action_masks=legal_mask_array(view.legal))
    assert agent.act(view) == int(sb3_action)


def test_ppo_agent_rejects_wrong_files(tmp_path):
    with pytest.raises(PolicyLoadError, match="not found"):
        PPOAgent(tmp_path / "missing.zip")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(PolicyLoadError):
        PPOAgent(junk)
    arrays = random_snapshot()
    arrays["mlp_extractor.policy_net.0.weight"] = arrays["mlp_extractor.policy_net.0.weight"][:, :100]
    with pytest.raises(PolicyLoadError, match="observation"):
        NumpyPolicy.from_state_dict(arrays)
    arrays = random_snapshot()
    arrays["action_net.weight"] = arrays["action_net.weight"][:50]
    arrays["action_net.bias"] = arrays["action_net.bias"][:50]
    with pytest.raises(PolicyLoadError, match="50 actions"):
        NumpyPolicy.from_state_dict(arrays)
    # a torch file holding anything but plain tensors is refused (weights_only)
    evil = tmp_path / "evil.pt"
    torch.save({"format": "sergeant-major-policy/1", "state_dict": object()}, evil)
    with pytest.raises(PolicyLoadError):
        PPOAgent(evil)
    good = tmp_path / "good.pt"
    export_policy(NumpyPolicy.from_state_dict(random_snapshot()), str(good))
    assert PPOAgent(good).policy.net_arch == [16]


# ---------------------------------------------------------------------------- learning


def _mean_balance(policy, episodes=400):
    env = SingleSeatEnv(opponents={"random": 1.0})
    total = 0.0
    for i in range(episodes):
        obs, _ = env.reset(seed=100_000 + i)
        done = False
        while not done:
            action = policy.choose(obs, env.game.legal_mask(), deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
    return total / episodes


def test_short_training_beats_the_untrained_policy(tmp_path):
    """A short PPO run (32,768 steps) on single hands against random opponents must raise the learner's mean
    balance (fixed seeds: deterministic; -0.035 before, +0.735 after, where half the steps reach +0.470)."""
    cfg = config_from_dict(
        {
            "seed": 2,
            "env": {"reward_scale": 0.25, "dense_reward": True},
            "opponents": {"mix": {"random": 1.0}},
            "ppo": {"n_steps": 64, "batch_size": 256, "net_arch": [64], "learning_rate": 3e-3},
            "train": {
                "total_timesteps": 32768,
                "n_envs": 16,
                "segment_steps": 8192,
                "progress_bar": False,
                "checkpoint_every": 10**9,
                "keep_checkpoints": 0,
            },
            "eval": {"final_deals": 0},
        }
    )
    trainer = Trainer(cfg, str(tmp_path))
    before = _mean_balance(numpy_policy(trainer.model, cfg))
    while trainer.model.num_timesteps < cfg.train.total_timesteps:
        trainer.train_segment()
    after = _mean_balance(numpy_policy(trainer.model, cfg))
    trainer.close()
    print(f"mean balance before {before:+.3f} after {after:+.3f}")
    assert after - before > 0.3, (before, after)
    assert after > 0.4, (before, after)  # a random learner averages about 0 here


def test_snapshots_join_the_pool(tmp_path):
    cfg = tiny_config(train={"total_timesteps": 256})
    trainer = train(cfg, str(tmp_path), quiet=True)
    names = trainer.venv.env_method("snapshot_names")
    assert all(n == ["step_128", "step_256"] for n in names)
    arrays = policy_arrays(trainer.model)
    assert set(arrays) == {
        "mlp_extractor.policy_net.0.weight",
        "mlp_extractor.policy_net.0.bias",
        "action_net.weight",
        "action_net.bias",
    }
    trainer.close()


def test_command_line_run_resume_and_evaluate(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "name: tiny\n"
        "env: {exchange_start: 0.5}\n"
        "opponents: {mix: {heuristic: 1, snapshots: 1}, snapshot_every: 128}\n"
        "ppo: {n_steps: 64, batch_size: 64, net_arch: [16]}\n"
        "train: {total_timesteps: 128, n_envs: 2, segment_steps: 128, checkpoint_every: 128}\n"
        "eval: {every: 128, deals: 2, final_deals: 3, opponents: [heuristic]}\n"
    )
    run = tmp_path / "run"
    assert main(["--config", str(config), "--run-dir", str(run), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "  final_model.zip " in out and "heuristic  dealer" in out
    for name in ("config.yaml", "final_model.zip", "final_policy.pt", "final_eval.json", "eval.jsonl"):
        assert (run / name).is_file(), name
    # the same folder again is refused; --resume continues it (here: longer)
    assert main(["--config", str(config), "--run-dir", str(run), "--quiet"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["--resume", str(run), "--quiet", "--set", "train.total_timesteps=256"]) == 0
    from training.sb3.checkpoint import read_training_state

    assert read_training_state(str(run / "checkpoints" / "latest.zip"))["num_timesteps"] == 256
    capsys.readouterr()
    eval_config = tmp_path / "eval.yaml"
    eval_config.write_text("eval: {final_deals: 3, opponents: [random]}\n")
    assert main(["--evaluate", str(run / "final_model.zip"), "--eval-config", str(eval_config)]) == 0
    assert "random     all" in capsys.readouterr().out
    assert main(["--evaluate", str(tmp_path / "nope.zip"), "--eval-config", str(eval_config)]) == 2
    assert "no such policy file, and not an agent spec" in capsys.readouterr().err
    # a .pt policy file and any agent spec are evaluated the same way
    for policy in (str(run / "final_policy.pt"), f"ppo:{run / 'final_policy.pt'}", "heuristic"):
        assert main(["--evaluate", policy, "--eval-config", str(eval_config)]) == 0, policy
        assert "random     all" in capsys.readouterr().out
    assert main(["--evaluate", "pimc:samples=0", "--eval-config", str(eval_config)]) == 2
    assert "samples" in capsys.readouterr().err


def test_eval_log_has_no_duplicate_after_a_kill_between_evaluation_and_checkpoint(tmp_path):
    cfg = tiny_config(eval={"every": 128, "deals": 2}, train={"checkpoint_every": 10**6, "total_timesteps": 384})
    trainer = train(cfg, str(tmp_path), quiet=True, stop_after_segments=1)  # evaluated at 128, checkpoint at 128
    trainer.close()
    log = tmp_path / "eval.jsonl"
    # the run goes on, evaluates at 256 and is killed before its next checkpoint
    line = log.read_text().splitlines()[0].replace('"num_timesteps": 128', '"num_timesteps": 256')
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    resumed = train(cfg, str(tmp_path), resume=True, quiet=True)
    resumed.close()
    steps = [json.loads(text)["num_timesteps"] for text in log.read_text().splitlines()]
    assert steps == [128, 256, 384]
    assert [entry["num_timesteps"] for entry in resumed.eval_history] == steps
    walls = [json.loads(text)["wall"] for text in log.read_text().splitlines()]  # the curve by training time
    assert 0 < walls[0] < walls[1] < walls[2] <= resumed.wall


def test_a_74_action_rule_set_trains_with_a_warm_start_and_snapshots(tmp_path):
    """docs/rules.md 10.8: the env, the warm start, the snapshots and the exported policy take the rule set's
    sizes (791 observation entries, 74 actions for dealer-assigns); the policy records its rules."""
    from agents.players.ppo_agent import PolicyLoadError, load_numpy_policy
    from sm_env.core.rules import RuleSet

    cfg = tiny_config(
        env={"rules": "dealer-assigns"},
        pretrain={"teacher": "heuristic", "decisions": 128, "epochs": 1, "batch_size": 64},
    )
    trainer = train(cfg, str(tmp_path / "run"), quiet=True)
    assert trainer.model.action_space.n == 74 and trainer.model.observation_space.shape == (791,)
    assert trainer.snapshots  # snapshots of the 74-action learner joined the pool
    trainer.save_final()
    final = str(tmp_path / "run" / "final_policy.pt")
    policy, meta = load_numpy_policy(final)
    assert meta["rules_name"] == "dealer-assigns" and (policy.observation_size, policy.num_actions) == (791, 74)
    agent = PPOAgent(final)
    game = Game("dealer-assigns", seed=3, max_hands=1)
    while (seat := game.current_player) is not None:
        view = player_view(game, seat)
        action = agent.act(view)
        assert game.legal_mask() >> action & 1
        game.apply(action)
    with pytest.raises(PolicyLoadError, match="cannot play the rule set 'standard'.*it plays: dealer-assigns"):
        agent.check_rules(RuleSet.from_any("standard"))
