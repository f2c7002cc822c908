"""The user-facing errors: each names what is at fault and how to fix it.

The CLI prints these as one line each (no traceback) and exits with code 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ArgsError",
    "ConfigError",
    "FieldError",
    "KubeschedError",
    "ManifestError",
    "PluginLoadError",
]


class KubeschedError(Exception):
    """Base of every error caused by input (config, manifests, plugins), not by a bug."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem at one field path, e.g. ``profiles[0].plugins.score.enabled[0]``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def under(self, prefix: str) -> FieldError:
        """The same error with its path placed below ``prefix``."""
        if not self.path:
            return FieldError(prefix, self.message)
        joiner = "" if self.path.startswith("[") else "."
        return FieldError(f"{prefix}{joiner}{self.path}", self.message)


class ConfigError(KubeschedError):
    """A configuration with one or more errors; ``errors`` lists them all."""

    def __init__(
        self, errors: Iterable[FieldError], source: str = "", *, warnings: Iterable[str] = ()
    ) -> None:
        self.errors = list(errors)
        self.source = source
        #: What the user should also know (printed before the errors).
        self.warnings = list(warnings)
        head = f"{source}: " if source else ""
        lines = "\n".join(f"  {error}" for error in self.errors)
        count = len(self.errors)
        super().__init__(
            f"{head}invalid configuration ({count} error{'s' * (count != 1)}):\n{lines}"
        )


class ArgsError(KubeschedError):
    """Raised by a plugin's args parser: every bad field at once, paths relative to ``args``."""

    def __init__(self, errors: Iterable[FieldError | str]) -> None:
        self.errors = [e if isinstance(e, FieldError) else FieldError("", e) for e in errors]
        super().__init__("; ".join(str(e) for e in self.errors))


class PluginLoadError(KubeschedError):
    """A plugin whose entry point cannot be imported or does not follow the plugin contract."""


class ManifestError(KubeschedError):
    """A cluster file that cannot be read: names the file, the object and the field."""
