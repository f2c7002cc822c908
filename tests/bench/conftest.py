"""The benchmark tests import ``bench``, a folder of the checkout rather than an installed
package: the checkout's root goes on ``sys.path`` once, here, before any test module loads."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
