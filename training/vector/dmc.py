"""Deep Monte-Carlo (DMC) over the batched engine, DouZero style, CleanRL style: one path from a config to a result.

    python -m training.vector.dmc --config configs/dmc.yaml
    python -m training.vector.dmc --config configs/dmc.yaml --set env.num_games=512 --set dmc.epsilon=0.05
    python -m training.vector.dmc --resume runs/dmc --set train.total_timesteps=100000000
    (also: sergeant-major train --backend dmc --config configs/dmc.yaml)

The second from-scratch baseline next to the vector PPO trainer (training/vector/ppo.py), after DouZero (Zha et
al. 2021): no teacher, no warm start, no search labels, no critic, no bootstrapping. What one run does (the config
is :class:`training.vector.config.DMCConfig`, ``configs/dmc.yaml``):

1. ``env.num_games`` games of :class:`sm_env.compiled.batch.VectorGame` step together, one decision of each
   per engine step; the learner plays every seat of every game (pure self-play).
2. Acting: the Q-network gives one value per action id for the observation of the seat to act; the seat
   plays the legal action of the highest value (illegal ones are masked out), or with probability
   ``dmc.epsilon`` a legal action drawn uniformly (epsilon-greedy; DouZero's 0.01).
3. Targets: every decision is held in its game's open episode (:meth:`DMC.collect`) until the episode ends;
   then each decision's target is the Monte-Carlo return of the seat that made it: the rewards
   ``VectorGame.step`` paid that seat from that decision (its own step included) to the end of the episode,
   times ``env.reward_scale``, undiscounted. With ``env.episode: hand`` (the default) that is the seat's
   balance in the hand (tricks - quota, times the scale); with ``game``, the sum of its hand balances from
   the decision's hand to the end of the game, plus the game's result times ``env.win_reward`` (a game
   stopped by ``env.max_hands`` ends like a finished one and pays no result).
   The finished decisions (observation, action, target; no legal mask: the regression touches only the
   taken action's value, the mask serves the acting alone) go to the replay, a ring of the latest
   ``dmc.replay_rollouts * dmc.n_steps * env.num_games`` of them. An episode's decisions are all held until
   it ends, so game episodes hold each game's whole history (memory grows with the game's length).
4. Update (after each rollout of ``dmc.n_steps`` engine steps): ``dmc.updates_per_rollout`` minibatches of
   ``dmc.batch_size`` decisions drawn uniformly from the replay (none until it holds one minibatch); the loss
   is the mean squared error between the value of the action taken and its target; Adam, gradient clipping.
   By default one minibatch of 4,096 per rollout of 4,096 decisions: each decision is regressed about once.
5. Between rollouts: checkpoints (atomic; ``--resume`` continues exactly: the same weights as an uninterrupted
   run), duplicate evaluations against ``eval.opponents`` every ``eval.every`` decisions (and a first, short one
   past ``eval.first_minutes`` of training), the stop at ``train.total_timesteps`` or ``train.max_hours`` of
   training, whichever comes first (training/common/budget.py).

Devices (``train.device``, as the vector PPO trainer's): the Q-network and its update are there, and so is the
acting's forward pass in the learner's process (a step's observations go over, their values come back; the
acting processes of ``train.actors`` play on the CPU with their copies); the engine, the open episodes, the replay
and every random draw (exploration, minibatches: the run's CPU generator) stay on the CPU, each minibatch gathered
there and sent over. On ``cpu`` nothing moves: the same seed gives the run it gave before the setting.

Choices (docs/results.md gives the figures):

- **one network for every seat**: the observation is relative to the seat to act and carries its role
  (dealer, eldest, middle one-hot), the quotas and the scores (sm_env/observation.py), so one network plays
  every role, as the vector PPO trainer's actor does, and learns from three times the decisions. DouZero keeps
  a network per role because its roles see different observations; here they see the same layout.
- **action heads**: the network maps the observation to ``VectorGame.num_actions`` values (56, or 74 under the
  rule sets of docs/rules.md 10.8), one per action id, and only the taken action's value is regressed. That is
  the one-hot action concatenated to the observation with the action's input weights moved to the output
  layer; it evaluates every legal action in one forward pass instead of one per action. DouZero concatenates
  because its actions are card combinations with features of their own; here an action is one of 56 ids.

Outputs in the run folder: ``final_policy.pt`` (the Q-network in the policy-file format,
:func:`agents.players.ppo_agent.export_policy`, with ``outputs: q_values`` in its metadata: ``ppo:RUN/final_policy.pt``
plays it, and ``PPOAgent``'s default, the legal action of the highest output, is exactly the greedy policy),
``checkpoints/latest.pt`` (``trainer: dmc``, training/common/checkpoint.py: the network, Adam, the engine, the open
episodes, the replay, the generator, the counters), ``metrics.jsonl`` (one line per rollout: decisions,
training wall time, decisions/s, loss, the explained variance of the taken actions' values, episodes, the balance
per role of the hands that ended, with ``train.actors: 0``), ``eval.jsonl`` (one line per evaluation: decisions,
training wall time, the advantage against each opponent, over all roles and per role, and the whole table),
``tb/`` (TensorBoard scalars of both, ``train.tensorboard``), ``final_eval.json``, ``config.yaml`` and
``summary.json`` (the run layer's, training/common/runs.py: Ctrl-C writes a checkpoint after the current rollout).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.players.ppo_agent import NumpyPolicy, PolicyShape, export_policy, policy_from_torch
from sm_env.compiled.batch import VectorGame
from training.common.checkpoint import (
    check_counters,
    check_finite,
    checked_array,
    damaged,
    engine_state,
    read_checkpoint,
    restore_engine,
    write_checkpoint,
)
from training.common.device import resolve_device
from training.common.errors import ConfigError
from training.common.progress import progress_bar
from training.common.ray_cluster import RayOptions
from training.common.runs import Backend, add_run_arguments, checkpoint_at, progress, run_command, write_lines
from training.common.scalars import ScalarLog
from training.common.yaml_config import save_config

from .actors import ActorPool, RayActorPool, epsilon_greedy
from .config import DMCConfig, load_dmc_config
from .episodes import EpisodeBook
from .ppo import (
    BatchedRun,
    RoleBalances,
    Timers,
    budget_further,
    budget_reached,
    check_saved_settings,
    explained_variance,
    mlp,
    step_rewards,
)

TRAINER = "dmc"  # its checkpoints' trainer field (training/common/checkpoint.py)
RESUME_FIXED = (  # settings a resumed run must keep: the network, the games, the replay's size and its targets
    ("env", "rules"),
    ("env", "episode"),
    ("env", "max_hands"),
    ("env", "num_games"),
    ("env", "reward_scale"),
    ("env", "win_reward"),
    ("dmc", "net_arch"),
    ("dmc", "activation"),
    ("dmc", "n_steps"),
    ("dmc", "replay_rollouts"),
)
PROGRESS_SECONDS = 10.0  # at most one progress line per this many seconds of training (metrics.jsonl has all)


class DMC(BatchedRun):
    """One run: the games, the Q-network, the open episodes, the replay and the steps between rollouts."""

    def __init__(
        self, cfg: DMCConfig, run_dir: str, resume: bool = False, quiet: bool = False, ray: RayOptions | None = None
    ) -> None:
        if ray is not None and not cfg.train.actors:
            raise ConfigError("--ray runs the acting processes as Ray actors: set train.actors to 1 or more")
        self.cfg, self.run_dir, self.quiet, self.ray = cfg, run_dir, quiet, ray
        self.device = resolve_device(cfg.train.device)  # the Q-network; the engine, replay and draws: the CPU
        torch.set_num_threads(cfg.train.torch_threads)
        torch.manual_seed(cfg.seed)  # the network's initial weights
        self.gen = torch.Generator().manual_seed(cfg.seed)  # exploration, minibatch draws (on the CPU)
        n = self.num_games = cfg.env.num_games
        self.games = VectorGame(
            n, rules=cfg.env.rules, seed=cfg.seed, episode=cfg.env.episode, max_hands=cfg.env.max_hands
        )
        self.games.reset()
        g = self.games  # the sizes, from the rule set
        self.obs_size, self.num_actions, self.num_players = g.observation_size, g.num_actions, g.rules.num_players
        self.q = mlp(self.obs_size, cfg.dmc.net_arch, self.num_actions, cfg.dmc.activation).to(self.device)
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=cfg.dmc.learning_rate)
        # this step's view of every game
        self.obs = np.zeros((n, self.obs_size), dtype=np.float32)
        self.mask = np.zeros((n, self.num_actions), dtype=np.int8)
        self.book = EpisodeBook(n, self.obs_size, self.num_players)  # the open episodes (training/vector/episodes.py)
        self.balances = RoleBalances(g)  # every seat's hands by role (metrics.jsonl)
        self.every_seat = np.ones((n, self.num_players), dtype=np.bool_)
        self.pool: ActorPool | None = None  # the acting processes (train.actors >= 1), started by train()
        # the replay: the latest finished decisions, a ring
        self.capacity = cfg.dmc.replay_rollouts * cfg.dmc.n_steps * n
        self.replay_obs = np.zeros((self.capacity, self.obs_size), dtype=np.float32)
        self.replay_action = np.zeros(self.capacity, dtype=np.int64)
        self.replay_target = np.zeros(self.capacity, dtype=np.float32)
        self.filled = self.cursor = 0
        self.global_step = self.updates = self.rollouts = self.episodes = self.trained = 0
        self.last = {"eval": 0, "checkpoint": 0}
        self.history: list[dict[str, Any]] = []
        self.evals: list[dict[str, Any]] = []
        self.wall = 0.0
        self.timers = Timers()
        self.bar: Any = progress_bar(None, "", "", enabled=False)  # train()'s, advanced in collect() (a silent one)
        self._printed = -PROGRESS_SECONDS
        os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
        if resume:
            self.load(os.path.join(run_dir, "checkpoints", "latest.pt"))
        save_config(cfg, os.path.join(run_dir, "config.yaml"))  # with this call's overrides
        self.tb = ScalarLog(run_dir, cfg.train.tensorboard, purge_step=self.global_step)

    # -- acting ------------------------------------------------------------------
    def act(self, obs: torch.Tensor, mask: torch.Tensor, epsilon: float) -> torch.Tensor:
        """Epsilon-greedy actions (:func:`training.vector.actors.epsilon_greedy`, the draws from the run's
        generator)."""
        with self.timers("act forward"):
            return epsilon_greedy(self.q, obs, mask, epsilon, self.gen)

    # -- rollout -----------------------------------------------------------------
    def collect(self) -> dict[str, float]:
        """Play ``dmc.n_steps`` engine steps in every game; the decisions of the episodes that end go to the
        replay with their returns (:meth:`finish`); returns the episodes ended and the balances of the hands by
        role (:class:`training.vector.ppo.RoleBalances`)."""
        n, g, t_, book = self.num_games, self.games, self.timers, self.book
        epsilon = self.cfg.dmc.epsilon
        ended = 0
        for _ in range(self.cfg.dmc.n_steps):
            with t_("engine"):
                seat = g.current_player.astype(np.int64)
                g.legal_mask(out=self.mask)
                g.observe(out=self.obs)
            actions = self.act(torch.from_numpy(self.obs), torch.from_numpy(self.mask).bool(), epsilon).numpy()
            with t_("bookkeeping"):
                book.record(self.obs, actions, seat)
                self.balances.before(g, self.obs, seat)
            with t_("engine"):
                rewards, done = g.step(actions)
            self.bar.update(n)  # a decision in every game, as global_step counts them
            with t_("bookkeeping"):
                self.balances.after(g, rewards, done, self.every_seat)
                finished = book.pay(step_rewards(g, rewards, done, self.cfg.env), done)
                if finished is not None:  # the ended episodes' decisions, with their targets, to the replay
                    ended += int(done.sum())
                    self.store(*finished)
        self.episodes += ended
        return {"episodes": float(ended), **self.balances.figures()}

    def store(self, obs: np.ndarray, actions: np.ndarray, targets: np.ndarray) -> None:
        """Finished decisions into the replay ring (the oldest leave; of more than it holds, the last)."""
        if len(obs) > self.capacity:
            obs, actions, targets = obs[-self.capacity :], actions[-self.capacity :], targets[-self.capacity :]
        slots = (self.cursor + np.arange(len(obs))) % self.capacity
        self.replay_obs[slots] = obs
        self.replay_action[slots] = actions
        self.replay_target[slots] = targets
        self.cursor = int((self.cursor + len(obs)) % self.capacity)
        self.filled = min(self.capacity, self.filled + len(obs))

    # -- update ------------------------------------------------------------------
    def update(self) -> dict[str, float]:
        """``dmc.updates_per_rollout`` minibatches of the regression of the taken actions' values on their
        returns, each drawn uniformly (without repeats) from the replay; nothing until it holds a minibatch."""
        d, t_ = self.cfg.dmc, self.timers
        nan = float("nan")
        if self.filled < d.batch_size:
            return {"loss": nan, "explained_variance": nan, "q_taken": nan, "target_abs": nan, "trained": 0.0}
        obs_all = torch.from_numpy(self.replay_obs)  # minibatches drawn and gathered on the CPU, then sent over
        losses, predicted, targets = [], [], []
        for _ in range(d.updates_per_rollout):
            with t_("batching"):
                rows = torch.randperm(self.filled, generator=self.gen)[: d.batch_size]
                obs = obs_all[rows].to(self.device)
                action = torch.from_numpy(self.replay_action)[rows].to(self.device)
                target = torch.from_numpy(self.replay_target)[rows].to(self.device)
            with t_("update network"):
                value = self.q(obs).gather(1, action[:, None]).squeeze(1)
                loss = ((value - target) ** 2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.q.parameters(), d.max_grad_norm)
                self.optimizer.step()
            self.updates += 1
            losses.append(loss.item())
            predicted.append(value.detach().cpu().numpy())
            targets.append(target.cpu().numpy())
        p, t = np.concatenate(predicted), np.concatenate(targets)
        self.trained += len(p)
        return {
            "loss": float(np.mean(losses)),
            "explained_variance": explained_variance(p, t),
            "q_taken": float(p.mean()),
            "target_abs": float(np.abs(t).mean()),
            "trained": float(len(p)),
        }

    # -- loop --------------------------------------------------------------------
    def _train(self, stop: Any) -> None:
        """The rollouts of :meth:`train`, each with its update, log line, evaluations and checkpoint."""
        cfg = self.cfg
        while self.global_step < cfg.train.total_timesteps and not stop and not self.budget_spent():
            started = self.clock()
            if cfg.train.actors:  # the actors play while the network learns (training/vector/actors.py)
                if self.pool is None:
                    args = (cfg, self.q, self.obs_size, progress, self.balances)
                    self.pool = ActorPool(*args) if self.ray is None else RayActorPool(*args, ray=self.ray)
                with self.timers("waiting for actors"):
                    gathered = self.pool.gather(cfg.dmc.n_steps * self.num_games, self.store)
                played = gathered["played"]
                self.episodes += gathered["episodes"]
                episodes = {
                    "episodes": float(gathered["episodes"]),
                    "actor_lag": float(gathered["actor_lag"]),
                    **self.balances.figures(),  # the actors' hands by role, added by the pool
                }
                stats = self.update()
                self.pool.publish(self.q)
            else:
                episodes = self.collect()
                stats = self.update()
                played = cfg.dmc.n_steps * self.num_games
            elapsed = self.clock() - started
            self.wall += elapsed
            self.global_step += played
            self.rollouts += 1
            row = {"global_step": self.global_step, "rollout": self.rollouts, "wall": self.wall}
            row.update(sps=played / elapsed, replay=float(self.filled), **stats, **episodes)
            row["network_share"] = self.timers.network_share()
            self.log_rollout(row)
            finished = self.global_step >= cfg.train.total_timesteps or self.budget_spent()
            if cfg.train.progress and not self.quiet and (finished or self.wall - self._printed >= PROGRESS_SECONDS):
                self._printed = self.wall
                progress(
                    f"decisions {self.global_step:>11}  dps {row['sps']:>7.0f}  loss {row['loss']:.4f}  "
                    f"ev {row['explained_variance']:+.3f}  q {row['q_taken']:+.3f}  replay {self.filled}  "
                    f"net {100 * row['network_share']:.0f}%"
                )
            if cfg.eval.every and self.global_step - self.last["eval"] >= cfg.eval.every:
                self.last["eval"] = self.global_step
                self.evaluate(cfg.eval.deals)
            if self.first_evaluation_due():
                self.evaluate(cfg.eval.first_deals)
            if finished or stop or self.global_step - self.last["checkpoint"] >= cfg.train.checkpoint_every:
                self.save_checkpoint()

    def _latest(self) -> str:
        return os.path.join(self.run_dir, "checkpoints", "latest.pt")

    # -- outputs -----------------------------------------------------------------
    def numpy_policy(self) -> NumpyPolicy:
        """The Q-network as a policy (its outputs the values; the greedy policy is their legal argmax)."""
        shape = PolicyShape.of(self.games.rules)
        return policy_from_torch([self.q], self.cfg.dmc.activation, where="the Q-network", shape=shape)

    def export(self, path: str) -> str:
        """The Q-network as a ``.pt`` policy file (``ppo:PATH`` plays it greedily), atomically."""
        export_policy(
            self.numpy_policy(),
            path,
            rules=self.games.rules,
            trainer="training.vector.dmc",
            outputs="q_values",
            num_timesteps=self.global_step,
        )
        return path

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """Duplicate evaluation of the greedy policy against ``eval.opponents`` (training/evaluation/evaluate.py);
        ``eval.jsonl`` gets the decisions, the training time and the advantage against each opponent, over all
        roles and per role (``role_figures``); TensorBoard its scalars. Its games draw from their own seeds, never
        the run's generator."""
        from training.common.tables import format_table
        from training.evaluation.evaluate import eval_scalars, evaluate_against, role_figures

        path = self.export(os.path.join(self.run_dir, "eval_policy.pt"))
        results = evaluate_against(f"ppo:{path}", self.cfg.eval, self.cfg.env.rules, deals)
        self.evals.append(
            {
                "global_step": self.global_step,
                "wall": self.wall,
                "deals": deals,
                "final": final,
                **role_figures(results),
                "results": results,
            }
        )
        write_lines(os.path.join(self.run_dir, "eval.jsonl"), self.evals)
        self.tb.scalars(eval_scalars(results), self.global_step)
        self.tb.flush()
        if not self.quiet and not final:  # the final table is the run layer's (stdout)
            progress(
                f"evaluation at {self.global_step} decisions ({self.wall:.0f} s), {deals} deals:\n"
                + format_table(results)
            )
        return results

    def _state(self) -> dict[str, Any]:
        book = self.book
        top = int(book.length.max())  # the open episodes' decisions are in [:top]
        return {
            "config": self.cfg.to_dict(),
            "counters": {
                "global_step": self.global_step,
                "updates": self.updates,
                "rollouts": self.rollouts,
                "episodes": self.episodes,
                "trained": self.trained,
                "wall": self.wall,
                "filled": self.filled,
                "cursor": self.cursor,
            },
            "last": dict(self.last),
            "net": self.q.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "engine": engine_state(self.games),
            "generator": self.gen.get_state(),
            "open": {
                "obs": torch.from_numpy(book.obs[:top].copy()),
                "action": torch.from_numpy(book.action[:top].copy()),
                "seat": torch.from_numpy(book.seat[:top].copy()),
                "paid": torch.from_numpy(book.paid_before[:top].copy()),
                "length": torch.from_numpy(book.length.copy()),
                "paid_now": torch.from_numpy(book.paid.copy()),
            },
            "replay": {
                "obs": torch.from_numpy(self.replay_obs[: self.filled].copy()),
                "action": torch.from_numpy(self.replay_action[: self.filled].copy()),
                "target": torch.from_numpy(self.replay_target[: self.filled].copy()),
            },
            "history": self.history,
            "evals": self.evals,
        }

    def save_checkpoint(self) -> str:
        """``checkpoints/latest.pt`` and ``checkpoints/step_<N>.pt`` (atomic), then the metrics."""
        self.last["checkpoint"] = self.global_step
        numbered = write_checkpoint(
            self.run_dir, TRAINER, self.global_step, self._state(), self.cfg.train.keep_checkpoints
        )
        write_lines(os.path.join(self.run_dir, "metrics.jsonl"), self.history)
        self.tb.flush()
        return numbered

    def load(self, path: str) -> None:
        """Restore a checkpoint written by :meth:`save_checkpoint` (tensors and plain values only)."""
        read_checkpoint(path, TRAINER, self._restore)

    def _restore(self, path: str, state: dict[str, Any]) -> None:
        """Everything :meth:`load` restores: the settings it must agree with, the network and Adam, the engine
        (checked whole by ``VectorGame.set_state``), the open episodes, the replay, the counters."""
        check_saved_settings(path, state["config"], self.cfg, RESUME_FIXED)
        for key in ("net", "optimizer"):
            check_finite(path, state[key], key)
        opened, replay, counters = state["open"], state["replay"], state["counters"]
        check_counters(
            path, counters, ("global_step", "updates", "rollouts", "episodes", "trained", "filled", "cursor")
        )
        check_counters(path, state["last"], ("eval", "checkpoint"), (), "last")
        n, p, a = self.num_games, self.num_players, self.num_actions
        self.filled, self.cursor = counters["filled"], counters["cursor"]
        if not 0 <= self.cursor < self.capacity or not 0 <= self.filled <= self.capacity:
            raise damaged(
                path, f"the replay's counters {self.filled}, {self.cursor} do not fit its size {self.capacity}"
            )
        if not isinstance(opened, dict) or not isinstance(opened.get("obs"), torch.Tensor):
            raise damaged(path, "open is not the open episodes' tensors")
        top = len(opened["obs"])
        length = checked_array(path, opened["length"], "open.length", (n,), "i", 0, top + 1)
        if top and length.max() != top:
            raise damaged(path, "the open episodes' lengths do not match their decisions")
        open_obs = checked_array(path, opened["obs"], "open.obs", (top, n, self.obs_size), "f")
        open_action = checked_array(path, opened["action"], "open.action", (top, n), "i", 0, a)
        open_seat = checked_array(path, opened["seat"], "open.seat", (top, n), "i", 0, p)
        open_paid = checked_array(path, opened["paid"], "open.paid", (top, n), "f")
        paid = checked_array(path, opened["paid_now"], "open.paid_now", (n, p), "f")
        replay_obs = checked_array(path, replay["obs"], "replay.obs", (self.filled, self.obs_size), "f")
        replay_action = checked_array(path, replay["action"], "replay.action", (self.filled,), "i", 0, a)
        replay_target = checked_array(path, replay["target"], "replay.target", (self.filled,), "f")
        try:
            self.q.load_state_dict(state["net"])
            self.optimizer.load_state_dict(state["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise damaged(path, f"the weights do not fit the config's network: {str(err).splitlines()[0]}") from None
        restore_engine(self.games, state["engine"])
        self.gen.set_state(state["generator"])
        book = self.book
        book.length[:], book.paid[:] = length, paid
        while len(book.obs) < top:
            book.grow()
        book.obs[:top], book.action[:top], book.seat[:top] = open_obs, open_action, open_seat
        book.paid_before[:top] = open_paid
        self.replay_obs[: self.filled] = replay_obs
        self.replay_action[: self.filled] = replay_action
        self.replay_target[: self.filled] = replay_target
        self.global_step, self.updates, self.rollouts = (
            counters["global_step"],
            counters["updates"],
            counters["rollouts"],
        )
        self.episodes, self.trained, self.wall = counters["episodes"], counters["trained"], counters["wall"]
        self.last = dict(state["last"])
        self.history, self.evals = list(state["history"]), list(state["evals"])

    # -- the run layer (training/common/runs.py) ----------------------------------

    def progress(self) -> int:
        """Decisions played so far (the whole run)."""
        return self.global_step

    def final_outputs(self) -> list[tuple[str, str]]:
        """The final policy, and every output of the run and how to use it."""
        final = self.export(os.path.join(self.run_dir, "final_policy.pt"))
        return [
            ("final_policy.pt", f"the Q-network, greedy: sergeant-major play --opponents ppo:{final} heuristic"),
            (
                "metrics.jsonl",
                "one line per rollout: decisions, training seconds, decisions/s, loss, explained var., role balances",
            ),
            (
                "eval.jsonl",
                "every evaluation: decisions, training seconds, advantage per opponent and role, the whole table",
            ),
            *self.tb_output(),
        ]

    def details(self) -> str:
        """The time by phase (the network against everything else)."""
        return "time by phase:\n" + self.timers.table()

    def facts(self) -> dict[str, Any]:
        return {
            "global_step": self.global_step,
            "rollouts": self.rollouts,
            "episodes": self.episodes,
            "device": str(self.device),
        }

    def close(self) -> None:
        """The acting processes stopped, if any, and the TensorBoard file closed (the games, the network and the
        replay are plain memory)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self.tb.close()


PROG = "python -m training.vector.dmc"


def backend(prog: str = PROG) -> Backend:
    """The DMC trainer as the run layer sees it (``sergeant-major train --backend dmc``)."""

    return Backend(
        prog=prog,
        load_config=load_dmc_config,
        latest_checkpoint=checkpoint_at("checkpoints", "latest.pt"),
        length=lambda cfg: (cfg.train.total_timesteps, "train.total_timesteps"),
        unit="decisions",
        build=lambda cfg, run_dir, resume, args: DMC(
            cfg, run_dir, resume=resume, quiet=args.quiet, ray=RayOptions.from_args(args) if "ray" in args else None
        ),
        stop_point="finishing the current rollout, then writing a checkpoint",
        reached=lambda cfg, summary: budget_reached(cfg, summary, "decisions"),
        further=budget_further,
    )


def main(argv: list[str] | None = None) -> int:
    """Train from a config (or resume a run); returns the exit status (2: bad input, 130: interrupted)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Deep Monte-Carlo self-play (DouZero style) over the batched engine, from a config to a policy.",
        epilog="examples:\n" + __doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--backend", choices=("dmc",), default="dmc", help=argparse.SUPPRESS)
    add_run_arguments(parser, "YAML config (configs/dmc.yaml; python -m training.vector.config dmc lists the keys)")
    return run_command(backend(), parser, argv)


if __name__ == "__main__":
    sys.exit(main())
