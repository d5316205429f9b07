"""The training configuration: a dataclass schema loaded from YAML.

A config file has these sections (every key is optional and has the
default shown by ``sergeant-major config``)::

    name: quickstart            # run name (the run folder is <output_dir>/<name>)
    output_dir: runs
    seed: 0
    env:       {...}            # EnvConfig: the learner's game
    opponents: {...}            # OpponentsConfig: who sits in the other seats
    pretrain:  {...}            # PretrainConfig: optional imitation warm start
    ppo:       {...}            # PPOConfig: MaskablePPO hyper-parameters
    train:     {...}            # TrainConfig: length, vector env, checkpoints
    eval:      {...}            # EvalConfig: periodic duplicate evaluation

:func:`load_config` validates everything and raises :class:`ConfigError`
with the file, the dotted key and what is allowed for an unknown key, a wrong
type, an impossible value or a missing file. Single fields can be overridden
from the command line, ``ppo.learning_rate=1e-4`` (see :func:`apply_overrides`;
values are read as YAML, so ``opponents.mix={random: 1, heuristic: 2}`` works).

Numbers written as ``3e-4`` (which YAML 1.1 reads as text) are accepted for
number fields; ``1e6`` is accepted for whole-number fields.

Each field's documentation is the ``doc`` entry of its metadata;
:func:`describe` prints them all.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import yaml

from sm_env.game import ROLE_NAMES


class ConfigError(ValueError):
    """A config file or override that is not valid; the message names the key."""


def _f(default: Any, doc: str, *, check: Any = None, factory: Any = None) -> Any:
    meta = {"doc": doc}
    if check is not None:
        meta["check"] = check
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


# (predicate, description of what is allowed)
_POSITIVE = (lambda v: v > 0, "must be > 0")
_NON_NEGATIVE = (lambda v: v >= 0, "must be >= 0")
_PROBABILITY = (lambda v: 0.0 <= v <= 1.0, "must be between 0 and 1")
_DISCOUNT = (lambda v: 0.0 < v <= 1.0, "must be in (0, 1]")
_AT_LEAST_2 = (lambda v: v >= 2, "must be >= 2")
_ROLES = ROLE_NAMES


def _check_seats(value: Any) -> bool:
    if value == "all":
        return True
    items = [value] if isinstance(value, str) else value
    return bool(items) and all(r in _ROLES for r in items) and len(set(items)) == len(items)


def _check_mix(value: dict[str, float]) -> bool:
    return bool(value) and all(w >= 0 for w in value.values()) and sum(value.values()) > 0


def _check_rules(value: Any) -> bool:
    from sm_env.rules import RuleSet

    RuleSet.from_any(value)  # raises RulesError with its own message
    return True


def _check_net(value: list[int]) -> bool:
    return len(value) >= 1 and all(n >= 1 for n in value)


@dataclass
class EnvConfig:
    """The learner's game (training/single_agent.py)."""

    rules: str | dict = _f(
        "standard",
        "rule set: a preset name ('standard', 'woburn', ...) or a dict of docs/rules.md section 9 options",
        check=(_check_rules, "must be a rule preset name or a dict of rule options"),
    )
    episode: Literal["hand", "game"] = _f(
        "hand", "'hand': an episode is one hand (fast, dense reward); 'game': a whole game, hand after hand"
    )
    max_hands: int = _f(100, "game episodes: truncate a game nobody has won after this many hands", check=_POSITIVE)
    reward: Literal["balance", "result"] = _f(
        "balance",
        "'balance': tricks - quota at the end of every hand; 'result': winning the game "
        "(+1 shared by winners, -1 by losers; needs episode: game)",
    )
    reward_scale: float = _f(1.0, "rewards are multiplied by this (balances run about -8..+8)", check=_POSITIVE)
    dense_reward: bool = _f(
        False,
        "reward 'balance' paid sooner: +1 per trick the learner wins when it is won, -quota when "
        "the hand ends (the same total per hand; easier credit assignment)",
    )
    learner_seats: str | list = _f(
        "all",
        "roles the learner plays in the first hand of an episode: 'all' or a list of "
        "'dealer', 'eldest', 'middle' (one drawn per episode; one shared policy)",
        check=(_check_seats, "must be 'all' or a non-empty list of distinct roles from dealer, eldest, middle"),
    )
    exchange_start: float = _f(
        0.0,
        "hand episodes: probability that the hand starts with an exchange (random previous balances), "
        "so that exchange decisions are trained",
        check=_PROBABILITY,
    )


@dataclass
class OpponentsConfig:
    """Who plays the two other seats: baselines and frozen snapshots of the learner."""

    mix: dict[str, float] = _f(
        None,
        "weight of each opponent kind: agent names of agents.make_agent ('random', 'heuristic', "
        "...) and 'snapshots' (a frozen copy of the learner from the pool); each opponent seat draws "
        "independently every episode; until the first snapshot exists its weight goes to the others",
        check=(_check_mix, "must map opponent names to weights >= 0 with a positive sum"),
        factory=lambda: {"random": 1.0},
    )
    snapshot_every: int = _f(
        100_000, "learner timesteps between snapshots added to the pool (checked after every segment)", check=_POSITIVE
    )
    pool_size: int = _f(10, "snapshots kept in the pool (oldest dropped)", check=_POSITIVE)
    snapshot_deterministic: bool = _f(False, "snapshots play their most probable action instead of sampling")


@dataclass
class PretrainConfig:
    """Optional warm start by imitation: before PPO, the policy learns to copy a
    teacher agent playing the learner's seat (cross-entropy on its actions,
    masked), and the value network learns the teacher's returns."""

    teacher: str | None = _f(None, "agent spec to imitate, e.g. 'heuristic' (null: no warm start)")
    decisions: int = _f(200_000, "teacher decisions collected (in the training env, same opponents)", check=_POSITIVE)
    epochs: int = _f(4, "passes over the collected decisions", check=_POSITIVE)
    batch_size: int = _f(256, "minibatch size", check=_AT_LEAST_2)
    learning_rate: float = _f(1e-3, "Adam learning rate of the warm start", check=_POSITIVE)
    value: bool = _f(True, "also fit the value network to the teacher's returns")


@dataclass
class PPOConfig:
    """MaskablePPO (sb3-contrib) hyper-parameters."""

    learning_rate: float = _f(3e-4, "Adam learning rate", check=_POSITIVE)
    lr_schedule: Literal["constant", "linear"] = _f(
        "constant", "'linear' decays the learning rate to 0 over train.total_timesteps"
    )
    n_steps: int = _f(256, "steps per env per rollout (rollout size = n_steps * train.n_envs)", check=_POSITIVE)
    batch_size: int = _f(512, "minibatch size", check=_AT_LEAST_2)
    n_epochs: int = _f(4, "passes over each rollout", check=_POSITIVE)
    gamma: float = _f(1.0, "discount (episodes are short and end for sure: 1.0 is fine)", check=_DISCOUNT)
    gae_lambda: float = _f(0.95, "GAE lambda", check=_PROBABILITY)
    clip_range: float = _f(0.2, "PPO clipping", check=_POSITIVE)
    ent_coef: float = _f(0.01, "entropy bonus", check=_NON_NEGATIVE)
    vf_coef: float = _f(0.5, "value loss weight", check=_NON_NEGATIVE)
    max_grad_norm: float = _f(0.5, "gradient clipping", check=_POSITIVE)
    target_kl: float | None = _f(None, "stop an update early beyond this KL (null: never)", check=_POSITIVE)
    normalize_advantage: bool = _f(True, "normalise advantages per minibatch")
    net_arch: list[int] = _f(
        None,
        "hidden layer sizes of the policy and of the value network",
        check=(_check_net, "must be a non-empty list of positive sizes"),
        factory=lambda: [256, 256],
    )
    activation: Literal["tanh", "relu"] = _f("tanh", "activation of the hidden layers")


@dataclass
class TrainConfig:
    """Length of the run, vectorisation, checkpoints."""

    total_timesteps: int = _f(200_000, "learner decisions to train for", check=_POSITIVE)
    n_envs: int = _f(8, "parallel environments", check=_POSITIVE)
    vec_env: Literal["dummy", "subproc"] = _f(
        "dummy", "'dummy': envs in the trainer's process (best on 2 cores); 'subproc': one process each"
    )
    segment_steps: int = _f(
        16_384,
        "learner timesteps per training segment (rounded up to whole rollouts); snapshots, "
        "evaluations and checkpoints happen between segments; envs restart every segment so that "
        "--resume continues exactly",
        check=_POSITIVE,
    )
    checkpoint_every: int = _f(
        100_000, "timesteps between checkpoints (the last segment always writes one)", check=_POSITIVE
    )
    keep_checkpoints: int = _f(3, "numbered checkpoints kept besides checkpoints/latest.zip", check=_NON_NEGATIVE)
    torch_threads: int = _f(1, "torch CPU threads (1 is best with 2 cores and small networks)", check=_POSITIVE)
    progress_bar: bool = _f(True, "show a tqdm progress bar")


@dataclass
class EvalConfig:
    """Duplicate evaluation of the learner against baselines, per role."""

    every: int = _f(0, "timesteps between evaluations during training (0: only at the end)", check=_NON_NEGATIVE)
    opponents: list[str] = _f(
        None,
        "baseline agents to evaluate against (the learner plays one seat, the baseline the two others)",
        factory=lambda: ["heuristic", "random"],
    )
    deals: int = _f(200, "deals per evaluation during training", check=_POSITIVE)
    final_deals: int = _f(2000, "deals of the final evaluation (0: none)", check=_NON_NEGATIVE)
    mode: Literal["hand", "game"] = _f("hand", "evaluate single hands ('hand') or whole games ('game')")
    max_hands: int = _f(30, "game mode: hands per game at most", check=_POSITIVE)
    start_balances: list[int] | None = _f(
        None,
        "hand mode: balances of an imaginary previous hand (by seat; seat 0 deals), so that every "
        "hand opens with that exchange (null: no exchange)",
        check=(lambda v: len(v) == 3 and sum(v) == 0, "must be 3 whole numbers summing to 0"),
    )
    seed: int = _f(20240101, "seed of the evaluation deals (the same deals at every evaluation)")
    workers: int = _f(1, "evaluation worker processes", check=_POSITIVE)


@dataclass
class Config:
    """A training run."""

    name: str = _f("run", "run name: the run folder is <output_dir>/<name>")
    output_dir: str = _f("runs", "folder of run folders (relative to the working directory)")
    seed: int = _f(0, "seed of everything: python random, numpy, torch, environments")
    env: EnvConfig = _f(None, "the learner's game", factory=EnvConfig)
    opponents: OpponentsConfig = _f(None, "opponent pool", factory=OpponentsConfig)
    pretrain: PretrainConfig = _f(None, "optional warm start by imitation of a teacher", factory=PretrainConfig)
    ppo: PPOConfig = _f(None, "MaskablePPO hyper-parameters", factory=PPOConfig)
    train: TrainConfig = _f(None, "length, vectorisation, checkpoints", factory=TrainConfig)
    eval: EvalConfig = _f(None, "evaluation", factory=EvalConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class EvalFileConfig:
    """An evaluation of a trained policy (configs/eval.yaml):
    ``sergeant-major train --evaluate POLICY --eval-config configs/eval.yaml``."""

    policy: str | None = _f(
        None, "policy file (final_model.zip, a checkpoint or a .pt export); --evaluate PATH overrides it"
    )
    rules: str | dict = _f(
        "standard",
        "rule set of the evaluation games (as env.rules)",
        check=(_check_rules, "must be a rule preset name or a dict of rule options"),
    )
    eval: EvalConfig = _f(
        None,
        "evaluation settings (as the eval section of a training config; "
        "final_deals is the number of deals, every is ignored)",
        factory=EvalConfig,
    )


# ---------------------------------------------------------------------------- validation


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "null"
    if origin is list:
        args = typing.get_args(tp)
        return f"a list of {_type_name(args[0])}" if args else "a list"
    if origin is dict:
        args = typing.get_args(tp)
        return f"a mapping of {_type_name(args[0])} to {_type_name(args[1])}" if args else "a mapping"
    return {
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        str: "a text",
        list: "a list",
        dict: "a mapping",
    }.get(tp, getattr(tp, "__name__", str(tp)))


_NO = object()


def _coerce(value: Any, tp: Any) -> Any:
    """``value`` as type ``tp``, or _NO."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        return value if any(value == a and type(value) is type(a) for a in typing.get_args(tp)) else _NO
    if origin in (Union, types.UnionType):
        for arg in typing.get_args(tp):
            out = _coerce(value, arg)
            if out is not _NO:
                return out
        return _NO
    if tp is type(None):
        return None if value is None else _NO
    if tp is bool:
        return value if isinstance(value, bool) else _NO
    if tp is int:
        if isinstance(value, bool):
            return _NO
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                number = float(value.replace("_", ""))
            except ValueError:
                return _NO
            return int(number) if number.is_integer() else _NO
        return _NO
    if tp is float:
        if isinstance(value, bool):
            return _NO
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.replace("_", ""))
            except ValueError:
                return _NO
        return _NO
    if tp is str:
        return value if isinstance(value, str) else _NO
    if tp is list or origin is list:
        if not isinstance(value, list):
            return _NO
        args = typing.get_args(tp)
        if not args:
            return list(value)
        out = [_coerce(v, args[0]) for v in value]
        return _NO if any(o is _NO for o in out) else out
    if tp is dict or origin is dict:
        if not isinstance(value, dict):
            return _NO
        args = typing.get_args(tp)
        if not args:
            return dict(value)
        out = {_coerce(k, args[0]): _coerce(v, args[1]) for k, v in value.items()}
        return _NO if any(k is _NO or v is _NO for k, v in out.items()) else out
    return value if isinstance(value, tp) else _NO


def _build(cls: type, data: Any, where: str, source: str) -> Any:
    prefix = f"{source}: " if source else ""
    if data is None and where:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix}{where or 'the config'} must be a mapping of keys to values, got {data!r:.60}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        dotted = f"{where}.{key}" if where else str(key)
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{prefix}unknown key {dotted!r}{hint}; allowed keys"
                f"{' in ' + repr(where) if where else ''}: {', '.join(names)}"
            )
        tp = hints[key]
        fld = next(f for f in dataclasses.fields(cls) if f.name == key)
        if dataclasses.is_dataclass(tp):
            kwargs[key] = _build(tp, value, dotted, source)
            continue
        out = _coerce(value, tp)
        if out is _NO:
            raise ConfigError(
                f"{prefix}{dotted}: expected {_type_name(tp)}, got {value!r:.80} "
                f"({type(value).__name__}); {dotted}: {fld.metadata['doc']}"
            )
        check = fld.metadata.get("check")
        if check is not None and out is not None:
            predicate, allowed = check
            try:
                ok = predicate(out)
            except ValueError as err:
                raise ConfigError(f"{prefix}{dotted}: {err}") from None
            if not ok:
                raise ConfigError(f"{prefix}{dotted}: {allowed}, got {out!r:.80}")
        kwargs[key] = out
    return cls(**kwargs)


def _cross_checks(cfg: Config, source: str) -> None:
    prefix = f"{source}: " if source else ""
    if cfg.env.reward == "result" and cfg.env.episode == "hand":
        raise ConfigError(
            f"{prefix}env.reward: 'result' rewards winning a game and needs env.episode: game "
            "(one hand is not a game); use reward: balance with episode: hand"
        )
    if cfg.ppo.batch_size > cfg.ppo.n_steps * cfg.train.n_envs:
        raise ConfigError(
            f"{prefix}ppo.batch_size: must be at most ppo.n_steps * train.n_envs = "
            f"{cfg.ppo.n_steps * cfg.train.n_envs}, got {cfg.ppo.batch_size}"
        )


def config_from_dict(data: Any, source: str = "") -> Config:
    """A validated :class:`Config` from a plain dict (as YAML gives it)."""
    cfg = _build(Config, data, "", source)
    _cross_checks(cfg, source)
    return cfg


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"ppo.learning_rate=1e-4"`` -> (["ppo", "learning_rate"], 1e-4 as YAML reads it)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r}: expected key=value, e.g. ppo.learning_rate=1e-4")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"override {text!r}: the key must be a dotted name like ppo.learning_rate")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"override {text!r}: the value is not valid YAML: {err}") from None
    return key.split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Set dotted keys in a raw config dict (validated later with the rest)."""
    data = _deep_copy(data)
    for text in overrides:
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError(f"override {text!r}: {part!r} is not a section")
            node = child
        node[path[-1]] = value
    return data


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def read_yaml(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        raise ConfigError(f"config file not found: {path}")
    if os.path.isdir(path):
        raise ConfigError(f"config file {path} is a folder; give a .yaml file")
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of sections (env, ppo, ...), got {type(data).__name__}"
        )
    return data


def load_config(path: str | None = None, overrides: list[str] | None = None) -> Config:
    """Read, override and validate a config (``path`` None: the defaults)."""
    data = read_yaml(path) if path is not None else {}
    if overrides:
        data = apply_overrides(data, overrides)
    return config_from_dict(data, path or "")


def load_eval_config(path: str, overrides: list[str] | None = None) -> EvalFileConfig:
    """Read, override and validate an evaluation config (configs/eval.yaml)."""
    data = read_yaml(path)
    if overrides:
        data = apply_overrides(data, overrides)
    return _build(EvalFileConfig, data, "", path)


def save_config(cfg: Config, path: str) -> None:
    """Write the resolved config as YAML (atomically)."""
    text = yaml.safe_dump(cfg.to_dict(), sort_keys=False)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def describe(cls: type = Config, prefix: str = "") -> str:
    """Every field with its type, default and documentation (one per line)."""
    lines = []
    hints = typing.get_type_hints(cls)
    for fld in dataclasses.fields(cls):
        tp = hints[fld.name]
        name = prefix + fld.name
        if dataclasses.is_dataclass(tp):
            lines.append(f"{name}:  # {fld.metadata['doc']}")
            lines.append(describe(tp, name + "."))
            continue
        default = fld.default if fld.default is not dataclasses.MISSING else fld.default_factory()
        lines.append(f"{name} = {default!r}  ({_type_name(tp)})  {fld.metadata['doc']}")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m training.config [file.yaml [k=v ...]]
    if len(sys.argv) > 1:
        try:
            print(yaml.safe_dump(load_config(sys.argv[1], sys.argv[2:]).to_dict(), sort_keys=False))
        except ConfigError as err:
            sys.exit(f"error: {err}")
    else:
        print(describe())
