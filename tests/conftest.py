"""Shared pytest configuration."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "notebooks: executes the research notebooks with nbclient (slow; deselect with -m 'not notebooks')",
    )


@pytest.fixture(scope="session")
def local_ray():
    """A local Ray instance (2 CPUs, no dashboard) shared by the tests that need one; skipped without Ray."""
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[rllib]')")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # token authentication is for clusters, not a test
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
