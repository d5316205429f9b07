"""Search distillation: a policy network trained to play like ``pimc``.

Recipe (one config, ``configs/distill.yaml``; every step resumable):

1. **Label** hands with :mod:`training.distill.data`: every decision with
   more than one legal action gets pimc's mean tricks for each legal action
   (play of the tricks) or the heuristic's move (exchange, trump, discards,
   where pimc defers to the heuristic).
2. **Fit** an MLP (the actor layout of the SB3 MLP policy, so that the result
   loads through :class:`agents.players.ppo_agent.PPOAgent` and runs in numpy) by
   cross-entropy to the soft target ``softmax(values / temperature)`` over
   the legal actions (one-hot on the heuristic's move where there are no
   values), plus a value head on the hand's final balance (an auxiliary loss;
   the head is not exported).
3. **DAgger rounds** (optional, ``dagger_rounds``): the fitted policy plays
   new hands while pimc labels them, and the network is refitted on all the
   data, so it learns to recover from its own mistakes (with
   ``dagger_rollout: previous`` it plays the search's rollouts too: expert
   iteration, below).

What worked (``docs/results/standard-v1.md``): plain imitation by a fresh network, every
sample under a random renaming of the suits (:mod:`training.distill.symmetry`), with
the exchange, trump and discard decisions labelled by a teacher policy
(``fit.other_teacher``), on as many labels as possible. With 1.6 million
labelled decisions and 10 epochs (``configs/distill_v2.yaml``, one command,
the further data sets listed under ``extra_data``) the network plays better
than ``pimc`` itself in every role; with 0.2 million (``configs/distill_final.yaml``)
it closed half the gap between the heuristic and ``pimc``.
Starting from a PPO policy (``fit.init``) and pulling it towards soft search
targets made it worse; *anchored corrections* (``fit.anchor_margin``: keep
the start policy's move unless pimc finds it clearly worse) were safe but
gained nothing measurable at 10^5 labels.

Expert iteration (``configs/exit_v3.yaml``): the search labels with policy rollouts (``data.rollout:
policy``) every decision type (``data.search_decisions: all``), starting from the shipped policy, and
``dagger_rollout: previous`` makes each DAgger round's search roll out with the round before's fitted policy,
which also plays the round's hands: the policy's own search labels the positions the policy reaches. The
validation then reports the regret of the exchange, trump and discard decisions too.

A strong start is kept by ``fit.method: q`` (``configs/distill_four_v2.yaml``): instead of fitting the start
policy to the search's moves, a Q-network (the start's hidden layers, a fresh head) is regressed on the search's
values less its prior (``data.prior`` times the rollout policy's log-probabilities: what is left is each move's
mean play-out balance over the sampled deals) by :func:`training.distill.fit_q.fit_rows`, and the policy written
is ``fit.prior_weight`` times the start's logits plus the Q-network in tricks, one exact network
(:func:`training.distill.fit_q.combine`): the search's own decision rule without the search. Its report gives,
on the held-out searched decisions, how often the combined policy keeps the start's move and takes the search's,
and its gain over the start's move by the search's values.

Every rule set distils the same way (``env.rules``, a preset): the network takes that rule set's observation
(``observation_size(rules)``: 789, 791 with the 74 actions of docs/rules.md 10.8, 900 with ``one_card_kitty``)
and gives one logit per action (``rules.num_actions``), the suit renamings are that rule set's symmetries
(:func:`training.distill.symmetry.permutations`), and the policy file records the rule set. Every data set of
a run is of ``env.rules``: a folder labelled with other rules (its ``meta.json``) or a shard of another shape
(each shard records its own) is refused in one line, as are ``fit.init``, ``fit.other_teacher`` or a
``trained`` that cannot play the rules.

Validation (5% of the shards held out) reports the agreement with pimc's
choice and the *regret*: pimc's value of its best action minus its value of
the network's action, in tricks per searched play decision (by role too), and
per searched exchange, trump and discard decision where the data has them.

Command line (``sergeant-major distill``, also ``python -m training.distill``; the run layer of every
trainer, training/common/runs.py)::

    sergeant-major distill --config configs/distill.yaml             # a new run in runs/distill_v1 (or -2, ...)
    sergeant-major distill --config configs/distill.yaml hands=200 name=tiny
    sergeant-major distill --resume runs/distill_v1                  # continue: label and fit what is missing
    sergeant-major distill --resume runs/distill_v1 --set dagger_rounds=2   # one more DAgger round
    sergeant-major distill --config configs/distill_final.yaml \
        --fit-data runs/distill_v1/data_r0,runs/distill_v1/data_r1,runs/distill_v1/teacher --out policy.pt

(``--fit-data`` only fits, on folders labelled earlier, and writes the
policy and ``<out>_fit.json``.) Ctrl-C stops at once: every shard and every
fitted epoch is saved as it is made, and ``--resume`` continues from there.

Outputs in the run folder (the one layout, training/common/folders.py): ``config.yaml`` (the resolved config),
``data/r<k>/`` and ``data/<name>/`` per ``extra_data`` entry (labelled shards), ``checkpoints/fit_r<k>.pt`` (the
fit's state after its last finished epoch, ``trainer: distill-fit``), ``policies/r<k>.pt`` (the policy after
round k, a ``.pt`` export readable by ``ppo:PATH``) and ``policies/r<k>.json`` (its fit: losses, validation
figures, wall times), ``final_policy.pt`` (the last round's policy), ``final_eval.json`` (with
``eval.final_deals``: the last policy's duplicate evaluation per role, as every trainer's) and ``summary.json``
(written last: the run is complete).
"""

from __future__ import annotations

import filecmp
import math
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.players.ppo_agent import PolicyShape
from sm_env.core.game import DISCARD, EXCHANGE, PHASE_NAMES, PLAY, ROLE_NAMES, TRUMP, role_names
from sm_env.core.rules import STANDARD, RuleSet
from sm_env.files.atomic import atomic_copy
from sm_env.files.json_files import read_json
from sm_env.observation import observed_phases
from training.common.checkpoint import CheckpointError, check_finite, damaged, open_checkpoint, save_checkpoint
from training.common.device import module_device, resolve_device
from training.common.folders import (
    CHECKPOINTS,
    DATA,
    FINAL_POLICY,
    POLICIES,
    move_old_layout,
    save_training_seconds,
    training_seconds,
)
from training.common.ray_cluster import RayOptions
from training.common.runs import Backend, progress, write_json
from training.common.yaml_config import ConfigError, save_config
from training.distill import data as distill_data
from training.distill import symmetry
from training.distill.config import DistillConfig, ExtraData, FitSettings, load_distill_config
from training.distill.data import DataSettings

__all__ = ["DistillConfig", "ExtraData", "FitSettings", "fit", "fit_folders", "load_config", "run"]

Log = Callable[[str], None] | None  # a progress log (None: print, flushed)

# ---------------------------------------------------------------- config
# The settings are typed-YAML sections (training/distill/config.py); load_config is this module's name for
# load_distill_config.

load_config = load_distill_config

# ---------------------------------------------------------------- fitting


def _legal(data: dict[str, np.ndarray]) -> np.ndarray:
    """The legal masks [n, A] of labelled decisions (A: the data's action count, the width of its values)."""
    return distill_data.unpack_legal(data["legal"], data["values"].shape[1])


def _targets(data: dict[str, np.ndarray], temperature: float, hard_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Targets [n, A] and legal masks [n, A] (A actions: 56, or 74 for the rule sets of docs/rules.md 10.8): on
    searched rows ``(1 - hard_weight) * softmax(values / temperature) + hard_weight * onehot(label)``, else the
    one-hot label."""
    legal = _legal(data)
    n = len(legal)
    values = data["values"].astype(np.float32)
    logits = np.where(legal, np.nan_to_num(values, nan=0.0) / temperature, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    soft = np.exp(logits)
    soft /= soft.sum(axis=1, keepdims=True)
    hard = np.zeros((n, legal.shape[1]), dtype=np.float32)
    hard[np.arange(n), data["target"].astype(np.int64)] = 1.0
    soft = (1.0 - hard_weight) * soft + hard_weight * hard
    targets = np.where(data["searched"][:, None], soft, hard).astype(np.float32)
    return targets, legal


def split_shards(n_shards: int, share: float, seed: int) -> np.ndarray:
    """Indices of the shards held out for validation (at least one when share > 0 and n > 1)."""
    if share <= 0 or n_shards < 2:
        return np.zeros(0, dtype=np.int64)
    k = max(1, round(n_shards * share))
    return np.sort(np.random.default_rng(seed).permutation(n_shards)[:k])


def _folder_settings(folder: str) -> dict[str, Any] | None:
    """The data settings a folder was labelled with (its ``meta.json``, read within bounds: a damaged one is a
    one-line ValueError), or None if it records none."""
    path = os.path.join(folder, "meta.json")
    meta = read_json(path, "a data folder's meta.json", distill_data.MAX_META_BYTES) if os.path.lexists(path) else {}
    settings = meta.get("settings") if isinstance(meta, dict) else None
    return settings if isinstance(settings, dict) else None


def _folder_rules(folder: str) -> str | None:
    """The rule preset a data folder was labelled with, or None if it records none."""
    settings = _folder_settings(folder)
    return settings.get("rules") if settings else None


def _load_split(
    folders: list[str], share: float, seed: int, rules: RuleSet | str | None = None, train_share: float = 1.0
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The shards of ``folders``, split into training and validation decisions. With ``rules`` (the fit's), a
    folder labelled with other rules (its ``meta.json``) is a ValueError, and a shard of another shape a
    :class:`~training.distill.data.ShardError`, each one line naming both. ``train_share`` < 1 keeps the first
    ``ceil(train_share x n)`` of each folder's ``n`` training shards (the held-out shards do not change)."""
    ruleset = RuleSet.from_any(rules) if rules is not None else None
    shape = PolicyShape.of(ruleset) if ruleset is not None else None
    train: list[dict[str, np.ndarray]] = []
    valid: list[dict[str, np.ndarray]] = []
    shards: list[tuple[str, bool]] = []  # (path, held out)
    for folder in folders:
        labelled = _folder_rules(folder)
        if ruleset is not None and labelled is not None and labelled != ruleset.name:
            raise ValueError(
                f"{folder} holds data of the rules {labelled!r}; this fit is for {ruleset.name!r} (env.rules): "
                "fit each rule set on its own data"
            )
        names = distill_data.shard_names(folder)
        if not names:
            raise ValueError(f"{folder}: no labelled shards")
        held = set(split_shards(len(names), share, seed).tolist())
        training = [i for i in range(len(names)) if i not in held]
        kept = held | set(training[: math.ceil(train_share * len(training))])
        shards += [(os.path.join(folder, name), i in held) for i, name in enumerate(names) if i in kept]
    distill_data.check_total_rows([path for path, _ in shards])  # the whole set's size, before reading it
    for path, is_held in shards:
        part = distill_data.read_shard(path, shape)  # within bounds, or one clear error
        (valid if is_held else train).append(part)

    def cat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        if not parts:
            return {}
        return {f: np.concatenate([p[f] for p in parts]) for f in distill_data.FIELDS}

    return cat(train), cat(valid)


def initial_network(settings: FitSettings, rules: RuleSet | None = None) -> Any:
    """A fresh network for ``rules`` (default: the standard rules), or one whose trunk and policy head are
    copied from ``settings.init`` (a policy that plays ``rules``: a ValueError naming what it plays if not)."""
    from training.distill.network import PolicyValueNet

    rules = rules or STANDARD
    shape = PolicyShape.of(rules)
    if not settings.init:
        return PolicyValueNet(settings.net_arch, "relu", shape)
    from agents.players.ppo_agent import policy_into_torch

    path = _policy_path(settings.init, rules)
    policy, _ = _playing_policy(path, rules, "fit.init")
    net = PolicyValueNet(tuple(policy.net_arch), policy.activation, shape)
    policy_into_torch(policy, [net.trunk, net.policy], f"fit.init {settings.init}")
    return net


def _playing_policy(path: str, rules: RuleSet, key: str) -> tuple[Any, dict[str, Any]]:
    """The policy file at ``path`` loaded, if it plays ``rules``; else a ValueError naming ``key`` and what the
    file plays."""
    from agents.players.ppo_agent import PPOAgent

    agent = PPOAgent(path)
    try:
        agent.check_rules(rules)
    except ValueError as err:
        raise ValueError(f"{key}: {err}") from None
    return agent.policy, agent.meta


def to_numpy_policy(net: Any) -> Any:
    """The actor of a fitted network as an :class:`agents.players.ppo_agent.NumpyPolicy`."""
    from agents.players.ppo_agent import policy_from_torch

    return policy_from_torch([net.trunk, net.policy], getattr(net, "activation", "relu"), where="the fitted network")


def _evaluate_fit(
    net: Any, data: dict[str, np.ndarray], batch: int = 8192, roles: tuple[str, ...] = ROLE_NAMES
) -> dict[str, float]:
    """Agreement with the label and pimc regret (tricks per searched decision; also by role, ``roles``
    naming them)."""
    import torch

    if not data:
        return {}
    obs = distill_data.unpack_observations(data["bits"], data["scalars"])
    legal = _legal(data)
    chosen = np.empty(len(obs), dtype=np.int64)
    device = module_device(net)
    with torch.no_grad():
        for start in range(0, len(obs), batch):
            logits, _ = net(torch.from_numpy(obs[start : start + batch]).to(device))
            logits = logits.cpu().numpy()
            logits[~legal[start : start + batch]] = -np.inf
            chosen[start : start + batch] = logits.argmax(axis=1)
    searched = data["searched"]
    values = data["values"].astype(np.float32)
    kinds = observed_phases(obs, len(roles))
    rows = np.flatnonzero(searched & (kinds == PLAY))
    best = np.nanmax(values[rows], axis=1)
    regret = best - values[rows, chosen[rows]]
    target = data["target"].astype(np.int64)
    other = ~searched
    out = {
        "decisions": int(len(obs)),
        "agreement": float((chosen == target).mean()),
        "agreement_play": float((chosen[rows] == target[rows]).mean()) if len(rows) else float("nan"),
        "agreement_other": float((chosen[other] == target[other]).mean()) if other.any() else float("nan"),
        "regret_play": float(regret.mean()) if len(rows) else float("nan"),
    }
    for kind in (EXCHANGE, TRUMP, DISCARD):  # searched with data.search_decisions: all
        r = np.flatnonzero(searched & (kinds == kind))
        if len(r):
            out[f"regret_{PHASE_NAMES[kind]}"] = float((np.nanmax(values[r], axis=1) - values[r, chosen[r]]).mean())
    for role, name in enumerate(roles):
        r = rows[data["role"][rows] == role]
        if len(r):
            out[f"regret_{name}"] = float((np.nanmax(values[r], axis=1) - values[r, chosen[r]]).mean())
    return out


def _choices(net: Any, obs: np.ndarray, legal: np.ndarray, batch: int = 8192) -> np.ndarray:
    """The network's most probable legal action for each row."""
    import torch

    chosen = np.empty(len(obs), dtype=np.int64)
    device = module_device(net)
    with torch.no_grad():
        for start in range(0, len(obs), batch):
            logits = net(torch.from_numpy(obs[start : start + batch]).to(device))[0].cpu().numpy()
            logits[~legal[start : start + batch]] = -np.inf
            chosen[start : start + batch] = logits.argmax(axis=1)
    return chosen


def _policy_path(spec: str, rules: RuleSet | None = None) -> str:
    """The file of a policy spec: a path, or ``trained`` (the shipped policy for ``rules``: a ValueError naming
    the rule sets that have one if there is none)."""
    if spec != "trained":
        return spec
    from agents.players.trained import trained_policy

    return trained_policy(rules)


def _relabel_unsearched(
    targets: np.ndarray,
    obs: np.ndarray,
    legal: np.ndarray,
    searched: np.ndarray,
    teacher: str,
    rules: RuleSet | None = None,
) -> np.ndarray:
    """One-hot targets on the unsearched rows from a teacher policy's most probable legal move (a policy that
    plays ``rules``, default the standard rules)."""
    rules = rules or STANDARD
    policy, _ = _playing_policy(_policy_path(teacher, rules), rules, "fit.other_teacher")
    rows = np.flatnonzero(~searched)
    targets = targets.copy()
    for start in range(0, len(rows), 8192):
        part = rows[start : start + 8192]
        logits = policy.logits(obs[part]).astype(np.float64)
        logits[~legal[part]] = -np.inf
        targets[part] = 0.0
        targets[part, logits.argmax(axis=1)] = 1.0
    return targets


def _anchored_targets(
    net: Any, obs: np.ndarray, legal: np.ndarray, data: dict[str, np.ndarray], margin: float
) -> tuple[np.ndarray, float]:
    """One-hot targets: the network's own move, or pimc's where pimc finds it ``margin`` tricks worse."""
    net.eval()
    chosen = _choices(net, obs, legal)
    rows = np.flatnonzero(data["searched"])
    values = data["values"][rows].astype(np.float32)
    regret = np.nanmax(values, axis=1) - values[np.arange(len(rows)), chosen[rows]]
    fix = rows[regret > margin]
    target = chosen.copy()
    target[fix] = data["target"][fix]
    onehot = np.zeros(legal.shape, dtype=np.float32)
    onehot[np.arange(len(target)), target] = 1.0
    return onehot, len(fix) / max(len(target), 1)


TRAINER = "distill-fit"  # its checkpoints' trainer field (training/common/checkpoint.py)
MAX_REPORT_BYTES = 16 << 20  # a round's policies/r<k>.json (its history: a few kB an epoch)


def save_fit_state(
    path: str, stamp: dict[str, Any], epoch: int, history: list[dict[str, Any]], parts: dict[str, Any]
) -> None:
    """Write the state of a fit after ``epoch`` finished epochs to ``path``, atomically: ``parts`` holds the
    network (``net``), the optimiser (``optimiser``), the learning-rate schedule (``schedule``) and the numpy
    generator (``rng``); the torch generator's state is saved too."""
    import torch

    state = {
        "stamp": stamp,
        "epoch": epoch,
        "history": history,
        "net": parts["net"].state_dict(),
        "optimiser": parts["optimiser"].state_dict(),
        "schedule": parts["schedule"].state_dict(),
        "numpy_rng": parts["rng"].bit_generator.state,
        "torch_rng": torch.get_rng_state(),
    }
    save_checkpoint(path, TRAINER, state)


def resume_fit_state(path: str, stamp: dict[str, Any], parts: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """Restore what :func:`save_fit_state` wrote into ``parts`` (and the torch generator); returns the history and
    the epochs finished. A checkpoint of another fit (another ``stamp``: settings, seed, data size) is refused."""
    import torch

    state = open_checkpoint(path, TRAINER, "the fit's checkpoint")
    if "stamp" not in state:
        raise damaged(path, "it has no stamp (what the fit was made from)")
    if state["stamp"] != stamp:
        raise CheckpointError(f"{path} is the checkpoint of another fit ({state['stamp']}); remove it or use it")
    for key in ("net", "optimiser"):
        check_finite(path, state.get(key), key)
    if type(state.get("epoch")) is not int or state["epoch"] < 0:
        raise damaged(path, f"epoch is {state.get('epoch')!r}, not a whole number >= 0")
    if not isinstance(state.get("history"), list):
        raise damaged(path, "history is not a list")
    try:
        parts["net"].load_state_dict(state["net"])
        parts["optimiser"].load_state_dict(state["optimiser"])
        parts["schedule"].load_state_dict(state["schedule"])
        parts["rng"].bit_generator.state = state["numpy_rng"]
        torch.set_rng_state(state["torch_rng"])
        return list(state["history"]), int(state["epoch"])
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise CheckpointError(f"{path}: the fit's checkpoint is damaged ({type(err).__name__})") from None


def _fit_arrays(
    train: dict[str, np.ndarray], settings: FitSettings, rules: RuleSet
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The observations, targets (:func:`_targets`, the unsearched rows relabelled by ``fit.other_teacher`` if
    set), legal masks and scaled balances (balance / 4) of the training decisions, which must be of the shape
    of ``rules`` (a ValueError naming both shapes if not)."""
    targets, legal = _targets(train, settings.temperature, settings.hard_weight)
    obs = distill_data.unpack_observations(train["bits"], train["scalars"])
    want = PolicyShape.of(rules)
    if (obs.shape[1], legal.shape[1]) != tuple(want[:2]):
        raise ValueError(
            f"the decisions have {obs.shape[1]} observation entries and {legal.shape[1]} actions; a fit for the "
            f"rules {rules.name!r} needs {want}"
        )
    balance = train["balance"].astype(np.float32) / 4.0
    if settings.other_teacher:
        targets = _relabel_unsearched(targets, obs, legal, train["searched"], settings.other_teacher, rules)
    return obs, targets, legal, balance


def _optimiser(net: Any, settings: FitSettings, decisions: int) -> dict[str, Any]:
    """Adam over ``net`` and its learning-rate schedule: cosine decay to 5% over the fit's steps."""
    import torch

    optimiser = torch.optim.Adam(net.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    total = settings.epochs * max(1, -(-decisions // settings.batch_size))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: float(0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * min(step, total) / total)))
    )
    return {"optimiser": optimiser, "schedule": schedule}


def _fit_epoch(parts: dict[str, Any], tensors: tuple[Any, ...], settings: FitSettings) -> tuple[float, float]:
    """One pass over the training decisions in a random order (minibatches, suit renamings when
    ``settings.suit_augment``); the mean policy and value losses. The data stay on the CPU, where each minibatch
    is drawn and renamed; it then goes to the network's device (``fit.device``)."""
    import torch

    net, optimiser, schedule, rng = parts["net"], parts["optimiser"], parts["schedule"], parts["rng"]
    device = module_device(net)
    obs_t, targets_t, legal_t, balance_t, obs_tables, action_tables = tensors
    n = len(obs_t)
    net.train()
    order = torch.from_numpy(rng.permutation(n))
    sums = np.zeros(2)
    for start in range(0, n, settings.batch_size):
        idx = order[start : start + settings.batch_size]
        x, target, mask = obs_t[idx], targets_t[idx], legal_t[idx]
        if settings.suit_augment:
            perm = torch.randint(len(obs_tables), (len(idx),))
            x = torch.gather(x, 1, obs_tables[perm])
            target = torch.gather(target, 1, action_tables[perm])
            mask = torch.gather(mask, 1, action_tables[perm])
        x, target, mask, balance = (t.to(device) for t in (x, target, mask, balance_t[idx]))
        logits, value = net(x)
        logits = logits.masked_fill(~mask, -1e9)
        policy_loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        value_loss = ((value - balance) ** 2).mean()
        loss = policy_loss + settings.value_coef * value_loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        sums += (policy_loss.item() * len(idx), value_loss.item() * len(idx))
    net.eval()
    return float(sums[0] / n), float(sums[1] / n)


def fit(
    train: dict[str, np.ndarray],
    valid: dict[str, np.ndarray],
    settings: FitSettings,
    seed: int,
    log: Callable[[str], None] | None = None,
    checkpoint: str | None = None,
    rules: RuleSet | str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Fit a policy-value network to labelled decisions of ``rules`` (default: the standard rules; the network
    has their observation size and action count, and the suit renamings are their symmetries); returns it and
    its figures.

    With ``checkpoint`` (a file path), the state of the fit (network, optimiser, learning-rate schedule, random
    generators, history) is written there atomically after every epoch (:func:`save_fit_state`), and a fit
    started again with the same path, data and settings continues after the last finished epoch
    (:func:`resume_fit_state`), giving the same network as an uninterrupted fit (on any ``fit.device``: the
    network and its updates run there, the data and the random draws stay on the CPU).
    """
    import torch

    log = log or distill_data.say
    rules = RuleSet.from_any(rules) if rules is not None else STANDARD
    roles = role_names(rules)
    if settings.anchor_margin > 0 and not settings.init:
        raise ValueError("fit.anchor_margin needs fit.init (the policy whose moves are kept)")
    torch.manual_seed(seed)
    torch.set_num_threads(settings.threads)
    if settings.play_only:
        train = {name: array[train["searched"]] for name, array in train.items()}
    rng = np.random.default_rng(seed)
    obs, targets, legal, balance = _fit_arrays(train, settings, rules)
    net = initial_network(settings, rules).to(resolve_device(settings.device, "fit.device"))
    corrections = None
    if settings.anchor_margin > 0:
        targets, corrections = _anchored_targets(net, obs, legal, train, settings.anchor_margin)
        log(f"anchored targets: {corrections:.1%} of the decisions corrected to pimc's move")
    parts = {"net": net, **_optimiser(net, settings, len(obs)), "rng": rng}
    # train_share is left out: the data it selects is in "decisions", and a checkpoint from before it stays valid;
    # device too: a fit goes on on another device (and a checkpoint from before the setting stays valid)
    stamp = {
        "settings": settings.model_dump(exclude={"train_share", "device"}),
        "seed": seed,
        "decisions": int(len(obs)),
    }
    first_epoch = 0
    if checkpoint and os.path.exists(checkpoint):
        history, first_epoch = resume_fit_state(checkpoint, stamp, parts)
        log(f"resuming the fit after epoch {first_epoch} ({checkpoint})")
    else:
        net.eval()
        history = [{"epoch": 0, "valid": _evaluate_fit(net, valid, roles=roles)}]  # the starting point
    started = time.perf_counter() - (history[-1].get("seconds", 0.0) if first_epoch else 0.0)
    tensors = (
        torch.from_numpy(obs),
        torch.from_numpy(targets),
        torch.from_numpy(legal),
        torch.from_numpy(balance),
        *(torch.from_numpy(t) for t in symmetry.index_tables(rules)),
    )
    for epoch in range(first_epoch, settings.epochs):
        policy_loss, value_loss = _fit_epoch(parts, tensors, settings)
        row = {
            "epoch": epoch + 1,
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "seconds": time.perf_counter() - started,
            "valid": _evaluate_fit(net, valid, roles=roles),
        }
        history.append(row)
        if checkpoint:
            save_fit_state(checkpoint, stamp, epoch + 1, history, parts)
        v = row["valid"]
        log(
            f"epoch {epoch + 1}/{settings.epochs}: policy loss {row['policy_loss']:.4f}, value loss "
            f"{row['value_loss']:.4f}; valid agreement {v.get('agreement', float('nan')):.3f}, "
            f"regret {v.get('regret_play', float('nan')):.4f} tricks/decision ({row['seconds']:.0f} s)"
        )
    return net, {"train_decisions": int(len(obs)), "corrected_share": corrections, "history": history}


# ---------------------------------------------------------------- method q: the search's values, not its moves


def _folders_prior(folders: list[str]) -> tuple[float, str | None]:
    """The prior and rollout policy file of the search that labelled ``folders`` (their ``meta.json``; one for
    all: a ValueError if they differ)."""
    found = set()
    for folder in folders:
        settings = _folder_settings(folder)
        if settings is None:
            raise ValueError(f"{folder}: its meta.json records no search settings; fit.method q needs them")
        prior = float(settings.get("prior") or 0.0)
        policy = distill_data.rollout_policy_file(DataSettings(**settings)) if prior else None
        found.add((prior, policy))
    if len(found) > 1:
        raise ValueError(f"the data folders were labelled by searches with different priors {sorted(found)}")
    return found.pop()


def _log_probs(policy: Any, obs: np.ndarray, legal: np.ndarray, batch: int = 8192) -> np.ndarray:
    """``policy``'s log-probabilities of the legal moves ([n, A], -inf elsewhere; float64)."""
    out = np.empty(legal.shape, dtype=np.float64)
    for start in range(0, len(obs), batch):
        logits = policy.logits(obs[start : start + batch]).astype(np.float64)
        logits[~legal[start : start + batch]] = -np.inf
        top = logits.max(axis=1, keepdims=True)
        out[start : start + batch] = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    return out


def search_value_rows(
    train: dict[str, np.ndarray], valid: dict[str, np.ndarray], folders: list[str], init: str, rules: RuleSet
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The searched decisions of ``train`` and ``valid`` as rows of the play-out fit
    (:func:`training.distill.fit_q.fit_rows`) and the indices of each: ``values`` the search's mean play-out
    balance of each legal move (its labelled values less ``prior`` times the rollout policy's log-probability),
    ``policy_move`` the move of ``init`` (the policy the Q-network is added to)."""
    prior, rollout = _folders_prior(folders)
    start_policy, _ = _playing_policy(_policy_path(init, rules), rules, "fit.init")
    rollout_policy = _playing_policy(rollout, rules, "data.rollout_policy")[0] if prior else None
    parts = []
    for data in (train, valid):
        keep = data["searched"] if data else np.zeros(0, dtype=bool)
        if not keep.any():
            parts.append(None)
            continue
        obs = distill_data.unpack_observations(data["bits"][keep], data["scalars"][keep])
        legal = _legal(data)[keep]
        values = data["values"][keep].astype(np.float64)
        if rollout_policy is not None:
            values = values - prior * _log_probs(rollout_policy, obs, legal)
        own = _log_probs(start_policy, obs, legal).argmax(axis=1)
        parts.append(
            {
                "obs": obs.astype(np.float16),
                "mask": legal.astype(np.int8),
                "values": np.where(legal, values, np.nan).astype(np.float32),
                "phase": observed_phases(obs, rules.num_players).astype(np.int8),
                "policy_move": own.astype(np.int64),
                "target": data["target"][keep].astype(np.int64),  # the search's move
            }
        )
    if parts[0] is None:
        raise ValueError("fit.method q: the training data holds no searched decision (data.search: false?)")
    sizes = [0 if p is None else len(p["obs"]) for p in parts]
    rows = {name: np.concatenate([p[name] for p in parts if p is not None]) for name in parts[0]}
    return rows, np.arange(sizes[0]), np.arange(sizes[0], sizes[0] + sizes[1])


def fit_search_values(
    train: dict[str, np.ndarray],
    valid: dict[str, np.ndarray],
    folders: list[str],
    settings: FitSettings,
    seed: int,
    out: str,
    rules: RuleSet | str,
    log: Log = None,
) -> dict[str, Any]:
    """``fit.method: q``: a Q-network fitted on the search's values (:func:`search_value_rows`; written beside
    ``out`` as ``<out>_q.pt``), then ``out``: ``settings.prior_weight`` times ``settings.init``'s logits plus the
    Q-network's values in tricks, one exact network (:func:`training.distill.fit_q.combine`). Returns the fit's
    report (the held-out gain, by the search's values, of the combined move over init's)."""
    from training.distill.fit_q import combine, fit_rows

    rules = RuleSet.from_any(rules)
    rows, train_rows, held = search_value_rows(train, valid, folders, settings.init, rules)
    q_path = os.path.splitext(out)[0] + "_q.pt"
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    say = log or distill_data.say
    say(f"method q: a Q-network on {len(train_rows)} searched decisions ({len(held)} held out)")
    report = fit_rows(
        rows,
        train_rows,
        held,
        rules,
        _policy_path(settings.init, rules),
        q_path,
        settings.epochs,
        settings.learning_rate,
        seed,
        valued="the search's play-out balance",
        log=say,
        renamings=symmetry.index_tables(rules) if settings.suit_augment else None,
        device=settings.device,
    )
    combine(_policy_path(settings.init, rules), q_path, settings.prior_weight, out)
    report = {"method": "q", "train_decisions": int(len(train_rows)), "q_network": q_path, **(report or {})}
    if len(held):
        report["combined"] = _combined_report(out, rows, held, rules)
        c = report["combined"]
        say(
            f"held out: the combined policy keeps init's move in {c['same_as_init']:.1%}, takes the search's in "
            f"{c['agreement']:.1%} (init {c['init_agreement']:.1%}); gain over init's move by the search's values "
            f"{c['gain']:+.4f} +- {c['half_width']:.4f} tricks a decision"
        )
    return report


def _combined_report(path: str, rows: dict[str, np.ndarray], held: np.ndarray, rules: RuleSet) -> dict[str, float]:
    """The held-out figures of the combined policy at ``path``: its agreement with the search's move (and
    init's), the share of init's moves it keeps, its gain over init's move by the search's values."""
    policy, _ = _playing_policy(path, rules, "the combined policy")
    legal = rows["mask"][held].astype(bool)
    choice = _log_probs(policy, rows["obs"][held].astype(np.float32), legal).argmax(axis=1)
    own, target, values = rows["policy_move"][held], rows["target"][held], rows["values"][held]
    at = np.arange(len(held))
    gain = values[at, choice] - values[at, own]
    return {
        "decisions": int(len(held)),
        "agreement": float((choice == target).mean()),
        "init_agreement": float((own == target).mean()),
        "same_as_init": float((choice == own).mean()),
        "gain": float(gain.mean()),
        "half_width": float(1.96 * gain.std() / np.sqrt(len(held))),
    }


# ---------------------------------------------------------------- the run


def round_settings(config: DistillConfig, run_dir: str, round_: int) -> DataSettings:
    """How round ``round_``'s hands are labelled: ``data``; in a DAgger round (k > 0) the policy of round
    k - 1 plays, with the seed ``data.seed + 1000 k``, and with ``dagger_rollout: previous`` it plays the
    search's rollouts too (``data.rollout_policy``): expert iteration, each round's search a step of policy
    improvement over the last round's policy."""
    settings = config.data_settings()
    if round_ == 0:
        return settings
    policy = round_policy(run_dir, round_ - 1)
    update = {"seed": settings.seed + 1000 * round_, "behaviour": f"ppo:{policy}"}
    if config.dagger_rollout == "previous":
        update["rollout_policy"] = policy
    return settings.model_copy(update=update)


def round_policy(run_dir: str, round_: int, suffix: str = ".pt") -> str:
    """Round ``round_``'s policy (``policies/r<k>.pt``), or with ``suffix=".json"`` the report of its fit."""
    return os.path.join(run_dir, POLICIES, f"r{round_}{suffix}")


def round_data(run_dir: str, round_: int) -> str:
    """Round ``round_``'s data folder (``data/r<k>``)."""
    return os.path.join(run_dir, DATA, f"r{round_}")


def data_sets(config: DistillConfig, run_dir: str) -> list[tuple[str, DataSettings]]:
    """Every data folder of a run with its settings: ``data/r<k>`` of each round and ``data/<name>`` of the
    ``extra_data`` sets."""
    rounds = [(round_data(run_dir, k), round_settings(config, run_dir, k)) for k in range(config.dagger_rounds + 1)]
    extras = [(os.path.join(run_dir, DATA, extra.name), config.data_settings(extra)) for extra in config.extra_data]
    return rounds + extras


def old_layout(config: DistillConfig, run_dir: str) -> list[str]:
    """Move a run folder of an older release (``data_r<k>/``, ``<name>/``, ``fit_r<k>.ckpt``, ``policy_r<k>.pt``,
    ``train_r<k>.json`` at its top) into the one layout, and point the later rounds' data at the moved
    policies (their ``meta.json`` records the policy that played); returns the moves made."""
    moves = []
    for k in range(config.dagger_rounds + 1):
        moves += [
            (f"data_r{k}", os.path.join(DATA, f"r{k}")),
            (f"fit_r{k}.ckpt", os.path.join(CHECKPOINTS, f"fit_r{k}.pt")),
            (f"policy_r{k}.pt", os.path.join(POLICIES, f"r{k}.pt")),
            (f"train_r{k}.json", os.path.join(POLICIES, f"r{k}.json")),
        ]
    moves += [(extra.name, os.path.join(DATA, extra.name)) for extra in config.extra_data]
    moved = move_old_layout(run_dir, moves)
    for k in range(1, config.dagger_rounds + 1):
        distill_data.repoint_policy(
            round_data(run_dir, k), os.path.join(run_dir, f"policy_r{k - 1}.pt"), round_policy(run_dir, k - 1)
        )
    return moved


def run(config: DistillConfig, log: Log = None, run_dir: str | None = None, ray: Any = None) -> dict[str, Any]:
    """Label, fit and (optionally) DAgger in ``run_dir`` (default ``config.run_dir``), skipping what is done
    already; returns the summary (also written to ``summary.json``). The resolved config is saved as
    ``config.yaml`` once the data already there is found to be of its settings. ``ray``: label on Ray
    (an address or a ``RayOptions``, :func:`training.distill.data.generate`) instead of ``config.workers``."""
    from agents.players.ppo_agent import export_policy

    log = log or distill_data.say
    run_dir = run_dir or config.run_dir
    for folder, settings in data_sets(config, run_dir):  # a resumed run's data must be of its settings
        distill_data.check_folder(folder, settings)
    os.makedirs(run_dir, exist_ok=True)
    save_config(config, os.path.join(run_dir, "config.yaml"))
    folders: list[str] = []
    summary: dict[str, Any] = {"rounds": []}
    policy_path = ""
    for round_ in range(config.dagger_rounds + 1):
        folder = round_data(run_dir, round_)
        settings = round_settings(config, run_dir, round_)
        hands = config.dagger_hands if round_ else config.hands
        started = time.perf_counter()
        distill_data.generate(folder, hands, settings, workers=config.workers, nice=config.nice, log=log, ray=ray)
        folders.append(folder)
        for extra in config.extra_data if round_ == 0 else ():
            folders.append(os.path.join(run_dir, DATA, extra.name))
            distill_data.generate(
                folders[-1],
                extra.hands,
                config.data_settings(extra),
                workers=config.workers,
                nice=config.nice,
                log=log,
                ray=ray,
            )
        label_seconds = time.perf_counter() - started
        policy_path, report_path = round_policy(run_dir, round_), round_policy(run_dir, round_, ".json")
        if os.path.exists(policy_path) and os.path.exists(report_path):
            log(f"round {round_}: {policy_path} exists; skipping the fit")
            report = read_json(report_path, "a fit's report", MAX_REPORT_BYTES)
            if not isinstance(report, dict):
                raise ValueError(f"{report_path}: not a fit's report (a JSON object); delete it to fit the round again")
        else:
            train, valid = _load_split(
                folders, config.fit.validation, config.seed, config.env.rules, config.fit.train_share
            )
            log(
                f"round {round_}: fitting on {len(train['target'])} decisions ({len(valid.get('target', []))} held out)"
            )
            started = time.perf_counter()
            seed = config.seed + round_
            if config.fit.method == "q":
                report = fit_search_values(train, valid, folders, config.fit, seed, policy_path, config.env.rules, log)
            else:
                checkpoint = os.path.join(run_dir, CHECKPOINTS, f"fit_r{round_}.pt")
                net, report = fit(
                    train, valid, config.fit, seed, log=log, checkpoint=checkpoint, rules=config.env.rules
                )
                os.makedirs(os.path.dirname(policy_path), exist_ok=True)
                export_policy(
                    to_numpy_policy(net),
                    policy_path,
                    rules=config.env.rules,
                    trainer="training.distill",
                    round=round_,
                    train_decisions=report["train_decisions"],
                )
            report["fit_seconds"] = time.perf_counter() - started
            report["label_seconds"] = label_seconds
            write_json(report_path, report)
        summary["rounds"].append({"round": round_, "policy": policy_path, **report})
    final = summary["policy"] = os.path.join(run_dir, FINAL_POLICY)
    if not (os.path.isfile(final) and filecmp.cmp(policy_path, final, shallow=False)):
        atomic_copy(policy_path, final)  # the last round's policy, where every trainer leaves its own
    policy_path = final
    summary["progress"], summary["unit"] = len(summary["rounds"]), UNIT
    write_json(os.path.join(run_dir, "summary.json"), summary)
    log(f"policy: {policy_path} (play it with the agent spec ppo:{policy_path})")
    return summary


def fit_folders(config: DistillConfig, folders: list[str], out: str, log: Log = None) -> dict[str, Any]:
    """Fit ``config.fit`` on labelled data folders (no labelling) and export the policy to ``out``."""
    from agents.players.ppo_agent import export_policy

    log = log or distill_data.say
    for folder in folders:
        if not os.path.isdir(folder):
            raise ValueError(f"data folder not found: {folder}")
    train, valid = _load_split(folders, config.fit.validation, config.seed, config.env.rules, config.fit.train_share)
    log(f"fitting on {len(train['target'])} decisions ({len(valid.get('target', []))} held out) from {folders}")
    started = time.perf_counter()
    if config.fit.method == "q":
        report = fit_search_values(train, valid, folders, config.fit, config.seed, out, config.env.rules, log)
    else:
        net, report = fit(train, valid, config.fit, config.seed, log=log, rules=config.env.rules)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        export_policy(
            to_numpy_policy(net),
            out,
            rules=config.env.rules,
            trainer="training.distill",
            train_decisions=report["train_decisions"],
        )
    report["fit_seconds"] = time.perf_counter() - started
    report["data"] = list(folders)
    report["fit_settings"] = config.fit.model_dump()
    write_json(os.path.splitext(out)[0] + "_fit.json", report)
    log(f"policy: {out}")
    return report


# ---------------------------------------------------------------- the command line (training/common/runs.py)

PROG = "sergeant-major distill"  # the one command (training.distill.cli; also python -m training.distill)
UNIT = "rounds"


def latest_saved(run_dir: str) -> str | None:
    """The newest file a distillation run keeps (a labelled shard, a fit checkpoint, a round's policy), or None."""
    found = [
        os.path.join(folder, name)
        for folder, _, names in os.walk(run_dir)
        for name in names
        if name.endswith((".npz", ".ckpt", ".pt")) and not name.startswith(".")
    ]
    return max(found, key=os.path.getmtime) if found else None


class DistillRun:
    """A distillation run as the run layer drives it (:func:`run`; every shard and epoch is saved as it is made)."""

    def __init__(self, config: DistillConfig, run_dir: str, quiet: bool = False, ray: Any = None) -> None:
        self.config, self.run_dir, self.ray, self.quiet = config, run_dir, ray, quiet
        self.wall = training_seconds(run_dir)  # the earlier calls' training time
        self.log: Callable[[str], None] = (lambda text: None) if quiet else progress
        self.summary: dict[str, Any] = {"rounds": []}
        self.done = self._rounds_done()
        if ray is not None:  # join now: an address that leads to no cluster leaves no new run folder
            RayOptions.of(ray).connect()

    def _rounds_done(self) -> int:
        rounds = range(self.config.dagger_rounds + 1)
        present = [os.path.exists(round_policy(self.run_dir, k)) for k in rounds]
        return present.index(False) if False in present else len(present)

    def progress(self) -> int:
        return self.done

    def train(self, stop: Any = None) -> None:
        started, before = time.perf_counter(), self.wall
        try:
            self.summary = run(self.config, log=self.log, run_dir=self.run_dir, ray=self.ray)
        except ConfigError:
            raise
        except ValueError as err:  # data of other settings, a missing policy file, ...: the user's to fix
            raise ConfigError(str(err)) from None
        finally:  # the time of every call, stopped ones too: the whole run's time sums them
            self.wall = before + time.perf_counter() - started
            save_training_seconds(self.run_dir, self.wall)
        self.done = len(self.summary["rounds"])

    def final_outputs(self) -> list[tuple[str, str]]:
        policy = self.summary["policy"]
        rows = [(os.path.basename(policy), f"the policy; play it: sergeant-major play --opponents ppo:{policy} pimc")]
        rows.append(("data/", "the labelled decisions (training/distill/data.py): r<k>/ a round's, <name> extra_data"))
        rows.append(("policies/r<k>.pt", "each round's policy; r<k>.json: its fit (losses, agreement, regret, times)"))
        return rows

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """The last round's policy against ``eval.opponents``, per role (what every trainer reports)."""
        from training.evaluation.evaluate import evaluate_against

        spec = f"ppo:{self.summary['policy']}"
        return evaluate_against(spec, self.config.eval, self.config.env.rules, deals, progress=not self.quiet)

    def details(self) -> str:
        return ""

    def facts(self) -> dict[str, Any]:
        return {key: value for key, value in self.summary.items() if key not in ("progress", "unit")}

    def close(self) -> None:
        pass


def backend(prog: str = PROG) -> Backend:
    """Distillation as the run layer sees it (``sergeant-major distill``)."""
    return Backend(
        prog=prog,
        load_config=load_distill_config,
        latest_checkpoint=latest_saved,
        length=lambda cfg: (cfg.dagger_rounds + 1, "dagger_rounds"),
        unit=UNIT,
        build=lambda cfg, run_dir, resume, args: DistillRun(
            cfg, run_dir, quiet=args.quiet, ray=RayOptions.from_args(args)
        ),
        stop_point=None,  # shards and epochs are saved as they are made: Ctrl-C stops at once
        saved="checkpoints/",
        old_layout=old_layout,
    )
