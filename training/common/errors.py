"""The error of a config, an override or a command's settings that is not valid: one line naming the key.

Standard library only, so that light commands (``sergeant-major eval`` on the core install) can raise and
catch it without the training extra (:mod:`training.common.yaml_config` reads YAML with pydantic)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config file or override that is not valid; the message names the key.

    ``key`` is the dotted key at fault (None when the whole file is) and
    ``detail`` the message without its source prefix.
    """

    def __init__(self, message: str, key: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.detail = message if detail is None else detail


def config_error(source: str, key: str | None, detail: str) -> ConfigError:
    """The error for ``detail`` about ``key``, prefixed with its source (a file name; "" for none)."""
    return ConfigError(f"{source}: {detail}" if source else detail, key, detail)
