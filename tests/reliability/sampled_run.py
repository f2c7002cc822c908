"""``python -m sampled_run ARGS``: ``kubesched ARGS`` as its command line runs it, plus a thread
that appends one JSON line a second to ``$KUBESCHED_SAMPLES``: the process's resident memory
(``VmRSS``), how many attempts its scheduler keeps (``len(Scheduler.attempts)``) and how many
event series its recorder keeps.

For the soak test, which must see inside the process it measures. The sampler finds the running
service in the stack of the thread serving it and only reads, except when asked to change one
setting no flag reaches:

- ``KUBESCHED_SAMPLES_SERIES_FINISH_SECONDS=S``: the event recorder forgets a series S seconds
  after its last event instead of client-go's 6 minutes, so that a soak of a few minutes sees
  what grows for good rather than what is kept for 6 minutes by design;
- ``KUBESCHED_SAMPLES_RECORD_ATTEMPTS=1``: attempts are recorded again, as ``run`` once did, to
  show that the soak's bound catches that leak.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from kubesched.cli import main
from kubesched.service.run import Service


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _service() -> Service | None:
    for frame in sys._current_frames().values():
        while frame is not None:
            # serve(), not __init__: a service still being built has no backend yet.
            if frame.f_code.co_name == "serve" and isinstance(frame.f_locals.get("self"), Service):
                return frame.f_locals["self"]
            frame = frame.f_back
    return None


def _adjust(service: Service) -> None:
    if finish := os.environ.get("KUBESCHED_SAMPLES_SERIES_FINISH_SECONDS"):
        assert service.backend.recorder is not None
        service.backend.recorder.series_finish_seconds = float(finish)
    if os.environ.get("KUBESCHED_SAMPLES_RECORD_ATTEMPTS"):
        service.scheduler.record_attempts = True


def _sample(path: str, every: float) -> None:
    service: Service | None = None
    while True:
        if service is None and (service := _service()) is not None:
            _adjust(service)
        row: dict[str, Any] = {"t": time.monotonic(), "rss_kib": _rss_kib()}
        if service is not None:
            row["attempts"] = len(service.scheduler.attempts)
            recorder = service.backend.recorder
            row["event_series"] = None if recorder is None else len(recorder._series)
        with open(path, "a") as out:
            out.write(json.dumps(row) + "\n")
        time.sleep(every)


if __name__ == "__main__":
    threading.Thread(
        target=_sample, args=(os.environ["KUBESCHED_SAMPLES"], 1.0), name="sampler", daemon=True
    ).start()
    sys.exit(main(sys.argv[1:]))
