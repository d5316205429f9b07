"""``sergeant-major improve belief``: a belief network (:mod:`agents.search.belief`) learnt from a policy's
self-play, for pimc's deals (``pimc:rollout=policy,belief=PATH``).

Data: whole games of ``rules`` (30 hands at most) played by the policy for every seat, :data:`GAMES` at a time in
the compiled engine (:class:`~sm_env.compiled.batch.VectorGame`); at every card-play decision with a choice, the
acting seat's observation and, as the target, where each card lies seen from that seat (the engine's
``full_state``: the hands of the other seats; anything else is "elsewhere"). The data are made and learnt
:data:`CHUNK` decisions at a time, each chunk fresh (no decision is seen twice), so memory stays bounded at any
length.

Fit: an MLP (ReLU, ``hidden`` sizes) with ``52 x players`` outputs, the cross-entropy of each card's location,
Adam with a cosine decay to 5% of ``learning_rate`` over the run, batches of :data:`BATCH`. The last chunk's
first :data:`HELD_OUT` decisions (at most a fifth of it) are not trained on; the closing line gives their
cross-entropy per card (averaged over all 52 cards, the ones the seat can place included).

A checkpoint (``OUT.ckpt``, ``sergeant-major-checkpoint/1`` of trainer ``belief-fit``) is written after every
chunk: the network, the optimiser, the chunk count and the engine's games, so the same command with the same
arguments goes on where a stopped run ended and makes the same file. Other arguments with an existing
checkpoint are refused (delete it to start again); ``--device`` is not one of them: the network and its updates
run on that device (:mod:`training.common.device`), the self-play, the data and the draws on the CPU, and the
checkpoint holds CPU tensors, so a fit goes on on any device.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from agents.search.belief import save_belief
from sm_env.compiled.batch import VectorGame
from sm_env.core.game import PLAY
from sm_env.core.rules import RuleSet
from sm_env.observation import observation_size, observed_phases
from training.common.checkpoint import CheckpointError, engine_state, open_checkpoint, restore_engine, save_checkpoint
from training.common.device import module_device, resolve_device
from training.common.fixed_agents import PolicyOpponent
from training.common.progress import write_line
from training.distill.config_playouts import labelled_rules
from training.distill.label_playouts import policy_agent
from training.distill.network import mlp

GAMES = 512
"""Games played together."""
CHUNK = 200_000
"""Decisions made and learnt at a time (float16 observations: about 330 MB with the standard rules)."""
BATCH = 1024
HELD_OUT = 20_000
MAX_DECISIONS = 100_000_000

Log = Callable[[str], None]


def belief_data(games: VectorGame, policy: PolicyOpponent, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` card-play decisions with a choice from ``games`` played on by ``policy``: the acting seats'
    observations (float16) and the location of every card seen from them (uint8 [count, 52]: ``k`` the hand of
    the seat ``k + 1`` places to the left, ``players - 1`` elsewhere)."""
    n = games.num_players
    obs, where, found = [], [], 0
    while found < count:
        observations, masks = games.observe(), games.legal_mask()
        chosen = np.flatnonzero((observed_phases(observations, n) == PLAY) & (masks.sum(axis=1) > 1))
        if len(chosen):
            hidden = games.full_state(rows=chosen)
            location = np.full((len(chosen), 52), n - 1, dtype=np.uint8)
            for k in range(n - 1):
                location[hidden[:, 52 * k : 52 * (k + 1)] > 0] = k
            obs.append(observations[chosen].astype(np.float16))
            where.append(location)
            found += len(chosen)
        games.step(policy.act(games, np.arange(games.num_games), masks, observations))
    return np.concatenate(obs)[:count], np.concatenate(where)[:count]


def _loss(net: nn.Sequential, obs: np.ndarray, where: np.ndarray, players: int) -> torch.Tensor:
    device = module_device(net)
    logits = net(torch.from_numpy(obs.astype(np.float32)).to(device)).view(-1, 52, players)
    return nn.functional.cross_entropy(logits.transpose(1, 2), torch.from_numpy(where.astype(np.int64)).to(device))


def fit_belief(
    policy: str,
    out: str,
    decisions: int = 7_200_000,
    learning_rate: float = 1e-3,
    seed: int = 0,
    rules: RuleSet | str | dict = "standard",
    hidden: tuple[int, ...] = (512, 512),
    log: Log = write_line,
    chunk_size: int = CHUNK,
    device: str = "auto",
) -> None:
    """Learn the belief network of ``policy``'s self-play under ``rules`` from ``decisions`` card-play decisions
    and write it to ``out``, ``chunk_size`` of them made and learnt at a time, the network on ``device`` (the
    module docstring)."""
    ruleset = labelled_rules(rules)
    if not BATCH * 10 <= decisions <= MAX_DECISIONS:
        raise ValueError(f"decisions must be in {BATCH * 10}..{MAX_DECISIONS}, got {decisions}")
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be > 0, got {learning_rate}")
    agent = policy_agent(policy, ruleset)
    players, chunks = ruleset.num_players, -(-decisions // chunk_size)
    settings = {"policy": policy, "decisions": decisions, "learning_rate": learning_rate, "seed": seed}
    settings.update({"rules": ruleset.name, "hidden": list(hidden), "chunk_size": chunk_size})
    torch.manual_seed(seed)
    net = mlp(observation_size(ruleset), list(hidden), 52 * players).to(resolve_device(device, "--device"))
    steps = sum(min(chunk_size, decisions - c * chunk_size) // BATCH for c in range(chunks))
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps, eta_min=learning_rate * 0.05)
    games = VectorGame(GAMES, ruleset, seed=seed + 1000, episode="game", max_hands=30)
    games.reset()
    done, checkpoint = 0, out + ".ckpt"
    if os.path.exists(checkpoint):
        done = _resume(checkpoint, settings, net, optimizer, schedule, games)
        log(f"{checkpoint}: going on after chunk {done} of {chunks}")
    rng = np.random.default_rng([seed, done])
    opponent = PolicyOpponent(agent)
    start = time.time()
    held: tuple[np.ndarray, np.ndarray] | None = None
    for chunk in range(done, chunks):
        obs, where = belief_data(games, opponent, min(chunk_size, decisions - chunk * chunk_size))
        if chunk == chunks - 1:  # held out: HELD_OUT decisions, at most a fifth of the chunk
            keep = min(HELD_OUT, len(obs) // 5)
            held, obs, where = (obs[:keep], where[:keep]), obs[keep:], where[keep:]
        order = rng.permutation(len(obs))
        total = 0.0
        for i in range(0, len(order) - BATCH + 1, BATCH):
            rows = np.sort(order[i : i + BATCH])
            loss = _loss(net, obs[rows], where[rows], players)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total += loss.item()
        state = {"settings": settings, "chunk": chunk + 1, "net": net.state_dict(), "optimizer": optimizer.state_dict()}
        state.update({"schedule": schedule.state_dict(), "games": engine_state(games)})
        save_checkpoint(checkpoint, "belief-fit", state)
        batches = max(1, len(order) // BATCH)
        log(f"chunk {chunk + 1}/{chunks}: cross-entropy {total / batches:.4f} per card ({time.time() - start:.0f} s)")
    linears = [m for m in net if isinstance(m, nn.Linear)]
    arrays = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in linears]
    save_belief(out, arrays[:-1], arrays[-1], ruleset, policy=policy, decisions=decisions, seed=seed)
    if held is not None:
        with torch.no_grad():
            log(f"held-out cross-entropy per card: {_loss(net, held[0], held[1], players).item():.4f}")
    log(f"belief network: {out} (pimc:rollout=policy,belief={out})")


def _resume(
    path: str,
    settings: dict,
    net: nn.Sequential,
    optimizer: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LRScheduler,
    games: VectorGame,
) -> int:
    """Restore the checkpoint at ``path`` into the fit; the chunks done. A CheckpointError if it is another
    fit's (other settings) or damaged."""
    state = open_checkpoint(path, "belief-fit")
    if state.get("settings") != settings:
        raise CheckpointError(
            f"{path} is the checkpoint of another fit ({state.get('settings')}); delete it to start this one"
        )
    try:
        net.load_state_dict(state["net"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        restore_engine(games, state["games"])
        return int(state["chunk"])
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as err:
        raise CheckpointError(f"{path}: a damaged checkpoint ({type(err).__name__})") from None
