"""An exported RLlib policy as an agent (spec ``rllib:PATH``).

:class:`RLlibAgent` plays a :class:`agents.players.rllib_module.ActionMaskingPPOModule` as an
:class:`agents.players.base.Agent` (the most probable legal action, or a sample with ``deterministic=False``).
``PATH`` is any of:

- a module checkpoint (what ``sergeant-major train --backend rllib`` exports
  as ``RUN/policy/<module>``, or ``RLModule.save_to_path``);
- a folder of module checkpoints (``RUN/policy``): with several modules, one
  per role (``dealer``, ``eldest``, ``middle``), the module of the role the
  agent has in the hand is used; with one, that one;
- an algorithm checkpoint (``RUN/checkpoints/iter_000010``): its learner's
  modules (``learner_group/learner/rl_module``), as above.

Loading needs ``ray[rllib]`` and torch (``pip install -e ".[rllib]"``) but no
running Ray instance.

Only load policies you trust: an RLlib checkpoint is a pickle, and unpickling
it can run any code its author put in it (unlike ``ppo:PATH``, which loads
plain tensors).
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np

from sm_env.core.game import ROLE_NAMES
from sm_env.core.knowledge import PlayerView
from sm_env.core.rules import RuleSet
from sm_env.observation import action_mask, encode

from .base import Agent
from .ppo_agent import rules_problem
from .threads import one_thread

LEARNER_MODULES = os.path.join("learner_group", "learner", "rl_module")


class RLlibLoadError(ValueError):
    """A path that holds no RLlib module checkpoint this agent can play."""


def module_paths(path: str) -> dict[str, str]:
    """The module checkpoints under ``path`` by module id (see the module docstring for what ``path`` may be)."""
    if not os.path.isdir(path):
        raise RLlibLoadError(f"rllib agent: no such folder: {path}")
    path = os.path.abspath(path)  # RLlib reads a relative path as a URI without a scheme
    if os.path.isdir(os.path.join(path, LEARNER_MODULES)):
        path = os.path.join(path, LEARNER_MODULES)
    found = {
        name: os.path.join(path, name)
        for name in sorted(os.listdir(path))
        if os.path.exists(os.path.join(path, name, "class_and_ctor_args.pkl"))
    }
    if not found and os.path.exists(os.path.join(path, "class_and_ctor_args.pkl")):
        found = {os.path.basename(os.path.normpath(path)): path}  # a single module's own folder
    if not found:
        raise RLlibLoadError(
            f"rllib agent: {path} holds no RLlib module checkpoint (expected a module folder, a folder of "
            "modules such as RUN/policy, or an algorithm checkpoint)"
        )
    return found


class RLlibAgent(Agent):
    """An exported RLlib module (or one per role) as an agent; see the module docstring."""

    needs_observation = True

    def __init__(self, path: str, seed: int | None = None, deterministic: bool = True) -> None:
        super().__init__(seed)
        from ray.rllib.core.rl_module.rl_module import RLModule

        paths = module_paths(path)
        if len(paths) > 1 and set(paths) != set(ROLE_NAMES):
            raise RLlibLoadError(
                f"rllib agent: {path} holds modules {sorted(paths)}; expected one module or one per role "
                f"{list(ROLE_NAMES)}"
            )
        self._setup({name: RLModule.from_checkpoint(p) for name, p in paths.items()}, deterministic, "rllib")

    @classmethod
    def from_modules(cls, modules: dict[str, Any], name: str = "rllib", deterministic: bool = True) -> RLlibAgent:
        """An agent over RLlib modules already built (one, or one per role), e.g. frozen league copies."""
        if len(modules) > 1 and set(modules) != set(ROLE_NAMES):
            raise RLlibLoadError(
                f"rllib agent: expected one module or one per role {list(ROLE_NAMES)}, got {sorted(modules)}"
            )
        agent = cls.__new__(cls)
        Agent.__init__(agent, None)
        agent._setup(dict(modules), deterministic, name)
        return agent

    def _setup(self, modules: dict[str, Any], deterministic: bool, name: str) -> None:
        import torch

        for module in modules.values():
            if hasattr(module, "eval"):
                module.eval()
        self.modules = modules
        self.deterministic = deterministic
        self.name = name
        self._torch = torch
        module = next(iter(modules.values()))
        try:  # the sizes the module was built for (ActionMaskingPPOModule keeps its env's dict space)
            space = getattr(module, "observation_space_with_mask", None) or module.observation_space
            self._sizes: tuple[int, int] | None = (int(space["observations"].shape[0]), int(module.action_space.n))
        except (AttributeError, KeyError, TypeError, IndexError):
            self._sizes = None  # a module of another kind: not checked

    def check_rules(self, rules: RuleSet) -> None:
        """A ValueError naming the rule set and the rule sets the module plays, if it was built for another
        observation size or action count (or the rule set has four players)."""
        problem = None if self._sizes is None else rules_problem(rules, *self._sizes)
        if problem is not None:
            raise RLlibLoadError(f"rllib agent: {problem}")

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        """The module's choice among the legal actions of ``view``."""
        from ray.rllib.core.columns import Columns

        torch = self._torch
        vector = encode(view) if observation is None else np.asarray(observation.get("observation", observation))
        mask = action_mask(view.legal)
        if not mask.any():
            raise ValueError("rllib agent: asked to act with no legal action")
        module = self.modules[ROLE_NAMES[view.role()]] if len(self.modules) > 1 else next(iter(self.modules.values()))
        batch = {
            Columns.OBS: {
                "observations": torch.from_numpy(np.asarray(vector, dtype=np.float32)[None]),
                "action_mask": torch.from_numpy(mask[None]),
            }
        }
        with torch.no_grad(), one_thread():  # one observation: a thread pool costs more than it saves
            logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].double().numpy()
        logits = np.where(mask > 0, logits, -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return int(self.rng.choices(range(len(probs)), weights=probs)[0])

    def reset(self, seed: int | None = None) -> None:
        """Reseed (used only with ``deterministic=False``)."""
        self.rng = random.Random(seed)
