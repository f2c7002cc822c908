"""The explain recorder, where tests have imported it from; it lives in
:mod:`kubesched.explain_recorder` (the ``explain`` command uses it, so it is no test helper)."""

from kubesched.explain_recorder import *  # noqa: F403
from kubesched.explain_recorder import __all__  # noqa: F401
