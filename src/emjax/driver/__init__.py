"""The run driver shared by every solver (issue #18).

Time-domain solvers (FDTD3D, FDTD2D, DGATD) hand :func:`emjax.driver.loop.run` an
initial state, a jitted chunk function and their monitor collectors; the driver owns
the chunk plan, ``lax.scan`` chunks with donated buffers, progress, SIGINT/SIGTERM,
checkpoints, the NaN guard and the environment record. FDFD's Krylov solve shares the
memory check, progress and results path. Solver packages import this package; it
imports none of them.
"""
