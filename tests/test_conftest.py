"""tests/conftest.py's own hooks."""

from __future__ import annotations

import gc

import conftest


def test_the_session_end_collects_and_freezes_before_an_xdist_worker_reports():
    """The run's garbage is collected at pytest_sessionfinish, before xdist's own hook reports the worker
    finished (tryfirst), and the rest is frozen: pytest's last collection then scans nothing old and is over long
    before execnet's 5 s (a SIGINT after them landed in hypothesis's gc callback)."""
    assert conftest.pytest_sessionfinish.pytest_impl.get("tryfirst") is True
    cycle: list = []
    cycle.append(cycle)  # garbage only a collection frees
    del cycle
    try:
        conftest.pytest_sessionfinish(None)
        assert gc.get_freeze_count() > 0
        assert gc.collect() == 0  # nothing left for the last collection (the frozen objects are not scanned)
    finally:
        gc.unfreeze()
