"""Strategies and checks shared by the fuzz tests."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from kubesched import ConfigError, KubeschedError, ManifestError, ObjectError

#: What bad input may raise: a user-facing error with a message. Anything else is a crash.
CLEAR_ERRORS = (KubeschedError, ConfigError, ManifestError, ObjectError)
#: Wall-clock bound of one example (a hang shows up as a failure, not a stuck run).
EXAMPLE_SECONDS = 10


class Hang(Exception):
    """An example ran past EXAMPLE_SECONDS."""


@contextlib.contextmanager
def time_limit(seconds: float = EXAMPLE_SECONDS) -> Iterator[None]:
    def expired(_signum: int, _frame: Any) -> None:
        raise Hang(f"no answer within {seconds}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_clear_error(exc: BaseException) -> None:
    """A user-facing error must say something (one line or more, no traceback needed).

    A crash the core is known to have (reported with its fix in docs/reliability.md) makes the
    test xfail instead, so the fuzzers keep running; once the core is fixed they simply pass.
    """
    assert isinstance(exc, CLEAR_ERRORS), f"{type(exc).__name__}: {exc}"
    assert str(exc).strip(), f"{type(exc).__name__} without a message"


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["", "*", "1e3", "0.5Gi", "100m", "1e999999", "-1", "NaN", "9Ei", "10s"]),
)
#: Any JSON/YAML-like value.
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.text(max_size=12), st.integers()), inner, max_size=5),
    ),
    max_leaves=25,
)


def paths(document: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indexes) into ``document``."""
    out = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            out.extend(paths(value, (*prefix, key)))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            out.extend(paths(value, (*prefix, index)))
    return out


@st.composite
def mutated(draw: st.DrawFn, document: Any, max_mutations: int = 4) -> Any:
    """``document`` with a few values replaced, keys removed or unknown keys added."""
    import copy

    doc = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_mutations))):
        targets = paths(doc)
        path = draw(st.sampled_from(targets))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if not path:
            if action == "replace":
                doc = draw(values)
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        if action == "replace":
            parent[key] = draw(values)
        elif action == "delete":
            del parent[key]
        elif isinstance(parent[key], dict):
            parent[key][draw(st.text(min_size=1, max_size=12))] = draw(values)
        elif isinstance(parent[key], list):
            parent[key].append(draw(values))
    return doc
