"""Deep Monte-Carlo (DMC) over the batched engine, DouZero style, CleanRL style: one path from a config to a result.

    sergeant-major train --config configs/dmc.yaml
    sergeant-major train --config configs/dmc.yaml --set env.num_games=512 --set dmc.epsilon=0.05
    sergeant-major train --resume runs/dmc --set train.total_timesteps=100000000
    (also: python -m training.vector.dmc, the same options except --ray)

The second from-scratch baseline next to the vector PPO trainer (training/vector/ppo.py), after DouZero (Zha et
al. 2021): no teacher, no warm start, no search labels, no critic, no bootstrapping. What one run does (the config
is :class:`training.vector.config.DMCConfig`, ``configs/dmc.yaml``):

1. ``env.num_games`` games of :class:`sm_env.compiled.batch.VectorGame` step together, one decision of each
   per engine step; the learner plays every seat of every game (pure self-play).
2. Acting: the Q-network gives one value per action id for the observation of the seat to act; the seat
   plays the legal action of the highest value (illegal ones are masked out), or with probability
   ``dmc.epsilon`` a legal action drawn uniformly (epsilon-greedy; DouZero's 0.01).
3. Targets: every decision is held in its game's open episode (:meth:`DMCActing.play`) until the episode ends;
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

Choices (docs/results/dmc-smoke.md and dmc-3h.md give the figures):

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

import os
import sys
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.players.ppo_agent import NumpyPolicy, PolicyShape, export_policy, policy_from_torch
from training.common.checkpoint import checked_array, damaged
from training.common.errors import ConfigError
from training.common.ray_cluster import RayOptions
from training.common.runs import Backend, progress
from training.evaluation.deals import derive_seed

from .actors import ActorPool, RayActorPool, flat_parameters, load_flat
from .config import DMCConfig, load_dmc_config
from .episodes import EpisodeBook
from .ppo import (
    BatchedRun,
    RoleBalances,
    Timers,
    batched_backend,
    batched_main,
    explained_variance,
    mlp,
    step_rewards,
)

PROGRESS_SECONDS = 10.0  # at most one progress line per this many seconds of training (metrics.jsonl has all)
SLOTS = 2  # slots of finished decisions per acting process: how far it may act ahead of the learner
_MASKED = -1e9


def epsilon_greedy(
    q: nn.Module, obs: torch.Tensor, mask: torch.Tensor, epsilon: float, generator: torch.Generator
) -> torch.Tensor:
    """Per row the legal action of the highest value, or with probability ``epsilon`` one drawn uniformly among
    the legal actions (the draws from ``generator``): DMC's acting rule, in the learner and in every actor."""
    with torch.no_grad():  # the network on its device (train.device), the rest on the CPU
        values = q(obs.to(next(q.parameters()).device)).cpu()
    actions = values.masked_fill(~mask, _MASKED).argmax(1)
    explore = torch.nonzero(torch.rand(len(obs), generator=generator) < epsilon).squeeze(1)
    if len(explore):
        uniform = torch.zeros(len(explore), values.shape[1]).masked_fill(~mask[explore], _MASKED)
        u = torch.rand(uniform.shape, generator=generator).clamp_(1e-12, 1.0 - 1e-7)
        actions[explore] = torch.argmax(uniform - torch.log(-torch.log(u)), dim=1)  # Gumbel-max: uniform on legal
    return actions


class DMCActors:
    """What DMC's actors are (the ``kind`` of :class:`ActorPool` and :class:`RayActorPool`): :class:`DMCActing`, the
    Q-network published, and :data:`SLOTS` slots of finished decisions (a rollout's may fill more than one)."""

    name = "dmc-actor"
    slots = SLOTS

    def layout(self, trainer: Any, games: int) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
        rows = 2 * trainer.cfg.dmc.n_steps * games
        return {
            "obs": ((rows, trainer.obs_size), torch.float32),
            "action": ((rows,), torch.int64),
            "target": ((rows,), torch.float32),
        }

    def published(self, trainer: Any) -> list[torch.Tensor]:
        return [flat_parameters(trainer.q)]

    def acting(self, index: int, generation: int, num_games: int, cfg: Any) -> DMCActing:
        return DMCActing.dealt(index, generation, num_games, cfg)


class DMCActing:
    """DMC's acting (module docstring, steps 2 and 3): games, a network, the exploration's generator, the open
    episodes and the hands' balances by role; :meth:`play` steps every game ``dmc.n_steps`` times. The one loop
    of the learner's process (``train.actors: 0``, :meth:`DMC.collect`, with the run's network, generator and
    timers) and of every actor (:meth:`dealt`: its own games and network copy, seeded from (run seed, actor,
    generation), :meth:`rollout`), in an acting process (:func:`_actor_main`) or a Ray actor
    (:class:`RayActorPool`)."""

    def __init__(
        self, games: Any, q: nn.Module, cfg: Any, generator: torch.Generator, timers: Timers | None = None
    ) -> None:
        self.games, self.q, self.cfg, self.generator = games, q, cfg, generator
        self.num_games, size, players = games.num_games, games.observation_size, games.rules.num_players
        self.timers = timers or Timers()
        self.book = EpisodeBook(self.num_games, size, players)  # the open episodes (training/vector/episodes.py)
        self.balances = RoleBalances(games)  # every seat's hands by role
        self.every_seat = np.ones((self.num_games, players), dtype=np.bool_)
        self.obs = np.zeros((self.num_games, size), dtype=np.float32)  # this step's view of every game
        self.mask = np.zeros((self.num_games, games.num_actions), dtype=np.int8)

    @classmethod
    def dealt(cls, index: int, generation: int, num_games: int, cfg: Any) -> DMCActing:
        """Actor ``index``'s own ``num_games`` games and network (CPU), seeded from (run seed, actor, generation)."""
        from sm_env.compiled.batch import VectorGame

        seed = derive_seed(cfg.seed, index, generation, 0xAC7)
        env = cfg.env
        games = VectorGame(num_games, rules=env.rules, seed=seed, episode=env.episode, max_hands=env.max_hands)
        games.reset()
        q = mlp(games.observation_size, cfg.dmc.net_arch, games.num_actions, cfg.dmc.activation)
        return cls(games, q, cfg, torch.Generator().manual_seed(seed))

    def load(self, tensors: list[Any]) -> None:
        """The learner's weights (:meth:`DMCActors.published`) into this actor's network."""
        load_flat(self.q, tensors[0])

    def play(self) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
        """``dmc.n_steps`` engine steps in every game: the decisions of the episodes that ended, in the order they
        ended (observations, actions, targets per step that ended some), and the episodes ended."""
        g, book, cfg, t_ = self.games, self.book, self.cfg, self.timers
        finished, ended = [], 0
        for _ in range(cfg.dmc.n_steps):
            with t_("engine"):
                seat = g.current_player.astype(np.int64)
                g.legal_mask(out=self.mask)
                g.observe(out=self.obs)
            with t_("act forward"):
                mask = torch.from_numpy(self.mask).bool()
                actions = epsilon_greedy(self.q, torch.from_numpy(self.obs), mask, cfg.dmc.epsilon, self.generator)
                actions = actions.numpy()
            with t_("bookkeeping"):
                book.record(self.obs, actions, seat)
                self.balances.before(g, self.obs, seat)
            with t_("engine"):
                rewards, done = g.step(actions)
            with t_("bookkeeping"):
                self.balances.after(g, rewards, done, self.every_seat)
                closed = book.pay(step_rewards(g, rewards, done, cfg.env), done)
                if closed is not None:
                    finished.append(closed)
                    ended += int(done.sum())
        return finished, ended

    def rollout(self) -> tuple[dict[str, np.ndarray], int, int, tuple[Any, ...]]:
        """An actor's :meth:`play`: the finished decisions (:meth:`DMCActors.layout`'s ``obs``, ``action``, float32
        ``target``), the decisions played, the episodes ended and the hands' balances by role
        (``RoleBalances.counted``)."""
        finished, ended = self.play()
        played, balances = self.cfg.dmc.n_steps * self.num_games, self.balances.counted()
        if not finished:
            arrays = {
                "obs": np.zeros((0, self.obs.shape[1]), np.float32),
                "action": np.zeros(0, np.int64),
                "target": np.zeros(0, np.float32),
            }
            return arrays, played, 0, balances
        arrays = {
            "obs": np.concatenate([f[0] for f in finished]),
            "action": np.concatenate([f[1] for f in finished]),
            "target": np.concatenate([f[2] for f in finished]).astype(np.float32),
        }
        return arrays, played, ended, balances


class DMC(BatchedRun):
    """One run: the games, the Q-network, the open episodes, the replay and the steps between rollouts."""

    trainer = "dmc"
    unit = "decisions"
    counter_names = ("global_step", "updates", "rollouts", "episodes", "trained", "wall", "filled", "cursor")
    resume_fixed = (  # the network, the games, the replay's size and its targets
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

    def __init__(
        self, cfg: DMCConfig, run_dir: str, resume: bool = False, quiet: bool = False, ray: RayOptions | None = None
    ) -> None:
        if ray is not None and not cfg.train.actors:
            raise ConfigError("--ray runs the acting processes as Ray actors: set train.actors to 1 or more")
        self.ray = ray
        self._start(cfg, run_dir, quiet)  # the generator: exploration, minibatch draws
        g, n = self.games, self.num_games
        self.q = mlp(self.obs_size, cfg.dmc.net_arch, self.num_actions, cfg.dmc.activation).to(self.device)
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=cfg.dmc.learning_rate)
        # the acting of this process (train.actors: 0): the run's games, network, generator and timers
        self.acting = DMCActing(g, self.q, cfg, self.gen, self.timers)
        self.book = self.acting.book  # the open episodes (checkpointed)
        self.balances = self.acting.balances  # every seat's hands by role (metrics.jsonl; the actors' with actors)
        # the replay: the latest finished decisions, a ring
        self.capacity = cfg.dmc.replay_rollouts * cfg.dmc.n_steps * n
        self.replay_obs = np.zeros((self.capacity, self.obs_size), dtype=np.float32)
        self.replay_action = np.zeros(self.capacity, dtype=np.int64)
        self.replay_target = np.zeros(self.capacity, dtype=np.float32)
        self.filled = self.cursor = 0
        self.global_step = self.updates = self.rollouts = self.episodes = self.trained = 0
        self.last = {"eval": 0, "checkpoint": 0}
        self._printed = -PROGRESS_SECONDS
        self._open(resume)

    # -- rollout -----------------------------------------------------------------
    def collect(self) -> dict[str, float]:
        """:meth:`DMCActing.play` in this process: the decisions of the episodes that end go to the replay with
        their returns (:meth:`store`); returns the episodes ended and the balances of the hands by role
        (:class:`training.vector.ppo.RoleBalances`)."""
        finished, ended = self.acting.play()
        self.bar.update(self.cfg.dmc.n_steps * self.num_games)  # a decision in every game a step, as global_step
        for decisions in finished:
            self.store(*decisions)
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

    def file_decisions(self, actor: int, arrays: dict[str, np.ndarray]) -> None:
        """An actor's finished decisions (:class:`DMCActors`' arrays) into the replay."""
        self.store(arrays["obs"], arrays["action"], arrays["target"])

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
    def rollout(self) -> tuple[int, dict[str, float]]:
        """:meth:`collect` (or the acting processes' decisions, ``train.actors``), then :meth:`update`: the
        decisions played and the row's figures."""
        cfg = self.cfg
        if cfg.train.actors:  # the actors play while the network learns (training/vector/actors.py)
            if self.pool is None:
                args = (cfg, self, DMCActors(), progress, self.balances)
                self.pool = ActorPool(*args) if self.ray is None else RayActorPool(*args, ray=self.ray)
            with self.timers("waiting for actors"):
                gathered = self.pool.gather(self.file_decisions, cfg.dmc.n_steps * self.num_games)
            played = gathered["played"]
            self.bar.update(played)  # the actors' decisions, as global_step counts them
            self.episodes += gathered["episodes"]
            episodes = {
                "episodes": float(gathered["episodes"]),
                "actor_lag": float(gathered["actor_lag"]),
                **self.balances.figures(),  # the actors' hands by role, added by the pool
            }
            stats = self.update()
            self.pool.publish(self)
        else:
            episodes = self.collect()
            stats = self.update()
            played = cfg.dmc.n_steps * self.num_games
        return played, {"replay": float(self.filled), **stats, **episodes}

    def report(self, row: dict[str, Any], finished: bool) -> None:
        """The progress line, at most every ``PROGRESS_SECONDS`` of training and at the end."""
        if self.cfg.train.progress and not self.quiet and (finished or self.wall - self._printed >= PROGRESS_SECONDS):
            self._printed = self.wall
            progress(
                f"decisions {self.global_step:>11}  dps {row['sps']:>7.0f}  loss {row['loss']:.4f}  "
                f"ev {row['explained_variance']:+.3f}  q {row['q_taken']:+.3f}  replay {self.filled}  "
                f"net {100 * row['network_share']:.0f}%"
            )

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

    # -- checkpoints -------------------------------------------------------------
    def network(self) -> nn.Module:
        return self.q

    def _own_state(self) -> dict[str, Any]:
        """The open episodes and the replay."""
        book = self.book
        top = int(book.length.max())  # the open episodes' decisions are in [:top]
        return {
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
        }

    def _restore(self, path: str, state: dict[str, Any]) -> None:
        """Everything :meth:`load` restores: the common part (:meth:`BatchedRun._restore_saved`), the open
        episodes, the replay."""
        self._check_saved(path, state)
        opened, replay, counters = state["open"], state["replay"], state["counters"]
        n, p, a = self.num_games, self.num_players, self.num_actions
        filled, cursor = counters["filled"], counters["cursor"]
        if not 0 <= cursor < self.capacity or not 0 <= filled <= self.capacity:
            raise damaged(path, f"the replay's counters {filled}, {cursor} do not fit its size {self.capacity}")
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
        replay_obs = checked_array(path, replay["obs"], "replay.obs", (filled, self.obs_size), "f")
        replay_action = checked_array(path, replay["action"], "replay.action", (filled,), "i", 0, a)
        replay_target = checked_array(path, replay["target"], "replay.target", (filled,), "f")
        self._restore_saved(path, state)
        book = self.book
        book.length[:], book.paid[:] = length, paid
        while len(book.obs) < top:
            book.grow()
        book.obs[:top], book.action[:top], book.seat[:top] = open_obs, open_action, open_seat
        book.paid_before[:top] = open_paid
        self.replay_obs[:filled] = replay_obs
        self.replay_action[:filled] = replay_action
        self.replay_target[:filled] = replay_target

    # -- the run layer (training/common/runs.py) ----------------------------------
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

    def facts(self) -> dict[str, Any]:
        return {
            "global_step": self.global_step,
            "rollouts": self.rollouts,
            "episodes": self.episodes,
            "device": str(self.device),
        }


PROG = "sergeant-major train --backend dmc"


def backend(prog: str = PROG) -> Backend:
    """The DMC trainer as the run layer sees it (``sergeant-major train --backend dmc``)."""
    return batched_backend(prog, load_dmc_config, DMC)


def main(argv: list[str] | None = None) -> int:
    """Train from a config (or resume a run); returns the exit status (2: bad input, 130: interrupted)."""
    description = "Deep Monte-Carlo self-play (DouZero style) over the batched engine, from a config to a policy."
    return batched_main(backend(), "dmc", "configs/dmc.yaml", description, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
