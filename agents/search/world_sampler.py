"""Deals consistent with what one player knows, for search: :mod:`sm_env.core.worlds` under the name the
search agents have always used.

The sampler reads only a :class:`~sm_env.core.knowledge.PlayerView` and lives in the rules core so that the
environments can use it too (OpenSpiel's ``resample_from_infostate``, :mod:`sm_env.core.histories`); its
docstring describes the locations of an unseen card, the facts that narrow them and the sampling. The same
functions, the same draws from the same generator.
"""

from __future__ import annotations

from sm_env.core.worlds import (
    ACROSS,
    CHECKS,
    CHECKS_BY_LOCATIONS,
    KITTY,
    LEFT,
    LOCATION_NAMES,
    OUT,
    RIGHT,
    Constraints,
    World,
    WorldError,
    constraints_of,
    sample_world,
    slacks,
    world_from_view,
)

__all__ = [
    "ACROSS",
    "CHECKS",
    "CHECKS_BY_LOCATIONS",
    "KITTY",
    "LEFT",
    "LOCATION_NAMES",
    "OUT",
    "RIGHT",
    "Constraints",
    "World",
    "WorldError",
    "constraints_of",
    "sample_world",
    "slacks",
    "world_from_view",
]
