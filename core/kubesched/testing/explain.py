"""The explain recorder, where tests have imported it from; it lives in
:mod:`kubesched.engine.explain_recorder` (the ``explain`` command uses it, so it is no test
helper)."""

from kubesched.engine.explain_recorder import *  # noqa: F403
from kubesched.engine.explain_recorder import __all__  # noqa: F401
