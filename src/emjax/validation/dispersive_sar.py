"""Validation of broadband SAR with dispersive tissue (issue 20).

- ``dispersive-sar``: the ``mri-coil`` phantom and 8-rung coil with dispersive tissue
  (``mri-coil-dispersive``: Debye fits of Gabriel's Cole-Cole models over 30-600 MHz,
  :mod:`emjax.scenarios.dispersive`) driven by one broadband pulse (f0 170 MHz,
  spectral sigma 65 MHz), DFTs at 64, 128 and 300 MHz on the head box (ports) and on
  the whole phantom inside the interior (``body``). Broadband SAR
  (:func:`emjax.scenarios.mri_maps.broadband_coil_sar`): at each frequency the loss on
  the Yee edges with each tissue's sigma_eff(f) of the fit, per watt accepted at that
  frequency (port power from the DFTs of the feed E and the source currents).

  References: three runs of the same grid, coil and drive whose tissues are constant
  media holding the fit's eps' and sigma_eff at 64, 128 and 300 MHz respectively
  (:func:`emjax.scenarios.dispersive.frozen_tissue`), each with one DFT at its
  frequency. At that frequency the constant medium has the same complex permittivity
  as the fit, so for complete transforms the two runs must give the same fields, up
  to the time discretization of the two updates (the ADE's and the conductive
  update's, each second order: (omega dt)² / 12 ~ 1e-4 at 300 MHz and 4 mm). The
  references share the broadband pulse, so the rung currents have the same phasors at
  each frequency in every run (a pulse centred elsewhere would change the drive's
  small counter-rotating part, see :data:`emjax.scenarios.mri.BROADBAND_PULSE`).

  Metrics, at each frequency: whole-phantom SAR (absorbed power in the tissue inside
  the ``body`` monitor over its mass, W/kg per W accepted) against the reference
  (limit 2%) and peak 10 g SAR (limit 3%). Sizes: the full 312 x 328 x 325 grid at 4
  mm on a GPU; on a CPU the same phantom and coil at 16 mm cells (78 x 82 x 81, about
  two minutes; the test runs 24 mm in about 40 s). Measured on the CPU (float32), at
  64 / 128 / 300 MHz: at 16 mm (1459 steps) whole-phantom 0.011 / 0.002 / 0.004% and
  peak 10 g 0.010 / 0.002 / 0.008%; at 24 mm whole-phantom 0.04 / 0.007 / 0.011% and
  peak 10 g 0.03 / 0.005 / 0.005%.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from ..records import Check, on_gpu


def grid_for(spacing: float) -> tuple[int, int, int]:
    """The seed's 312 x 328 x 325 grid of 4 mm cells scaled to ``spacing`` m (as
    :func:`emjax.scenarios.mri.power_balance` does)."""
    return tuple(max(24, round(n * 4e-3 / spacing)) for n in (312, 328, 325))


def dispersive_sar_runs(spacing: float, dtype: str = "float32") -> dict:
    """Run the dispersive phantom once and the constant-media references at each of its
    frequencies; return their :class:`~emjax.analysis.sar_broadband.BroadbandSar`
    results ("broadband", "references": one per frequency), the "shape", "steps", the
    scenario "frequencies" and the dispersive run itself ("run": its Results and
    scenario)."""
    from ..scenarios.dispersive import frozen_tissue
    from ..scenarios.mri import BROADBAND_FREQUENCIES, mri_coil_dispersive
    from ..scenarios.mri_maps import broadband_coil_sar

    shape = grid_for(spacing)
    sim = mri_coil_dispersive(shape=shape, spacing=spacing)
    sim = sim.model_copy(update={"dtype": dtype})
    res = sim.run(progress=False)
    out = {"broadband": broadband_coil_sar(res, sim), "references": [],
           "shape": shape, "steps": sim.num_steps, "frequencies": BROADBAND_FREQUENCIES,
           "run": (res, sim)}
    for f in BROADBAND_FREQUENCIES:
        ref = mri_coil_dispersive(shape=shape, spacing=spacing, frequencies=(f,),
                                  media=partial(frozen_tissue, frequency=f),
                                  name=f"mri-coil-constant-{f / 1e6:g}MHz")
        ref = ref.model_copy(update={"dtype": dtype})
        out["references"].append(broadband_coil_sar(ref.run(progress=False), ref))
    return out


def dispersive_sar(spacing: float | None = None, *, whole_limit: float = 0.02,
                   peak_limit: float = 0.03, dtype: str = "float32") -> list[Check]:
    """Records of ``dispersive-sar`` (see the module docstring); ``spacing`` in m
    (default 4 mm on a GPU, 16 mm on a CPU)."""
    if spacing is None:
        spacing = 4e-3 if on_gpu() else 16e-3
    return dispersive_sar_checks(dispersive_sar_runs(spacing, dtype), spacing, whole_limit,
                                 peak_limit, dtype)


def dispersive_sar_checks(runs: dict, spacing: float, whole_limit: float = 0.02,
                          peak_limit: float = 0.03, dtype: str = "float32") -> list[Check]:
    """The records of ``dispersive-sar`` from :func:`dispersive_sar_runs`' result."""
    case = "dispersive-sar"
    bb = runs["broadband"]
    tag = (f"{spacing * 1e3:.3g} mm cells, grid {'x'.join(map(str, runs['shape']))}, "
           f"{runs['steps']} steps, {dtype}")
    recs = []
    for i, (f, ref) in enumerate(zip(runs["frequencies"], runs["references"], strict=True)):
        for key, label, limit in (("whole_sar", "whole-phantom SAR", whole_limit),
                                  ("peak10g", "peak 10 g SAR", peak_limit)):
            got, want = float(getattr(bb, key)[i]), float(getattr(ref, key)[0])
            err = abs(got - want) / abs(want) if np.isfinite(want) and want else np.inf
            recs.append(Check(
                case, f"{label} at {f / 1e6:g} MHz, one pulsed dispersive run "
                f"{got:.5g} vs constant media of the fit at {f / 1e6:g} MHz {want:.5g} "
                f"W/kg per W accepted; {tag}", err, limit, "", err <= limit))
    return recs


CASES: dict[str, Callable[..., list[Check]]] = {"dispersive-sar": dispersive_sar}

__all__ = ["CASES", "dispersive_sar", "dispersive_sar_checks", "dispersive_sar_runs",
           "grid_for"]
