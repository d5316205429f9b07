"""Versioned entry module of the Sergeant Major environment (like ``pettingzoo.classic.tictactoe_v3``).

``from sm_env import sergeant_major_v0; e = sergeant_major_v0.env()`` pins
version 0 of the environment; see :mod:`sm_env.envs.aec` for its documentation.
The registry id is ``"sm_env/sergeant_major-v0"``
(``pettingzoo.make("aec", "sm_env/sergeant_major-v0")`` after ``import sm_env``).
"""

from sm_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
