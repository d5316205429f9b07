"""The ``sergeant-major`` command line (also ``python -m sm_cli``).

It sits on top of the other packages: it imports ``sm_env``, ``agents`` and
``training``, and none of them imports it. See :mod:`sm_cli.cli`.
"""

from .cli import CliError, build_parser, main, parse_rules

__all__ = ["CliError", "build_parser", "main", "parse_rules"]
