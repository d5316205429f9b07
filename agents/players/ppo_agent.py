"""A trained policy as an agent: ``PPOAgent(path, seed)``.

Loads what :mod:`training.train` writes, without ever unpickling code:

- an SB3 zip (``final_model.zip``, a checkpoint, any ``MaskablePPO.save``
  file): only its ``policy.pth`` entry is read, with
  ``torch.load(weights_only=True)``, plus the plain-JSON ``sm_policy.json``
  entry that the trainer adds (network sizes and activation). The zip's
  ``data`` entry (SB3's cloudpickled objects) is never deserialised;
- a ``.pt`` export (:func:`export_policy`): a dict of tensors and plain
  values read with ``torch.load(weights_only=True)``.

What is loaded is validated: the network must take the observation size the
file records (``observation_size``; 789 in files that record none) and give
one logit per action of the action count it records (``action_count``; 56),
with consistent layer shapes and finite weights. Anything else is a
:class:`PolicyLoadError` naming the file and what is wrong; a path that is
no such file (a directory, a device, an empty file, text, a zip cut short)
is refused before torch reads it, naming what was found there
(:func:`check_model_file`, which belief files pass too).

The file's metadata (plain values, :func:`policy_metadata`) records the
policy's shape (:class:`PolicyShape`: ``observation_size``, ``action_count``,
``players``) and the rule set it was trained on (``rules``: the rule set's
options, as a game record's ``rules``; ``rules_name``: its name). Files
written before this (the shipped ``standard_v0``-``v2``) record the shape
alone, or a preset name as ``rules``; they load as before.

A file that holds anything but tensors and plain values (a pickle of some
class) is refused in one line, never unpickled: it is not a plain policy file.

The network runs in numpy (one observation at a time is faster than torch
here, and needs no torch threads), so this agent is cheap enough to be an
opponent inside the training environment (frozen snapshots of the learner).

The one bridge between torch networks and :class:`NumpyPolicy`, used by every
trainer: :func:`policy_from_torch` (the ``nn.Linear`` layers of a torch actor
to a validated numpy policy; :func:`actor_state` gives its arrays) and
:func:`policy_into_torch` (a numpy policy's weights into torch layers).

A policy plays the rule sets of its shape: the same observation size, action
count and number of players as the rule set it was trained on (docs/rules.md
10.6 and 10.8; :func:`supported_rules` lists the presets, e.g. every
three-player preset of 789 observation entries and 56 actions for the
standard policies); :meth:`PPOAgent.check_rules` refuses any other rule set in
one line naming what the policy plays.

Agent interface (see ``agents/players/base.py``): ``needs_observation = True``,
``reset(seed)`` and ``act(view, observation=None) -> int`` (``observation`` is
the environment's dict or the bare vector). The action mask is built from
``view.legal``; by default the agent plays the most probable legal action
(``deterministic=True``); with ``deterministic=False`` it samples from the
masked distribution with its own seeded RNG.

A policy file may hold a Q-network instead of an actor (the deep Monte-Carlo trainer,
:mod:`training.vector.dmc`, records ``outputs: q_values`` in its metadata): the same layers, one value
per action instead of one logit. It loads and plays as any policy file, and the default,
the legal action of the highest output, is exactly its greedy policy; sampled
(``deterministic=False``) it plays the softmax of its values (Boltzmann exploration).
"""

from __future__ import annotations

import io
import os
import pickle
import random
import stat
import warnings
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from sm_env.core.game import NUM_ACTIONS
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import JsonError, parse_json
from sm_env.observation import OBSERVATION_SIZE, action_mask, encode, observation_size

from .base import Agent

POLICY_FORMAT = "sergeant-major-policy/1"
META_ENTRY = "sm_policy.json"  # plain JSON entry the trainer adds to SB3 zips
ACTIVATIONS = ("tanh", "relu")
HIDDEN_KEY = "mlp_extractor.policy_net"  # SB3's names of the actor's layers: HIDDEN_KEY.<2i>, then HEAD_KEY
HEAD_KEY = "action_net"
MAX_POLICY_BYTES = 512 << 20  # a policy file or an SB3 zip's policy.pth (the shipped ones: at most 7 MB)
MAX_META_BYTES = 1 << 20  # an SB3 zip's sm_policy.json (a few kB)


class PolicyLoadError(ValueError):
    """A policy file that is missing, unreadable or not a valid policy."""


class PolicyShape(NamedTuple):
    """What a network for a rule set looks like from outside: its inputs, its outputs, the seats it plays.

    ``players`` is None for files that record no number of players (written before it was recorded: their
    observation size alone tells three from four players)."""

    observation_size: int
    action_count: int
    players: int | None = 3

    @classmethod
    def of(cls, rules: RuleSet) -> PolicyShape:
        """The shape of a network for ``rules``: ``observation_size(rules)``, ``rules.num_actions``,
        ``rules.num_players``."""
        return cls(observation_size(rules), rules.num_actions, rules.num_players)

    def fits(self, rules: RuleSet) -> bool:
        """Whether a network of this shape plays ``rules`` (the same sizes; the same players if recorded)."""
        other = PolicyShape.of(rules)
        return self[:2] == other[:2] and self.players in (None, other.players)

    def __str__(self) -> str:
        players = "" if self.players is None else f", {self.players} players"
        return f"{self.observation_size} observation entries, {self.action_count} actions{players}"


STANDARD_SHAPE = PolicyShape(OBSERVATION_SIZE, NUM_ACTIONS, 3)
"""The shape of the standard rules (and of files that record no shape)."""


SMALL_BATCH = 16
"""Batches of at most this many observations are computed on one thread (a thread pool costs more than it saves)."""


def _rows_times(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` for one row or a few, in numpy's own single-threaded loops (no BLAS)."""
    return np.einsum("...i,ij->...j", x, w)


class NumpyPolicy:
    """The actor part of an SB3 MLP policy, evaluated with numpy.

    ``hidden`` is a list of (weight [out, in], bias [out]) pairs, ``head`` the
    action layer (weight [actions, last], bias [actions]).
    """

    def __init__(
        self, hidden: list[tuple[np.ndarray, np.ndarray]], head: tuple[np.ndarray, np.ndarray], activation: str = "tanh"
    ) -> None:
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            raise PolicyLoadError(f"unknown activation {activation!r}; allowed: {list(ACTIVATIONS)}")
        # stored transposed for x @ W
        self.hidden = [
            (np.ascontiguousarray(w.T, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in hidden
        ]
        self.head = (np.ascontiguousarray(head[0].T, dtype=np.float32), np.asarray(head[1], dtype=np.float32))
        self.activation = activation
        self._act = np.tanh if activation == "tanh" else (lambda x: np.maximum(x, 0.0, out=x))

    @property
    def net_arch(self) -> list[int]:
        return [w.shape[1] for w, _ in self.hidden]

    @property
    def observation_size(self) -> int:
        """The inputs of the network (the observation size it was trained on)."""
        return int((self.hidden[0][0] if self.hidden else self.head[0]).shape[0])

    @property
    def num_actions(self) -> int:
        """The outputs of the network: one logit per action id."""
        return int(self.head[0].shape[1])

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """The logits of one observation ([observation size] -> [actions]) or of a batch ([n, ...] -> [n, ...]).

        Up to ``SMALL_BATCH`` rows are multiplied by numpy's own loops (``np.einsum``), never by BLAS: BLAS wakes
        a thread per core for a product, which for one observation costs more than the product and, on a busy
        machine, waits for the cores (``benchmarks/bench_agents.py``); its thread count cannot be pinned from
        every thread (OpenBLAS ignores a later thread's setting)."""
        small = obs.ndim == 1 or obs.shape[0] <= SMALL_BATCH
        product = _rows_times if small else np.matmul
        x = obs
        act = self._act
        for w, b in self.hidden:
            x = act(product(x, w) + b)
        w, b = self.head
        return product(x, w) + b

    def masked_logits(self, obs: np.ndarray, legal: int) -> np.ndarray:
        """The logits of one observation (float64), -inf for every action outside ``legal`` (a bit set);
        ValueError when ``legal`` is empty."""
        logits = self.logits(obs).astype(np.float64)
        mask = action_mask(legal, self.num_actions).astype(bool)
        if not mask.any():
            raise ValueError("no legal action: the player is not to act")
        logits[~mask] = -np.inf
        return logits

    def probabilities(self, obs: np.ndarray, legal: int) -> np.ndarray:
        """The policy's distribution over the actions for one observation, restricted to ``legal`` (a softmax
        of :meth:`masked_logits`: 0 outside ``legal``, summing to 1)."""
        logits = self.masked_logits(obs, legal)
        p = np.exp(logits - logits.max())
        return p / p.sum()

    def choose(self, obs: np.ndarray, legal: int, deterministic: bool = True, rng: random.Random | None = None) -> int:
        """A legal action for one observation; ``legal`` is the legal-action bit set."""
        logits = self.masked_logits(obs, legal)
        if deterministic:
            return int(np.argmax(logits))
        logits -= logits.max()
        p = np.exp(logits)
        cum = np.cumsum(p)
        u = (rng or random).random() * cum[-1]
        return int(min(np.searchsorted(cum, u, side="right"), len(cum) - 1))

    # -- (de)serialisation ---------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays in SB3 key naming (weights [out, in]); picklable and small."""
        out: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.hidden):
            out[f"{HIDDEN_KEY}.{2 * i}.weight"] = w.T.copy()
            out[f"{HIDDEN_KEY}.{2 * i}.bias"] = b.copy()
        out[f"{HEAD_KEY}.weight"] = self.head[0].T.copy()
        out[f"{HEAD_KEY}.bias"] = self.head[1].copy()
        return out

    @classmethod
    def from_state_dict(
        cls,
        state: Mapping[str, Any],
        activation: str = "tanh",
        where: str = "policy",
        shape: PolicyShape | None = STANDARD_SHAPE,
    ) -> NumpyPolicy:
        """Build from an SB3 policy state dict (tensors or arrays), validating the layers' shapes: consistent,
        taking ``shape``'s observation size and giving its action count (default: the standard rules'; None:
        any sizes)."""

        def arr(key: str) -> np.ndarray:
            if key not in state:
                raise PolicyLoadError(f"{where}: missing {key!r}; every layer needs a weight and a bias")
            value = state[key]
            if getattr(value, "layout", None) is not None and str(value.layout) != "torch.strided":
                raise PolicyLoadError(f"{where}: {key} is a {value.layout} tensor; only dense tensors are allowed")
            try:
                if hasattr(value, "detach"):
                    value = value.detach().cpu().numpy()
                value = np.array(value, dtype=np.float32)  # a copy: never a view of a live network
            except (TypeError, ValueError, RuntimeError) as err:
                raise PolicyLoadError(f"{where}: {key} is not an array of numbers ({err})") from None
            if not np.all(np.isfinite(value)):
                raise PolicyLoadError(f"{where}: {key} has non-finite values")
            return value

        if not isinstance(state, Mapping):
            raise PolicyLoadError(f"{where}: expected a state dict of tensors, got {type(state).__name__}")
        for key in (f"{HEAD_KEY}.weight", f"{HEAD_KEY}.bias"):
            if key not in state:
                raise PolicyLoadError(f"{where}: missing {key!r}; this is not an SB3 actor-critic MLP policy")
        hidden = []
        i = 0
        while f"{HIDDEN_KEY}.{i}.weight" in state:
            w, b = arr(f"{HIDDEN_KEY}.{i}.weight"), arr(f"{HIDDEN_KEY}.{i}.bias")
            hidden.append((w, b))
            i += 2
        head = (arr(f"{HEAD_KEY}.weight"), arr(f"{HEAD_KEY}.bias"))
        prev = None if shape is None else shape.observation_size
        for n, (w, b) in enumerate(hidden + [head]):
            if w.ndim != 2 or b.shape != (w.shape[0],) or 0 in w.shape:
                raise PolicyLoadError(f"{where}: layer {n} has inconsistent shapes {w.shape} / {b.shape}")
            if prev is not None and w.shape[1] != prev:
                what = "the observation size the policy records" if n == 0 else "the previous layer"
                raise PolicyLoadError(f"{where}: layer {n} takes {w.shape[1]} inputs but {what} is {prev}")
            prev = w.shape[0]
        if shape is not None and prev != shape.action_count:
            raise PolicyLoadError(
                f"{where}: the policy has {prev} actions; its file records {shape.action_count} (docs/rules.md 10.8)"
            )
        return cls(hidden, head, activation)


# ---------------------------------------------------------------------------- torch bridge


def _linears(modules: Sequence[Any]) -> list[Any]:
    from torch import nn

    return [layer for module in modules for layer in module.modules() if isinstance(layer, nn.Linear)]


def actor_state(modules: Sequence[Any]) -> dict[str, np.ndarray]:
    """The weights of a torch actor as numpy copies in SB3 key naming (what policy files hold): the
    ``nn.Linear`` layers of ``modules`` in order, the hidden layers then the action head."""
    layers = _linears(modules)
    if not layers:
        raise PolicyLoadError("the actor has no linear layers")
    state: dict[str, np.ndarray] = {}
    for i, layer in enumerate(layers):
        key = HEAD_KEY if i == len(layers) - 1 else f"{HIDDEN_KEY}.{2 * i}"
        state[f"{key}.weight"] = layer.weight.detach().cpu().numpy().copy()
        state[f"{key}.bias"] = layer.bias.detach().cpu().numpy().copy()
    return state


def policy_from_torch(
    modules: Sequence[Any], activation: str, where: str = "the actor", shape: PolicyShape | None = None
) -> NumpyPolicy:
    """The :class:`NumpyPolicy` of a torch actor (see :func:`actor_state`), validated like a policy file (its
    layers consistent; with ``shape``, of that observation size and action count)."""
    return NumpyPolicy.from_state_dict(actor_state(modules), activation, where=where, shape=shape)


def policy_into_torch(policy: NumpyPolicy, modules: Sequence[Any], where: str = "the network") -> None:
    """Copy ``policy``'s weights into the ``nn.Linear`` layers of ``modules`` (in order; the same sizes)."""
    import torch

    layers = _linears(modules)
    pairs = [*policy.hidden, policy.head]  # NumpyPolicy keeps weights transposed (x @ W)
    have = [tuple(layer.weight.shape) for layer in layers]
    want = [(w.shape[1], w.shape[0]) for w, _ in pairs]
    if have != want:
        raise PolicyLoadError(f"{where}: its layers {have} do not fit the policy's layers {want}")
    with torch.no_grad():
        for layer, (w, b) in zip(layers, pairs, strict=True):
            layer.weight.copy_(torch.from_numpy(w.T))
            layer.bias.copy_(torch.from_numpy(b))


# ---------------------------------------------------------------------------- rule sets


def supported_rules(
    observation_entries: int = OBSERVATION_SIZE, actions: int = NUM_ACTIONS, players: int | None = None
) -> list[str]:
    """The rule presets a policy of this shape can play: the same observation size and action count (and the
    same number of players, when given)."""
    shape = PolicyShape(observation_entries, actions, players)
    return [name for name, rules in PRESETS.items() if shape.fits(rules)]


def rules_problem(
    rules: RuleSet,
    observation_entries: int = OBSERVATION_SIZE,
    actions: int = NUM_ACTIONS,
    players: int | None = None,
    trained_on: str | None = None,
) -> str | None:
    """Why a policy of this shape cannot play ``rules`` (one line naming what it plays), or None if it can."""
    shape = PolicyShape(observation_entries, actions, players)
    if shape.fits(rules):
        return None
    plays = ", ".join(supported_rules(*shape)) or "no preset"
    trained = f" (trained on {trained_on!r})" if trained_on else ""
    return (
        f"a policy of {shape}{trained} cannot play the rule set {rules.name!r} ({PolicyShape.of(rules)}); "
        f"it plays: {plays}"
    )


def recorded_rules(meta: Mapping[str, Any]) -> RuleSet | None:
    """The rule set a policy file records it was trained on (``rules``: options or a preset name), or None
    when it records none that reads as a rule set (older files: a preset name or nothing)."""
    value = meta.get("rules")
    if not isinstance(value, (str, dict)):
        return None
    try:
        return RuleSet.from_any(value)
    except (RulesError, TypeError, ValueError):
        return None


def _int_field(meta: Mapping[str, Any], key: str, default: int | None, path: str) -> int | None:
    value = meta.get(key, default)
    if value is not None and (type(value) is not int or not 1 <= value <= 1_000_000):
        raise PolicyLoadError(f"{path}: {key} must be a whole number 1-1000000, got {value!r}")
    return value


def recorded_shape(meta: Mapping[str, Any], path: str = "policy") -> PolicyShape:
    """The shape a policy file's metadata records (:data:`STANDARD_SHAPE`'s sizes where it records none)."""
    players = _int_field(meta, "players", None, path)
    if players is not None and players not in (3, 4):
        raise PolicyLoadError(f"{path}: players must be 3 or 4 (docs/rules.md 10.6), got {players!r}")
    return PolicyShape(
        _int_field(meta, "observation_size", OBSERVATION_SIZE, path),
        _int_field(meta, "action_count", NUM_ACTIONS, path),
        players,
    )


# ---------------------------------------------------------------------------- files


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)
_PICKLE = tuple(bytes([0x80, protocol]) for protocol in range(2, 6))  # torch's pre-zip format, and bare pickles


def _is_text(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) reads as text: UTF-8 (a character cut at the end allowed), no
    control characters but tabs, line and page breaks."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 3:
            return False
        text = head[: err.start].decode("utf-8")
    return all(c.isprintable() or c in "\t\n\r\f\v" for c in text)


def check_model_file(path: str, what: str, expected: str, sb3: bool = False) -> None:
    """A PolicyLoadError in one line unless ``path`` may be a ``what`` file (policy, belief): a regular file,
    not empty, a whole zip holding torch's ``data.pkl`` (with ``sb3``, or SB3's ``policy.pth``), or a pickle
    (torch's pre-zip format; :func:`_load_plain` refuses one that holds more than tensors). The error names
    what was found: missing, not a regular file (a directory, a character device, ...), empty, text, a zip
    cut short, a zip of other entries, other bytes. ``expected`` says what a ``what`` file is."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise PolicyLoadError(f"{what} file not found: {path}") from None
    except OSError as err:
        raise PolicyLoadError(f"{path}: cannot be read ({err.strerror}); a {what} file is {expected}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise PolicyLoadError(f"{path}: not a regular file ({kind}); a {what} file is {expected}")
    try:
        with open(path, "rb") as f:
            head = f.read(512)
        names: list[str] = []
        whole_zip = zipfile.is_zipfile(path)
        if whole_zip:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
        raise PolicyLoadError(f"{path}: cannot be read ({why}); a {what} file is {expected}") from None
    if not head:
        raise PolicyLoadError(f"{path}: an empty file; a {what} file is {expected}")
    if whole_zip:
        if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names) or (sb3 and "policy.pth" in names):
            return
        held = ", ".join(f"{n!r:.40}" for n in names[:4]) + (", ..." if len(names) > 4 else "") if names else "nothing"
        wanted = "torch's data.pkl or SB3's policy.pth" if sb3 else "torch's data.pkl"
        raise PolicyLoadError(f"{path}: not a {what} file: a zip holding {held}, without {wanted}")
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise PolicyLoadError(f"{path}: not a readable {what} file: a zip cut short or damaged (its end is missing)")
    if head.startswith(_PICKLE):
        return
    if _is_text(head):
        raise PolicyLoadError(f"{path}: not a {what} file: it is text; a {what} file is {expected}")
    raise PolicyLoadError(
        f"{path}: not a {what} file: no zip header (it starts with {head[:8].hex(' ')}); a {what} file is {expected}"
    )


POLICY_FILES = "a .pt export or an SB3 .zip"
"""What a policy file is, in :func:`check_model_file`'s errors."""


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        raise PolicyLoadError(f"loading a trained policy needs torch (pip install -e '.[train]'): {err}") from None
    return torch


def _load_plain(source: Any, path: str, what: str) -> Any:
    """``torch.load(weights_only=True)`` of ``source`` (the file ``path`` or one of its entries); anything it
    refuses is one line saying the file is not a plain policy file (torch's own advice, to load it unsafely,
    is never relayed)."""
    torch = _torch()
    try:
        with warnings.catch_warnings():  # torch warns about odd pickles: the error below says it all
            warnings.simplefilter("ignore")
            return torch.load(source, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise PolicyLoadError(
            f"{path}: not a plain policy file: {what} holds more than tensors and plain values (or is damaged), "
            "so it cannot be loaded safely"
        ) from None
    except Exception as err:  # noqa: BLE001 - any other failure is a damaged file
        raise PolicyLoadError(f"{path}: {what} cannot be read ({type(err).__name__}); the file is damaged") from None


def declared_bytes(meta: Mapping[str, Any], path: str = "policy") -> int | None:
    """The bytes (float32) of the SB3 actor and critic whose network a policy's metadata declares (its shape
    and ``net_arch``), or None when it declares no ``net_arch``: what an SB3 zip's ``policy.pth`` may hold."""
    arch = meta.get("net_arch")
    if not isinstance(arch, list) or not all(type(w) is int and 1 <= w <= 1_000_000 for w in arch):
        return None
    shape = recorded_shape(meta, path)
    sizes = [shape.observation_size, *arch]
    trunk = sum((a + 1) * b for a, b in zip(sizes, sizes[1:], strict=False))  # weights and biases of a layer
    return 4 * (2 * trunk + (sizes[-1] + 1) * (shape.action_count + 1))  # actor and critic trunks, both heads


def _entry_size(archive: zipfile.ZipFile, name: str, limit: int, path: str, allowed: str) -> None:
    """A PolicyLoadError unless the zip entry ``name`` declares at most ``limit`` bytes (checked before it is
    read: reading stops at the declared size)."""
    size = archive.getinfo(name).file_size
    if size > limit:
        raise PolicyLoadError(f"{path}: its {name} entry declares {size} bytes; {allowed} at most {limit}")


def read_zip_meta(archive: zipfile.ZipFile, path: str) -> dict[str, Any]:
    """An SB3 zip's :data:`META_ENTRY` ({} if it has none), read within bounds (at most :data:`MAX_META_BYTES`,
    :func:`sm_env.files.json_files.parse_json`); a PolicyLoadError for anything else than a JSON object."""
    if META_ENTRY not in archive.namelist():
        return {}
    _entry_size(archive, META_ENTRY, MAX_META_BYTES, path, "policy metadata holds")
    try:
        meta = parse_json(archive.read(META_ENTRY), f"{path}: {META_ENTRY}")
    except JsonError as err:
        raise PolicyLoadError(str(err)) from None
    if not isinstance(meta, dict):
        raise PolicyLoadError(f"{path}: {META_ENTRY} must hold a JSON object, got {type(meta).__name__}")
    return meta


def check_weights_size(archive: zipfile.ZipFile, meta: Mapping[str, Any], path: str, entry: str = "policy.pth") -> None:
    """A PolicyLoadError unless the SB3 zip's weights ``entry`` declares at most what the network of ``meta``
    takes (twice its float32 weights, room for float64 and the file's own bytes; :func:`declared_bytes`) and at
    most :data:`MAX_POLICY_BYTES` (``policy.optimizer.pth``, Adam's two moments, may take twice that)."""
    times = 2 if entry == "policy.optimizer.pth" else 1
    declared = declared_bytes(meta, path)
    if declared is None:
        _entry_size(archive, entry, times * MAX_POLICY_BYTES, path, "a policy holds")
    else:
        limit = times * min(MAX_POLICY_BYTES, 2 * declared + (1 << 20))
        _entry_size(archive, entry, limit, path, f"the network of {META_ENTRY} (net_arch) takes")


def _read_zip(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if "policy.pth" not in names:
                raise PolicyLoadError(f"{path}: no 'policy.pth' in the zip; not an SB3 model file")
            meta = read_zip_meta(archive, path)
            check_weights_size(archive, meta, path)
            raw = archive.read("policy.pth")
    except zipfile.BadZipFile:
        raise PolicyLoadError(f"{path}: not a zip file (expected an SB3 .zip or a .pt export)") from None
    except (OSError, EOFError, zlib.error) as err:
        raise PolicyLoadError(f"{path}: the zip cannot be read ({type(err).__name__}); the file is damaged") from None
    return _load_plain(io.BytesIO(raw), path, "its policy.pth entry"), meta


def _read_pt(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if os.path.getsize(path) > MAX_POLICY_BYTES:
        raise PolicyLoadError(f"{path}: {os.path.getsize(path)} bytes; a policy file holds at most {MAX_POLICY_BYTES}")
    blob = _load_plain(path, path, "the file")
    if not isinstance(blob, dict) or blob.get("format") != POLICY_FORMAT:
        raise PolicyLoadError(f"{path}: not a {POLICY_FORMAT} file (missing or wrong 'format')")
    state = blob.get("state_dict")
    meta = {k: v for k, v in blob.items() if k != "state_dict"}
    return state, meta


def load_numpy_policy(path: str | os.PathLike[str]) -> tuple[NumpyPolicy, dict[str, Any]]:
    """Load and validate a policy file; returns the policy and its metadata."""
    path = os.fspath(path)
    check_model_file(path, "policy", POLICY_FILES, sb3=True)
    sb3 = False
    if zipfile.is_zipfile(path):  # torch.save files are zips too; SB3's hold policy.pth
        with zipfile.ZipFile(path) as archive:
            sb3 = "policy.pth" in archive.namelist()
    state, meta = _read_zip(path) if sb3 else _read_pt(path)
    shape = recorded_shape(meta, path)
    activation = meta.get("activation", "tanh")  # SB3's default for MlpPolicy
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise PolicyLoadError(f"{path}: unknown activation {activation!r}; allowed: {list(ACTIVATIONS)}")
    policy = NumpyPolicy.from_state_dict(state, activation, where=path, shape=shape)
    declared = meta.get("net_arch")
    if isinstance(declared, list) and policy.net_arch != declared:
        raise PolicyLoadError(f"{path}: its layers are {policy.net_arch}; its metadata declares net_arch {declared!r}")
    return policy, meta


def policy_metadata(
    net_arch: list[int],
    activation: str,
    rules: RuleSet | str | dict[str, Any] | None = None,
    shape: PolicyShape | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A policy file's metadata (plain values): the format, the shape (``observation_size``, ``action_count``,
    ``players``), the network, and with ``rules`` the rule set it is trained on (``rules``: its options, as a
    game record's; ``rules_name``), then ``extra`` (trainer, timesteps, ...). The shape is ``rules``'s
    (``shape``, if also given, must agree), else ``shape``, else the standard one."""
    ruleset = None if rules is None else RuleSet.from_any(rules)
    if ruleset is not None:
        if shape is not None and not shape.fits(ruleset):
            raise ValueError(
                f"a policy of {shape} cannot be recorded as trained on {ruleset.name!r} ({PolicyShape.of(ruleset)})"
            )
        shape = PolicyShape.of(ruleset)
    shape = shape or STANDARD_SHAPE
    meta: dict[str, Any] = {
        "format": POLICY_FORMAT,
        "observation_size": shape.observation_size,
        "action_count": shape.action_count,
        "net_arch": list(net_arch),
        "activation": activation,
    }
    if shape.players is not None:
        meta["players"] = shape.players
    if ruleset is not None:
        meta["rules"] = ruleset.options()
        meta["rules_name"] = ruleset.name
    return {**meta, **extra}


def export_policy(
    policy: NumpyPolicy, path: str, rules: RuleSet | str | dict[str, Any] | None = None, **extra: Any
) -> None:
    """Write a standalone ``.pt`` policy (tensors and plain values only), atomically; ``rules``: the rule set
    it was trained on (recorded with its shape; the network must have that shape)."""
    import torch

    shape = PolicyShape(policy.observation_size, policy.num_actions, None)
    if rules is not None:
        ruleset = RuleSet.from_any(rules)
        if not shape.fits(ruleset):
            raise PolicyLoadError(
                f"{path}: a network of {shape} is not one for {ruleset.name!r} ({PolicyShape.of(ruleset)})"
            )
        shape = None
    blob = policy_metadata(policy.net_arch, policy.activation, rules=rules, shape=shape, **extra)
    blob["state_dict"] = {k: torch.from_numpy(v) for k, v in policy.arrays().items()}
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)


# ---------------------------------------------------------------------------- agent


class PPOAgent(Agent):
    """A trained policy playing through the agent interface.

    Args:
        path: an SB3 ``.zip`` written by the trainer (or any MaskablePPO MLP
            model) or a ``.pt`` export.
        seed: seed of the RNG used when sampling (``deterministic=False``).
        deterministic: play the most probable legal action (default).
    """

    needs_observation = True

    def __init__(self, path: str | os.PathLike[str], seed: int | None = None, deterministic: bool = True) -> None:
        super().__init__(seed)  # self.rng: the sampling RNG, reseeded by reset(seed)
        self.deterministic = deterministic
        self.load(load_numpy_policy(path), path)

    def load(self, loaded: tuple[NumpyPolicy, dict[str, Any]], path: str | os.PathLike[str]) -> None:
        """Play ``loaded`` (what :func:`load_numpy_policy` returned for the file ``path``) from now on."""
        self.path = os.fspath(path)
        self.policy, self.meta = loaded
        self.shape = recorded_shape(self.meta, self.path)
        trained = recorded_rules(self.meta)
        self.trained_on = trained.name if trained is not None else self.meta.get("rules_name")
        self.name = f"ppo:{self.path}"
        self._rules: RuleSet | None = None  # the last rule set checked by act()

    def check_rules(self, rules: RuleSet) -> None:
        """A ValueError naming the rule set and the rule sets this policy plays, if it cannot play ``rules``
        (another observation layout, action count or number of players: docs/rules.md 10.6, 10.8)."""
        problem = rules_problem(rules, *self.shape, trained_on=self.trained_on)
        if problem is not None:
            raise PolicyLoadError(f"{self.path}: {problem}")

    def act(self, view: Any, observation: Any = None) -> int:
        """The chosen legal action for ``view``; ``observation`` may be the
        environment's dict (``{"observation": ..., "action_mask": ...}``), the
        bare vector, or None (then it is encoded from the view)."""
        if view.rules is not self._rules:
            self.check_rules(view.rules)
            self._rules = view.rules
        if isinstance(observation, Mapping):
            observation = observation.get("observation")
        if observation is None:
            observation = encode(view)
        return self.choose(observation, view.legal)

    def choose(self, observation: np.ndarray, legal: int) -> int:
        """What :meth:`act` plays, from the observation vector and the legal-action bit set alone (the rule
        set is the caller's to check, :meth:`check_rules`)."""
        return self.policy.choose(observation, legal, self.deterministic, self.rng)

    def __repr__(self) -> str:
        return f"<PPOAgent {self.path} net {self.policy.net_arch} {self.policy.activation}>"
