"""Reverse mode through FDTD3D (emjax.fdtd.gradient): gradients against central finite
differences on a tiny lossy problem, the gradient run's forward pass against
``sim.run()``, clear errors for bad design regions, and a sharded gradient equal to the
one-device gradient.

Set-up: :func:`emjax.scenarios.design.fdtd_design` at 18^3 cells, a 3-cell CPML, 80
steps, float64; a lossy design region (sigma 0..0.2 S/m) in front of an x dipole.
Sharding runs this file as a script on two forced CPU devices (XLA's device count is
fixed when JAX starts), printing JSON the test reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from emjax.errors import SetupError
from emjax.parallel import forced_cpu_environment
from emjax.scenarios.design import FDTD_REGION, fdtd_design

HERE = Path(__file__)


def _gradient(steps=80, checkpoints=None, devices=None, source="dipole"):
    from emjax.fdtd import gradient as fg

    sim = fdtd_design(cells=18, pml=3, steps=steps, source=source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a coarse grid, on purpose
        g = fg.FDTDGradient(sim, checkpoints=checkpoints, devices=devices)
    g.region(*FDTD_REGION, (3, 3, 2), eps_r=(1.0, 3.0), sigma=(0.0, 0.2))
    return sim, g


def _point(g, out):
    from emjax.fdtd import gradient as fg

    return 1e20 * fg.point_intensity(g, out, "dft", (1, 1, 0))


def _rho(shape):
    rng = np.random.default_rng(0)
    return 0.5 + 0.3 * rng.uniform(-1, 1, shape), rng.normal(size=shape)


def test_gradient_matches_finite_differences_lossy():
    """80 steps; a lossy region, where running the fields backwards in time would
    diverge. The default schedule keeps the patch residuals of every step (no
    recomputation); central differences at h = 1e-5 match its directional derivative to
    1e-6 (measured 3e-9), and 3 checkpointed chunks of 26 and a tail of 2 (each chunk
    recomputed) give the same gradient to 1e-12."""
    import jax.numpy as jnp

    _, g = _gradient()
    assert (g.checkpoints, g.length, g.tail) == (0, 80, 0)
    rho, d = _rho(g.design.shape)
    value, grad = g.value_and_grad(_point)(jnp.asarray(rho))
    f = g.forward(_point)
    h = 1e-5
    fd = (float(f(jnp.asarray(rho + h * d))) - float(f(jnp.asarray(rho - h * d)))) / (2 * h)
    dd = float(np.sum(np.asarray(grad) * d))
    assert abs(fd - dd) <= 1e-6 * abs(dd), (fd, dd)
    assert abs(float(value) - float(f(jnp.asarray(rho)))) <= 1e-12 * abs(float(value))
    _, g3 = _gradient(checkpoints=3)
    assert (g3.checkpoints, g3.length, g3.tail) == (3, 26, 2)
    grad3 = np.asarray(g3.value_and_grad(_point)(jnp.asarray(rho))[1])
    assert np.max(np.abs(grad3 - np.asarray(grad))) <= 1e-12 * np.max(np.abs(grad))


def test_schedule_within_memory_budget():
    """No recomputation while every step's patch residuals fit the budget beside the
    state's cotangent; past it, the K of checkpointed chunks that minimises K states +
    one chunk's residuals, K ~ sqrt(steps x residual / state)."""
    from emjax.fdtd.gradient import schedule

    mb = 2**20
    assert schedule(1000, 100 * mb, 50_000, 250 * mb, 2.0) == 0  # 100 + 48 <= 250 MiB
    k = schedule(1000, 100 * mb, 500_000, 250 * mb, 2.0)  # 100 + 477 MiB > 250 MiB
    assert k == round((1000 * 500_000 / (100 * mb)) ** 0.5) == 2
    stored = lambda k: k * 100 * mb + -(-1000 // k) * 500_000  # noqa: E731
    assert stored(k) <= min(stored(j) for j in range(1, 50))
    with pytest.raises(SetupError, match=r"memory_factor = 1.0: need > 1"):
        from emjax.fdtd import gradient as fg
        fg.FDTDGradient(fdtd_design(cells=18, pml=3, steps=4), memory_factor=1.0)


@pytest.mark.slow
def test_forward_equals_the_normal_run():
    """With the region set to the medium beneath it (vacuum), the gradient run's DFT and
    flux are the normal run's (same chunk function, CAS instead of CIS coefficients)."""
    import jax
    import jax.numpy as jnp

    from emjax.fdtd import gradient as fg

    sim, g = _gradient(steps=40, source="planewave")
    g.region(*FDTD_REGION, (3, 3, 2), eps_r=(1.0, 1.0), sigma=(0.0, 0.0))
    # jitted (g.run's arrays passed as an argument, as its docstring asks): one program
    # instead of an eager run's op-by-op compilations
    out = jax.jit(g.run)(jnp.zeros(g.design.shape), g.args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sim.run(progress=False)
    ref = res["dft"].data["Ex"]
    assert np.max(np.abs(np.asarray(out["state"].dft[0]["Ex"]) - ref)) <= 1e-12 * np.max(
        np.abs(ref))
    np.testing.assert_allclose(float(fg.flux(g, out, "flux")[0]), res["flux"].data["flux"][0],
                               rtol=1e-12)


def test_bad_design_regions():
    """Outside the domain, inside the CPML, over the source, wrong parameter shape."""
    import jax.numpy as jnp

    _, g = _gradient(steps=4, checkpoints=2)
    with pytest.raises(SetupError, match=r"design region: cells .* along axis z leave the "
                       r"interior; allowed 3 <= lo < hi <= 15"):
        g.region((-0.02, -0.02, 0.0), (0.02, 0.02, 0.08), (2, 2, 2))  # into the CPML
    with pytest.raises(SetupError, match=r"axis x leave the interior"):
        g.region((-0.2, -0.02, 0.0), (0.02, 0.02, 0.02), (2, 2, 2))  # outside the domain
    with pytest.raises(SetupError, match=r"covers sources\[0\]"):
        g.region((-0.02, -0.02, -0.06), (0.02, 0.02, -0.04), (2, 2, 2))
    with pytest.raises(SetupError, match=r"lower .* must lie below upper"):
        g.region((0.02, -0.02, 0.0), (-0.02, 0.02, 0.02), (2, 2, 2))
    g.region(*FDTD_REGION, (3, 3, 2))
    with pytest.raises(SetupError, match=r"design parameters: shape \(3, 3\), the region .* "
                       r"needs \(3, 3, 2\)"):
        g.run(jnp.zeros((3, 3)))
    with pytest.raises(SetupError, match=r"checkpoints = 9: need 0 <= checkpoints <= steps"):
        _gradient(steps=4, checkpoints=9)


@pytest.mark.slow
def test_sharded_gradient_equals_one_device():
    """The gradient of a run sharded along x over 2 forced CPU devices equals the
    one-device gradient (float64, relative 1e-10)."""
    proc = subprocess.run([sys.executable, str(HERE), "sharded"],
                          env=forced_cpu_environment(2), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["devices"] == 2
    assert out["E_sharded"], out
    assert out["rel"] <= 1e-10, out


def _sharded() -> dict:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    rho, _ = _rho((3, 3, 2))
    grads = []
    for devices in (None, 2):
        _, g = _gradient(steps=12, devices=devices)
        sharded = len(g.args["state"].E[0].sharding.device_set) == 2
        grads.append(np.asarray(g.value_and_grad(_point)(jnp.asarray(rho))[1]))
    rel = float(np.max(np.abs(grads[1] - grads[0])) / np.max(np.abs(grads[0])))
    return {"devices": jax.device_count(), "E_sharded": sharded, "rel": rel}


if __name__ == "__main__":
    print(json.dumps({"sharded": _sharded}[sys.argv[1]]()))


def test_hand_transpose_equals_autodiff():
    """Gradient runs take transpose3d's written-out transpose of the E and H updates (the
    curl transposed by JAX from the materialised q = sign b ct, each CPML slab's term over
    its window); it equals autodiff's transpose of the same updates to rounding with
    ``combined`` CPML, TF/SF patches folded (the GPU's choice) and in place (the CPU's),
    the flux objective (DFT planes on the CPML's doorstep), a point intensity and an RCS
    (held to central differences too), with a dispersive (Debye) box in the scene.
    (``per_face``: the finite-difference test above, whose CPU run takes it.)"""
    import dataclasses

    import jax.numpy as jnp

    import emjax as em
    from emjax.fdtd import gradient as fg
    from emjax.model.dispersion import DebyePole, PoleMedium

    sim = fdtd_design(cells=18, pml=3, steps=24, source="planewave")
    # a Debye box past the design region: its poles' update is differentiated too
    water = PoleMedium(eps_inf=4.0, sigma=0.05, poles=[DebyePole(delta_eps=20.0, tau=8e-12)])
    sim = sim.model_copy(update={"structures": [*sim.structures, em.Structure(
        geometry=em.Box(center=(0, 0, 0.035), size=(0.04, 0.04, 0.01)), medium=water)]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = fg.FDTDGradient(sim, checkpoints=0, cpml_strategy="combined")
    g.region(*FDTD_REGION, (3, 3, 2), eps_r=(1.0, 3.0), sigma=(0.0, 0.2))
    s = g.solver.setup
    assert s.layout.transpose and s.layout.slabs and s.dispersive

    def objective(g_, out):
        return (_point(g_, out) + 1e20 * fg.flux(g_, out, "flux")[0]
                + 1e3 * fg.rcs(g_, out, "far", np.radians(150.0), 0.0))

    rho, d = (jnp.asarray(a) for a in _rho(g.design.shape))
    grads = []
    # written out with the patches folded and in place, then autodiff's
    for transpose, fold in ((True, True), (True, False), (False, True)):
        g.solver.setup = dataclasses.replace(s, layout=dataclasses.replace(
            s.layout, transpose=transpose, tfsf_fold=fold))
        value_and_grad = g.value_and_grad(objective)
        grads.append(np.asarray(value_and_grad(rho)[1]))
    assert np.max(np.abs(grads[0])) > 0
    for got in grads[:2]:
        np.testing.assert_allclose(got, grads[2], rtol=0, atol=1e-12 * np.max(np.abs(grads[2])))
    # and the objective's derivative (the RCS term's near-to-far transform in JAX
    # included) against central differences. The values come from the last compiled
    # program (autodiff's), whose value is the forward run's (the lossy test above holds
    # g.forward to it at 1e-12): one compilation fewer than a separate g.forward.
    f, h = (lambda r: value_and_grad(r)[0]), 1e-5
    fd = (float(f(rho + h * d)) - float(f(rho - h * d))) / (2 * h)
    dd = float(np.sum(grads[0] * np.asarray(d)))
    assert abs(fd - dd) <= 1e-6 * abs(dd), (fd, dd)
