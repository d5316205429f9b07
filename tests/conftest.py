"""Shared pytest configuration."""

from __future__ import annotations


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "notebooks: executes the research notebooks with nbclient (slow; deselect with -m 'not notebooks')",
    )
