"""``train.actors: N``: Deep Monte-Carlo with acting processes apart from the learner (training/vector/actors.py).

The actors play their own games with copies of the network and hand finished decisions to the learner through
shared memory; these tests check what reaches the replay, that the actors take the learner's weights, that a
lost actor is replaced, and that nothing is left running. A few seconds each: every actor is a spawned process
that imports torch and the engine.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest
import torch

from training.common.errors import ConfigError
from training.vector.actors import ActorPool, games_of
from training.vector.config import load_dmc_config
from training.vector.dmc import DMC, SLOTS, DMCActors

TINY = [
    "env.num_games=8",
    "dmc.n_steps=8",
    "dmc.batch_size=32",
    "dmc.replay_rollouts=2",
    "dmc.net_arch=[16]",
    "train.progress=false",
    "eval.every=0",
    "eval.final_deals=0",
]
SCALE = 0.25  # env.reward_scale's default: a target is a whole number of tricks times this


def tiny(*extra: str):
    return load_dmc_config(None, [*TINY, *extra])


def test_the_games_are_shared_out_and_more_actors_than_games_is_refused():
    assert games_of(10, 3) == [4, 3, 3]
    assert sum(games_of(256, 7)) == 256
    with pytest.raises(ConfigError, match=r"train.actors: each actor plays at least one of env.num_games = 8"):
        tiny("train.actors=9")
    with pytest.raises(ConfigError, match="train.actors"):
        tiny("train.actors=-1")


def test_a_run_with_two_actors_fills_the_replay_with_real_returns_and_stops_its_processes(tmp_path, monkeypatch):
    seen = []  # (the bar's count, global_step) at each update: the bar counts the gathered rollout already
    update = DMC.update

    def counted(self):
        seen.append((self.bar.n, self.global_step))
        return update(self)

    monkeypatch.setattr(DMC, "update", counted)
    trainer = DMC(tiny("train.actors=2", "train.total_timesteps=2000", "train.progress=true"), str(tmp_path))
    try:
        trainer.train()
        assert all(shown > step for shown, step in seen) and seen[-1][0] == trainer.global_step, seen
        pool_processes = list(trainer.pool.processes)
        assert len(pool_processes) == 2 and all(p.is_alive() for p in pool_processes)
    finally:
        trainer.close()
    assert trainer.global_step >= 2000 and trainer.updates > 0 and trainer.episodes > 0
    targets = trainer.replay_target[: trainer.filled]
    assert trainer.filled > 0 and np.allclose(targets / SCALE, np.round(targets / SCALE))  # balances in tricks
    assert np.abs(targets).max() <= 16 * SCALE and len(np.unique(targets)) >= 3
    assert (trainer.replay_obs[: trainer.filled].sum(1) > 0).all()  # real observations, not empty slots
    # recorded every rollout, and bounded: a round takes one rollout of each actor (training/vector/actors.py)
    assert all(0 <= row["actor_lag"] <= SLOTS for row in trainer.history) and trainer.history[0]["actor_lag"] == 0
    hands = sum(row["hands"] for row in trainer.history)  # every seat's hands by role, from the actors
    assert hands > 0 and all(-16 <= row["balance_dealer"] <= 16 for row in trainer.history if row["hands"])
    assert all(not p.is_alive() for p in pool_processes)


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flat(item)]
    return _flat(list(value.values())) if isinstance(value, dict) else [value]


def test_the_actors_take_the_learners_weights_and_a_lost_actor_is_replaced(tmp_path, monkeypatch):
    """... and what an actor shares with the learner is tensors, plain shared numbers and pipes of its own: no
    lock, no queue of all the actors, so that an actor killed anywhere leaves nothing held. Before, the weights had
    a lock, the stop an Event and the rollouts one queue for every actor: an actor killed while it held one of
    their locks (in ``Event.is_set``) hung the learner and the other actors (a suite run hung here for 200 s)."""
    from multiprocessing.connection import Connection

    spawn = torch.multiprocessing.get_context("spawn")
    shared = []  # what each actor's process is started with

    def recorded(*args, **kwargs):
        shared.append(kwargs["args"][-1])
        return type(spawn).Process(*args, **kwargs)

    monkeypatch.setattr(spawn, "Process", recorded)
    cfg = tiny("train.actors=2", "dmc.epsilon=0")
    trainer = DMC(cfg, str(tmp_path))
    lines: list[str] = []
    pool = ActorPool(cfg, trainer, DMCActors(), lines.append, trainer.balances)
    filed: list[np.ndarray] = []
    rollout = cfg.dmc.n_steps * cfg.env.num_games
    try:
        assert len(shared) == 2
        for leaf in _flat(shared):
            assert isinstance(leaf, (torch.Tensor, Connection)) or type(leaf).__module__ == "ctypes", type(leaf)
            assert not hasattr(leaf, "get_lock") and not hasattr(leaf, "_semlock"), type(leaf)
        pipes = [{id(leaf) for leaf in _flat(one) if isinstance(leaf, Connection)} for one in shared]
        assert all(len(p) == 2 for p in pipes) and not pipes[0] & pipes[1]  # two pipes each, none shared
        first = pool.gather(lambda actor, arrays: filed.append(arrays["action"].copy()), rollout)
        assert first["played"] == rollout and first["actor_lag"] == 0  # version 0: nothing published yet
        for _ in range(3):
            with torch.no_grad():
                for p in trainer.q.parameters():
                    p.add_(0.01)
            pool.publish(trainer)
        deadline = time.monotonic() + 60
        lags = []
        while time.monotonic() < deadline:  # the actors move to the newest weights within a few rollouts
            lags.append(pool.gather(lambda *a: None, rollout)["actor_lag"])
            if lags[-1] == 0:
                break
        assert lags[-1] == 0, lags
        assert torch.equal(pool.weights, torch.nn.utils.parameters_to_vector(trainer.q.parameters()))
        # an actor that stalls holds the rounds up instead of falling behind: each round one rollout of each actor,
        # and no rollout's weights more than SLOTS updates old
        os.kill(pool.processes[1].pid, signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (pool.processes[1].pid, signal.SIGCONT)).start()
        rounds, until = [], time.monotonic() + 3.0  # past the stall, so the stalled actor's rollouts are filed
        while len(rounds) < 4 or time.monotonic() < until:
            rounds.append(pool.gather(lambda *a: None, rollout))
            pool.publish(trainer)
        assert all(r["played"] == rollout and r["actor_lag"] <= SLOTS for r in rounds), rounds
        inbox = pool.inbox[0]
        os.kill(pool.processes[0].pid, signal.SIGKILL)
        pool.processes[0].join(10)
        pool.publish(trainer)  # never waits for an actor
        again = pool.gather(lambda *a: None, 3 * rollout)  # the lost one is replaced and play goes on
        assert again["played"] >= 3 * rollout and len(shared) == 3
        assert pool.lost == 1 and pool.generation == [1, 0] and pool.processes[0].is_alive()
        assert inbox.closed and not pool.inbox[0].closed  # the lost actor's pipes are closed, the new one's open
        assert len(lines) == 1 and lines[0].startswith("actor 0 was lost (exit code -9)"), lines
    finally:
        pool.close()
    assert all(not p.is_alive() for p in pool.processes)


def test_a_run_with_actors_resumes_from_its_learner(tmp_path):
    """The checkpoint holds the learner (network, optimizer, replay, counters); a resumed run goes on from there
    with actors dealing fresh games (training/vector/actors.py: Resume)."""
    first = DMC(tiny("train.actors=1", "train.total_timesteps=600"), str(tmp_path))
    try:
        first.train()
    finally:
        first.close()
    second = DMC(tiny("train.actors=1", "train.total_timesteps=1200"), str(tmp_path), resume=True)
    assert second.global_step == first.global_step and second.filled == first.filled
    for (name, a), b in zip(first.q.state_dict().items(), second.q.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    try:
        second.train()
    finally:
        second.close()
    assert second.global_step >= 1200 and second.updates > first.updates
