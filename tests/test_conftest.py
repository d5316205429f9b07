"""tests/conftest.py's own hooks."""

from __future__ import annotations

import gc
from types import SimpleNamespace

import conftest
import pytest


def test_the_session_end_collects_and_freezes_before_an_xdist_worker_reports():
    """The run's garbage is collected at pytest_sessionfinish, before xdist's own hook reports the worker
    finished (tryfirst), and the rest is frozen: pytest's last collection then scans nothing old and is over long
    before execnet's 5 s (a SIGINT after them landed in hypothesis's gc callback)."""
    assert conftest.pytest_sessionfinish.pytest_impl.get("tryfirst") is True
    cycle: list = []
    cycle.append(cycle)  # garbage only a collection frees
    del cycle
    try:
        conftest.pytest_sessionfinish(SimpleNamespace(exitstatus=pytest.ExitCode.OK))
        assert gc.get_freeze_count() > 0
        assert gc.collect() == 0  # nothing left for the last collection (the frozen objects are not scanned)
    finally:
        gc.unfreeze()


def test_an_empty_cluster_tier_passes_only_without_ray():
    """``-m cluster`` on an install without Ray collects nothing (its module skips at import): exit 5 becomes a
    pass there, and nowhere else (another selection, or with Ray installed, keeps exit 5)."""

    def finished(markexpr: str) -> int:
        config = SimpleNamespace(getoption=lambda name, default=None: markexpr)
        session = SimpleNamespace(exitstatus=pytest.ExitCode.NO_TESTS_COLLECTED, config=config)
        try:
            conftest.pytest_sessionfinish(session)
        finally:
            gc.unfreeze()
        return session.exitstatus

    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        has_ray = False
    else:
        has_ray = True
    assert finished("cluster") == (pytest.ExitCode.NO_TESTS_COLLECTED if has_ray else pytest.ExitCode.OK)
    assert finished("not cluster") == pytest.ExitCode.NO_TESTS_COLLECTED
    assert finished("notebooks") == pytest.ExitCode.NO_TESTS_COLLECTED


def test_the_groups_are_scheduled_by_node_id_whole():
    """Every test on the local Ray instance is one scheduling unit (one worker, one instance), the cluster module
    another (its own cluster); a shared-fixture file is one; any other test is its own (a parameter or an xdist
    suffix does not change a group)."""
    xdist = __import__("pytest").importorskip("xdist")
    scheduler = conftest.pytest_xdist_make_scheduler(_Config("loadgroup"), None)
    assert isinstance(scheduler, xdist.scheduler.LoadScopeScheduling)
    ray_tests = [
        "tests/test_ray_eval.py::test_eval_on_ray_equals_one_local_worker[hand]",
        "tests/test_rllib.py::test_rllib_agent_spec_errors",
        "tests/test_tournament.py::test_workers_and_ray_give_the_leaderboard_of_one_process@ray",
    ]
    assert {scheduler._split_scope(nodeid) for nodeid in ray_tests} == {"ray"}
    cluster = "tests/test_ray_cluster.py::test_a_job_ships_its_code_to_a_node_that_cannot_import_the_project"
    assert scheduler._split_scope(cluster) == "ray_cluster"
    connect = "tests/test_ray_connect.py::test_a_closed_port_is_one_line_at_once[ray://]"  # starts no Ray here
    assert scheduler._split_scope(connect) == connect
    assert scheduler._split_scope("tests/test_web.py::test_x[1]") == scheduler._split_scope("tests/test_web.py::y")
    alone = "tests/test_tournament.py::test_a_killed_tournament_resumes_to_the_same_leaderboard"
    assert scheduler._split_scope(alone) == alone
    assert conftest.pytest_xdist_make_scheduler(_Config("load"), None) is None  # another mode asked for: xdist's


class _Config:
    """What the scheduler hook and xdist's scheduler read of a pytest config: ``--dist``, two workers."""

    def __init__(self, dist: str) -> None:
        self.values = {"dist": dist, "tx": ["2*popen"], "numprocesses": 2}

    def getvalue(self, name: str):
        return self.values.get(name)
