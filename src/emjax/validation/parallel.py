"""Sharded FDTD and FDFD against one device (issue #7).

``sharding``: a 3D FDTD run, float32, 32 x 24 x 20 cells of 1 mm, CPML on every face
(10 cells on the x faces, so that each x slab straddles a shard boundary; 6 on the
others), a z dipole at x = 0 (the middle shard boundary of four devices), a probe
on and around that boundary and on the others, and a DFT plane z = 0 across the
whole x interior. It runs 1,000 steps on one device and sharded along x over four,
and compares the final six field components (the whole grid, CPML included), the
probe series and the DFT accumulators. Metric: the largest of
max |sharded - single| / max |single| over all of them; limit 1e-6.

Dispersive media (:func:`dispersive_scenario`): the same run, float64, 300 steps, with a
water sphere (Debye) across the two middle shard boundaries and a Lorentz-plus-Drude
sphere inside one shard, both boxes replicated on every device
(:func:`emjax.parallel.splits_box`), their patches folded into the update. Metric
``dispersive_rel_error``, the same max over fields, probes and DFT; limit 1e-9:
float64 rounding (1e-12 measured over 1,000 steps), where a wrong halo or box placement
is of order one. (In float32 the two runs differ by rounding only as well, but XLA
fuses the partitioned box arithmetic differently, and the slowly relaxing fields end
at 2e-4 of their final maximum: no sharper test than float64.)

FDFD: a 16 x 12 x 12 scattering solve (:func:`fdfd_scenario`) by COCG to a relative
residual of 1e-6, once on one device and once with its operator, right-hand side and
Krylov vectors split along x (:func:`emjax.parallel.shard_fdfd`). Metric
``fdfd_rel_error``: max |sharded - single| / max |single| of the scattered E; limit
the solver tolerance (the dot products reduce in another order, so the two runs take
slightly different iterates, each within the tolerance of the solution).

Four devices: the case uses them where JAX has four (four GPUs, or a CPU started
with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``), two where JAX has two or
three accelerators; otherwise it re-runs itself in a subprocess on four forced CPU
devices, since the flag only acts before JAX starts.

The same module runs the workers of a multi-process check: ``python -m
emjax.validation.parallel worker ID COUNT PORT OUT`` joins a job of COUNT processes
through ``jax.distributed`` (coordinator 127.0.0.1:PORT) and process 0 writes the
results to OUT (``.npz``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from ..parallel import forced_cpu_environment
from ..records import Check

LIMIT = 1e-6
DISPERSIVE_LIMIT = 1e-9
DEVICES = 4


def scenario(steps: int = 1000, dtype: str = "float32"):
    """The scenario of the ``sharding`` case (see the module docstring)."""
    from ..model import (
        CPML,
        FDTD3D,
        Boundaries,
        DFTMonitor,
        Domain,
        GaussianPulse,
        Medium,
        PointDipole,
        Probe,
        Sphere,
        Structure,
    )

    d = 1e-3
    return FDTD3D(
        name="sharding",
        domain=Domain(shape=(32, 24, 20), spacing=d),
        structures=[Structure(geometry=Sphere(center=(2e-3, 0.0, 0.0), radius=3e-3),
                              medium=Medium(eps_r=3.0, sigma=0.01))],
        sources=[PointDipole(position=(0.0, 0.5e-3, 0.5e-3), polarization="z",
                             waveform=GaussianPulse(f0=30e9, fwidth=12e9))],
        monitors=[
            Probe(name="probe", positions=[(0.0, 0.0, 0.0), (-0.5e-3, 1e-3, 0.0),
                                           (0.5e-3, -1e-3, 1e-3), (-5.5e-3, 2e-3, 0.0),
                                           (5.5e-3, -2e-3, 0.0)]),
            DFTMonitor(name="dft", center=(0.0, 0.0, 0.0), size=(12e-3, 10e-3, 0.0),
                       frequencies=[25e9, 35e9]),
        ],
        boundary=Boundaries(x=CPML(thickness=10), y=CPML(thickness=6), z=CPML(thickness=6)),
        steps=steps, dtype=dtype,
        # a sharded run folds every CPML slab (FDTDSolver's sharding hook); the one-device
        # reference does the same arithmetic only when the scenario names it
        cpml_strategy="combined",
    )


def dispersive_scenario(steps: int = 300, dtype: str = "float64"):
    """:func:`scenario` with two dispersive spheres (see the module docstring)."""
    from ..model import Sphere, Structure
    from ..model.dispersion import DebyePole, DrudePole, LorentzPole, PoleMedium

    water = PoleMedium(eps_inf=4.9, poles=[DebyePole(delta_eps=74.0, tau=8.3e-12)],
                       name="water")
    resonant = PoleMedium(eps_inf=2.0, name="resonant", poles=[
        LorentzPole(delta_eps=1.0, omega_0=2 * np.pi * 30e9, delta=1e9),
        DrudePole(omega_p=1e11, gamma=1e10)])
    sim = scenario(steps, dtype)
    return sim.model_copy(update={"name": "sharding-dispersive", "structures": [
        *sim.structures,
        Structure(geometry=Sphere(center=(-2e-3, 0.0, 0.0), radius=4e-3), medium=water),
        Structure(geometry=Sphere(center=(6e-3, 2e-3, 0.0), radius=2e-3), medium=resonant)]})


def final_state(sim, devices=None, chunk: int = 100) -> dict[str, np.ndarray]:
    """Final fields, probe series and DFT accumulators of ``sim`` as host arrays."""
    import jax

    from ..driver.loop import chunk_plan
    from ..fdtd.solver import FDTDSolver
    from ..grid.yee import COMPONENTS
    from ..parallel import gather

    solver = FDTDSolver(sim, chunk=chunk, devices=devices)
    state = solver.init_state()
    step, probes = 0, []
    for length, active in chunk_plan(0, solver.setup.steps, chunk, None):
        state, ys, finite = solver.advance(state, step, length, active=active)
        step += active
        if not bool(finite):
            from ..errors import InstabilityError

            raise InstabilityError(f"{sim.name}: fields not finite by step {step}",
                                   step=step, field="?", index=())
        probes.append([np.asarray(jax.device_get(v))[:active] for v in ys["probe"][0]])
    out = {name: gather(F) for name, F in zip(COMPONENTS, (*state.E, *state.H),
                                              strict=True)}
    for j, comp in enumerate(sim.monitors[0].components):
        out[f"probe_{comp}"] = np.concatenate([p[j] for p in probes])
    for comp, acc in state.dft[0].items():
        out[f"dft_{comp}"] = gather(acc)
    return out


def fdfd_scenario(tol: float = 1e-6):
    """The FDFD part of the ``sharding`` case: 16 x 12 x 12 cells of 2 mm at 15 GHz, PML
    3, a lossy dielectric sphere on the middle shard boundary (x = 0), COCG to ``tol``."""
    from ..model import FDFD3D, Domain, Medium, Sphere, Structure
    from ..model.fdfd import PML, FDFDSolver

    return FDFD3D(
        name="sharding-fdfd", domain=Domain(shape=(16, 12, 12), spacing=2e-3), frequency=15e9,
        structures=[Structure(geometry=Sphere(center=(0.0, 0.0, 0.0), radius=3e-3),
                              medium=Medium(eps_r=3.0, sigma=0.05))],
        boundary=PML(thickness=3), rcs=False,
        solver=FDFDSolver(tol=tol, max_iter=2000, progress_every=50))


def fdfd_solutions(sim, devices: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Scattered E of ``sim`` on one device and split along x over ``devices``, with
    the iterations and relative residuals of both solves."""
    import warnings

    from ..fdfd import solver as fsolver
    from ..parallel import gather, shard_fdfd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small grid's resolution and PML warnings
        prep = fsolver.prepare(sim)
    e1, r1 = fsolver.solve(prep)
    e4, r4 = fsolver.solve(shard_fdfd(prep, devices))
    info = {"iterations": (r1.iterations, r4.iterations), "residual": (r1.residual, r4.residual),
            "sharding": str(e4.sharding.spec)}
    return np.asarray(e1), gather(e4), info


def compare(ref: dict, other: dict) -> dict[str, float]:
    """max |other - ref| / max |ref| per array."""
    out = {}
    for k, a in ref.items():
        b = other[k]
        scale = float(np.max(np.abs(a)))
        out[k] = float(np.max(np.abs(b - a))) / scale if scale > 0 else float(np.max(np.abs(b)))
    return out


def _in_process(steps: int, devices: int = DEVICES) -> list[Check]:
    import jax

    sim = scenario(steps)
    ref = final_state(sim)
    sharded = final_state(sim, devices=devices)
    errors = compare(ref, sharded)
    worst = max(errors, key=errors.get)
    fields = max(errors[c] for c in ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz"))
    dev = jax.devices()[0]
    extra = {"devices": f"{devices} x {dev.platform}", "steps": steps}
    fsim = fdfd_scenario()
    e1, e4, info = fdfd_solutions(fsim, devices)
    tol = fsim.solver.tol
    ferr = float(np.max(np.abs(e4 - e1)) / np.max(np.abs(e1)))
    fextra = {**extra, "iterations": list(info["iterations"]),
              "residuals": list(info["residual"]), "sharding": info["sharding"]}
    scale = float(np.max(np.abs(ref["Ez"])))
    case = "sharding"
    dsim = dispersive_scenario()
    derrors = compare(final_state(dsim), final_state(dsim, devices=devices))
    dworst = max(derrors, key=derrors.get)
    dextra = {**extra, "steps": dsim.num_steps, "dtype": dsim.dtype, "worst": dworst}
    return [
        Check(case, "dispersive_rel_error", derrors[dworst], DISPERSIVE_LIMIT, "",
              derrors[dworst] <= DISPERSIVE_LIMIT, extra=dextra),
        Check(case, "fields_rel_error", fields, LIMIT, "", fields <= LIMIT, extra=extra),
        Check(case, f"worst_rel_error ({worst})", errors[worst], LIMIT, "",
              errors[worst] <= LIMIT, extra=extra),
        Check(case, "field_scale", scale, None, "", scale > 0, extra=extra),
        # Both solves stop at relative residual <= tol; their reductions add in another
        # order, so the iterates differ by about tol, not by rounding.
        Check(case, "fdfd_rel_error", ferr, tol, "", ferr <= tol, extra=fextra),
        Check(case, "fdfd_converged", max(info["residual"]), tol, "",
              max(info["residual"]) <= tol, extra=fextra),
    ]


def run_subprocess(args: list[str], count: int = DEVICES, timeout: float = 900) -> str:
    """Run ``python -m emjax.validation.parallel ARGS`` on ``count`` forced CPU devices."""
    proc = subprocess.run([sys.executable, "-m", __name__, *args],
                          env=forced_cpu_environment(count), capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        from ..errors import EmjaxError

        raise EmjaxError(f"{__name__} {' '.join(args)} failed (exit {proc.returncode}):\n"
                         f"{proc.stderr[-3000:]}")
    return proc.stdout


def sharding(steps: int = 1000) -> list[Check]:
    """The ``sharding`` case: in this process if JAX has four devices (or two or three
    accelerators: then over two of them), else in a subprocess on four CPU devices."""
    import jax

    if jax.device_count() >= DEVICES:
        return _in_process(steps)
    if jax.device_count() >= 2 and jax.default_backend() != "cpu":
        return _in_process(steps, 2)
    out = run_subprocess(["case", str(steps)])
    return [Check.from_json(r) for r in json.loads(out.strip().splitlines()[-1])]


CASES = {"sharding": sharding}


# ------------------------------------------------------------ multi-process


def worker(process_id: int, num_processes: int, port: int, out: str, steps: int) -> None:
    """One process of a ``jax.distributed`` job running the ``sharding`` scenario sharded
    over the devices of all processes; process 0 writes the final state to ``out``."""
    from ..parallel import initialize

    initialize(f"127.0.0.1:{port}", num_processes, process_id, timeout_s=120)
    import jax

    state = final_state(scenario(steps), devices=jax.device_count())
    if jax.process_index() == 0:
        np.savez(out, **state, device_count=jax.device_count(),
                 process_count=jax.process_count())


def _main(argv: list[str]) -> None:
    if argv[0] == "case":
        print(json.dumps([r.to_json() for r in _in_process(int(argv[1]))]))
    elif argv[0] == "worker":
        worker(int(argv[1]), int(argv[2]), int(argv[3]), argv[4], int(argv[5]))
    else:
        raise SystemExit(f"usage: python -m {__name__} case STEPS | worker ID COUNT PORT OUT "
                         "STEPS")


if __name__ == "__main__":
    _main(sys.argv[1:])
