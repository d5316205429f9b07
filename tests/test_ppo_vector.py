"""The batched self-play PPO trainer (training/vector/ppo.py) and the engine features it uses."""

from __future__ import annotations

import json
import os
import re
import signal

import numpy as np
import pytest
import torch
import yaml
from helpers import TINY_PPO

from agents import TRAINED_POLICY, make_agent
from agents.players.ppo_agent import load_numpy_policy
from sm_env.compiled.batch import FULL_STATE_SIZE, VectorGame
from sm_env.core.cards import from_mask
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.observation import OBSERVATION_SIZE
from training.cli import main as train_main
from training.common.errors import ConfigError
from training.vector.config import load_selfplay_config, selfplay_config_from_dict
from training.vector.ppo import (
    CheckpointError,
    VectorPPO,
    check_saved_settings,
    main,
    masked_logits,
    per_seat_gae,
    step_rewards,
)

TINY = TINY_PPO


def tiny(*extra: str) -> object:
    return load_selfplay_config(None, [*TINY, *extra])


# ---------------------------------------------------------------------------- engine additions


def test_full_state_is_the_hidden_cards_relative_to_the_seat():
    g = VectorGame(6, seed=3, episode="hand")
    g.reset()
    rng = np.random.default_rng(0)
    for _ in range(25):
        fulls = [g.full_state(seats=np.full(6, seat)) for seat in range(3)]
        for i in range(6):
            game = g.game(i)
            for seat, full in enumerate(fulls):
                assert full.shape == (6, FULL_STATE_SIZE)
                left, right = game.hands[(seat + 1) % 3], game.hands[(seat + 2) % 3]
                assert list(np.flatnonzero(full[i, :52])) == from_mask(left)
                assert list(np.flatnonzero(full[i, 52:104])) == from_mask(right)
                assert list(np.flatnonzero(full[i, 104:])) == from_mask(game.kitty_mask)
        mask = g.legal_mask()
        g.step(np.array([rng.choice(np.flatnonzero(row)) for row in mask]))
    with pytest.raises(ValueError, match="seats must be 0, 1, 2"):
        g.full_state(seats=np.full(6, 3))


def test_get_state_then_set_state_continues_the_same_games():
    a = VectorGame(4, seed=11, episode="game", max_hands=3)
    a.reset()

    def play(g: VectorGame, steps: int, seed: int) -> list[np.ndarray]:
        r = np.random.default_rng(seed)
        seen = []
        for _ in range(steps):
            mask = g.legal_mask()
            rewards, done = g.step(np.array([r.choice(np.flatnonzero(row)) for row in mask]))
            seen += [g.observe().copy(), rewards, done]
        return seen

    play(a, 40, 5)
    saved = a.get_state()
    expected = play(a, 150, 6)
    b = VectorGame(4, seed=999, episode="game", max_hands=3)
    b.reset()
    b.set_state(saved)
    assert all(np.array_equal(x, y) for x, y in zip(play(b, 150, 6), expected, strict=True))
    assert b.record(0) == a.record(0)
    with pytest.raises(ValueError, match="this batch of 5 games"):
        VectorGame(5, episode="game", max_hands=3).set_state(saved)
    other = VectorGame(4, episode="hand")
    with pytest.raises(ValueError, match="saved under other rules, episode or max_hands"):
        other.set_state(saved)


# ---------------------------------------------------------------------------- advantages


def test_per_seat_gae_on_a_hand_built_trajectory():
    """Two games, four engine steps (entry t * 2 + i). Game 0: seat A acts at steps 0 and 2 (its episode
    ends after step 2), seat B at steps 1 and 3 (still open: bootstrapped). Game 1: a learner at step 0
    (episode ends there), an opponent at steps 1 and 3, a learner at step 2 (open)."""
    g, lam = 0.9, 0.8
    rewards = np.array([0.0, 2.0, 0.0, 0.0, -1.0, 0.0, 0.5, 0.0], dtype=np.float32)
    values = np.array([0.3, 0.1, -0.2, 0.0, 0.4, 0.6, 0.2, 0.0], dtype=np.float32)
    dones = np.array([0, 1, 0, 0, 1, 0, 0, 0], dtype=bool)
    next_index = np.array([4, -1, 6, -1, -1, -1, -1, -1])
    tails = np.array([0, 0, 0, 0, 0, 0.7, -0.3, 0], dtype=np.float32)
    adv, ret = per_seat_gae(rewards, values, dones, next_index, tails, g, lam, block=2)
    a4 = -1.0 - 0.4
    a0 = 0.0 + g * 0.4 - 0.3 + g * lam * a4
    a6 = 0.5 + g * -0.3 - 0.2
    a2 = 0.0 + g * 0.2 + 0.2 + g * lam * a6
    a1 = 2.0 - 0.1
    a5 = 0.0 + g * 0.7 - 0.6
    expected = {0: a0, 1: a1, 2: a2, 4: a4, 5: a5, 6: a6}
    for j, value in expected.items():
        assert adv[j] == pytest.approx(value, abs=1e-6), j
        assert ret[j] == pytest.approx(value + values[j], abs=1e-6)


def test_rollout_links_each_seat_to_its_own_next_decision_and_pays_hand_balances(tmp_path):
    trainer = VectorPPO(tiny("ppo.n_steps=70", "env.num_games=4"), str(tmp_path))
    trainer.collect()
    n = trainer.num_games
    learner = np.flatnonzero(trainer.learner)
    assert len(learner) == 70 * n  # pure self-play: every decision is the learner's
    for j in learner:
        k = trainer.next_index[j]
        if k >= 0:
            assert k % n == j % n and k > j and trainer.seats[k] == trainer.seats[j] and not trainer.dones[j]
    # one-hand episodes: a reward only where a hand ended, and the three balances of a hand sum to 0
    paid = np.flatnonzero(trainer.rewards != 0)
    assert set(paid) <= set(np.flatnonzero(trainer.dones))
    ends = np.flatnonzero(trainer.dones)
    assert len(ends) >= 3 * n  # every game finished its first hand within 70 steps
    for i in range(n):
        mine = [j for j in ends if j % n == i][:3]
        assert sorted(trainer.seats[mine]) == [0, 1, 2]
        assert sum(trainer.rewards[mine]) == pytest.approx(0.0)


def test_win_reward_pays_each_won_games_result_on_top_of_the_balances():
    env = load_selfplay_config(None, ["env.episode=game", "env.max_hands=3", "env.win_reward=2"]).env
    g = VectorGame(16, seed=4, episode="game", max_hands=3)
    g.reset()
    rng = np.random.default_rng(1)
    won = truncated = 0
    while won < 3 or truncated < 3:
        mask = g.legal_mask()
        rewards, done = g.step(np.array([rng.choice(np.flatnonzero(row)) for row in mask]))
        paid = step_rewards(g, rewards, done, env)
        extra = paid - rewards * env.reward_scale
        for slot in range(16):
            if not done[slot] or g.truncated[slot]:
                assert list(extra[slot]) == [0.0, 0.0, 0.0]  # no game ended won there: balances only
                truncated += bool(done[slot])
                continue
            won += 1
            winners = g.game(slot, finished=True).winners
            for seat in range(3):  # one winner: +2 and -1 each; two: +1 each and -2; all three: 0
                share = 2.0 / len(winners) if seat in winners else -2.0 / max(3 - len(winners), 1)
                assert extra[slot, seat] == pytest.approx(0.0 if len(winners) == 3 else share)
            assert sum(extra[slot]) == pytest.approx(0.0)


def test_a_setting_newer_than_a_saved_run_reads_as_its_default_on_resume():
    cfg = load_selfplay_config(None, ["env.episode=game"])
    saved = {"env": {"episode": "game"}}  # a run saved before env.win_reward existed
    check_saved_settings("old.pt", saved, cfg, (("env", "win_reward"),))  # 0, the default: the same run
    with pytest.raises(
        CheckpointError, match="old.pt: the run was trained with env.win_reward 0.0, the config says 1.0"
    ):
        check_saved_settings(
            "old.pt",
            saved,
            load_selfplay_config(None, ["env.episode=game", "env.win_reward=1"]),
            (("env", "win_reward"),),
        )


def test_win_reward_needs_game_episodes():
    with pytest.raises(ConfigError, match="env.win_reward: rewards winning the game, but env.episode 'hand'"):
        load_selfplay_config(None, ["env.win_reward=1"])
    with pytest.raises(ConfigError, match="env.win_reward"):
        load_selfplay_config(None, ["env.episode=game", "env.win_reward=-1"])


# ---------------------------------------------------------------------------- runs


def test_tiny_run_end_to_end_exports_a_legal_policy(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    mix = {"self": 0.4, "random": 0.2, "snapshots": 0.2, "trained": 0.2}  # every kind of player
    data = {"opponents": {"mix": mix, "snapshot_every": 64}}
    data["ppo"] = {"critic": "full"}
    config.write_text(yaml.safe_dump(data))
    run = tmp_path / "run"
    sets = [*TINY, "train.total_timesteps=200", "eval.final_deals=2", "eval.opponents=[random]"]
    sets += ["eval.every=100", "eval.deals=2"]
    assert main(["--config", str(config), "--run-dir", str(run), *sum((["--set", s] for s in sets), [])]) == 0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    keys = {"wall", "sps", "policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"}
    assert len(rows) >= 2 and keys <= set(rows[-1]) and rows[-1]["global_step"] >= 200
    assert 0 < rows[0]["wall"] < rows[-1]["wall"]  # the training time so far
    curve = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
    assert len(curve) >= 2 and all(0 < point["wall"] <= rows[-1]["wall"] for point in curve)
    assert json.loads((run / "final_eval.json").read_text())["results"]["random"]["all"]["hands"] > 0
    assert "network (forward/backward)" in capsys.readouterr().out
    agent = make_agent(f"ppo:{run / 'final_policy.pt'}", seed=0)
    others = [make_agent("random", seed=s) for s in (1, 2)]
    for seed in range(3):
        game = Game(seed=seed, max_hands=1)
        while (seat := game.current_player) is not None:
            view = player_view(game, seat)
            action = agent.act(view) if seat == 0 else others[seat - 1].act(view)
            assert action in from_mask(view.legal)
            game.apply(action)


def test_resume_gives_the_same_weights_as_an_uninterrupted_run(tmp_path):
    extra = ["opponents.mix={self: 0.5, random: 0.25, snapshots: 0.25}", "opponents.snapshot_every=50"]
    whole = VectorPPO(tiny(*extra, "train.total_timesteps=300", "ppo.critic=full"), str(tmp_path / "a"))
    whole.train()
    first = VectorPPO(tiny(*extra, "train.total_timesteps=1", "ppo.critic=full"), str(tmp_path / "b"))
    first.train()
    assert 0 < first.global_step < whole.global_step
    second = VectorPPO(tiny(*extra, "train.total_timesteps=300", "ppo.critic=full"), str(tmp_path / "b"), resume=True)
    second.train()
    assert second.global_step == whole.global_step and second.snapshots_added == whole.snapshots_added >= 1
    for (name, a), b in zip(whole.net.state_dict().items(), second.net.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert np.array_equal(whole.games.get_state()["st"], second.games.get_state()["st"])
    # the critic sees the hidden cards, the actor only the observation
    assert whole.net.actor[0].in_features == OBSERVATION_SIZE
    assert whole.net.critic[0].in_features == OBSERVATION_SIZE + FULL_STATE_SIZE


def test_init_loads_the_shipped_actor(tmp_path):
    trainer = VectorPPO(tiny("ppo.init=trained", "ppo.net_arch=[1024, 512]", "ppo.activation=relu"), str(tmp_path))
    policy, _ = load_numpy_policy(TRAINED_POLICY)
    obs = trainer.games.observe()
    with torch.no_grad():
        logits = trainer.net.actor(torch.from_numpy(obs)).numpy()
    assert np.allclose(logits, policy.logits(obs), atol=1e-4)


def test_critic_warmup_trains_only_the_critic(tmp_path):
    trainer = VectorPPO(tiny("ppo.critic_warmup=1"), str(tmp_path))
    before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    trainer.collect()
    trainer.update()
    after = trainer.net.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in after if k.startswith("actor."))
    assert not all(torch.equal(before[k], after[k]) for k in after if k.startswith("critic."))
    trainer.rollouts = 1  # warm-up over: the actor learns
    trainer.collect()
    trainer.update()
    assert not all(torch.equal(before[k], trainer.net.state_dict()[k]) for k in after if k.startswith("actor."))


def _actor_changed(trainer: VectorPPO, before: dict[str, torch.Tensor]) -> bool:
    after = trainer.net.state_dict()
    return not all(torch.equal(before[k], after[k]) for k in after if k.startswith("actor."))


def test_train_decisions_limits_the_policy_loss_to_those_phases(tmp_path):
    """Single hands without start balances have no exchange: trained on the exchange alone, the actor cannot
    move (no policy loss, no entropy bonus), while the critic learns; trained on the play, it moves."""
    trainer = VectorPPO(tiny("ppo.train_decisions=[exchange]"), str(tmp_path / "a"))
    before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    trainer.collect()
    stats = trainer.update()
    assert stats["policy_loss"] == 0.0 and stats["entropy"] == 0.0
    assert not _actor_changed(trainer, before)
    assert not all(torch.equal(before[k], trainer.net.state_dict()[k]) for k in before if k.startswith("critic."))
    trainer = VectorPPO(tiny("ppo.train_decisions=[play]"), str(tmp_path / "b"))
    before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    trainer.collect()
    trainer.update()
    assert _actor_changed(trainer, before)


def test_the_anchor_pulls_a_moved_actor_back_to_the_start_policy(tmp_path):
    big = ("ppo.init=trained", "ppo.net_arch=[1024, 512]", "ppo.activation=relu", "ppo.anchor_coef=1.0")
    trainer = VectorPPO(tiny(*big, "ppo.train_decisions=[exchange]"), str(tmp_path))
    obs = torch.from_numpy(trainer.games.observe())
    mask = torch.from_numpy(trainer.games.legal_mask()).bool()

    def kl_to_start() -> float:
        with torch.no_grad():
            start = torch.log_softmax(masked_logits(trainer.anchor(obs), mask), dim=1)
            now = torch.log_softmax(masked_logits(trainer.net.actor(obs), mask), dim=1)
            return float((start.exp() * (start - now)).sum(1).mean())

    assert kl_to_start() == 0.0  # the anchor is the start policy
    with torch.no_grad():  # move the actor's output layer away from it
        trainer.net.actor[-1].bias.add_(
            3.0 * torch.randn(trainer.num_actions, generator=torch.Generator().manual_seed(0))
        )
    moved = kl_to_start()
    trainer.collect()
    first = trainer.update()["anchor_kl"]
    for _ in range(3):  # no policy loss (no exchange in these hands): the anchor alone steers the actor
        trainer.collect()
        trainer.update()
    assert moved > 0.05 and first > 0.01 and kl_to_start() < moved / 2


def test_an_anchor_needs_an_init_and_train_decisions_names_phases():
    with pytest.raises(ConfigError, match="ppo.anchor_coef: an anchor needs ppo.init"):
        load_selfplay_config(None, ["ppo.anchor_coef=0.5"])
    with pytest.raises(ConfigError, match=r"ppo.train_decisions\[1\]: expected one of 'exchange', .*got 'bid'"):
        load_selfplay_config(None, ["ppo.train_decisions=[play, bid]"])
    with pytest.raises(ConfigError, match="ppo.train_decisions: must name at least one of exchange"):
        load_selfplay_config(None, ["ppo.train_decisions=[]"])


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["ppo.batch_size=100000"], "ppo.batch_size: must be at most ppo.n_steps \\* env.num_games"),
        (["opponents.mix={heuristic: 1}"], "unknown player 'heuristic'; allowed: 'self'"),
        (["opponents.mix={ppo:nowhere.pt: 1}"], "policy file not found: nowhere.pt"),
        (["ppo.critic=oracle"], "ppo.critic: expected one of 'observation', 'full'"),
        (["ppo.init=missing.pt"], "ppo.init: policy file not found: missing.pt"),
        (["ppo.n_step=3"], "unknown key 'ppo.n_step' \\(did you mean 'n_steps'\\?\\)"),
        (
            ["env.rules={target_score: 1099511627776}"],
            "env.rules: the batched trainer does not run these rules; .*target",
        ),
    ],
)
def test_config_errors_name_the_key_and_what_is_allowed(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_selfplay_config(None, overrides)


def test_network_mismatches_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"the policy is an MLP \[1024, 512\] relu; .* set them to the policy's"):
        VectorPPO(tiny("ppo.init=trained"), str(tmp_path / "a"))
    VectorPPO(tiny("train.total_timesteps=1"), str(tmp_path / "b")).train()
    with pytest.raises(CheckpointError, match=r"trained with ppo.net_arch \[16\], the config says \[32\]"):
        VectorPPO(tiny("ppo.net_arch=[32]"), str(tmp_path / "b"), resume=True)
    assert main(["--resume", str(tmp_path / "nothing")]) == 2
    assert train_main(["--backend", "vector", "--config", "no_such.yaml"]) == 2  # sergeant-major train --backend
    assert selfplay_config_from_dict({}).ppo.net_arch == [512, 256]
    assert os.path.isfile(tmp_path / "b" / "checkpoints" / "latest.pt")


def test_the_progress_bar_counts_the_learner_decisions_as_they_are_made_with_an_eta(tmp_path, capsys, monkeypatch):
    """The bar (stderr) is advanced at every engine step of a rollout, not once it is over: at each update it
    already counts the rollout's learner decisions; it shows the total and an ETA, the metrics lines above it."""
    seen = []
    update = VectorPPO.update

    def counted(self):
        seen.append((self.bar.n, self.global_step + int(self.learner.sum())))
        return update(self)

    monkeypatch.setattr(VectorPPO, "update", counted)
    trainer = VectorPPO(tiny("train.progress=true", "train.total_timesteps=200"), str(tmp_path))
    trainer.train()
    assert len(seen) >= 2 and all(shown == counted for shown, counted in seen), seen
    err = capsys.readouterr().err
    assert re.search(r"selfplay: +\d+%\|.*\| \d+/200 \[\d\d:\d\d<\d\d:\d\d", err), err
    assert "step " in err and "sps " in err  # the line of metrics per rollout
    monkeypatch.setattr(VectorPPO, "update", update)
    VectorPPO(tiny("train.progress=true", "train.total_timesteps=200"), str(tmp_path / "q"), quiet=True).train()
    assert capsys.readouterr().err == ""


def test_ctrl_c_writes_a_checkpoint_and_resume_finishes_the_run(tmp_path, capsys, monkeypatch):
    """The newcomer's case: checkpoint_every far away, Ctrl-C after a rollout: a checkpoint is written there,
    the message names the command typed, and that command's --resume continues to the end."""
    update = VectorPPO.update

    def interrupted(self):
        stats = update(self)
        signal.raise_signal(signal.SIGINT)
        return stats

    monkeypatch.setattr(VectorPPO, "update", interrupted)
    run = tmp_path / "run"
    sets = sum((["--set", s] for s in [*TINY, "train.total_timesteps=300", "train.checkpoint_every=1000000"]), [])
    assert (
        train_main(["--backend", "vector", "--config", str(_empty_config(tmp_path)), "--run-dir", str(run), *sets])
        == 130
    )
    err = capsys.readouterr().err
    assert f"the checkpoint is {run}/checkpoints/latest.pt" in err
    assert f"continue with: sergeant-major train --backend vector --resume {run}" in err
    assert (run / "checkpoints" / "latest.pt").is_file()
    monkeypatch.setattr(VectorPPO, "update", update)
    assert train_main(["--resume", str(run), "--quiet"]) == 0  # the backend is found in the run folder
    out = capsys.readouterr().out
    assert "resuming: " in out and "  final_policy.pt " in out and (run / "final_policy.pt").is_file()
    assert json.loads((run / "summary.json").read_text())["progress"] >= 300
    assert train_main(["--resume", str(run)]) == 0
    assert "is complete" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # argparse's usage error (exit status 2)
        train_main(["--backend", "sb3", "--resume", str(run)])
    assert "that run was trained by --backend vector, not sb3" in capsys.readouterr().err


def _empty_config(tmp_path) -> object:
    path = tmp_path / "empty.yaml"
    path.write_text("name: tiny\n")
    return path


@pytest.mark.parametrize(
    "tamper",
    [
        lambda state: state["engine"]["st"].__setitem__((0, 0), 10**6),  # a value the engine cannot hold
        lambda state: state["engine"].pop("cm"),  # a missing array
        lambda state: state.pop("counters"),  # a missing entry
        lambda state: state.__setitem__("seat_kind", "three"),  # a wrong type
    ],
)
def test_resume_of_a_tampered_checkpoint_is_one_line_and_leaves_it_as_it_was(tmp_path, capsys, tamper):
    run = tmp_path / "run"
    sets = sum((["--set", s] for s in [*TINY, "train.total_timesteps=1", "eval.final_deals=0"]), [])
    assert (
        train_main(["--backend", "vector", "--config", str(_empty_config(tmp_path)), "--run-dir", str(run), *sets]) == 0
    )
    latest = run / "checkpoints" / "latest.pt"
    state = torch.load(latest, weights_only=True)
    tamper(state)
    torch.save(state, latest)
    (run / "summary.json").unlink()  # not complete: the resume must read the checkpoint
    saved = latest.read_bytes()
    capsys.readouterr()
    assert train_main(["--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("sergeant-major train --backend vector: error: ") and "latest.pt" in err, err
    assert latest.read_bytes() == saved


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    """A tiny run stopped after its first rollout (128 learner decisions), for tests that damage a copy."""
    root = tmp_path_factory.mktemp("saved")
    (root / "empty.yaml").write_text("name: tiny\n")
    sets = sum((["--set", s] for s in [*TINY, "train.total_timesteps=1"]), [])
    assert (
        train_main(["--backend", "vector", "--config", str(root / "empty.yaml"), "--run-dir", str(root / "run")] + sets)
        == 0
    )
    return root / "run"


def _set(key, index, value):
    return lambda state: state[key].__setitem__(index, value)


@pytest.mark.parametrize(
    ("tamper", "words"),
    [
        (_set("seat_kind", (0, 1), 99), r"seat_kind holds values outside \[0, 2\)"),
        (_set("seat_kind", (3, 0), -1), r"seat_kind holds values outside"),
        (
            lambda s: s.__setitem__("seat_kind", s["seat_kind"][:5]),
            r"seat_kind is int64 \[5, 3\]; the run has \[8, 3\]",
        ),
        (lambda s: s.__setitem__("seat_kind", s["seat_kind"].double()), r"seat_kind is float64 \[8, 3\]"),
        # an earlier release's episode_return (each seat's return so far) is still checked
        (
            lambda s: s.__setitem__("episode_return", torch.zeros(8, 2, dtype=torch.float64)),
            r"episode_return is float64 \[8, 2\]",
        ),
        (
            lambda s: s.__setitem__("episode_return", torch.full((8, 3), float("nan"))),
            "episode_return holds NaN or infinite",
        ),
        (lambda s: s.__setitem__("random_state", s["random_state"][:3]), r"random_state is int64 \[3\]"),
        (lambda s: next(iter(s["net"].values())).__setitem__(0, float("nan")), r"net\.\S+ holds NaN or infinite"),
        (lambda s: s["counters"].__setitem__("global_step", -5), r"counters.global_step is -5, not a whole number"),
        (lambda s: s["counters"].__setitem__("wall", float("inf")), r"counters.wall is inf, not a number of seconds"),
        (lambda s: s["last"].__setitem__("checkpoint", "soon"), r"last.checkpoint is 'soon', not a whole number"),
    ],
)
def test_every_field_of_a_checkpoint_is_checked_on_resume(saved_run, tmp_path, capsys, tamper, words):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    latest = run / "checkpoints" / "latest.pt"
    state = torch.load(latest, weights_only=True)
    tamper(state)
    torch.save(state, latest)
    capsys.readouterr()
    assert train_main(["--resume", str(run), "--quiet", "--set", "train.total_timesteps=400"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"{latest}: the checkpoint is damaged (" in err and re.search(words, err), err


def test_the_checkpoint_is_the_one_format_and_an_older_release_s_still_resumes(saved_run, tmp_path, capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    latest = run / "checkpoints" / "latest.pt"
    state = torch.load(latest, weights_only=True)
    assert (state["format"], state["trainer"]) == ("sergeant-major-checkpoint/1", "vector-ppo")
    del state["trainer"]
    state["format"] = "sergeant-major-vector-ppo/1"  # as the release before the one format wrote it
    state["episode_return"] = torch.zeros((8, 3), dtype=torch.float64)  # a field of the releases before
    torch.save(state, latest)
    assert train_main(["--resume", str(run), "--quiet", "--set", "train.total_timesteps=200"]) == 0
    assert torch.load(latest, weights_only=True)["trainer"] == "vector-ppo"
    for fmt, trainer in [("sergeant-major-checkpoint/1", "dmc"), ("sergeant-major-vector-dmc/1", None)]:
        state = torch.load(latest, weights_only=True)
        state["format"], state["trainer"] = fmt, trainer
        torch.save(state, latest)
        (run / "summary.json").unlink(missing_ok=True)
        capsys.readouterr()
        assert train_main(["--resume", str(run), "--quiet", "--set", "train.total_timesteps=400"]) == 2
        err = capsys.readouterr().err
        assert f"{latest}: the checkpoint is the 'dmc' trainer's, not the 'vector-ppo' trainer's" in err, err
