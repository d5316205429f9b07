"""The networks of the pipeline, built in one place: an MLP in the actor layout of the policy file
(:class:`agents.players.ppo_agent.NumpyPolicy`: linear layers, each hidden one followed by its activation, the
last one the head), so that every fitted network is exported by ``policy_from_torch`` and loads as ``ppo:PATH``.

- :func:`mlp`: a fresh MLP (the belief network's too: 52 x players outputs)
- :class:`PolicyValueNet`: the imitation fit's network, an MLP trunk with a policy head and a value head
- :func:`policy_network`: a policy file's network in torch (the Q-network's start: its head fresh if asked)
- :func:`fresh_policy`: a freshly initialised policy drawn in numpy from a seed (the from-scratch recipe)

The layers are made in order, the trunk first and the heads after it, so a seed gives the same weights as the
builders these replaced."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from agents.players.ppo_agent import NumpyPolicy, PolicyShape, policy_into_torch


def hidden_layers(inputs: int, hidden: Sequence[int], activation: str = "relu") -> list[nn.Module]:
    """``nn.Linear`` layers of the ``hidden`` widths from ``inputs``, each followed by ReLU (or tanh)."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(inputs, width), nn.ReLU() if activation == "relu" else nn.Tanh()]
        inputs = width
    return layers


def mlp(inputs: int, hidden: Sequence[int], outputs: int, activation: str = "relu") -> nn.Sequential:
    """A fresh MLP: the hidden layers (:func:`hidden_layers`) and a linear head of ``outputs``."""
    return nn.Sequential(*hidden_layers(inputs, hidden, activation), nn.Linear(([inputs, *hidden])[-1], outputs))


class PolicyValueNet(nn.Module):
    """An MLP trunk (the rule set's observation in) with a policy head (one logit per action) and a value head
    (the hand's final balance): the imitation fit's network; its actor is ``[trunk, policy]``."""

    def __init__(self, net_arch: Sequence[int], activation: str, shape: PolicyShape) -> None:
        super().__init__()
        self.trunk = nn.Sequential(*hidden_layers(shape.observation_size, net_arch, activation))
        prev = net_arch[-1] if net_arch else shape.observation_size
        self.policy = nn.Linear(prev, shape.action_count)
        self.value = nn.Linear(prev, 1)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(x)
        return self.policy(h), self.value(h).squeeze(-1)


def policy_network(policy: NumpyPolicy, fresh_head: bool = False, where: str = "the policy") -> nn.Sequential:
    """``policy`` as a torch MLP (ReLU, whatever the policy's activation: the Q-network's layout), its weights
    copied; with ``fresh_head`` the head keeps its fresh draw, scaled by 0.1, with zero biases."""
    sizes = [w.shape[0] for w, _ in policy.hidden] + [policy.head[0].shape[0]]
    net = mlp(sizes[0], sizes[1:], policy.head[0].shape[1])
    head = net[-1]
    fresh = head.weight.detach().clone()
    policy_into_torch(policy, [net], where)
    if fresh_head:
        with torch.no_grad():
            head.weight.copy_(fresh).mul_(0.1)
            head.bias.zero_()
    return net


def fresh_policy(shape: PolicyShape, hidden: Sequence[int], seed: int) -> NumpyPolicy:
    """A freshly initialised ReLU policy of ``hidden`` layers for ``shape``: every weight and bias uniform in
    +-1/sqrt(inputs), as torch's ``nn.Linear``, drawn in numpy from ``seed``."""
    rng = np.random.default_rng(seed)
    sizes = [shape.observation_size, *hidden, shape.action_count]
    layers = []
    for inputs, outputs in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1.0 / np.sqrt(inputs)
        weight = rng.uniform(-bound, bound, (outputs, inputs)).astype(np.float32)
        layers.append((weight, rng.uniform(-bound, bound, outputs).astype(np.float32)))
    return NumpyPolicy(layers[:-1], layers[-1], "relu")
