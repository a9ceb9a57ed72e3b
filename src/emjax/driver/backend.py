"""Starting JAX's backend early, beside the host's own set-up.

On an H100 machine ``jax.devices()`` takes about 1 s the first time (the CUDA client and
its devices), and it happens inside the first solver's lowering; ``emjax run`` meanwhile
reads and checks the scenario on the host (2.2 s for car-rcs's CAD model). Starting the
backend in a thread at the command's start overlaps the two. A multi-process run must
join its job (``jax.distributed``) before the backend starts, so it does not do this.
"""

from __future__ import annotations

import threading

_started: list[threading.Thread] = []


def start_in_background() -> None:
    """Start JAX's backend in a daemon thread (once); calls into JAX wait for it."""
    if _started:
        return

    def start() -> None:
        try:
            import jax

            jax.devices()
        except Exception:  # the run's own first call into JAX reports it
            pass

    t = threading.Thread(target=start, name="emjax-backend", daemon=True)
    _started.append(t)
    t.start()
