"""``train.actors: N`` for the vector PPO: acting processes apart from the learner (training/vector/actors.py,
training/vector/ppo.py: PPOActors).

Each actor is a :class:`VectorPPO` of its share of the games; the learner files every actor's rollout in the
columns of its games. These tests check that the filed buffer is the actors' own rollouts (the per-seat links and
the advantages unchanged), that the snapshot pool reaches the actors, and a whole run: its counts, its lag, its
processes stopped, its resume. A few seconds each: every actor is a spawned process that imports torch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import TINY_PPO

from training.common.errors import ConfigError
from training.vector.actors import games_of
from training.vector.config import load_selfplay_config
from training.vector.ppo import PPOActing, PPOActors, VectorPPO, per_seat_gae


def tiny(*extra: str):
    return load_selfplay_config(None, [*TINY_PPO, "eval.every=0", *extra])


class _Offsets:
    """The part of an ActorPool that :meth:`VectorPPO.file_rollout` reads."""

    def __init__(self, num_games: int, actors: int) -> None:
        self.games = games_of(num_games, actors)
        self.offsets = [sum(self.games[:k]) for k in range(actors)]


@pytest.mark.parametrize("critic", ["observation", "full"])
def test_the_filed_buffer_is_the_actors_rollouts_with_each_seats_links_and_advantages(tmp_path, critic):
    cfg = tiny("env.num_games=7", "train.actors=2", f"ppo.critic={critic}", "opponents.mix={self: 0.5, random: 0.5}")
    learner = VectorPPO(cfg, str(tmp_path))
    learner.pool = _Offsets(7, 2)  # filing only: no process
    actings = [PPOActing(k, 0, m, cfg) for k, m in enumerate(learner.pool.games)]
    for acting in actings:
        acting.load(PPOActors().published(learner))
    rollouts = [acting.rollout() for acting in actings]
    for k, (arrays, _, _, _) in enumerate(rollouts):
        learner.file_rollout(k, arrays)
    n, steps, p = 7, cfg.ppo.n_steps, cfg.ppo
    for k, (arrays, played, _, _) in enumerate(rollouts):
        first, m = learner.pool.offsets[k], learner.pool.games[k]
        columns = (np.arange(steps)[:, None] * n + first + np.arange(m)[None, :]).reshape(-1)  # its entries, in order
        assert played == int(learner.learner[columns].sum()) > 0
        np.testing.assert_array_equal(learner.obs.reshape(steps * n, -1)[columns], arrays["obs"])
        np.testing.assert_array_equal(learner.actions[columns], arrays["actions"])
        np.testing.assert_array_equal(learner.seats[columns], arrays["seats"])
        # every link leads to the same game and seat, a later step: the actor's link, moved
        linked = np.flatnonzero(arrays["next_index"] >= 0)
        np.testing.assert_array_equal(learner.next_index[columns[linked]], columns[arrays["next_index"][linked]])
        assert (learner.next_index[columns][arrays["next_index"] < 0] == -1).all()
        # the advantages over the whole buffer are those of the actor's own rollout
        values = np.random.default_rng(k).normal(size=steps * n).astype(np.float32)
        adv, _ = per_seat_gae(
            learner.rewards, values, learner.dones, learner.next_index, learner.tail_values, p.gamma, p.gae_lambda, n
        )
        own, _ = per_seat_gae(
            arrays["rewards"],
            values[columns],
            arrays["dones"],
            arrays["next_index"],
            arrays["tail_values"],
            p.gamma,
            p.gae_lambda,
            m,
        )
        np.testing.assert_allclose(adv[columns], own, rtol=1e-6, atol=1e-6)
        if critic == "full":
            np.testing.assert_array_equal(learner.full.reshape(steps * n, -1)[columns], arrays["full"])
    learner.pool = None
    learner.close()


def test_the_actors_play_the_learners_weights_and_its_snapshots(tmp_path):
    cfg = tiny("train.actors=1", "opponents.mix={self: 0.5, snapshots: 0.5}", "opponents.pool_size=2")
    learner = VectorPPO(cfg, str(tmp_path))
    acting = PPOActing(0, 0, 8, cfg)
    for _ in range(3):  # the ring of 2 slots wraps once
        with torch.no_grad():
            for param in learner.net.parameters():
                param.add_(torch.randn_like(param))
        learner.add_snapshot()
    published = PPOActors().published(learner)
    acting.load(published)
    run = acting.run
    for (name, mine), theirs in zip(learner.net.state_dict().items(), run.net.state_dict().values(), strict=True):
        assert torch.equal(mine, theirs), name
    assert len(run.snapshots) == len(learner.snapshots) == 2
    for want, got in zip(learner.snapshots, run.snapshots, strict=True):
        assert all(torch.equal(want[key], got[key]) for key in want)
    obs = torch.randn(5, learner.obs_size)
    for slot in range(2):
        frozen = learner.snapshot_base - 2 + slot
        assert torch.equal(learner.frozen[frozen](obs), run.frozen[frozen](obs))
    published[0].zero_()  # the actor holds a copy: the learner's next writes do not reach it mid-rollout
    assert not all(torch.equal(p, torch.zeros_like(p)) for p in run.net.parameters())
    learner.close()


def test_a_run_with_two_actors_trains_counts_and_stops_its_processes_then_resumes(tmp_path, monkeypatch):
    seen = []  # (the bar's count, global_step) at each update: the bar counts the gathered rollout already
    update = VectorPPO.update

    def counted(self):
        seen.append((self.bar.n, self.global_step))
        return update(self)

    cfg = tiny("train.actors=2", "train.total_timesteps=600", "train.progress=true", "ppo.critic=full")
    trainer = VectorPPO(cfg, str(tmp_path))
    before = [p.detach().clone() for p in trainer.net.parameters()]
    monkeypatch.setattr(VectorPPO, "update", counted)
    try:
        trainer.train()
        processes = list(trainer.pool.processes)
        assert len(processes) == 2 and all(p.is_alive() for p in processes)
    finally:
        trainer.close()
    monkeypatch.undo()
    assert all(not p.is_alive() for p in processes) and trainer.pool is None
    assert trainer.global_step >= 600 and trainer.rollouts >= 2
    assert all(shown > step for shown, step in seen) and seen[-1][0] == trainer.global_step, seen
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.net.parameters(), strict=True))
    rows = trainer.history
    assert rows[0]["actor_lag"] == 0 and all(0 <= row["actor_lag"] <= PPOActors.slots for row in rows)
    assert sum(row["hands"] for row in rows) > 0 and all(np.isfinite(row["policy_loss"]) for row in rows)
    again = VectorPPO(tiny("train.actors=1", "train.total_timesteps=1200", "ppo.critic=full"), str(tmp_path), True)
    assert again.global_step == trainer.global_step
    try:
        again.train()
    finally:
        again.close()
    assert again.global_step >= 1200 and again.rollouts > trainer.rollouts


def test_more_actors_than_games_is_refused():
    with pytest.raises(ConfigError, match=r"train.actors: each actor plays at least one of env.num_games = 8"):
        tiny("train.actors=9")


def test_the_actors_as_ray_actors_train_a_run(tmp_path, local_ray):
    """``train --backend vector --ray``: the same actors as Ray actors on the local instance (loopback)."""
    from training.common.ray_cluster import RayOptions

    cfg = tiny("train.actors=1", "train.total_timesteps=600")  # past the first hands' end
    trainer = VectorPPO(cfg, str(tmp_path), ray=RayOptions(address=None, code="installed"))
    try:
        trainer.train()
    finally:
        trainer.close()
    assert trainer.global_step >= 600 and trainer.rollouts >= 2
    assert sum(row["hands"] for row in trainer.history) > 0
    assert all(0 <= row["actor_lag"] <= PPOActors.slots for row in trainer.history)


def test_ray_needs_actors_and_a_backend_with_actors(tmp_path, capsys):
    from training.cli import main as train_main
    from training.common.ray_cluster import RayOptions

    with pytest.raises(ConfigError, match="--ray runs the acting processes as Ray actors: set train.actors"):
        VectorPPO(tiny(), str(tmp_path), ray=RayOptions(address=None, code="installed"))
    with pytest.raises(SystemExit):
        train_main(["--backend", "sb3", "--ray"])
    assert "--ray is for --backend dmc or vector" in capsys.readouterr().err
