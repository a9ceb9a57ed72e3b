"""16-bit field storage (``storage_dtype``, emjax.fdtd.fieldstore): the state holds
16-bit E and H, the physics stays within the storage's rounding, resume is bitwise,
and what cannot take it is refused."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest

from emjax.analysis.modes import match_modes, matrix_pencil
from emjax.constants import eta0
from emjax.errors import SetupError
from emjax.fdtd.fieldstore import field_storage
from emjax.fdtd.memory import estimate
from emjax.fdtd.solver import FDTDSolver
from emjax.model import CPML, FDTD3D, Domain, GaussianPulse, PointDipole, Probe
from emjax.validation.fdtd3d import cavity_modes, cavity_scenario, yee_cavity_frequency
from emjax.validation.storage16 import stored


def test_float16_scales_are_powers_of_2_and_round_trip_exactly():
    st = field_storage("float16", np.float32, 3.1e7)
    assert st.scale_E == 2.0 ** 25  # nearest power of 2 to 3.1e7 in log
    assert st.scale_H == 2.0 ** round(math.log2(2.0 ** 25 / eta0))
    x = (jnp.asarray(np.random.default_rng(0).normal(size=1000) * 1e7, jnp.float32),)
    once = st.store(x, "E")
    again = st.store(st.load(once, "E"), "E")  # a stored value loads and stores unchanged
    assert once[0].dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(once[0]), np.asarray(again[0]))
    rel = np.abs(np.asarray(st.load(once, "E")[0]) - np.asarray(x[0])) / np.abs(np.asarray(x[0]))
    assert rel.max() <= 2.0 ** -11  # round to nearest: half float16's 2^-10 spacing
    bf = field_storage("bfloat16", np.float32, 3.1e7)
    assert bf.scale_E == 1.0 and bf.scale_H == 1.0
    assert not field_storage(None, np.float32, 1.0).narrow


def _cavity(storage_dtype):
    size = (0.1, 0.08, 0.06)
    modes = cavity_modes(size, 3)
    f0 = 0.5 * (modes[0][1] + modes[-1][1])
    fwidth = 0.5 * (modes[-1][1] - modes[0][1]) + 0.2 * modes[0][1]
    sim = stored(cavity_scenario(size, 10e-3, 25e-9, f0, fwidth, dtype="float32"),
                 storage_dtype)
    res = sim.run(progress=False)
    p = res["probe"]
    sig = sum(p.data[c][:, 0].astype(np.float64) for c in ("Ex", "Ey", "Ez"))
    wave = sim.sources[0].waveform
    start = int(np.searchsorted(p.coords["t_E"], 2 * wave.offset * wave.tau))
    found = match_modes(matrix_pencil(sig[start::2], sim.dt * 2, order=40),
                        [f for _, f in modes])
    f_yee = [yee_cavity_frequency(m, size, sim.domain.spacing3, sim.dt) for m, _ in modes]
    return [m.frequency for m in found], f_yee, res


def test_cavity_resonances_stay_on_the_yee_frequencies():
    """The PEC box's three lowest modes: 16-bit storage keeps them at the grid's own
    (numerical-dispersion) frequencies within 1e-4, as float32 does."""
    f32, f_yee, _ = _cavity(None)
    for storage_dtype in ("bfloat16", "float16"):
        f16, _, res = _cavity(storage_dtype)
        assert res.metadata["storage_dtype"] == storage_dtype
        for a, b, y in zip(f16, f32, f_yee, strict=True):
            assert abs(a - y) / y < 1e-4
            assert abs(a - b) / b < 1e-4


def _dipole(storage_dtype=None, steps=120):
    return FDTD3D(name="d", domain=Domain(shape=(24, 24, 24), spacing=1e-3),
                  boundary=CPML(thickness=6), steps=steps, storage_dtype=storage_dtype,
                  sources=[PointDipole(position=(0, 0, 0), polarization="z",
                                       waveform=GaussianPulse(f0=15e9, fwidth=6e9))],
                  monitors=[Probe(name="p", positions=[(4e-3, 3e-3, 0)],
                                  components=["Ez", "Hy"])])


def test_dipole_in_cpml_follows_float32_within_the_rounding():
    """The probe's E and H (scales differ in float16) follow the float32 run; float16's
    three more bits make it the closer; the state holds 16-bit fields, half the bytes."""
    ref = _dipole().run(progress=False)["p"]
    errs = {}
    for sd, dt in (("bfloat16", jnp.bfloat16), ("float16", jnp.float16)):
        solver = FDTDSolver(_dipole(sd))
        assert all(F.dtype == dt for F in (*solver.init_state().E, *solver.init_state().H))
        got = solver.run(progress=False)["p"]
        errs[sd] = max(np.abs(got.data[c][:, 0] - ref.data[c][:, 0]).max()
                       / np.abs(ref.data[c][:, 0]).max() for c in ("Ez", "Hy"))
        assert estimate(_dipole(sd))["fields"] * 2 == estimate(_dipole())["fields"]
    assert errs["float16"] < 0.01 and errs["bfloat16"] < 0.1  # 0.0044, 0.047 measured
    assert errs["float16"] < errs["bfloat16"] / 3


@pytest.mark.parametrize("storage_dtype", ["bfloat16", "float16"])
def test_resume_is_bitwise(storage_dtype, resumed_equals_whole):
    """A checkpoint holds the 16-bit fields (bfloat16 as its bits: HDF5 has no
    bfloat16); checkpointed, resumed with another chunk length, equal to the whole run,
    DFT and energy monitors included."""
    doc = _dipole(storage_dtype, steps=70).model_dump()
    doc["monitors"] += [{"type": "EnergyMonitor", "name": "w", "interval": 3},
                        {"type": "DFTMonitor", "name": "dft", "center": (0, 0, 0),
                         "size": (6e-3, 6e-3, 0), "frequencies": [15e9],
                         "components": ["Ez", "Hx"]}]
    whole = resumed_equals_whole(FDTDSolver, FDTD3D.model_validate(doc))
    assert np.all(np.isfinite(whole["w"].data["energy"]))


def test_refused_where_it_cannot_apply():
    with pytest.raises(ValueError, match="storage_dtype = 'float16' needs dtype = 'float32'"):
        FDTD3D.model_validate({**_dipole().model_dump(), "storage_dtype": "float16",
                               "dtype": "float64"})
    with pytest.raises(ValueError, match="storage_dtype"):
        FDTD3D.model_validate({**_dipole().model_dump(), "storage_dtype": "int8"})
    from emjax.fdtd.gradient import FDTDGradient

    with pytest.raises(SetupError, match="storage_dtype = 'bfloat16'"):
        FDTDGradient(_dipole("bfloat16"))


@pytest.mark.parametrize("pol", ["TMz", "TEz"])
def test_2d_scatterer_follows_float32_within_the_rounding(pol, scatter_fdtd2d,
                                                          resumed_equals_whole):
    """FDTD2D with a lossy cylinder, a PEC block, split-field PML and CPML: the probe of
    16-bit storage within its rounding of float32's (float16 closer), the state 16
    bits, and a resume bitwise."""
    import emjax as em
    from emjax.fdtd.solver2d import FDTD2DSolver

    def sim(sd):
        return scatter_fdtd2d(pol, storage_dtype=sd, monitors=[em.Probe(
            name="p", positions=[(6e-3, -2e-3, 0.0)],
            components=["Ez"] if pol == "TMz" else ["Ex", "Hz"])])

    ref = sim(None).run(progress=False)["p"]
    errs = {}
    for sd, dt in (("bfloat16", jnp.bfloat16), ("float16", jnp.float16)):
        state = FDTD2DSolver(sim(sd)).init_state()
        assert all(F.dtype == dt for F in (*state.E, *state.H))
        got = resumed_equals_whole(FDTD2DSolver, sim(sd))["p"]
        errs[sd] = max(np.abs(got.data[c] - ref.data[c]).max() / np.abs(ref.data[c]).max()
                       for c in ref.data)
    assert errs["float16"] < 5e-3 and errs["bfloat16"] < 5e-2, errs  # TEz 0.0024, 0.021
    assert errs["float16"] < errs["bfloat16"] / 3, errs
