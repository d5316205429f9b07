"""Runs that tell the truth: a time budget (``max_hours``) that stops a run as its length does and aims the ETA, a
first short evaluation early, TensorBoard scalars from the vector PPO, DMC and play-out runs, and the learner's
balance per role in place of a mean return that zero-sum self-play holds at 0."""

from __future__ import annotations

import itertools
import json
import os

import numpy as np
import pytest
import torch
from helpers import TINY_DMC, TINY_PPO

from sm_env.compiled.batch import VectorGame
from training.cli import main as train_main
from training.common import budget
from training.common.scalars import metrics_scalars
from training.distill.config_playouts import load_run_config
from training.vector.config import load_dmc_config, load_selfplay_config
from training.vector.ppo import BatchedRun, RoleBalances, VectorPPO

PPO_TINY = [*TINY_PPO, "opponents.mix={random: 1.0}"]  # one learner seat a game: 128 steps hold ~43 decisions
DMC_TINY = TINY_DMC
MINUTE = 60.0


def _sets(*overrides: str) -> list[str]:
    return sum((["--set", s] for s in overrides), [])


@pytest.fixture
def minute_rollouts(monkeypatch):
    """The batched trainers' training clock, made to pass one minute in every rollout."""
    ticks = itertools.count()
    monkeypatch.setattr(BatchedRun, "clock", staticmethod(lambda: MINUTE * next(ticks)))  # read at a rollout's ends


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _scalars(folder) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the TensorBoard event files in ``folder``: tag -> [(step, value), ...]."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


# ---------------------------------------------------------------------------- the budget


def test_the_budget_aims_at_whichever_end_comes_first_and_says_when_a_run_is_complete():
    assert budget.budget_seconds(0) is None and budget.budget_seconds(3) == 10800
    assert not budget.spent(10**9, 0) and not budget.spent(10799, 3) and budget.spent(10800, 3)
    # 3,900 decisions a second of a 100M-decision run: 7.1 hours to its length, the budget ends it at 3 h
    assert budget.aim(0, 100_000_000, 0.0, 3900.0, 3) == 3900 * 10800
    assert budget.aim(0, 100_000_000, 0.0, 3900.0, 0) == 100_000_000  # no budget: the length
    assert budget.aim(0, 1_000_000, 0.0, 3900.0, 3) == 1_000_000  # the length comes first
    assert budget.aim(5000, 100_000_000, 20000.0, 3900.0, 3) == 5000  # spent: nothing more
    summary = {"progress": 500, "train_seconds": 10801.0}
    assert budget.reached(summary, 1000, 3, "decisions") == "3.00 hours of training, the budget is 3 h"
    assert budget.reached(summary, 1000, 0, "decisions") is None
    assert budget.reached(summary, 500, 0, "decisions") == "500 decisions, the config asks for 500"
    assert budget.reached({"progress": "x"}, 500, 3, "decisions") is None


@pytest.mark.parametrize(
    ("loader", "override", "words"),
    [
        (load_selfplay_config, "train.max_hours=-1", "train.max_hours: must be in [0, 168], got -1"),
        (load_dmc_config, "train.max_hours=1000", "train.max_hours: must be in [0, 168], got 1000"),
        (load_run_config, "max_hours=-2", "max_hours: must be in [0, 168], got -2"),
        (load_selfplay_config, "eval.first_deals=0", "eval.first_deals: must be > 0, got 0"),
        (load_dmc_config, "eval.first_minutes=-1", "eval.first_minutes: must be in [0, 10080], got -1"),
        (load_selfplay_config, "train.tensorboard=1", "train.tensorboard: expected true or false, got 1"),
    ],
)
def test_the_new_keys_are_checked_in_one_line(loader, override, words):
    from training.common.yaml_config import ConfigError

    with pytest.raises(ConfigError) as caught:
        loader(None, [override])
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("path", "loader"),
    [
        ("configs/selfplay_scratch.yaml", load_selfplay_config),
        ("configs/dmc.yaml", load_dmc_config),
        ("configs/scratch_playouts.yaml", load_run_config),
    ],
)
def test_the_from_scratch_recipes_run_3_hours_and_evaluate_within_3_minutes(path, loader):
    cfg = loader(path)
    hours = cfg.max_hours if hasattr(cfg, "max_hours") else cfg.train.max_hours
    assert hours == 3
    if hasattr(cfg.eval, "first_minutes"):  # the batched trainers' first evaluation
        assert 0 < cfg.eval.first_minutes <= 3 and cfg.eval.every > 0


def test_a_budget_stops_a_ppo_run_with_its_checkpoint_and_final_evaluation(tmp_path, capsys, minute_rollouts):
    """max_hours 0.05 (3 minutes) at a minute a rollout: the run stops after its third rollout, with the checkpoint,
    the final evaluation and exit status 0; it is then complete, and a bigger budget goes on from it."""
    run = tmp_path / "run"
    sets = [*PPO_TINY, "train.total_timesteps=100000", "train.max_hours=0.05", "eval.final_deals=2"]
    sets += ["eval.opponents=[random]", "eval.every=0"]
    assert train_main(["--backend", "vector", "--config", "configs/selfplay_scratch.yaml", "--run-dir", str(run)]
                      + _sets(*sets)) == 0  # fmt: skip
    rows = _lines(run / "metrics.jsonl")
    assert [row["wall"] for row in rows] == [60.0, 120.0, 180.0]
    state = torch.load(run / "checkpoints" / "latest.pt", weights_only=True)
    assert state["counters"]["global_step"] == rows[-1]["global_step"] and state["counters"]["wall"] == 180.0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["train_seconds"] == 180.0 and "random" in summary["final_eval"]
    assert (run / "final_eval.json").is_file() and (run / "final_policy.pt").is_file()
    out = capsys.readouterr().out
    assert "--set train.max_hours=H (now 0.05) or --set train.total_timesteps=N (now 100000)" in out
    assert train_main(["--resume", str(run)]) == 0
    assert "is complete (0.05 hours of training, the budget is 0.05 h): nothing to do" in capsys.readouterr().out
    assert train_main(["--resume", str(run), "--set", "train.max_hours=0.1"]) == 0  # the time spent counts
    assert [row["wall"] for row in _lines(run / "metrics.jsonl")] == [60.0 * k for k in range(1, 7)]


def test_the_progress_bar_aims_at_the_budget_s_end(tmp_path, monkeypatch, minute_rollouts):
    """The bar has no total before a rate is known, then the decisions at which the budget ends at this call's
    rate: its ETA is the budget's minutes left, not the length's."""
    import training.vector.ppo as ppo

    bars = []

    class Bar:
        def __init__(self, total, *args, **kwargs):
            self.total, self.totals = total, [total]
            bars.append(self)

        def update(self, n=1):
            pass

        def refresh(self):
            self.totals.append(self.total)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    monkeypatch.setattr(ppo, "progress_bar", Bar)
    cfg = load_selfplay_config(None, [*PPO_TINY, "train.total_timesteps=1000000000", "train.max_hours=0.05"])
    trainer = VectorPPO(cfg, str(tmp_path / "run"))
    trainer.train()
    (bar,) = [b for b in bars if len(b.totals) > 1]
    rows = trainer.history
    assert len(rows) == 3 and len(bar.totals) == 4
    for k, row in enumerate(rows, 1):  # at a minute a rollout, the rate is the decisions so far per minute
        rate = row["global_step"] / (MINUTE * k)
        assert bar.totals[k] == row["global_step"] + round((180 - MINUTE * k) * rate)
    without = VectorPPO(load_selfplay_config(None, [*PPO_TINY, "train.total_timesteps=200"]), str(tmp_path / "b"))
    bars.clear()
    without.train()
    assert [b.totals for b in bars if b.totals[0] is not None] == [[200]]  # no budget: the length, never re-aimed


def test_a_budget_stops_a_dmc_run_and_the_run_is_complete(tmp_path, capsys, minute_rollouts):
    run = tmp_path / "run"
    sets = [*DMC_TINY, "train.total_timesteps=100000", "train.max_hours=0.05", "eval.every=0"]
    assert train_main(["--backend", "dmc", "--config", "configs/dmc.yaml", "--run-dir", str(run), *_sets(*sets)]) == 0
    rows = _lines(run / "metrics.jsonl")
    assert [row["global_step"] for row in rows] == [64, 128, 192] and rows[-1]["wall"] == 180.0
    assert torch.load(run / "checkpoints" / "latest.pt", weights_only=True)["counters"]["global_step"] == 192
    capsys.readouterr()
    assert train_main(["--resume", str(run)]) == 0
    assert "is complete (0.05 hours of training" in capsys.readouterr().out


# ---------------------------------------------------------------------------- the first evaluation


def test_the_first_evaluation_comes_at_the_first_rollout_past_its_minutes(tmp_path, minute_rollouts):
    """eval.first_minutes 2.5 at a minute a rollout: a short evaluation (eval.first_deals) at the end of the third
    rollout, then eval.every's cadence; none without a cadence (eval.every 0)."""
    sets = [*PPO_TINY, "train.total_timesteps=640", "eval.first_minutes=2.5", "eval.first_deals=2"]
    sets += ["eval.every=400", "eval.deals=3", "eval.opponents=[random]"]
    trainer = VectorPPO(load_selfplay_config(None, sets), str(tmp_path / "run"))
    trainer.train()
    walls = [row["wall"] for row in trainer.history]
    first, *rest = trainer.evals
    assert first["wall"] == 180.0 and first["deals"] == 2 and walls.index(180.0) == 2
    assert first["global_step"] == trainer.history[2]["global_step"] < 400
    assert [row["deals"] for row in rest] == [3] and rest[0]["global_step"] >= 400  # then the cadence
    assert set(first["role_advantage"]["random"]) == {"dealer", "eldest", "middle"}
    none = VectorPPO(load_selfplay_config(None, [*sets, "eval.every=0"]), str(tmp_path / "none"))
    none.train()
    assert none.evals == []


def test_evaluations_leave_the_training_as_it_was(tmp_path, minute_rollouts):
    """The same seed with a first evaluation after the first rollout and without: the same weights, bit for bit
    (an evaluation draws from its own seeds, never the run's generator)."""
    base = [*PPO_TINY, "train.total_timesteps=400", "eval.every=1000000", "eval.first_deals=2"]
    base += ["eval.opponents=[random]", "opponents.mix={self: 0.5, random: 0.5}"]
    runs = []
    for minutes in ("0.5", "0"):
        cfg = load_selfplay_config(None, [*base, f"eval.first_minutes={minutes}"])
        trainer = VectorPPO(cfg, str(tmp_path / minutes))
        trainer.train()
        runs.append(trainer)
    assert len(runs[0].evals) == 1 and runs[1].evals == []
    for (name, a), b in zip(runs[0].net.state_dict().items(), runs[1].net.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert runs[0].gen.get_state().equal(runs[1].gen.get_state())


# ---------------------------------------------------------------------------- TensorBoard


def test_a_ppo_run_writes_tensorboard_scalars_of_every_rollout_and_evaluation(tmp_path):
    run = tmp_path / "run"
    sets = [*PPO_TINY, "train.total_timesteps=400", "eval.every=200", "eval.deals=2", "eval.opponents=[random]"]
    assert train_main(["--backend", "vector", "--config", "configs/selfplay_scratch.yaml", "--run-dir", str(run),
                       "--quiet", *_sets(*sets)]) == 0  # fmt: skip
    scalars = _scalars(run / "tb")
    rows, evals = _lines(run / "metrics.jsonl"), _lines(run / "eval.jsonl")
    steps = [row["global_step"] for row in rows]
    for tag in ("train/policy_loss", "train/entropy", "time/decisions_per_second", "time/train_seconds"):
        assert [step for step, _ in scalars[tag]] == steps, tag
    assert [value for _, value in scalars["train/value_loss"]] == pytest.approx([row["value_loss"] for row in rows])
    measured = [row for row in rows if row["balance_dealer"] is not None]  # a learner's hand as dealer ended
    assert measured and [s for s, _ in scalars["rollout/balance_dealer"]] == [r["global_step"] for r in measured]
    for tag in ("eval/random/all_advantage", "eval/random/dealer_advantage", "eval/random/difference"):
        assert [step for step, _ in scalars[tag]] == [row["global_step"] for row in evals], tag
    middle = evals[0]["role_advantage"]["random"]["middle"]
    assert scalars["eval/random/middle_advantage"][0][1] == pytest.approx(middle)
    off = tmp_path / "off"
    assert train_main(["--backend", "vector", "--config", "configs/selfplay_scratch.yaml", "--run-dir", str(off),
                       "--quiet", *_sets(*sets, "train.tensorboard=false")]) == 0  # fmt: skip
    assert not (off / "tb").exists()


def test_a_dmc_run_writes_tensorboard_scalars_and_balances_per_role(tmp_path):
    run = tmp_path / "run"
    sets = [*DMC_TINY, "train.total_timesteps=320", "eval.every=256", "eval.deals=2", "eval.opponents=[random]"]
    assert train_main(["--backend", "dmc", "--config", "configs/dmc.yaml", "--run-dir", str(run), "--quiet",
                       *_sets(*sets)]) == 0  # fmt: skip
    rows = _lines(run / "metrics.jsonl")
    assert "episode_return" not in rows[-1] and sum(row["hands"] for row in rows) == 4 * 3  # 4 games, a hand each
    ended = [row for row in rows if row["hands"]]
    # every seat is the learner: each hand's three balances, one a role
    assert all(row["hands"] % 3 == 0 for row in ended)
    zero_sum = [row["balance_dealer"] + row["balance_eldest"] + row["balance_middle"] for row in ended]
    assert zero_sum == pytest.approx([0.0] * len(ended))  # the standard rules' balances sum to 0 in a hand
    scalars = _scalars(run / "tb")
    assert [s for s, _ in scalars["train/loss"]] == [row["global_step"] for row in rows if row["loss"] is not None]
    assert [s for s, _ in scalars["rollout/balance_eldest"]] == [row["global_step"] for row in ended]
    assert [s for s, _ in scalars["eval/random/eldest_advantage"]] == [256]


def test_metrics_scalars_sort_a_row_into_the_library_routes_tags():
    row = {"global_step": 9, "rollout": 1, "wall": 2.0, "sps": 5.0, "loss": 0.5, "balance_dealer": -1.0,
           "hands": 3.0, "quota_rate": 0.5, "explained_variance": float("nan"), "final": True}  # fmt: skip
    assert metrics_scalars(row) == {
        "time/train_seconds": 2.0,
        "time/decisions_per_second": 5.0,
        "train/loss": 0.5,
        "rollout/balance_dealer": -1.0,
        "rollout/hands": 3.0,
        "rollout/quota_rate": 0.5,
    }


# ---------------------------------------------------------------------------- balances per role


@pytest.mark.parametrize(
    ("rules", "episode"),
    [("standard", "hand"), ("standard", "game"), ("four-5-3-2-2", "hand"), ("woburn-auction", "game")],
)
def test_role_balances_are_each_hand_s_balances_by_its_dealer(rules, episode):
    """RoleBalances against the Python Game in lockstep: per role (from each hand's dealer), the balances of the
    hands that ended, for the seats counted."""
    n_games = 4
    g = VectorGame(n_games, rules=rules, seed=5, episode=episode, max_hands=3)
    g.reset()
    tracker = RoleBalances(g)
    rng = np.random.default_rng(0)
    players = g.num_players
    counted = rng.random((n_games, players)) < 0.6
    games = [g.game(i) for i in range(n_games)]
    sums, counts, made = np.zeros(players), np.zeros(players), 0
    for _ in range(500):
        tracker.before(g, g.observe(), g.current_player.astype(np.int64))
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in g.legal_mask()])
        rewards, done = g.step(actions)
        tracker.after(g, rewards, done, counted)
        for i, game in enumerate(games):
            hand = game.hand_number
            game.apply(int(actions[i]))
            if game.is_over or game.hand_number != hand:
                log = game.history[hand - 1]
                if log.dealer is not None and log.balances is not None:
                    for seat in np.flatnonzero(counted[i]):
                        role = (seat - log.dealer) % players
                        sums[role] += log.balances[seat]
                        counts[role] += 1
                        made += log.balances[seat] >= 0
                games[i] = g.game(i)  # the engine's next deal (or next game)
    figures = tracker.figures()
    assert counts.sum() > 3 * players and figures["hands"] == counts.sum()
    for k, role in enumerate(tracker.roles):
        assert figures[f"balance_{role}"] == pytest.approx(sums[k] / counts[k]), role
    assert figures["quota_rate"] == pytest.approx(made / counts.sum())
    assert tracker.figures()["hands"] == 0  # counted again from the next rollout


def test_a_ppo_rollout_counts_the_learner_s_hands_only(tmp_path):
    """Against random players the learner holds one seat a game: a rollout's hands are its own, one a game that
    ended (no mean return of 0 in their place)."""
    cfg = load_selfplay_config(None, [*PPO_TINY, "ppo.n_steps=60"])
    trainer = VectorPPO(cfg, str(tmp_path / "run"))
    figures = trainer.collect()
    assert "episode_return" not in figures
    assert figures["hands"] == figures["episodes"] == 8  # the first hand (no exchange) is 53 engine steps
    assert any(np.isfinite(figures[f"balance_{role}"]) for role in ("dealer", "eldest", "middle"))


# ---------------------------------------------------------------------------- the play-outs


def test_a_budget_ends_a_play_out_run_with_the_last_finished_round_and_tensorboard_has_each_round(tmp_path, capsys):
    from sm_cli.cli import main

    config = tmp_path / "c.yaml"
    config.write_text(
        f"kind: playouts\nname: s\noutput_dir: {tmp_path}\nworkers: 1\npolicy: fresh\narch: [16]\nseed: 3\n"
        "epochs: 1\nweight: 0\nrounds: 3\nwindow: 2\nlabels:\n  - {seeds: [1], hands: 16, types: [play]}\n"
        "max_hours: 0.0000001\neval: {every: 1, deals: 2, opponents: [random], final_deals: 2}\n"
    )
    assert main(["improve", "--config", str(config)]) == 0  # the budget (a third of a millisecond) ends round 0
    folder = tmp_path / "s"
    assert (folder / "final_policy.pt").read_bytes() == (folder / "policies" / "round0.pt").read_bytes()
    assert not (folder / "data" / "labels" / "round1").exists()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["progress"] == 3 and "random" in summary["final_eval"]  # fresh policy, label file, fit
    assert "the budget of 1e-07 h of training is spent" in capsys.readouterr().err
    assert main(["improve", "--resume", str(folder)]) == 0
    assert "is complete (" in capsys.readouterr().out
    assert main(["improve", "--resume", str(folder), "--set", "max_hours=0"]) == 0  # no budget: the other rounds
    assert (folder / "final_policy.pt").read_bytes() == (folder / "policies" / "round2.pt").read_bytes()
    evals = _lines(folder / "eval.jsonl")
    scalars = _scalars(folder / "tb")
    assert [s for s, _ in scalars["eval/random/all_advantage"]] == [row["decisions"] for row in evals]
    assert len(scalars["fit/play_gain"]) == 3 and os.path.isdir(folder / "tb")


# ---------------------------------------------------------------------------- the library routes


def test_a_budget_stops_an_sb3_run_between_segments_and_the_run_is_complete(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "name: tiny\nopponents: {mix: {random: 1}}\nppo: {n_steps: 64, batch_size: 64, net_arch: [16]}\n"
        "train: {total_timesteps: 4096, max_hours: 0.0000001, n_envs: 2, segment_steps: 128, checkpoint_every: 4096,"
        " progress_bar: false}\neval: {final_deals: 0}\n"
    )
    run = tmp_path / "run"
    assert train_main(["--config", str(config), "--run-dir", str(run), "--quiet"]) == 0
    from training.sb3.checkpoint import read_training_state

    assert read_training_state(str(run / "checkpoints" / "latest.zip"))["num_timesteps"] == 128  # one segment
    assert json.loads((run / "summary.json").read_text())["progress"] == 128
    capsys.readouterr()
    assert train_main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert "is complete (" in out and "hours of training, the budget is 1e-07 h): nothing to do" in out, out


def test_a_budget_stops_an_rllib_run_between_iterations(monkeypatch, capsys):
    pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install -e '.[rllib]')")
    from training.rllib.config import load_rllib_config
    from training.rllib.trainer import RLlibTrainer, backend

    class Algo:  # what RLlibTrainer.train reads of an RLlib algorithm
        env_runner_group = type("Group", (), {"foreach_env_runner": staticmethod(lambda call: [])})()

        def train(self):
            return {"env_runners": {"num_env_steps_sampled": 100}}

    run = RLlibTrainer.__new__(RLlibTrainer)  # the run without Ray: its algorithm and writer are stand-ins
    run.cfg = load_rllib_config("configs/scratch_rllib.yaml", ["train.max_hours=1e-12", "eval.every=0"])
    run.quiet, run.iteration, run.env_steps, run.wall, run.ids, run.checkpoint = False, 0, 0, 0.0, ["shared"], None
    run.algo = Algo()
    run.writer = type("Writer", (), {"add_scalar": staticmethod(lambda *args: None)})()
    saved = []
    monkeypatch.setattr(run, "save_checkpoint", lambda: saved.append(run.iteration) or "checkpoint")
    run.train()
    assert run.iteration == 1 and saved == [1]  # the budget is spent after the first iteration: its checkpoint
    assert "iteration 1/100000: 100 env steps" in capsys.readouterr().err
    summary = {"progress": 1, "train_seconds": run.wall}
    assert backend().reached(run.cfg, summary).endswith("the budget is 1e-12 h")
    assert "--set train.max_hours=H (now 3)" in backend().further(load_rllib_config("configs/scratch_rllib.yaml"))
