"""Shared pytest configuration."""

from __future__ import annotations

import gc
import os

import pytest

# The quick tier, ``python -m pytest -m "not slow"``, leaves these out (the README says which and why); the default
# ``python -m pytest`` (what CI runs, then the cluster tier below) runs everything else. Whole files first, then single
# tests (every parameter).
SLOW_MODULES = {
    "test_notebooks.py": "executes every notebook",
    "test_rllib.py": "starts Ray and trains with RLlib",
    "test_ray_eval.py": "starts Ray",
    "test_ray_cluster.py": "starts a Ray cluster of several nodes",
    "test_browser.py": "drives Chromium",
    "test_training.py": "SB3 training runs",
    "test_training_cli.py": "training runs through the command line",
    "test_ppo_vector.py": "vector PPO training runs",
    "test_distill.py": "search-labelled data and fits",
    "test_distill_exit.py": "data labelled by the policy search, fits, a killed run resumed",
    "test_checkpoint.py": "training runs to checkpoint and resume",
    "test_properties.py": "long property tests over many random games",
}
# The cluster tier, ``python -m pytest -m cluster -n 0``: left out of the default run (``-m "not cluster"`` in
# pyproject.toml's addopts) and run by CI as a command of its own after it. These tests build a Ray cluster of
# several nodes on this machine, add nodes and kill them, and start a node from a bare Python: about 2 minutes
# alone on 2 cores, dozens of processes started, and their Ray processes slowed every other test beside them
# (the module took 131 s of one worker's 331 s in a 2-worker run of the whole suite, and its tests up to 4 times
# their time alone). Also slow, so the quick tier leaves them out too.
CLUSTER_MODULES = {"test_ray_cluster.py"}
SLOW_TESTS = {  # the random-game sweeps over every preset, the lockstep sweeps and the searches in many positions
    "test_ecosystem.py": {
        "test_supersuit_observation_wrappers",
        "test_sb3_maskable_ppo_on_single_seat_env",
        "test_torchrl_pettingzoo_wrapper",
        "test_torchrl_collector_with_the_masked_random_policy",
        "test_tianshou_collects_and_trains_dqn",
    },
    "test_vector.py": {
        "test_lockstep_parallel_kernels",
        "test_lockstep_every_preset",
        "test_lockstep_every_seat_observation",
    },
    "test_variants.py": {"test_random_games_follow_the_rules", "test_phase_order_random_games_follow_the_rules"},
    "test_four.py": {"test_random_games_follow_the_rules"},
    "test_record.py": {"test_random_standard_games_replay_to_themselves"},
    "test_ismcts.py": {"test_ismcts_plays_only_legal_actions"},
    "test_agents.py": {
        "test_pimc_plays_only_legal_actions",
        "test_world_sampler_never_contradicts_knowledge_and_admits_the_truth",
        "test_shipped_trained_policy_beats_the_heuristic",
    },
    "test_web.py": {"test_whole_game_through_http_then_the_record_replays"},
    "test_site.py": {"test_every_page_loads_offline_without_an_error_in_a_browser"},  # drives Chromium
    "test_tournament.py": {
        "test_workers_and_ray_give_the_leaderboard_of_one_process",
        "test_a_killed_tournament_resumes_to_the_same_leaderboard",
    },
    "test_playouts.py": {"test_improve_on_ray_labels_the_files_of_local_workers_and_resumes"},  # starts Ray
}


# Parallel runs (pytest-xdist, ``-n auto`` in pyproject.toml, ``--dist loadgroup``): a group runs on one worker.
# The tests on the local Ray instance are one group (one instance, started once) and the cluster module another
# (its cluster built once); test_ray_connect.py starts no Ray in its process. The worker-kill tests are one group (their
# deadlines assume no other kill test beside them), and a file whose module-scoped fixture is expensive (a
# training run, a browser, a web server) keeps its tests together so that the fixture is built once. The groups
# are decided here from the test's node id by the scheduler below (pytest_xdist_make_scheduler), not by
# ``xdist_group`` marks: pytest-xdist 3.8 puts a mark's group into ``item._nodeid``, which pytest 9.2 no longer
# reads, so on that pair of versions every mark-based group was silently split across the workers.
RAY_MODULES = {"test_rllib.py", "test_ray_eval.py"}  # the local instance's tests (``local_ray``)
SHARED_FIXTURE_MODULES = {
    "test_checkpoint.py",
    "test_browser.py",
    "test_record.py",
    "test_vector_state.py",
    "test_web.py",
    "test_site.py",
}
GROUPED_MODULES = {**dict.fromkeys(RAY_MODULES, "ray"), **{m: m for m in SHARED_FIXTURE_MODULES}}
# the cluster module builds a multi-node cluster of its own (and shuts a local instance down first): a group of its
# own, on another worker than the local instance's tests, so that neither waits for the other's Ray to start
GROUPED_MODULES["test_ray_cluster.py"] = "ray_cluster"
GROUPED_MODULES["test_workers.py"] = "worker_kills"
GROUPED_TESTS = {  # the tests of other files that take local_ray
    "test_tournament.py::test_workers_and_ray_give_the_leaderboard_of_one_process": "ray",
    "test_playouts.py::test_improve_on_ray_labels_the_files_of_local_workers_and_resumes": "ray",
    "test_ppo_actors.py::test_the_actors_as_ray_actors_train_a_run": "ray",
}
# No test starts numba's background compile of the env kernels (sm_env.compiled.readiness): a test that needs the
# kernels compiles them itself (CI compiles them first, `sergeant-major compile`); tests/test_readiness.py turns it on.
os.environ.setdefault("SM_ENV_BACKGROUND_COMPILE", "0")
MAX_WORKERS = 4  # -n auto: one worker a core, at most this many (each imports torch and numba's kernels)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist (-p no:xdist) not an error
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker a core (os.sched_getaffinity where the OS has it), at most MAX_WORKERS. One more
    (for the Ray cluster's worker, which mostly waits) made the suite 342 s instead of 395 s on 2 cores, but the
    web tests that compare answer times failed there once in two runs: not taken. Tried again (2026-12-07): 355 and
    362 s locally against 386-391 s, but 392 s in a fresh-clone CI run, where the site's browser test saw its
    local server reset a connection: not taken."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_WORKERS))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    """Collect the run's garbage now, then freeze what is left, so that pytest's own last collection (in
    ``pytest_unconfigure``) has next to nothing to scan.

    Under xdist a worker runs that last collection after it has told the controller it finished, and execnet
    gives it 5 s once the controller closes it: a worker still busy then gets a SIGINT. On a big heap (torch, numba,
    SB3, Ray) and a busy machine the collection took longer, the SIGINT landed inside it, in hypothesis's gc
    callback, and the run ended with a PytestUnraisableExceptionWarning about a KeyboardInterrupt there. Here,
    before the worker reports, the collection takes the time it needs (finalizers run and unraisable exceptions
    are still reported by pytest's hook, as before)."""
    gc.collect()
    gc.freeze()
    if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and _cluster_tier_without_ray(session.config):
        session.exitstatus = pytest.ExitCode.OK  # every test skipped for the missing extra, as the suite does


def _cluster_tier_without_ray(config) -> bool:
    """The cluster tier (``-m cluster``) on an install without Ray: its module skips at import (it says so with
    ``-rs``), which leaves pytest nothing collected, exit code 5; on the README's own install that is a pass."""
    if config.getoption("markexpr", "").strip() != "cluster":
        return False
    try:
        import ray.rllib  # noqa: F401  (what tests/test_ray_cluster.py imports or skips on)
    except ImportError:
        return True
    return False


def scheduling_group(nodeid: str) -> str:
    """The scheduling group of a test: its group above, else the test alone (its node id)."""
    path, _, name = nodeid.partition("::")
    module = path.rsplit("/", 1)[-1]
    return GROUPED_MODULES.get(module) or GROUPED_TESTS.get(f"{module}::{name.split('[')[0].split('@')[0]}") or nodeid


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist (-p no:xdist) not an error
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: xdist's load-scope scheduling with the groups of :func:`scheduling_group`."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_group(nodeid)

    return GroupScheduling(config, log)


def pytest_ignore_collect(collection_path, config):
    """With exactly ``-m "not slow"``, the slow files are not even imported (Ray, torch and SB3 take seconds)."""
    if config.getoption("markexpr", "").strip() == "not slow" and collection_path.name in SLOW_MODULES:
        return True
    return None


def pytest_collection_modifyitems(config, items):
    """Mark the tests named above ``slow``. A name that its file does not define is an error (a renamed test
    would otherwise drop out of the list unnoticed), and so is a test that starts Ray outside the Ray group."""
    checked = set()
    for item in items:
        module = item.path.name
        names = SLOW_TESTS.get(module, set())
        if module in SLOW_MODULES or getattr(item, "originalname", item.name) in names:
            item.add_marker(pytest.mark.slow)
        if module in CLUSTER_MODULES:
            item.add_marker(pytest.mark.cluster)
        if "local_ray" in getattr(item, "fixturenames", ()) and scheduling_group(item.nodeid) != "ray":
            raise pytest.UsageError(f"tests/conftest.py: {item.nodeid} starts Ray; add it to GROUPED_TESTS")
        if names and module not in checked and getattr(item, "module", None) is not None:
            checked.add(module)
            missing = sorted(n for n in names if not hasattr(item.module, n))
            if missing:
                raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS: {module} defines no {', '.join(missing)}")


def ray_test_environment() -> None:
    """What every Ray test runs under: no token authentication (that is for clusters), no usage report, and
    every address on loopback (a test never leaves this machine; without it, Ray rewrites 127.0.0.1 to the
    machine's network address and listens on every interface): the product's own switch, for this process and
    the processes started from here on."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    from training.common.ray_cluster import stay_on_loopback

    stay_on_loopback()


@pytest.fixture(scope="session")
def _ray_session():
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[rllib]')")
    ray_test_environment()
    yield ray
    if ray.is_initialized():
        ray.shutdown()


@pytest.fixture
def local_ray(_ray_session):
    """A local Ray instance (2 CPUs, no dashboard, on loopback: the product's ``connect``) shared by the tests
    that need one (started again if a test module of its own cluster, tests/test_ray_cluster.py, shut it down);
    skipped without Ray."""
    from training.common.ray_cluster import connect

    ray = _ray_session
    if not ray.is_initialized():
        connect(None, "installed", num_cpus=2)  # the product's local instance: on loopback only
    return ray


@pytest.fixture
def no_shipped_policy(monkeypatch):
    """``no_shipped_policy(preset, ...)``: those presets' shipped policies are taken out of ``trained``'s table
    for the test (agents/players/trained.py), so that the refusal of a rule set no shipped policy plays is tested
    on a real rule set."""
    import agents.players.trained as trained

    def remove(*presets: str) -> None:
        for preset in presets:
            monkeypatch.delitem(trained.TRAINED_POLICIES, preset, raising=False)

    return remove
