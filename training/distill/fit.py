"""Search distillation: a policy network trained to play like ``pimc``.

Recipe (one config, ``configs/distill.yaml``; every step resumable):

1. **Label** hands with :mod:`training.distill.data`: every decision with
   more than one legal action gets pimc's mean tricks for each legal action
   (play of the tricks) or the heuristic's move (exchange, trump, discards,
   where pimc defers to the heuristic).
2. **Fit** an MLP (the actor layout of the SB3 MLP policy, so that the result
   loads through :class:`agents.ppo_agent.PPOAgent` and runs in numpy) by
   cross-entropy to the soft target ``softmax(values / temperature)`` over
   the legal actions (one-hot on the heuristic's move where there are no
   values), plus a value head on the hand's final balance (an auxiliary loss;
   the head is not exported).
3. **DAgger rounds** (optional, ``dagger.rounds``): the fitted policy plays
   new hands while pimc labels them, and the network is refitted on all the
   data, so it learns to recover from its own mistakes.

What worked (``docs/results.md``): plain imitation by a fresh network, every
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

Validation (5% of the shards held out) reports the agreement with pimc's
choice and the *regret*: pimc's value of its best action minus its value of
the network's action, in tricks per searched decision.

Command line::

    python -m training.distill --config configs/distill.yaml
    python -m training.distill --config configs/distill.yaml hands=200 name=tiny
    python -m training.distill --config configs/distill_final.yaml \
        --fit-data runs/distill_v1/data_r0,runs/distill_v1/data_r1,runs/distill_v1/teacher --out policy.pt

(``--fit-data`` only fits, on folders labelled earlier, and writes the
policy and ``<out>_fit.json``.)

Outputs in ``<output_dir>/<name>/``: ``data_r<k>/`` and one folder per ``extra_data`` entry (labelled shards),
``fit_r<k>.ckpt`` (the fit's state after its last finished epoch),
``policy_r<k>.pt`` (the policy after round k, a ``.pt`` export readable by
``ppo:PATH``), ``train_r<k>.json`` (losses, validation figures, wall times),
and ``summary.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from sm_env.atomic import atomic_path
from training import distill_data, symmetry
from training.common.yaml_config import parse_yaml, read_config_text
from training.distill.data import DataSettings

Log = Callable[[str], None] | None  # a progress log (None: print, flushed)

# ---------------------------------------------------------------- config


@dataclass(frozen=True)
class FitSettings:
    """How the network is fitted to the labels."""

    net_arch: tuple[int, ...] = (512, 256)  # hidden layer widths (ReLU); ignored with ``init``
    init: str = ""  # start from this policy (a policy file, or "trained"): its layers and activation
    play_only: bool = False  # fit only the searched decisions (keeps the start policy's exchange, trump, discards)
    anchor_margin: float = 0.0  # > 0 (with init): one-hot targets = the start policy's own move, replaced by
    # pimc's where pimc values the start policy's move more than this many tricks below its best (a correction)
    epochs: int = 8
    batch_size: int = 1024
    learning_rate: float = 1e-3  # Adam, cosine-decayed to 5% over the epochs
    weight_decay: float = 1e-5
    temperature: float = 0.2  # tricks: softmax temperature of the soft target
    hard_weight: float = 0.25  # share of the one-hot label (pimc's choice, ties to the heuristic) in the target
    value_coef: float = 0.25  # weight of the value-head loss (balance / 4, squared error)
    validation: float = 0.05  # share of shards held out
    threads: int = 1  # torch threads
    suit_augment: bool = True  # each sample seen under a random renaming of the suits (training.distill.symmetry)
    other_teacher: str = ""  # label the unsearched decisions (exchange, trump, discards) with this policy's
    # move (a policy file or "trained") instead of the heuristic's


@dataclass(frozen=True)
class ExtraData:
    """A further data set of a run: ``hands`` hands labelled into ``<run_dir>/<name>/`` with the run's ``data``
    settings except those this entry gives (e.g. another ``behaviour``, ``search: false``, its own ``seed``)."""

    name: str
    hands: int
    settings: DataSettings


@dataclass(frozen=True)
class DistillConfig:
    """A whole distillation run (see the module docstring)."""

    name: str = "distill"
    output_dir: str = "runs"
    seed: int = 0
    workers: int = 1  # labelling processes
    nice: int = 0  # niceness added to the labelling workers
    hands: int = 4000  # hands labelled in round 0
    dagger_rounds: int = 0  # extra rounds where the policy plays and pimc labels
    dagger_hands: int = 1000  # hands per DAgger round
    data: DataSettings = field(default_factory=DataSettings)
    fit: FitSettings = field(default_factory=FitSettings)
    extra_data: tuple[ExtraData, ...] = ()  # labelled after data_r0, fitted with it in every round

    @property
    def run_dir(self) -> str:
        return os.path.join(self.output_dir, self.name)


def _extra_data(value: Any, data: dict[str, Any], where: str) -> tuple[ExtraData, ...]:
    """``extra_data`` entries: each a mapping with ``name``, ``hands`` and any data settings to change."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where}: a list of data sets (name, hands, data settings), got {value!r}")
    out = []
    for i, entry in enumerate(value):
        here = f"{where}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ValueError(f"{here}: a mapping with a folder name, hands and data settings, got {entry!r}")
        hands = entry.get("hands")
        if not isinstance(hands, int) or isinstance(hands, bool) or hands < 1:
            raise ValueError(f"{here}.hands: a whole number >= 1, got {hands!r}")
        if entry["name"].startswith("data_r") or entry["name"] in [e.name for e in out]:
            raise ValueError(f"{here}.name: {entry['name']!r} is taken (by a round's data_r<k> or an earlier entry)")
        changes = {k: v for k, v in entry.items() if k not in ("name", "hands")}
        settings = _build(DataSettings, {**data, **changes}, here)
        settings.validate()
        out.append(ExtraData(entry["name"], hands, settings))
    return tuple(out)


def _build(cls: type, values: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ValueError(f"{where}: unknown key {key!r}; allowed: {sorted(known)}")
        default = getattr(cls(), key)
        if key == "extra_data":
            value = _extra_data(value, values.get("data") or {}, f"{where}.extra_data")
        elif key == "data":
            value = _build(DataSettings, value or {}, f"{where}.data")
        elif key == "fit":
            value = _build(FitSettings, value or {}, f"{where}.fit")
        elif key == "net_arch":
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) and v > 0 for v in value):
                raise ValueError(f"{where}.{key}: a list of positive whole numbers, got {value!r}")
            value = tuple(value)
        elif isinstance(default, bool) != isinstance(value, bool) or not isinstance(value, type(default)):
            if isinstance(default, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = float(value)
            elif isinstance(default, float) and isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    raise ValueError(f"{where}.{key}: a number, got {value!r}") from None
            else:
                raise ValueError(f"{where}.{key}: expected {type(default).__name__}, got {value!r}")
        kwargs[key] = value
    return cls(**kwargs)


def load_config(path: str | None = None, overrides: list[str] | tuple[str, ...] = ()) -> DistillConfig:
    """A config from a YAML file (or the defaults) plus ``key=value`` overrides (``fit.epochs=2``)."""
    raw: dict[str, Any] = {}
    if path is not None:
        if not os.path.isfile(path):
            raise ValueError(f"config file not found: {path}")
        raw = parse_yaml(read_config_text(path), path) or {}  # the shared bounds (size, depth, aliases, tags)
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: expected a mapping of settings")
    for item in overrides:
        key, eq, text = item.partition("=")
        if not eq:
            raise ValueError(f"override {item!r}: expected key=value, e.g. fit.epochs=2")
        *parents, last = key.strip().split(".")
        node = raw
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = parse_yaml(text, f"override {item!r}")
    config = _build(DistillConfig, raw, path or "config")
    config.data.validate()
    fit = config.fit
    if fit.epochs < 1 or fit.batch_size < 1 or fit.learning_rate <= 0 or fit.temperature <= 0:
        raise ValueError("fit: epochs, batch_size, learning_rate and temperature must be > 0")
    if not 0 <= fit.hard_weight <= 1:
        raise ValueError(f"fit.hard_weight must be in [0, 1], got {fit.hard_weight}")
    if not 0 <= fit.validation < 0.5:
        raise ValueError(f"fit.validation must be in [0, 0.5), got {fit.validation}")
    if config.hands < 1 or config.dagger_rounds < 0 or config.dagger_hands < 1:
        raise ValueError("hands >= 1, dagger_rounds >= 0 and dagger_hands >= 1 are required")
    return config


# ---------------------------------------------------------------- fitting


def _targets(data: dict[str, np.ndarray], temperature: float, hard_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Targets [n, 56] and legal masks [n, 56]: on searched rows
    ``(1 - hard_weight) * softmax(values / temperature) + hard_weight * onehot(label)``, else the one-hot label."""
    legal = distill_data.unpack_legal(data["legal"])
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


def _load_split(folders: list[str], share: float, seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    train: list[dict[str, np.ndarray]] = []
    valid: list[dict[str, np.ndarray]] = []
    for folder in folders:
        names = sorted(n for n in os.listdir(folder) if n.startswith("shard_") and n.endswith(".npz"))
        if not names:
            raise ValueError(f"{folder}: no labelled shards")
        held = set(split_shards(len(names), share, seed).tolist())
        for i, name in enumerate(names):
            part = distill_data.read_shard(os.path.join(folder, name))  # within bounds, or one clear error
            (valid if i in held else train).append(part)

    def cat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        if not parts:
            return {}
        return {f: np.concatenate([p[f] for p in parts]) for f in distill_data.FIELDS}

    return cat(train), cat(valid)


def _network(net_arch: tuple[int, ...], activation: str = "relu") -> Any:
    import torch
    from torch import nn

    from sm_env.core.game import NUM_ACTIONS
    from sm_env.observation import OBSERVATION_SIZE

    class PolicyValueNet(nn.Module):
        """An MLP trunk with a policy head (56 logits) and a value head."""

        def __init__(self) -> None:
            super().__init__()
            layers: list[nn.Module] = []
            prev = OBSERVATION_SIZE
            for width in net_arch:
                layers += [nn.Linear(prev, width), nn.ReLU() if activation == "relu" else nn.Tanh()]
                prev = width
            self.trunk = nn.Sequential(*layers)
            self.policy = nn.Linear(prev, NUM_ACTIONS)
            self.value = nn.Linear(prev, 1)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            h = self.trunk(x)
            return self.policy(h), self.value(h).squeeze(-1)

    net = PolicyValueNet()
    net.activation = activation
    return net


def initial_network(settings: FitSettings) -> Any:
    """A fresh network, or one whose trunk and policy head are copied from ``settings.init``."""
    import torch

    if not settings.init:
        return _network(settings.net_arch)
    from agents.ppo_agent import load_numpy_policy

    policy, _ = load_numpy_policy(_policy_path(settings.init))
    net = _network(tuple(policy.net_arch), policy.activation)
    linears = [m for m in net.trunk if hasattr(m, "weight")]
    with torch.no_grad():
        for layer, (w, b) in zip([*linears, net.policy], [*policy.hidden, policy.head], strict=True):
            layer.weight.copy_(torch.from_numpy(w.T))  # NumpyPolicy keeps weights transposed for x @ W
            layer.bias.copy_(torch.from_numpy(b))
    return net


def to_numpy_policy(net: Any) -> Any:
    """The actor of a fitted network as an :class:`agents.ppo_agent.NumpyPolicy`."""
    from agents.ppo_agent import NumpyPolicy

    linears = [m for m in net.trunk if hasattr(m, "weight")]
    hidden = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears]
    head = (net.policy.weight.detach().numpy().copy(), net.policy.bias.detach().numpy().copy())
    return NumpyPolicy(hidden, head, activation=getattr(net, "activation", "relu"))


def _evaluate_fit(net: Any, data: dict[str, np.ndarray], batch: int = 8192) -> dict[str, float]:
    """Agreement with the label and pimc regret (tricks per searched decision)."""
    import torch

    if not data:
        return {}
    obs = distill_data.unpack_observations(data["bits"], data["scalars"])
    legal = distill_data.unpack_legal(data["legal"])
    chosen = np.empty(len(obs), dtype=np.int64)
    with torch.no_grad():
        for start in range(0, len(obs), batch):
            logits, _ = net(torch.from_numpy(obs[start : start + batch]))
            logits = logits.numpy()
            logits[~legal[start : start + batch]] = -np.inf
            chosen[start : start + batch] = logits.argmax(axis=1)
    searched = data["searched"]
    values = data["values"].astype(np.float32)
    rows = np.flatnonzero(searched)
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
    for role, name in enumerate(("dealer", "eldest", "middle")):
        r = rows[data["role"][rows] == role]
        if len(r):
            out[f"regret_{name}"] = float((np.nanmax(values[r], axis=1) - values[r, chosen[r]]).mean())
    return out


def _choices(net: Any, obs: np.ndarray, legal: np.ndarray, batch: int = 8192) -> np.ndarray:
    """The network's most probable legal action for each row."""
    import torch

    chosen = np.empty(len(obs), dtype=np.int64)
    with torch.no_grad():
        for start in range(0, len(obs), batch):
            logits = net(torch.from_numpy(obs[start : start + batch]))[0].numpy()
            logits[~legal[start : start + batch]] = -np.inf
            chosen[start : start + batch] = logits.argmax(axis=1)
    return chosen


def _policy_path(spec: str) -> str:
    from agents import TRAINED_POLICY

    return TRAINED_POLICY if spec == "trained" else spec


def _relabel_unsearched(
    targets: np.ndarray, obs: np.ndarray, legal: np.ndarray, searched: np.ndarray, teacher: str
) -> np.ndarray:
    """One-hot targets on the unsearched rows from a teacher policy's most probable legal move."""
    from agents.ppo_agent import load_numpy_policy

    policy, _ = load_numpy_policy(_policy_path(teacher))
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


def fit(
    train: dict[str, np.ndarray],
    valid: dict[str, np.ndarray],
    settings: FitSettings,
    seed: int,
    log: Callable[[str], None] | None = None,
    checkpoint: str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Fit a policy-value network to labelled decisions; returns it and its figures.

    With ``checkpoint`` (a file path), the state of the fit (network, optimiser, learning-rate schedule, random
    generators, history) is written there atomically after every epoch, and a fit started again with the same
    path, data and settings continues after the last finished epoch, giving the same network as an
    uninterrupted fit.
    """
    import torch

    log = log or distill_data.say
    if settings.anchor_margin > 0 and not settings.init:
        raise ValueError("fit.anchor_margin needs fit.init (the policy whose moves are kept)")
    torch.manual_seed(seed)
    torch.set_num_threads(settings.threads)
    if settings.play_only:
        train = {name: array[train["searched"]] for name, array in train.items()}
    rng = np.random.default_rng(seed)
    targets, legal = _targets(train, settings.temperature, settings.hard_weight)
    obs = distill_data.unpack_observations(train["bits"], train["scalars"])
    balance = train["balance"].astype(np.float32) / 4.0
    if settings.other_teacher:
        targets = _relabel_unsearched(targets, obs, legal, train["searched"], settings.other_teacher)
    net = initial_network(settings)
    corrections = None
    if settings.anchor_margin > 0:
        targets, corrections = _anchored_targets(net, obs, legal, train, settings.anchor_margin)
        log(f"anchored targets: {corrections:.1%} of the decisions corrected to pimc's move")
    optimiser = torch.optim.Adam(net.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    steps_per_epoch = max(1, -(-len(obs) // settings.batch_size))
    total = settings.epochs * steps_per_epoch
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: float(0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * min(step, total) / total)))
    )
    stamp = {"settings": asdict(settings), "seed": seed, "decisions": int(len(obs))}
    first_epoch = 0
    if checkpoint and os.path.exists(checkpoint):
        state = torch.load(checkpoint, weights_only=True)
        if state["stamp"] != stamp:
            raise ValueError(f"{checkpoint} is the checkpoint of another fit ({state['stamp']}); remove it or use it")
        net.load_state_dict(state["net"])
        optimiser.load_state_dict(state["optimiser"])
        schedule.load_state_dict(state["schedule"])
        rng.bit_generator.state = state["numpy_rng"]
        torch.set_rng_state(state["torch_rng"])
        history, first_epoch = state["history"], state["epoch"]
        log(f"resuming the fit after epoch {first_epoch} ({checkpoint})")
    else:
        net.eval()
        history = [{"epoch": 0, "valid": _evaluate_fit(net, valid)}]  # the starting point
    started = time.perf_counter() - (history[-1].get("seconds", 0.0) if first_epoch else 0.0)
    obs_t, targets_t = torch.from_numpy(obs), torch.from_numpy(targets)
    legal_t, balance_t = torch.from_numpy(legal), torch.from_numpy(balance)
    obs_tables, action_tables = (torch.from_numpy(t) for t in symmetry.index_tables())
    for epoch in range(first_epoch, settings.epochs):
        net.train()
        order = torch.from_numpy(rng.permutation(len(obs)))
        sums = np.zeros(2)
        for start in range(0, len(obs), settings.batch_size):
            idx = order[start : start + settings.batch_size]
            x, target, mask = obs_t[idx], targets_t[idx], legal_t[idx]
            if settings.suit_augment:
                perm = torch.randint(len(symmetry.PERMUTATIONS), (len(idx),))
                x = torch.gather(x, 1, obs_tables[perm])
                target = torch.gather(target, 1, action_tables[perm])
                mask = torch.gather(mask, 1, action_tables[perm])
            logits, value = net(x)
            logits = logits.masked_fill(~mask, -1e9)
            policy_loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            value_loss = ((value - balance_t[idx]) ** 2).mean()
            loss = policy_loss + settings.value_coef * value_loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            sums += (policy_loss.item() * len(idx), value_loss.item() * len(idx))
        net.eval()
        row = {
            "epoch": epoch + 1,
            "policy_loss": float(sums[0] / len(obs)),
            "value_loss": float(sums[1] / len(obs)),
            "seconds": time.perf_counter() - started,
            "valid": _evaluate_fit(net, valid),
        }
        history.append(row)
        if checkpoint:
            state = {
                "stamp": stamp,
                "epoch": epoch + 1,
                "history": history,
                "net": net.state_dict(),
                "optimiser": optimiser.state_dict(),
                "schedule": schedule.state_dict(),
                "numpy_rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
            }
            with atomic_path(checkpoint) as tmp:
                torch.save(state, tmp)
        v = row["valid"]
        log(
            f"epoch {epoch + 1}/{settings.epochs}: policy loss {row['policy_loss']:.4f}, value loss "
            f"{row['value_loss']:.4f}; valid agreement {v.get('agreement', float('nan')):.3f}, "
            f"regret {v.get('regret_play', float('nan')):.4f} tricks/decision ({row['seconds']:.0f} s)"
        )
    return net, {"train_decisions": int(len(obs)), "corrected_share": corrections, "history": history}


# ---------------------------------------------------------------- the run


def _write_json(path: str, payload: Any) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, indent=1)
        handle.write("\n")


def run(config: DistillConfig, log: Log = None) -> dict[str, Any]:
    """Label, fit and (optionally) DAgger; returns the summary (also written to ``summary.json``)."""
    from agents.ppo_agent import export_policy

    log = log or distill_data.say
    os.makedirs(config.run_dir, exist_ok=True)
    _write_json(os.path.join(config.run_dir, "config.json"), asdict(config))
    folders: list[str] = []
    summary: dict[str, Any] = {"rounds": []}
    policy_path = ""
    for round_ in range(config.dagger_rounds + 1):
        folder = os.path.join(config.run_dir, f"data_r{round_}")
        settings = config.data
        hands = config.hands
        if round_ > 0:
            settings = replace(settings, seed=config.data.seed + 1000 * round_, behaviour=f"ppo:{policy_path}")
            hands = config.dagger_hands
        started = time.perf_counter()
        distill_data.generate(folder, hands, settings, workers=config.workers, nice=config.nice, log=log)
        folders.append(folder)
        for extra in config.extra_data if round_ == 0 else ():
            folders.append(os.path.join(config.run_dir, extra.name))
            distill_data.generate(
                folders[-1], extra.hands, extra.settings, workers=config.workers, nice=config.nice, log=log
            )
        label_seconds = time.perf_counter() - started
        policy_path = os.path.join(config.run_dir, f"policy_r{round_}.pt")
        report_path = os.path.join(config.run_dir, f"train_r{round_}.json")
        if os.path.exists(policy_path) and os.path.exists(report_path):
            log(f"round {round_}: {policy_path} exists; skipping the fit")
            with open(report_path, encoding="utf-8") as handle:
                report = json.load(handle)
        else:
            train, valid = _load_split(folders, config.fit.validation, config.seed)
            log(
                f"round {round_}: fitting on {len(train['target'])} decisions ({len(valid.get('target', []))} held out)"
            )
            started = time.perf_counter()
            checkpoint = os.path.join(config.run_dir, f"fit_r{round_}.ckpt")
            net, report = fit(train, valid, config.fit, config.seed + round_, log=log, checkpoint=checkpoint)
            report["fit_seconds"] = time.perf_counter() - started
            report["label_seconds"] = label_seconds
            export_policy(
                to_numpy_policy(net),
                policy_path,
                trainer="training.distill",
                round=round_,
                train_decisions=report["train_decisions"],
            )
            _write_json(report_path, report)
        summary["rounds"].append({"round": round_, "policy": policy_path, **report})
    summary["policy"] = policy_path
    _write_json(os.path.join(config.run_dir, "summary.json"), summary)
    log(f"policy: {policy_path} (play it with the agent spec ppo:{policy_path})")
    return summary


def fit_folders(config: DistillConfig, folders: list[str], out: str, log: Log = None) -> dict[str, Any]:
    """Fit ``config.fit`` on labelled data folders (no labelling) and export the policy to ``out``."""
    from agents.ppo_agent import export_policy

    log = log or distill_data.say
    for folder in folders:
        if not os.path.isdir(folder):
            raise ValueError(f"data folder not found: {folder}")
    train, valid = _load_split(folders, config.fit.validation, config.seed)
    log(f"fitting on {len(train['target'])} decisions ({len(valid.get('target', []))} held out) from {folders}")
    started = time.perf_counter()
    net, report = fit(train, valid, config.fit, config.seed, log=log)
    report["fit_seconds"] = time.perf_counter() - started
    report["data"] = list(folders)
    report["fit_settings"] = asdict(config.fit)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    export_policy(to_numpy_policy(net), out, trainer="training.distill", train_decisions=report["train_decisions"])
    _write_json(os.path.splitext(out)[0] + "_fit.json", report)
    log(f"policy: {out}")
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line: run a distillation config (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m training.distill", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=None, help="YAML config (default: built-in defaults)")
    parser.add_argument("--fit-data", default=None, help="only fit: comma-separated labelled data folders")
    parser.add_argument("--out", default=None, help="with --fit-data: the policy file to write")
    parser.add_argument("overrides", nargs="*", help="key=value settings, e.g. fit.epochs=2 hands=100")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config, args.overrides)
        if args.fit_data:
            if not args.out:
                raise ValueError("--fit-data needs --out PATH (the policy file to write)")
            fit_folders(config, [f for f in args.fit_data.split(",") if f], args.out)
        else:
            run(config)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
