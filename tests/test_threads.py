"""Policies at full speed in every host: a numpy policy's small products never reach BLAS (whose thread pool
cannot be pinned from every thread), and agents.players.threads.one_thread runs torch on one thread, count restored."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from agents import make_agent
from agents.players.ppo_agent import SMALL_BATCH, NumpyPolicy, load_numpy_policy
from agents.players.threads import one_thread
from agents.players.trained import trained_policy
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view


@pytest.fixture
def no_blas(monkeypatch):
    """np.matmul (BLAS for float32) counted: the shapes of its calls."""
    import agents.players.ppo_agent as module

    calls: list[tuple[int, ...]] = []
    matmul = np.matmul

    def refuse(x, w):
        calls.append(x.shape)
        return matmul(x, w)

    monkeypatch.setattr(module.np, "matmul", refuse, raising=True)
    return calls


def test_a_decision_of_the_shipped_policy_never_reaches_blas(no_blas):
    game = Game(seed=3)
    agent = make_agent("trained", seed=0)
    agent.check_rules(game.rules)
    for _ in range(20):  # exchange, trump, discards and plays: whatever comes first
        view = player_view(game, game.current_player)
        game.apply(agent.act(view))
    assert no_blas == []


def test_small_and_large_batches_give_the_products_of_blas(no_blas):
    policy = load_numpy_policy(trained_policy())[0]
    rows = np.random.default_rng(0).random((SMALL_BATCH + 1, policy.observation_size)).astype(np.float32)
    large = policy.logits(rows)  # over SMALL_BATCH rows: BLAS (its thread pool pays off)
    assert len(no_blas) == len(policy.hidden) + 1
    small = policy.logits(rows[:SMALL_BATCH])
    one = policy.logits(rows[0])
    assert len(no_blas) == len(policy.hidden) + 1  # the small batch and the single row did not call it
    np.testing.assert_allclose(small, large[:SMALL_BATCH], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(one, large[0], rtol=1e-4, atol=1e-4)
    assert isinstance(policy, NumpyPolicy) and one.shape == (policy.num_actions,)


@pytest.fixture
def torch_two_threads():
    torch = pytest.importorskip("torch")
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    yield torch
    torch.set_num_threads(saved)


def test_one_thread_pins_torch_and_restores_it(torch_two_threads):
    torch = torch_two_threads
    with one_thread():
        assert torch.get_num_threads() == 1
        with one_thread():  # nested: the outer block keeps the pin when the inner one ends
            pass
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2


def test_one_thread_in_another_thread_restores_its_count(torch_two_threads):
    torch = torch_two_threads
    seen: dict[str, int] = {}

    def work() -> None:
        before = torch.get_num_threads()
        with one_thread():
            seen["inside"] = torch.get_num_threads()
        seen["restored"] = int(torch.get_num_threads() == before)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(30)
    assert seen == {"inside": 1, "restored": 1}
