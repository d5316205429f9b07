"""Masked PPO over the batched engine, CleanRL style: one file, one path from a config to a result.

    sergeant-major train --config configs/selfplay.yaml
    sergeant-major train --config configs/selfplay.yaml --set ppo.critic=full --set env.num_games=512
    sergeant-major train --resume runs/selfplay --set train.total_timesteps=20000000
    (also: python -m training.vector.ppo, the same options)

What one run does (the config is training/vector/config.py):

1. ``env.num_games`` games of :class:`sm_env.compiled.batch.VectorGame` step together; each engine step is one
   decision in every game. Each episode, one seat of every game is the learner and the others draw
   their player from ``opponents.mix``: ``self`` (the learner too: self-play), a frozen snapshot of the
   learner, a frozen policy file, or uniform random play.
2. Rollout (``ppo.n_steps`` engine steps): the learner's actor picks the actions of its seats (sampled from
   the softmax over the legal actions: illegal logits are masked out). Every learner seat of every game is
   its own trajectory: a transition's reward is that seat's hand balance (tricks - quota, times
   ``env.reward_scale``) paid when a hand ends after it and before the seat's next decision (in game
   episodes with ``env.win_reward``, plus the game's result at its end: :func:`step_rewards`), and it is
   terminal when the episode ends there. A trajectory still open at the end of the rollout is bootstrapped
   with the critic's value of the seat's view at that moment (:func:`per_seat_gae`); the rewards paid
   after that moment and before the seat's next decision are left to that value. A game stopped by
   ``env.max_hands`` ends its trajectories like a finished one (no bootstrap).
3. Update: ``ppo.n_epochs`` passes of clipped PPO over minibatches of the learner's transitions, the
   entropy over the legal actions, a value loss, gradient clipping, optional early stop on approx_kl
   (during the first ``ppo.critic_warmup`` rollouts only the value loss: the actor stays as loaded).
   Fine-tuning options: ``ppo.anchor_coef`` adds KL(start policy || actor) over the legal actions of every
   learner decision (the start policy is ``ppo.init``, frozen), and ``ppo.train_decisions`` limits the policy
   loss and the entropy bonus to some decision types (the phase read from the observation,
   :func:`sm_env.observation.observed_phases`); the other decisions are still played by the actor.
4. Between rollouts: snapshots join the pool, checkpoints (atomic; ``--resume`` continues exactly: the same
   weights as an uninterrupted run), duplicate evaluations against baselines (training/evaluation/evaluate.py:
   every ``eval.every`` decisions, and a first, short one past ``eval.first_minutes`` of training), the stop at
   ``train.total_timesteps`` or ``train.max_hours`` of training (training/common/budget.py), whichever comes first.

The critic (``ppo.critic: full``) may see the cards hidden from the seat (:meth:`VectorGame.full_state`),
an asymmetric actor-critic: the actor, the only part exported, sees the observation alone.

Acting processes apart from the learner (``train.actors: N``, training/vector/actors.py; 0, the default, acts in
this process between updates and is bit-for-bit repeatable): N processes (or Ray actors, ``--ray [ADDRESS]``)
share the ``env.num_games`` games, each a :class:`VectorPPO` of its share (:class:`PPOActing`: the same seats,
opponents, sampling and bootstrap as step 2) with a CPU copy of the actor-critic and of the snapshot pool; each
rollout of every actor fills the buffer's columns of its games (:meth:`VectorPPO.file_rollout`), and the update of
step 3 runs on that buffer while the actors play the next rollouts. An actor plays a rollout, waits for its
slot, and plays the next: so a rollout is played with the weights of at most 2 updates ago (``actor_lag`` in
``metrics.jsonl``: 2 from the third round on when the actors are faster than the learner), and PPO's ratio is
taken against the log-probabilities it was played with.

Devices (``train.device``, :mod:`training.common.device`; default ``auto``: CUDA where present, else the CPU):
every network of the run (the actor, the critic, the frozen policies, the anchor) lives there and the update runs
there; so do the rollouts' forward passes, one network for acting and learning (nothing to copy back after an
update): each engine step sends the acting seats' observations over and takes the logits back. The engine, the
rollout buffer and every random draw (the sampling, the seats, the minibatch order: the run's CPU generator)
stay on the CPU. On ``cpu`` nothing moves: the same seed gives the run it gave before the setting. Checkpoints
hold CPU tensors (loadable anywhere) and a resume puts them on the configured device.

Every size comes from the rule set (``env.rules``), as data: the networks take ``observation_size(rules)``
inputs (789 for the standard rules, 791 with the 74 actions of docs/rules.md 10.8, 900 with ``one_card_kitty``)
and give ``rules.num_actions`` logits (56 or 74), and the seats of a game are ``rules.num_players``. Any rule
set the batched engine runs trains; the others are refused by the config in one line
(:func:`sm_env.compiled.support.unsupported` names what the compiled engine does not run), and will train
with no change here once the engine runs them. Frozen policy files and ``ppo.init`` must be of the rule set's
shape (the config refuses others, naming what the file plays), and ``final_policy.pt`` records the rule set.

Outputs in the run folder: ``final_policy.pt`` (the actor as :func:`agents.players.ppo_agent.export_policy`
writes it; ``agents.make_agent("ppo:RUN/final_policy.pt")`` plays it), ``checkpoints/latest.pt`` (``trainer:
vector-ppo``, training/common/checkpoint.py),
``metrics.jsonl`` (one line per rollout: the training wall time so far, SPS, policy/value loss, entropy,
approx_kl, clipfrac, explained variance, the learner's balance per role of the hands that ended
(:class:`RoleBalances`), the time breakdown), ``eval.jsonl`` (one line per evaluation, with the decisions, the
training wall time and the advantage per opponent and role: the learning curve), ``tb/`` (TensorBoard scalars of
both, ``train.tensorboard``: training/common/scalars.py), ``final_eval.json``, ``config.yaml`` and ``summary.json``
(the run layer's, training/common/runs.py: Ctrl-C writes a checkpoint after the current rollout).

The deep Monte-Carlo trainer (training/vector/dmc.py) reuses this file's pieces: :class:`BatchedRun` (the run:
the games, the loop between rollouts, the evaluations, the checkpoints' common part), :func:`mlp`, :class:`Timers`,
:class:`RoleBalances`, :func:`step_rewards`, :func:`explained_variance`, :func:`batched_backend` and
:func:`batched_main`; both write the one checkpoint format (training/common/checkpoint.py) and the one run-folder
layout (training/common/folders.py).

Time is measured per phase (:class:`Timers`): the network (forward to act, forward for the values,
forward+backward+step of the update) against everything else (the engine, sampling, the opponents'
random play, bookkeeping, batching); ``python benchmarks/bench_trainer.py`` prints the breakdown.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.players.ppo_agent import (
    NumpyPolicy,
    PolicyShape,
    export_policy,
    load_numpy_policy,
    policy_from_torch,
    policy_into_torch,
)
from sm_env.compiled.batch import VectorGame
from sm_env.compiled.kernels import random_legal
from sm_env.core.episode import result_table
from sm_env.core.game import NUM_ACTIONS, PHASE_NAMES, role_names
from sm_env.observation import OBSERVATION_SIZE, layout_of, observed_phases
from training.common import budget
from training.common.checkpoint import (
    CheckpointError,
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
from training.common.progress import progress_bar
from training.common.ray_cluster import RayOptions
from training.common.runs import Backend, add_run_arguments, checkpoint_at, progress, run_command, write_lines
from training.common.scalars import ScalarLog, metrics_scalars
from training.common.yaml_config import ConfigError, save_config
from training.evaluation.deals import derive_seed

from .actors import ActorPool, RayActorPool, flat_parameters, load_flat
from .config import (
    RANDOM,
    SELF,
    SNAPSHOTS,
    SelfPlayConfig,
    SelfPlayEnvConfig,
    load_selfplay_config,
    policy_file,
)

LEARNER, RANDOM_PLAYER = 0, 1  # seat kinds; 2 + k: the k-th frozen policy (files, then snapshot slots)
NETWORK_PHASES = ("act forward", "value forward", "update network")
_MASKED = -1e9  # logit of an illegal action: exp() is 0, and 0 * _MASKED stays finite in the entropy
_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


# ---------------------------------------------------------------------------- networks


def mlp(inputs: int, net_arch: list[int], outputs: int, activation: str) -> nn.Sequential:
    """Linear layers of ``net_arch`` sizes with the activation between them, then a linear output layer."""
    layers: list[nn.Module] = []
    for width in net_arch:
        layers += [nn.Linear(inputs, width), _ACTIVATIONS[activation]()]
        inputs = width
    layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """An actor (observation -> one logit per action) and a separate critic (observation [+ full state] ->
    value), both MLPs of ``net_arch`` (SB3's actor-critic layout: no shared layers). ``full_size``: the
    entries of the full state the critic also sees (0: the observation alone)."""

    def __init__(
        self, observation_size: int, num_actions: int, net_arch: list[int], activation: str, full_size: int = 0
    ) -> None:
        super().__init__()
        self.net_arch, self.activation, self.full_critic = list(net_arch), activation, full_size > 0
        self.observation_size, self.num_actions = observation_size, num_actions
        self.actor = mlp(observation_size, net_arch, num_actions, activation)
        self.critic = mlp(observation_size + full_size, net_arch, 1, activation)

    def fresh_actor(self) -> nn.Sequential:
        """A new actor of this network's sizes (for frozen copies)."""
        return mlp(self.observation_size, self.net_arch, self.num_actions, self.activation)

    def value(self, obs: torch.Tensor, full: torch.Tensor | None) -> torch.Tensor:
        x = torch.cat([obs, full], dim=1) if self.full_critic else obs
        return self.critic(x).squeeze(-1)


def load_actor(actor: nn.Sequential, policy: NumpyPolicy, where: str, net_arch: list[int], activation: str) -> None:
    """Copy a loaded policy's weights into ``actor``; its network must be ``net_arch`` / ``activation``."""
    if policy.net_arch != list(net_arch) or policy.activation != activation:
        raise ConfigError(
            f"{where}: the policy is an MLP {policy.net_arch} {policy.activation}; the config's network is "
            f"ppo.net_arch {list(net_arch)}, ppo.activation {activation!r}: set them to the policy's"
        )
    policy_into_torch(policy, [actor], where)


def network_flops(
    net_arch: list[int],
    full_critic: bool = False,
    observation_size: int = OBSERVATION_SIZE,
    num_actions: int = NUM_ACTIONS,
    full_size: int = 156,
) -> dict[str, float]:
    """Floating-point operations per decision (a multiply-add counts 2; biases and activations left out), for a
    rule set of these sizes (default: the standard rules', and the three-player full state of 156 entries).

    ``act``: the actor's and the critic's forward passes (acting, then the value of the transition);
    ``update_epoch``: forward + backward of both (backward ~ 2 forwards) for one pass over the decision.
    """

    def forward(inputs: int, outputs: int) -> float:
        sizes = [inputs, *net_arch, outputs]
        return float(sum(2 * a * b for a, b in zip(sizes, sizes[1:], strict=False)))

    actor = forward(observation_size, num_actions)
    critic = forward(observation_size + (full_size if full_critic else 0), 1)
    return {
        "actor_forward": actor,
        "critic_forward": critic,
        "act": actor + critic,
        "update_epoch": 3 * (actor + critic),
    }


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with every illegal action (``mask`` False) set to a large negative number."""
    return logits.masked_fill(~mask, _MASKED)


def sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from softmax(logits) (Gumbel-max with ``generator``)."""
    u = torch.rand(logits.shape, generator=generator).clamp_(1e-12, 1.0 - 1e-7)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=1)


# ---------------------------------------------------------------------------- advantages


def per_seat_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    next_index: np.ndarray,
    tail_values: np.ndarray,
    gamma: float,
    lam: float,
    block: int,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE along each seat's own sequence of transitions; returns (advantages, returns).

    The arrays are flat over a rollout in step order (entry ``t * block + i``: engine step t, game i).
    For transition j: ``rewards[j]`` is what the seat was paid after it and before its next decision,
    ``dones[j]`` whether its episode ended there, ``next_index[j]`` the entry of the same seat's next
    decision in the rollout (-1: none), and ``tail_values[j]`` the value to bootstrap from when the
    episode goes on but the rollout ended before the seat's next decision. A seat's next decision is
    always at a later engine step, so one backward sweep over the steps gives, with
    ``V' = 0 if done else values[next] (or tail_values)``::

        delta[j] = rewards[j] + gamma * V' - values[j]
        adv[j]   = delta[j] + gamma * lam * (1 - done[j]) * adv[next[j]]   (0 without a next)
    """
    adv = np.zeros(len(rewards), dtype=np.float32)
    for start in range(len(rewards) - block, -1, -block):
        span = slice(start, start + block)
        nxt = next_index[span]
        has_next = nxt >= 0
        safe = np.where(has_next, nxt, 0)
        next_value = np.where(has_next, values[safe], tail_values[span])
        next_adv = np.where(has_next, adv[safe], 0.0)
        alive = ~dones[span]
        delta = rewards[span] + gamma * next_value * alive - values[span]
        adv[span] = delta + gamma * lam * alive * next_adv
    return adv, adv + values


def explained_variance(predicted: np.ndarray, target: np.ndarray) -> float:
    """1 - Var(target - predicted) / Var(target) (nan when the target does not vary)."""
    var = float(np.var(target))
    return float("nan") if var == 0 else 1.0 - float(np.var(target - predicted)) / var


class Timers:
    """Seconds spent per phase: ``with timers("engine"): ...``."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start

    def network_share(self) -> float:
        total = sum(self.seconds.values())
        return sum(self.seconds.get(p, 0.0) for p in NETWORK_PHASES) / total if total else 0.0

    def table(self) -> str:
        total = sum(self.seconds.values()) or 1.0
        rows = sorted(self.seconds.items(), key=lambda kv: -kv[1])
        lines = [f"  {phase:<16}{sec:>9.2f} s {100 * sec / total:>6.1f}%" for phase, sec in rows]
        lines.append(f"  network (forward/backward): {100 * self.network_share():.1f}% of the timed wall time")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- checkpoints


def step_rewards(games: VectorGame, rewards: np.ndarray, done: np.ndarray, env: SelfPlayEnvConfig) -> np.ndarray:
    """The batched trainers' rewards by seat (float64 [N, P]) for the engine step that returned ``rewards`` and
    ``done``: the hands' balances times ``env.reward_scale``; plus, with ``env.win_reward``, each game that ended
    won pays its result (:func:`sm_env.core.episode.result_table`: the results by winner bits) times
    ``env.win_reward``."""
    paid = rewards.astype(np.float64) * env.reward_scale
    if env.win_reward and done.any():
        won = done & ~games.truncated
        paid[won] += env.win_reward * np.asarray(result_table(games.num_players))[games.winners[won]]
    return paid


class RoleBalances:
    """The balances of the hands that end in a rollout, per role of the seats counted (the learner's in PPO,
    every seat in DMC): in zero-sum self-play the mean return is 0 whatever is learnt, the roles' balances are
    not. Each engine step: :meth:`before` (the dealer of each game's hand in progress, from the acting seat's
    role in its observation), then :meth:`after` with the step's balances (``VectorGame.step``'s rewards: the
    hand's balance in tricks, or its chips under rules with chips) and which hands ended; :meth:`figures` at the
    end of the rollout. No random draw, nothing to checkpoint (the counts start again every rollout)."""

    def __init__(self, games: VectorGame) -> None:
        self.roles, self.players = role_names(games.rules), games.num_players
        self.game_episodes = games.episode != "hand"
        self.offset = next(offset for name, offset, _ in layout_of(games.rules) if name == "role")
        n = games.num_games
        self.dealer, self.known = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.bool_)
        self.hand = np.zeros(n, dtype=np.int64)
        self.sums, self.counts, self.made = np.zeros(self.players), np.zeros(self.players), 0

    def before(self, games: VectorGame, obs: np.ndarray, seats: np.ndarray) -> None:
        """The dealer of each game, from the observations ``obs`` of the seats to act, ``seats`` (unknown while
        the role one-hot is empty: an auction's bidding)."""
        one_hot = obs[:, self.offset : self.offset + self.players]
        self.known = one_hot.sum(axis=1) == 1
        self.dealer = (seats - one_hot.argmax(axis=1)) % self.players
        if self.game_episodes:
            self.hand = games.hand_number

    def after(self, games: VectorGame, balances: np.ndarray, done: np.ndarray, counted: np.ndarray) -> None:
        """The step's ``balances`` (float [N, P] by seat) of the hands it ended, for the seats ``counted`` (bool
        [N, P]), by role."""
        ended = (done | (games.hand_number != self.hand)) if self.game_episodes else done
        rows = np.flatnonzero(ended & self.known)
        if not len(rows):
            return
        roles = (np.arange(self.players)[None, :] - self.dealer[rows, None]) % self.players
        keep = counted[rows]
        np.add.at(self.sums, roles[keep], balances[rows][keep])
        np.add.at(self.counts, roles[keep], 1)
        self.made += int((balances[rows][keep] >= 0).sum())

    def counted(self) -> tuple[list[float], list[float], int]:
        """The sums and counts by role and the hands that made their quota so far (what :meth:`add` takes), and
        the counts start again: an acting process hands them to the learner (training/vector/actors.py)."""
        out = (self.sums.tolist(), self.counts.tolist(), self.made)
        self.sums[:], self.counts[:], self.made = 0.0, 0.0, 0
        return out

    def add(self, sums: list[float], counts: list[float], made: int) -> None:
        """Another set of games' :meth:`counted` figures, added to these."""
        self.sums += np.asarray(sums)
        self.counts += np.asarray(counts)
        self.made += int(made)

    def figures(self) -> dict[str, float]:
        """``balance_<role>`` (the mean balance of the counted hands in that role, NaN for none), ``hands``
        (how many) and ``quota_rate`` (the share that made their quota); the counts start again."""
        out = {
            f"balance_{role}": float(self.sums[k] / self.counts[k]) if self.counts[k] else float("nan")
            for k, role in enumerate(self.roles)
        }
        total = float(self.counts.sum())
        out["hands"] = total
        out["quota_rate"] = self.made / total if total else float("nan")
        self.sums[:], self.counts[:], self.made = 0.0, 0.0, 0
        return out


def check_saved_settings(path: str, saved: dict[str, Any], cfg: Any, keys: tuple[tuple[str, str], ...]) -> None:
    """A :class:`CheckpointError` if the config a run was trained with (``saved``, plain values) differs from
    ``cfg`` in one of the ``(section, key)`` settings a resume cannot change."""
    for section, key in keys:
        part = getattr(cfg, section)
        now = getattr(part, key)
        field = type(part).model_fields[key]
        was = saved[section].get(key, field.get_default(call_default_factory=True))  # a key newer than the run
        if was != now:
            raise CheckpointError(
                f"{path}: the run was trained with {section}.{key} {was!r}, the config says "
                f"{now!r}; resume with the config the run was trained with"
            )


# ---------------------------------------------------------------------------- the trainer


class BatchedRun:
    """What the runs of the batched trainers share (:class:`VectorPPO`, :class:`training.vector.dmc.DMC`): the
    device, the seeds and the games (:meth:`_start`), the run folder (:meth:`_open`); :meth:`train` runs the
    subclass's rollouts (:meth:`rollout`: acting and update) until ``train.total_timesteps`` decisions or
    ``train.max_hours`` of training, or until ``stop`` is set (a Ctrl-C, checked after each rollout), under the
    progress bar, with the evaluations and the checkpoints due between rollouts, and always leaves a checkpoint at
    the end; the TensorBoard scalars (``tb``) of every rollout and evaluation; the checkpoints' common part."""

    clock = staticmethod(time.perf_counter)  # the training time's clock (a rollout's seconds)
    pool: Any = None  # the acting processes apart from the learner (train.actors >= 1: training/vector/actors.py)
    tb: Any = None  # the TensorBoard log (ScalarLog), opened with the run folder
    trainer: str  # its checkpoints' trainer field (training/common/checkpoint.py)
    unit: str  # what global_step counts (the progress lines, the run layer's messages)
    counter_names: tuple[str, ...]  # the counters a checkpoint holds: whole numbers, and the training time wall
    resume_fixed: tuple[tuple[str, str], ...]  # the (section, key) settings a resumed run must keep
    cfg: Any
    global_step: int
    rollouts: int
    last: dict[str, Any]
    optimizer: torch.optim.Optimizer

    def _start(self, cfg: Any, run_dir: str, quiet: bool) -> None:
        """The first part of a trainer's ``__init__``: the settings, the device, the seeds, ``env.num_games`` games
        (reset) and the empty logs; what the trainer builds next draws from the seeded generators in its order."""
        self.cfg, self.run_dir, self.quiet = cfg, run_dir, quiet
        self.device = resolve_device(cfg.train.device)  # every network; the engine, buffers and draws: the CPU
        torch.set_num_threads(cfg.train.torch_threads)
        torch.manual_seed(cfg.seed)  # the networks' initial weights
        self.gen = torch.Generator().manual_seed(cfg.seed)  # every draw of the run (on the CPU)
        self.num_games = cfg.env.num_games
        self.games = VectorGame(
            self.num_games, rules=cfg.env.rules, seed=cfg.seed, episode=cfg.env.episode, max_hands=cfg.env.max_hands
        )
        self.games.reset()
        g = self.games  # the sizes, from the rule set
        self.obs_size, self.num_actions, self.num_players = g.observation_size, g.num_actions, g.rules.num_players
        self.history: list[dict[str, Any]] = []
        self.evals: list[dict[str, Any]] = []
        self.wall = 0.0
        self.timers = Timers()
        self.bar: Any = progress_bar(None, "", "", enabled=False)  # train()'s, advanced by the rollouts (a silent one)

    def _open(self, resume: bool, saved_config: Any = None) -> None:
        """The last part of a trainer's ``__init__``: the run folder, the checkpoint restored (``resume``),
        ``config.yaml`` written (``saved_config``, default the config, with this call's overrides), TensorBoard."""
        os.makedirs(os.path.join(self.run_dir, "checkpoints"), exist_ok=True)
        if resume:
            self.load(self._latest())
        save_config(saved_config or self.cfg, os.path.join(self.run_dir, "config.yaml"))
        self.tb = ScalarLog(self.run_dir, self.cfg.train.tensorboard, purge_step=self.global_step)

    # -- the loop ----------------------------------------------------------------
    def train(self, stop: Any = None) -> None:
        """The run to its end or to ``stop``; a checkpoint at the end."""
        self.call_start = (self.global_step, self.wall)  # this call's rate aims the bar at the budget's end
        try:
            with self.progress_display() as self.bar:
                self._train(stop)
        finally:
            self.bar = progress_bar(None, "", "", enabled=False)
        if self.last["checkpoint"] != self.global_step or not os.path.isfile(self._latest()):
            self.save_checkpoint()  # stopped before a first rollout, or a run already at its end: resumable

    def _train(self, stop: Any) -> None:
        """The rollouts of :meth:`train`, each with its ``metrics.jsonl`` row, :meth:`report`, the evaluations due,
        :meth:`after_rollout` and a checkpoint when due."""
        cfg = self.cfg
        while self.global_step < cfg.train.total_timesteps and not stop and not self.budget_spent():
            started = self.clock()
            played, figures = self.rollout()
            elapsed = self.clock() - started
            self.wall += elapsed
            self.global_step += played
            self.rollouts += 1
            row = {"global_step": self.global_step, "rollout": self.rollouts, "wall": self.wall}
            row.update(sps=played / elapsed, **figures)
            row["network_share"] = self.timers.network_share()
            self.log_rollout(row)
            finished = self.global_step >= cfg.train.total_timesteps or self.budget_spent()
            self.report(row, finished)
            if cfg.eval.every and self.global_step - self.last["eval"] >= cfg.eval.every:
                self.last["eval"] = self.global_step
                self.evaluate(cfg.eval.deals)
            if self.first_evaluation_due():
                self.evaluate(cfg.eval.first_deals)
            self.after_rollout()
            if finished or stop or self.global_step - self.last["checkpoint"] >= cfg.train.checkpoint_every:
                self.save_checkpoint()

    def rollout(self) -> tuple[int, dict[str, float]]:
        """One rollout and its update: the decisions it adds to ``global_step`` and its figures (metrics.jsonl)."""
        raise NotImplementedError

    def report(self, row: dict[str, Any], finished: bool) -> None:
        """After a rollout's ``row`` is logged (``finished``: the run ends with it): the trainer's progress line
        and its own steps between rollouts."""
        raise NotImplementedError

    def after_rollout(self) -> None:
        """Called after each rollout's update, logs and evaluations, before its checkpoint (nothing here; a
        subclass's measurements: training/vector/exploit.py)."""

    def progress_display(self) -> Any:
        """The bar of :meth:`train` (stderr; ``train.progress``, not ``quiet``): decisions against
        ``train.total_timesteps`` with the average rate and the ETA, advanced at every engine step; under a time
        budget, against the decisions at which it ends if that comes first (:meth:`aim_bar`, no ETA before the
        first rollout gives a rate)."""
        cfg = self.cfg
        enabled = cfg.train.progress and not self.quiet
        hours = cfg.train.max_hours
        total = None if hours and self.global_step < cfg.train.total_timesteps else cfg.train.total_timesteps
        name = f"{cfg.name} (budget {hours:g} h)" if hours else cfg.name
        return progress_bar(total, name, "decision", enabled, self.global_step, leave=True, smoothing=0.0)

    def aim_bar(self) -> None:
        """Under a time budget, the bar's total: the decisions at which the budget ends at this call's rate, or
        ``train.total_timesteps`` if that comes first (training/common/budget.py), so that its ETA is the run's."""
        hours = self.cfg.train.max_hours
        if not hours:
            return
        done, seconds = self.global_step - self.call_start[0], self.wall - self.call_start[1]
        rate = done / seconds if seconds > 0 else 0.0
        self.bar.total = budget.aim(self.global_step, self.cfg.train.total_timesteps, self.wall, rate, hours)
        self.bar.refresh()

    def budget_spent(self) -> bool:
        """Whether ``train.max_hours`` of training are spent (the run then stops as at its length)."""
        return budget.spent(self.wall, self.cfg.train.max_hours)

    def first_evaluation_due(self) -> bool:
        """Whether the first, short evaluation is due at this rollout's end: ``eval.every`` asks for a curve,
        ``eval.first_minutes`` of training have passed and no evaluation was made yet."""
        e = self.cfg.eval
        minutes = e.first_minutes
        return bool(e.every and minutes and not self.evals and self.wall >= 60.0 * minutes)

    def log_rollout(self, row: dict[str, Any]) -> None:
        """A rollout's ``metrics.jsonl`` row: kept (written at checkpoints) and its scalars to TensorBoard; the
        progress bar aimed again."""
        self.history.append(row)
        self.tb.scalars(metrics_scalars(row), self.global_step)
        self.aim_bar()

    # -- outputs -----------------------------------------------------------------
    def export(self, path: str) -> str:
        raise NotImplementedError  # the policy file of the trained network

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """Duplicate evaluation of the current policy (:meth:`export`) against ``eval.opponents``
        (training/evaluation/evaluate.py): a line of ``eval.jsonl`` (the decisions, the training time, the advantage
        per opponent, over all roles and per role: ``role_figures``; and the whole table), its scalars to
        TensorBoard. Its games draw from their own seeds, never the run's generator."""
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
                f"evaluation at {self.global_step} {self.unit} ({self.wall:.0f} s), {deals} deals:\n"
                + format_table(results)
            )
        return results

    def tb_output(self) -> list[tuple[str, str]]:
        """The TensorBoard folder among the outputs, when the run writes one."""
        if not self.cfg.train.tensorboard:
            return []
        return [("tb/", f"TensorBoard scalars: tensorboard --logdir {os.path.join(self.run_dir, 'tb')}")]

    # -- checkpoints -------------------------------------------------------------
    def _latest(self) -> str:
        return os.path.join(self.run_dir, "checkpoints", "latest.pt")

    def network(self) -> nn.Module:
        raise NotImplementedError  # the trained network: a checkpoint's net

    def _own_state(self) -> dict[str, Any]:
        raise NotImplementedError  # what a checkpoint holds besides :meth:`_state`'s common part

    def _state(self) -> dict[str, Any]:
        """What a checkpoint holds: the config, the counters, the network and Adam, the engine, the generator, the
        trainer's own (:meth:`_own_state`), the logs."""
        return {
            "config": self.cfg.to_dict(),
            "counters": {name: getattr(self, name) for name in self.counter_names},
            "last": dict(self.last),
            "net": self.network().state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "engine": engine_state(self.games),
            "generator": self.gen.get_state(),
            **self._own_state(),
            "history": self.history,
            "evals": self.evals,
        }

    def save_checkpoint(self) -> str:
        """``checkpoints/latest.pt`` and ``checkpoints/step_<N>.pt`` (atomic), then the metrics."""
        self.last["checkpoint"] = self.global_step
        numbered = write_checkpoint(
            self.run_dir, self.trainer, self.global_step, self._state(), self.cfg.train.keep_checkpoints
        )
        write_lines(os.path.join(self.run_dir, "metrics.jsonl"), self.history)
        self.tb.flush()
        return numbered

    def load(self, path: str) -> None:
        """Restore a checkpoint written by :meth:`save_checkpoint` (tensors and plain values only)."""
        read_checkpoint(path, self.trainer, self._restore)

    def _restore(self, path: str, state: dict[str, Any]) -> None:
        raise NotImplementedError  # :meth:`_check_saved`, the trainer's own checks, :meth:`_restore_saved`, its own

    def _check_saved(self, path: str, state: dict[str, Any], tensors: tuple[str, ...] = ()) -> None:
        """The checks of a checkpoint's common part: the settings a resume must keep, the network, Adam and
        ``tensors`` finite, the counters whole numbers (the training time a number)."""
        check_saved_settings(path, state["config"], self.cfg, self.resume_fixed)
        for key in ("net", "optimizer", *tensors):
            check_finite(path, state[key], key)
        check_counters(path, state["counters"], tuple(name for name in self.counter_names if name != "wall"))
        check_counters(path, state["last"], tuple(self.last), (), "last")

    def _restore_saved(self, path: str, state: dict[str, Any]) -> None:
        """The common part of a checked checkpoint restored: the network and Adam, the engine (checked whole by
        ``VectorGame.set_state``), the generator, the counters, the logs."""
        try:
            self.network().load_state_dict(state["net"])
            self.optimizer.load_state_dict(state["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise damaged(path, f"the weights do not fit the config's network: {str(err).splitlines()[0]}") from None
        restore_engine(self.games, state["engine"])
        self.gen.set_state(state["generator"])
        for name in self.counter_names:
            setattr(self, name, state["counters"][name])
        self.last = dict(state["last"])
        self.history, self.evals = list(state["history"]), list(state["evals"])

    # -- the run layer (training/common/runs.py) ----------------------------------
    def progress(self) -> int:
        """Decisions trained so far (the whole run)."""
        return self.global_step

    def details(self) -> str:
        """The time by phase (the network against everything else)."""
        return "time by phase:\n" + self.timers.table()

    def close(self) -> None:
        """The acting processes stopped, if any (``train.actors``), and the TensorBoard file closed (the games, the
        networks and the buffers are plain memory)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        if self.tb is not None:
            self.tb.close()


class VectorPPO(BatchedRun):
    """One run: the games, the network, the rollout buffer and the steps between rollouts."""

    trainer = "vector-ppo"
    unit = "learner decisions"
    counter_names = ("global_step", "updates", "rollouts", "wall", "snapshots_added")
    resume_fixed = (
        ("env", "rules"),
        ("ppo", "net_arch"),
        ("ppo", "activation"),
        ("ppo", "critic"),
        ("env", "num_games"),
        ("ppo", "n_steps"),
    )

    def __init__(
        self,
        cfg: SelfPlayConfig,
        run_dir: str,
        resume: bool = False,
        quiet: bool = False,
        saved_config: Any = None,
        acting: bool = False,
        ray: RayOptions | None = None,
    ) -> None:
        """``saved_config``: what ``config.yaml`` records (default ``cfg``; a command that builds ``cfg`` from
        its own config saves that one: training/vector/exploit.py). ``acting``: the games, seats and buffers of
        one acting process (:class:`PPOActors`), no run folder. ``ray``: the acting processes (``train.actors``)
        as Ray actors (``--ray [ADDRESS]``)."""
        if ray is not None and not cfg.train.actors:
            raise ConfigError("--ray runs the acting processes as Ray actors: set train.actors to 1 or more")
        self.ray = ray
        self._start(cfg, run_dir, quiet)  # the generator: sampling, seat draws, minibatch order
        g, n, steps = self.games, self.num_games, cfg.ppo.n_steps
        self.n_steps = steps
        self.full_size = int(g.full_state(np.zeros(1, dtype=np.int64)).shape[1]) if cfg.ppo.critic == "full" else 0
        self.net = ActorCritic(self.obs_size, self.num_actions, cfg.ppo.net_arch, cfg.ppo.activation, self.full_size)
        if cfg.ppo.init is not None:
            path = policy_file(cfg.ppo.init, g.rules) or cfg.ppo.init
            load_actor(
                self.net.actor, load_numpy_policy(path)[0], f"ppo.init {path}", cfg.ppo.net_arch, cfg.ppo.activation
            )
        self.net.to(self.device)
        self.anchor = (  # the frozen start policy of ppo.anchor_coef
            self._frozen_actor(load_numpy_policy(path)[0]) if cfg.ppo.init is not None and cfg.ppo.anchor_coef else None
        )
        trained = cfg.ppo.train_decisions  # the phases whose moves the policy loss trains (None: all)
        self.trained_phases = None if trained is None else [PHASE_NAMES.index(name) for name in trained]
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.ppo.learning_rate, eps=1e-5)
        # who plays: mix entries in order; frozen files get kinds 2.., snapshot slots after them
        self.mix_names = list(cfg.opponents.mix)
        self.mix_weights = torch.tensor([cfg.opponents.mix[k] for k in self.mix_names], dtype=torch.float64)
        frozen_specs = [name for name in self.mix_names if name not in (SELF, SNAPSHOTS, RANDOM)]
        self.file_kind = {name: 2 + k for k, name in enumerate(frozen_specs)}
        self.frozen: list[nn.Sequential | None] = [
            self._frozen_actor(load_numpy_policy(policy_file(name, g.rules))[0]) for name in frozen_specs
        ]
        self.snapshot_base = 2 + len(frozen_specs)
        self.snapshots: list[dict[str, torch.Tensor]] = []  # ring of pool_size slots
        self.frozen += [None] * cfg.opponents.pool_size
        self.seat_kind = np.zeros((n, self.num_players), dtype=np.int64)
        self._draw_seats(np.arange(n))
        random_seeds = torch.randint(1, 2**62, (n,), generator=self.gen, dtype=torch.int64)
        self.random_state = random_seeds.numpy().astype(np.uint64)
        self.global_step = self.updates = self.rollouts = self.snapshots_added = 0
        self.last = {"snapshot": 0, "eval": 0, "checkpoint": 0}
        # rollout buffer, flat in step order: entry t * n + i
        size = steps * n
        self.obs = np.zeros((steps, n, self.obs_size), dtype=np.float32)
        self.full = np.zeros((steps, n, self.full_size), dtype=np.float32) if self.net.full_critic else None
        self.masks = np.zeros((steps, n, self.num_actions), dtype=np.int8)
        self.actions = np.zeros(size, dtype=np.int64)
        self.logps = np.zeros(size, dtype=np.float32)
        self.learner = np.zeros(size, dtype=np.bool_)
        self.seats = np.zeros(size, dtype=np.int8)  # the absolute seat that acted
        self.rewards = np.zeros(size, dtype=np.float32)
        self.dones = np.zeros(size, dtype=np.bool_)
        self.next_index = np.full(size, -1, dtype=np.int64)
        self.tail_values = np.zeros(size, dtype=np.float32)
        self.balances = RoleBalances(self.games)  # the learner's hands by role (metrics.jsonl)
        if not acting:
            self._open(resume, saved_config)

    # -- seats -------------------------------------------------------------------
    def _frozen_actor(self, policy: NumpyPolicy) -> nn.Sequential:
        actor = mlp(self.obs_size, policy.net_arch, self.num_actions, policy.activation)
        load_actor(actor, policy, "frozen policy", policy.net_arch, policy.activation)
        return actor.requires_grad_(False).to(self.device)

    def _draw_seats(self, rows: np.ndarray) -> None:
        """New players for the games in ``rows``: one seat the learner, the others drawn from the mix."""
        if len(rows) == 0:
            return
        m, p = len(rows), self.num_players
        learner_seat = torch.randint(p, (m,), generator=self.gen).numpy()
        picks = torch.multinomial(self.mix_weights.expand(m * p, -1), 1, True, generator=self.gen).view(m, p).numpy()
        snap = torch.randint(max(len(self.snapshots), 1), (m, p), generator=self.gen).numpy()
        kinds = np.zeros((m, p), dtype=np.int64)
        for k, name in enumerate(self.mix_names):
            chosen = picks == k
            if name == RANDOM:
                kinds[chosen] = RANDOM_PLAYER
            elif name == SNAPSHOTS and self.snapshots:
                kinds[chosen] = self.snapshot_base + snap[chosen]
            elif name in self.file_kind:
                kinds[chosen] = self.file_kind[name]
        kinds[np.arange(m), learner_seat] = LEARNER
        self.seat_kind[rows] = kinds

    def add_snapshot(self) -> None:
        """A frozen copy of the actor joins the pool (replacing the oldest when it is full)."""
        slot = self.snapshots_added % self.cfg.opponents.pool_size
        self.snapshots_added += 1
        state = {k: v.detach().to("cpu", copy=True) for k, v in self.net.actor.state_dict().items()}
        if slot == len(self.snapshots):
            self.snapshots.append(state)
        else:
            self.snapshots[slot] = state
        self._freeze(slot, state)

    def set_snapshots(self, snapshots: list[dict[str, torch.Tensor]]) -> None:
        """The pool of frozen copies replaced by ``snapshots`` (a checkpoint's; an actor's copy of the learner's)."""
        self.snapshots = []
        for slot, state in enumerate(snapshots):
            self.snapshots.append(state)
            self._freeze(slot, state)

    def _freeze(self, slot: int, state: dict[str, torch.Tensor]) -> None:
        actor = self.net.fresh_actor()
        actor.load_state_dict(state)
        self.frozen[self.snapshot_base - 2 + slot] = actor.requires_grad_(False).to(self.device)

    # -- rollout -----------------------------------------------------------------
    def collect(self) -> dict[str, float]:
        """:meth:`play`; returns the episodes ended and the balances of the learner's hands by role
        (:class:`RoleBalances`)."""
        episodes = self.play()
        return {"episodes": float(episodes), **self.balances.figures()}

    def play(self) -> int:
        """Play ``n_steps`` engine steps in every game and fill the buffer; returns the learner's episodes ended
        (the hands' balances by role are counted in ``balances``)."""
        n, g, t_ = self.num_games, self.games, self.timers
        rows = np.arange(n)
        last_index = np.full((n, self.num_players), -1, dtype=np.int64)  # each seat's latest learner transition
        self.rewards[:] = 0
        self.dones[:] = False
        self.next_index[:] = -1
        self.tail_values[:] = 0
        episodes = 0
        actions = np.zeros(n, dtype=np.int64)
        for t in range(self.n_steps):
            with t_("engine"):
                cur = g.current_player.astype(np.int64)
                g.legal_mask(out=self.masks[t])
                g.observe(out=self.obs[t])
                if self.full is not None:
                    g.full_state(out=self.full[t])
            with t_("bookkeeping"):
                kind = self.seat_kind[rows, cur]
                learn = kind == LEARNER
                self.balances.before(g, self.obs[t], cur)
                lrows = rows if learn.all() else np.flatnonzero(learn)
                obs_t = torch.from_numpy(self.obs[t][lrows])
                mask_t = torch.from_numpy(self.masks[t][lrows]).bool()
            with t_("act forward"), torch.no_grad():
                logits = self.net.actor(obs_t.to(self.device)).cpu()
            with t_("sampling"), torch.no_grad():
                logits = masked_logits(logits, mask_t)
                chosen = sample(logits, self.gen)
                logp = torch.log_softmax(logits, dim=1).gather(1, chosen[:, None]).squeeze(1)
                actions[lrows] = chosen.numpy()
                span = t * n + lrows
                self.actions[t * n : (t + 1) * n] = 0
                self.actions[span] = actions[lrows]
                self.logps[span] = logp.numpy()
                self.learner[t * n : (t + 1) * n] = learn
                self.seats[t * n : (t + 1) * n] = cur
            self.bar.update(len(lrows))  # the learner's decisions, as global_step counts them
            if len(lrows) < n:
                self._opponents_act(t, kind, actions)
            with t_("bookkeeping"):
                seats = cur[lrows]
                prev = last_index[lrows, seats]
                linked = prev >= 0
                self.next_index[prev[linked]] = span[linked]
                last_index[lrows, seats] = span
            with t_("engine"):
                r, done = g.step(actions)
            with t_("bookkeeping"):
                self.balances.after(g, r, done, self.seat_kind == LEARNER)
                r = step_rewards(g, r, done, self.cfg.env)
                paid = (last_index >= 0) & (r != 0)
                if paid.any():
                    self.rewards[last_index[paid]] += r[paid]
                if done.any():
                    ended = np.flatnonzero(done)
                    finals = last_index[ended]
                    self.dones[finals[finals >= 0]] = True
                    episodes += int((self.seat_kind[ended] == LEARNER).sum())  # the learner's seats' episodes
                    last_index[ended] = -1
                    self._draw_seats(ended)
        # bootstrap the trajectories still open: the value of the seat's view now
        open_rows, open_seats = np.nonzero(last_index >= 0)
        if len(open_rows):
            with t_("engine"):
                obs = g.observe(open_rows, open_seats)
                full = g.full_state(open_rows, open_seats) if self.full is not None else None
            with t_("value forward"), torch.no_grad():
                full_t = None if full is None else torch.from_numpy(full).to(self.device)
                values = self.net.value(torch.from_numpy(obs).to(self.device), full_t).cpu()
            self.tail_values[last_index[open_rows, open_seats]] = values.numpy()
        return episodes

    def _opponents_act(self, t: int, kind: np.ndarray, actions: np.ndarray) -> None:
        """The actions of the seats not played by the learner at step ``t``."""
        for code in np.unique(kind[kind != LEARNER]):
            rows = np.flatnonzero(kind == code)
            if code == RANDOM_PLAYER:
                with self.timers("opponents"):
                    out = np.zeros(len(rows), dtype=np.int64)
                    state = self.random_state[rows]
                    random_legal(self.masks[t][rows], state, out)
                    self.random_state[rows] = state
                    actions[rows] = out
                continue
            actor = self.frozen[code - 2]
            with self.timers("act forward"), torch.no_grad():
                logits = actor(torch.from_numpy(self.obs[t][rows]).to(self.device)).cpu()
            with self.timers("sampling"):
                logits = masked_logits(logits, torch.from_numpy(self.masks[t][rows]).bool())
                actions[rows] = sample(logits, self.gen).numpy()

    # -- update ------------------------------------------------------------------
    def _minibatch_step(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        full: torch.Tensor | None,
        actions: torch.Tensor,
        old_logp: torch.Tensor,
        adv: torch.Tensor,
        ret: torch.Tensor,
        weight: torch.Tensor,
        count: torch.Tensor,
        train_actor: bool,
    ) -> tuple[float, float, float, float, float, float]:
        """One gradient step on a minibatch: the clipped policy loss over the trained rows (``weight``), the
        value loss, the entropy bonus and the anchor's KL; (policy loss, value loss, entropy, approx KL,
        clip fraction, anchor KL)."""
        p = self.cfg.ppo
        logits = masked_logits(self.net.actor(obs), mask)
        logp_all = torch.log_softmax(logits, dim=1)
        new_logp = logp_all.gather(1, actions[:, None]).squeeze(1)
        entropy = (-(logp_all.exp() * logp_all).sum(1) * weight).sum() / count
        value = self.net.value(obs, full)
        log_ratio = new_logp - old_logp
        ratio = log_ratio.exp()
        clipped = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_range, 1 + p.clip_range))
        pg_loss = (clipped * weight).sum() / count
        v_loss = 0.5 * ((value - ret) ** 2).mean()
        loss = p.vf_coef * v_loss
        anchor_kl = torch.zeros((), device=self.device)
        if self.anchor is not None:  # KL(anchor || actor) over the legal actions, every row
            with torch.no_grad():
                anchor_logp = torch.log_softmax(masked_logits(self.anchor(obs), mask), dim=1)
            anchor_kl = (anchor_logp.exp() * (anchor_logp - logp_all)).sum(1).mean()
        if train_actor:
            loss = loss + pg_loss - p.ent_coef * entropy + p.anchor_coef * anchor_kl
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), p.max_grad_norm)
        self.optimizer.step()
        with torch.no_grad():
            approx_kl = float(((ratio - 1) - log_ratio).mean())
            clipfrac = float(((ratio - 1).abs() > p.clip_range).float().mean())
        return pg_loss.item(), v_loss.item(), entropy.item(), approx_kl, clipfrac, anchor_kl.item()

    def update(self) -> dict[str, float]:
        """Values, per-seat GAE, then ``n_epochs`` of clipped PPO over the learner's transitions."""
        p, t_, dev = self.cfg.ppo, self.timers, self.device
        with t_("batching"):  # the rollout to the learner's device (no copy on the CPU)
            idx = np.flatnonzero(self.learner)
            obs_all = torch.from_numpy(self.obs.reshape(-1, self.obs_size)).to(dev)
            full_all = None if self.full is None else torch.from_numpy(self.full.reshape(-1, self.full_size)).to(dev)
            values = np.zeros(len(self.learner), dtype=np.float32)
        with t_("value forward"), torch.no_grad():
            for start in range(0, len(idx), 8192):
                chunk = torch.from_numpy(idx[start : start + 8192]).to(dev)
                full = None if full_all is None else full_all[chunk]
                values[idx[start : start + 8192]] = self.net.value(obs_all[chunk], full).cpu().numpy()
        with t_("bookkeeping"):
            adv, ret = per_seat_gae(
                self.rewards,
                values,
                self.dones,
                self.next_index,
                self.tail_values,
                p.gamma,
                p.gae_lambda,
                self.num_games,
            )
            lr = p.learning_rate * (
                max(0.0, 1.0 - self.global_step / self.cfg.train.total_timesteps) if p.lr_schedule == "linear" else 1.0
            )
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            b_idx = torch.from_numpy(idx).to(dev)
            b_actions = torch.from_numpy(self.actions[idx]).to(dev)
            b_logp = torch.from_numpy(self.logps[idx]).to(dev)
            b_adv = torch.from_numpy(adv[idx]).to(dev)
            b_ret = torch.from_numpy(ret[idx]).to(dev)
            masks_all = torch.from_numpy(self.masks.reshape(-1, self.num_actions)).to(dev)
            b_trained = torch.ones(len(idx), dtype=torch.bool, device=dev)  # rows whose moves the policy loss trains
            if self.trained_phases is not None:
                phases = observed_phases(self.obs.reshape(-1, self.obs_size), self.num_players)[idx]  # 5 columns read
                b_trained = torch.from_numpy(np.isin(phases, self.trained_phases)).to(dev)
        stats: dict[str, list[float]] = {
            k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "anchor_kl")
        }
        m = len(idx)
        train_actor = self.rollouts >= p.critic_warmup
        if m == 0:  # no learner decision in this rollout (tiny n_steps): nothing to learn from
            return {
                **{k: float("nan") for k in stats},
                "explained_variance": float("nan"),
                "learning_rate": lr,
                "decisions": 0.0,
            }
        for _epoch in range(p.n_epochs):
            with t_("batching"):
                order = torch.randperm(m, generator=self.gen).to(dev)  # drawn on the CPU: the same order anywhere
            kl_epoch = []
            for start in range(0, m, p.batch_size):
                with t_("batching"):
                    mb = order[start : start + p.batch_size]
                    rows = b_idx[mb]
                    obs, mask = obs_all[rows], masks_all[rows].bool()
                    full = None if full_all is None else full_all[rows]
                    mb_adv, weight = b_adv[mb], b_trained[mb].float()
                    count = weight.sum().clamp(min=1.0)
                    if p.normalize_advantage and weight.sum() > 1:  # over the trained rows
                        mean = (mb_adv * weight).sum() / count
                        std = (((mb_adv - mean) ** 2 * weight).sum() / (count - 1)).sqrt()
                        mb_adv = (mb_adv - mean) / (std + 1e-8)
                with t_("update network"):
                    losses = self._minibatch_step(
                        obs, mask, full, b_actions[mb], b_logp[mb], mb_adv, b_ret[mb], weight, count, train_actor
                    )
                for key, v in zip(stats, losses, strict=True):
                    stats[key].append(v)
                kl_epoch.append(losses[3])  # approx KL
            self.updates += 1
            if train_actor and p.target_kl is not None and np.mean(kl_epoch) > p.target_kl:
                break
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        out["explained_variance"] = explained_variance(values[idx], ret[idx])
        out["learning_rate"] = lr
        out["decisions"] = float(m)
        return out

    # -- loop --------------------------------------------------------------------
    def rollout(self) -> tuple[int, dict[str, float]]:
        """:meth:`collect` (or one rollout of every acting process, ``train.actors``: :meth:`gather`), then
        :meth:`update`: the learner decisions trained and the row's figures."""
        episodes = self.gather() if self.cfg.train.actors else self.collect()
        stats = self.update()
        if self.pool is not None:
            self.pool.publish(self)
        return int(stats["decisions"]), {**stats, **episodes}

    def gather(self) -> dict[str, float]:
        """The buffer filled by the acting processes (training/vector/actors.py), one rollout of each in the
        columns of its games (:meth:`file_rollout`); the episodes ended, the oldest weights' lag in updates
        (``actor_lag``) and the learner's balances by role in the actors' games."""
        if self.pool is None:
            args = (self.cfg, self, PPOActors(), progress, self.balances)
            self.pool = ActorPool(*args) if self.ray is None else RayActorPool(*args, ray=self.ray)
        with self.timers("waiting for actors"):
            gathered = self.pool.gather(self.file_rollout)
        self.bar.update(gathered["played"])  # the actors' learner decisions, as global_step counts them
        return {
            "episodes": float(gathered["episodes"]),
            "actor_lag": float(gathered["actor_lag"]),
            **self.balances.figures(),  # the actors' hands by role, added by the pool
        }

    def file_rollout(self, actor: int, arrays: dict[str, np.ndarray]) -> None:
        """An acting process's rollout (:class:`PPOActors`' arrays: ``n_steps`` rows of its games, in step order)
        into the buffer's columns of its games; the indices of each seat's next decision moved to the buffer's
        layout (entry ``t * env.num_games + game``)."""
        first, m = self.pool.offsets[actor], self.pool.games[actor]
        steps, n = self.n_steps, self.num_games
        games = slice(first, first + m)
        self.obs[:, games] = arrays["obs"].reshape(steps, m, -1)
        if self.full is not None:
            self.full[:, games] = arrays["full"].reshape(steps, m, -1)
        self.masks[:, games] = arrays["masks"].reshape(steps, m, -1)
        for name in PPOActors.step_arrays:
            getattr(self, name).reshape(steps, n)[:, games] = arrays[name].reshape(steps, m)
        nxt = arrays["next_index"]
        moved = np.where(nxt >= 0, nxt // m * n + first + nxt % m, -1)
        self.next_index.reshape(steps, n)[:, games] = moved.reshape(steps, m)

    def report(self, row: dict[str, Any], finished: bool) -> None:
        """The rollout's progress line; a snapshot joins the pool when due."""
        cfg = self.cfg
        if cfg.train.progress and not self.quiet:
            progress(
                f"step {self.global_step:>10}  sps {row['sps']:>7.0f}  pg {row['policy_loss']:+.4f}  "
                f"v {row['value_loss']:.4f}  ent {row['entropy']:.3f}  kl {row['approx_kl']:.4f}  "
                f"clip {row['clipfrac']:.3f}  ev {row['explained_variance']:+.3f}  "
                f"net {100 * row['network_share']:.0f}%"
            )
        if self.global_step - self.last["snapshot"] >= cfg.opponents.snapshot_every:
            self.last["snapshot"] = self.global_step
            self.add_snapshot()

    # -- outputs -----------------------------------------------------------------
    def numpy_policy(self) -> NumpyPolicy:
        return policy_from_torch(
            [self.net.actor], self.net.activation, where="the actor", shape=PolicyShape.of(self.games.rules)
        )

    def export(self, path: str) -> str:
        """The actor as a ``.pt`` policy (``ppo:PATH``), atomically."""
        export_policy(
            self.numpy_policy(),
            path,
            trainer="training.vector.ppo",
            num_timesteps=self.global_step,
            rules=self.games.rules,
        )
        return path

    # -- checkpoints -------------------------------------------------------------
    def network(self) -> nn.Module:
        return self.net

    def _own_state(self) -> dict[str, Any]:
        """The seats, the random players' streams and the snapshots."""
        return {
            "seat_kind": torch.from_numpy(self.seat_kind.copy()),
            "random_state": torch.from_numpy(self.random_state.view(np.int64).copy()),
            "snapshots": list(self.snapshots),
        }

    def _restore(self, path: str, state: dict[str, Any]) -> None:
        """Everything :meth:`load` restores from ``state``: the common part (:meth:`BatchedRun._restore_saved`), the
        opponents. An earlier release's ``episode_return`` (each seat's return so far, for a metric that was always 0
        in self-play) is checked and left."""
        self._check_saved(path, state, ("snapshots",))
        snapshots = state["snapshots"]
        if not isinstance(snapshots, list) or len(snapshots) > self.cfg.opponents.pool_size:
            raise damaged(
                path, f"snapshots is not a list of at most opponents.pool_size {self.cfg.opponents.pool_size}"
            )
        n, p = self.num_games, self.num_players
        kinds = self.snapshot_base + len(snapshots)  # the learner, random, the files, then the snapshots
        seat_kind = checked_array(path, state["seat_kind"], "seat_kind", (n, p), "i", 0, kinds)
        random_state = checked_array(path, state["random_state"], "random_state", (n,), "i")
        if "episode_return" in state:
            checked_array(path, state["episode_return"], "episode_return", (n, p), "f")
        self._restore_saved(path, state)
        self.seat_kind, self.random_state = seat_kind, random_state.view(np.uint64)
        self.set_snapshots(snapshots)

    # -- the run layer (training/common/runs.py) ----------------------------------
    def final_outputs(self) -> list[tuple[str, str]]:
        """The final policy, and every output of the run and how to use it."""
        final = self.export(os.path.join(self.run_dir, "final_policy.pt"))
        return [
            ("final_policy.pt", f"the trained actor; play it: sergeant-major play --opponents ppo:{final} heuristic"),
            (
                "metrics.jsonl",
                "one line per rollout: SPS, losses, entropy, approx_kl, clipfrac, explained variance, the learner's "
                "balance per role",
            ),
            ("eval.jsonl", "every evaluation, one JSON object a line (pandas.read_json(path, lines=True))"),
            *self.tb_output(),
        ]

    def facts(self) -> dict[str, Any]:
        return {"global_step": self.global_step, "rollouts": self.rollouts, "device": str(self.device)}


class PPOActors:
    """What the vector PPO's acting processes are (the ``kind`` of :class:`training.vector.actors.ActorPool`):
    each a :class:`VectorPPO` of its share of the games (:class:`PPOActing`: the same seat draws, opponents,
    sampling and bootstrap as the learner's own rollouts), the learner's actor-critic and snapshot pool
    published, and one slot a rollout: ``ppo.n_steps`` engine steps of its games. With one slot an actor holds
    one rollout in it and plays the next while the learner updates, so a rollout is played with the weights of
    at most 2 updates ago (``actor_lag``); its log-probabilities are the ones it played with, and PPO's ratio is
    taken against them."""

    name = "ppo-actor"
    slots = 1
    step_arrays = ("actions", "logps", "learner", "seats", "rewards", "dones", "tail_values")

    def layout(self, trainer: VectorPPO, games: int) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
        rows = trainer.n_steps * games
        out = {
            "obs": ((rows, trainer.obs_size), torch.float32),
            "masks": ((rows, trainer.num_actions), torch.int8),
            "actions": ((rows,), torch.int64),
            "logps": ((rows,), torch.float32),
            "learner": ((rows,), torch.bool),
            "seats": ((rows,), torch.int8),
            "rewards": ((rows,), torch.float32),
            "dones": ((rows,), torch.bool),
            "tail_values": ((rows,), torch.float32),
            "next_index": ((rows,), torch.int64),
        }
        if trainer.full is not None:
            out["full"] = ((rows, trainer.full_size), torch.float32)
        return out

    def published(self, trainer: VectorPPO) -> list[torch.Tensor]:
        """The actor-critic's parameters; the snapshots (one row each, ``opponents.pool_size`` rows); how many
        there are and how many were ever added."""
        size = sum(p.numel() for p in trainer.net.actor.parameters())
        pool = torch.zeros((trainer.cfg.opponents.pool_size, size), dtype=torch.float32)
        for row, state in enumerate(trainer.snapshots):
            pool[row] = torch.cat([v.reshape(-1) for v in state.values()])
        counts = torch.tensor([len(trainer.snapshots), trainer.snapshots_added], dtype=torch.int64)
        return [flat_parameters(trainer.net), pool, counts]

    def acting(self, index: int, generation: int, num_games: int, cfg: SelfPlayConfig) -> PPOActing:
        return PPOActing(index, generation, num_games, cfg)


class PPOActing:
    """One acting process's :class:`VectorPPO` (no run folder) of ``num_games`` games, seeded from (run seed,
    actor, generation), on the CPU with one thread: :meth:`rollout` is its :meth:`VectorPPO.play`."""

    def __init__(self, index: int, generation: int, num_games: int, cfg: SelfPlayConfig) -> None:
        seed = derive_seed(cfg.seed, index, generation, 0xAC7)
        train = {"device": "cpu", "torch_threads": 1, "actors": 0, "progress": False, "tensorboard": False}
        own = cfg.model_copy(
            update={
                "seed": seed,
                "env": cfg.env.model_copy(update={"num_games": num_games}),
                "train": cfg.train.model_copy(update=train),
            }
        )
        self.run = VectorPPO(own, "", quiet=True, acting=True)
        self.added = -1  # the snapshots added when the pool was last copied

    def load(self, tensors: list[Any]) -> None:
        """The learner's actor-critic and, when it changed, its snapshot pool (:meth:`PPOActors.published`)."""
        run = self.run
        load_flat(run.net, tensors[0])
        count, added = (int(v) for v in tensors[2])
        if added != self.added:
            self.added = added
            rows = torch.tensor(np.asarray(tensors[1]))  # a copy
            shapes = {k: v.shape for k, v in run.net.actor.state_dict().items()}
            snapshots = []
            for row in rows[:count]:
                state, start = {}, 0
                for key, shape in shapes.items():
                    end = start + int(np.prod(shape))
                    state[key] = row[start:end].reshape(shape).clone()
                    start = end
                snapshots.append(state)
            run.set_snapshots(snapshots)

    def rollout(self) -> tuple[dict[str, np.ndarray], int, int, tuple[Any, ...]]:
        """``ppo.n_steps`` engine steps of every game: the buffer's arrays (:meth:`PPOActors.layout`), the learner
        decisions played, the learner's episodes ended and its hands' balances by role."""
        run = self.run
        episodes = run.play()
        rows = run.n_steps * run.num_games
        arrays = {
            "obs": run.obs.reshape(rows, -1),
            "masks": run.masks.reshape(rows, -1),
            "next_index": run.next_index,
            **{name: getattr(run, name) for name in PPOActors.step_arrays},
        }
        if run.full is not None:
            arrays["full"] = run.full.reshape(rows, -1)
        return arrays, int(run.learner.sum()), episodes, run.balances.counted()


PROG = "sergeant-major train --backend vector"


def backend(prog: str = PROG) -> Backend:
    """The batched trainer as the run layer sees it (``sergeant-major train --backend vector``)."""
    return batched_backend(prog, load_selfplay_config, VectorPPO)


def batched_backend(prog: str, load_config: Callable[..., Any], trainer: type[BatchedRun]) -> Backend:
    """A batched trainer as the run layer sees it: its config loader and its class, built as ``trainer(cfg,
    run_dir, resume=..., quiet=..., ray=...)`` (``ray``: the ``--ray [ADDRESS]`` options, None without the flag);
    its length ``train.total_timesteps`` decisions or ``train.max_hours`` of training (training/common/budget.py),
    whichever comes first."""
    unit = trainer.unit

    def reached(cfg: Any, summary: dict[str, Any]) -> str | None:
        return budget.reached(summary, cfg.train.total_timesteps, cfg.train.max_hours, unit)

    def further(cfg: Any) -> str:
        t = cfg.train
        return budget.further("train.total_timesteps", t.total_timesteps, "train.max_hours", t.max_hours)

    return Backend(
        prog=prog,
        load_config=load_config,
        latest_checkpoint=checkpoint_at("checkpoints", "latest.pt"),
        length=lambda cfg: (cfg.train.total_timesteps, "train.total_timesteps"),
        unit=unit,
        build=lambda cfg, run_dir, resume, args: trainer(
            cfg, run_dir, resume=resume, quiet=args.quiet, ray=RayOptions.from_args(args) if "ray" in args else None
        ),
        stop_point="finishing the current rollout, then writing a checkpoint",
        reached=reached,
        further=further,
    )


def batched_main(backend: Backend, name: str, config: str, description: str, doc: str, argv: list[str] | None) -> int:
    """A batched trainer's own command (``python -m training.vector.NAME``: ``sergeant-major train --backend NAME``'s
    options but ``--ray``; examples: the second paragraph of ``doc``; ``config``: the shipped config file); the exit
    status (2: bad input, 130: interrupted)."""
    parser = argparse.ArgumentParser(
        prog=backend.prog,
        description=description,
        epilog="examples:\n" + doc.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--backend", choices=(name,), default=name, help=argparse.SUPPRESS)
    add_run_arguments(parser, f"YAML config ({config}; sergeant-major config --kind {name} lists the keys)")
    return run_command(backend, parser, argv)


def main(argv: list[str] | None = None) -> int:
    """Train from a config (or resume a run); returns the exit status (2: bad input, 130: interrupted)."""
    description = "Masked PPO self-play over the batched engine (sm_env.compiled.batch), from a config to a policy."
    return batched_main(backend(), "vector", "configs/selfplay.yaml", description, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
