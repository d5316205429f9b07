"""sm_env.compiled.readiness: a fresh install plays at once on the Python engine while the env kernels compile in
the background, says so in one line, and takes the kernels at a later reset once they are stamped ready."""

from __future__ import annotations

import os
import random

import pytest

from sm_env.compiled import readiness
from sm_env.envs.aec import raw_env
from sm_env.records import replay


@pytest.fixture
def fresh_install(tmp_path, monkeypatch):
    """A cache with no ready stamp (in tmp_path) and a background compile that only records that it started."""
    monkeypatch.setattr(readiness, "_stamp", [tmp_path / "sm_env-single-test.ready"])
    monkeypatch.setattr(readiness, "_ready", False)
    monkeypatch.setattr(readiness, "_announced", False)
    started: list[bool] = []
    monkeypatch.setattr(readiness, "compile_in_background", lambda: started.append(True) or "it compiles (x.log)")
    return started


def play(env, seed: int, steps: int) -> list[tuple]:
    """Random legal play; what the learner sees at every decision."""
    rng = random.Random(seed)
    seen = []
    for _ in env.agent_iter(max_iter=steps):
        observation, reward, terminated, truncated, _ = env.last()
        seen.append((observation["observation"].tobytes(), observation["action_mask"].tobytes(), reward))
        env.step(None if terminated or truncated else rng.choice(list(observation["action_mask"].nonzero()[0])))
    return seen


def test_auto_plays_on_python_until_ready_then_switches_with_the_same_games(fresh_install, capsys):
    env = raw_env(max_hands=2)
    env.reset(seed=5)
    assert env._engine.fast is None and fresh_install == [True]  # the Python engine, the background compile started
    python_path = play(env, 1, 150)
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "Python engine" in said[0] and said[0].endswith("it compiles (x.log)")
    env.reset(seed=5)
    assert env._engine.fast is None and capsys.readouterr().err == ""  # said once per process
    readiness.mark_ready()  # what the background process does when it is done
    env.reset(seed=5)
    assert env._engine.fast is not None  # the compiled path, at the next reset
    assert play(env, 1, 150) == python_path  # the same game, observations, masks and rewards
    replay(env.record())


def test_compiled_true_and_false_do_not_ask_the_background(fresh_install, monkeypatch):
    loaded: list[bool] = []
    monkeypatch.setattr(readiness, "load_kernels", lambda: loaded.append(True))
    env = raw_env(compiled=True)
    env.reset(seed=1)
    assert env._engine.fast is not None and loaded == [True]  # compiled in the foreground (announced by load_kernels)
    env = raw_env(compiled=False)
    env.reset(seed=1)
    assert env._engine.fast is None and fresh_install == []


def test_load_kernels_announces_a_compile_and_stamps_the_cache(fresh_install, capsys):
    readiness.load_kernels()  # (loads from numba's cache when it is warm)
    assert readiness.stamp_path().exists() and readiness.env_kernels_ready()
    assert "compiling the env kernels now" in capsys.readouterr().err


def test_the_background_compile_is_off_by_environment_and_runs_once(tmp_path, monkeypatch):
    monkeypatch.setattr(readiness, "_stamp", [tmp_path / "sm_env-single-test.ready"])
    monkeypatch.setenv(readiness.ENV_VARIABLE, "0")
    assert "nothing compiles them now" in readiness.compile_in_background()
    lock = tmp_path / "sm_env-single-test.compiling"
    lock.write_text(str(os.getpid()))  # a live compile holds the lock
    monkeypatch.setenv(readiness.ENV_VARIABLE, "1")
    assert readiness.compile_in_background() == "another process is compiling them"
    lock.write_text("999999999")  # a dead process's lock is stale: taken
    assert readiness._take_lock(lock) and lock.read_text() == "0"


def test_the_background_process_stamps_and_frees_the_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(readiness, "_stamp", [tmp_path / "sm_env-single-test.ready"])
    monkeypatch.setattr(readiness, "_ready", False)
    monkeypatch.setattr(os, "nice", lambda n: 0)  # this test process keeps its priority
    lock = tmp_path / "sm_env-single-test.compiling"
    lock.write_text("0")
    assert readiness.compile_main(str(lock)) == 0
    assert readiness.stamp_path().exists() and not lock.exists()


def test_a_wrong_compiled_value_is_one_clear_error():
    with pytest.raises(ValueError, match="compiled must be True, False or 'auto', got 'yes'"):
        raw_env(compiled="yes")


def test_first_compile_announces_a_group_once_and_stamps_it(tmp_path, monkeypatch, capsys):
    stamp = tmp_path / "sm_env-batch-test.ready"
    monkeypatch.setattr(readiness, "_group_stamp", lambda group: stamp)
    monkeypatch.setattr(readiness, "_groups_done", set())
    with pytest.raises(RuntimeError), readiness.first_compile("batch"):
        raise RuntimeError("the compile failed")
    assert not stamp.exists()  # a failed first use stamps nothing
    said = capsys.readouterr().err
    assert "compiling the batched engine (VectorGame) with numba now" in said and "once per install" in said
    with readiness.first_compile("batch"):
        pass
    assert stamp.exists()
    with readiness.first_compile("batch"):
        pass
    assert capsys.readouterr().err.count("compiling") == 1  # said again by the retry, then never
    monkeypatch.setattr(readiness, "_groups_done", set())  # a new process: the stamp says the cache is ready
    with readiness.first_compile("batch"):
        pass
    assert capsys.readouterr().err == ""


def test_the_group_stamps_name_real_source_files():
    for group in readiness.GROUP_SOURCES:
        assert readiness._group_stamp(group).name.startswith(f"sm_env-{group}-")
