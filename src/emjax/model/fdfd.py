"""The FDFD3D scenario: one frequency or a sweep, scattered-field formulation (seed 000).

Time convention e^{+j omega t} (phasors X(f) = int x(t) e^{-j 2 pi f t} dt): a lossy
medium has eps = eps0 (eps_r - j sigma / (omega eps0)), an outgoing wave is e^{-j k r}.
The incident field is a :class:`~emjax.model.sources.PlaneWave` at ``frequency``; the
unknowns are the scattered E fields on the Yee edges. The domain ends in stretched-
coordinate PML (:class:`PML`) backed by PEC. ``frequencies`` (a sweep) solves every
frequency with one compiled Krylov loop (:func:`emjax.fdfd.solver.run`).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from ..constants import c0
from .base import EmModel, Name
from .geometry import Voxels
from .media import PEC, Medium
from .scenario import Domain, Structure, _GridScenario
from .sources import PlaneWave


class PML(EmModel):
    """Stretched-coordinate PML (Shin and Fan 2012) of ``thickness`` cells on every face.

    ``s(rho) = kappa(rho) + sigma(rho) / (alpha(rho) + j omega eps0)`` with the polynomial
    grading of :mod:`emjax.grid.pml` over the depth rho in [0, 1]; PEC behind it.
    """

    type: Literal["PML"] = "PML"
    thickness: int = Field(10, ge=1, description="Cells on each face (>= 1).")
    m: float = Field(3.0, ge=0, description="Polynomial grading order of sigma and kappa.")
    sigma_max: float | None = Field(
        None, ge=0,
        description="Peak conductivity in S/m; default 0.8 (m+1) / (eta0 d) (the FDTD optimum).",
    )
    kappa_max: float = Field(1.0, ge=1, description="Peak real stretch (>= 1).")
    alpha_max: float = Field(0.0, ge=0, description="Peak CFS alpha in S/m (>= 0).")
    m_alpha: float = Field(1.0, ge=0, description="Grading order of alpha.")


class FDFDSolver(EmModel):
    """Krylov solver settings.

    ``method``: "cocg" (complex-symmetric CG on the symmetrized system, one product per
    iteration), "cocg_sr" (the same iterates with one reduction phase per iteration,
    Chronopoulos and Gear) or "bicgstab" (the seed's method, two products per iteration).
    ``preconditioner``: "auto" (default: "fastdiag" wherever it applies, else "none"),
    "none", "jacobi" (symmetric diagonal scaling) or "fastdiag": the exact inverse of the
    empty box with the same PML and walls, by fast diagonalization
    (:mod:`emjax.fdfd.precond`; COCG with separable storage, complex128). On the seed's
    sphere at 96^3 it cuts COCG from 1,895 to 20 iterations to 1e-6 (0.025 s on an H100),
    on the synthetic head from 7,412 to 656 (BENCHMARKS.md).
    ``symmetrize``: left-scale the system by -omega^2 eps s_x s_y s_z (Shin and Fan 2012),
    which makes it complex symmetric; COCG requires it.
    """

    type: Literal["FDFDSolver"] = "FDFDSolver"
    method: Literal["cocg", "cocg_sr", "bicgstab"] = Field("cocg", description="Krylov method.")
    tol: float = Field(1e-3, gt=0, lt=1, description="Relative residual to reach.")
    max_iter: int = Field(20000, ge=1, description="Most iterations.")
    preconditioner: Literal["auto", "none", "jacobi", "fastdiag"] = Field(
        "auto", description="Preconditioner: auto (fastdiag where it applies, else none), "
        "none, jacobi, or fastdiag (the empty box's exact inverse; COCG, separable storage, "
        "complex128).")
    symmetrize: bool = Field(True, description="Solve the symmetrized system.")
    progress_every: int = Field(100, ge=1, description="Iterations between progress reports.")
    raise_on_failure: bool = Field(
        False, description="Raise ConvergenceError instead of returning the best iterate."
    )
    warm_start: bool = Field(
        True, description="In a frequency sweep, start each frequency's Krylov solve from "
        "the previous frequency's solution instead of zero (20 frequencies over 0.8-1.2 "
        "GHz on the seed's sphere: 341 instead of 380 iterations; BENCHMARKS.md).")

    @model_validator(mode="after")
    def _cocg_needs_symmetric(self):
        if self.method in ("cocg", "cocg_sr") and not self.symmetrize:
            raise ValueError(f"method = '{self.method}' needs symmetrize = true (COCG works on "
                             "complex-symmetric systems only); set symmetrize = true or use "
                             "method = 'bicgstab'")
        if self.preconditioner == "fastdiag" and self.method != "cocg":
            raise ValueError(f"preconditioner = 'fastdiag' runs with method = 'cocg', not "
                             f"{self.method!r}")
        return self


MAX_CELLS_PER_WAVELENGTH = 1e9
"""The most grid cells per free-space wavelength a frequency may put on the coarsest
spacing (1 kHz on 3 cm cells: 1e7): far past it the fields are quasi-static, the
curl-curl operator too ill-conditioned for a full-wave solve, and frequencies near zero
overflow its arithmetic (5e-324 Hz did)."""


class FDFD3D(_GridScenario):
    """A 3D Yee FDFD scattering problem at one frequency or a sweep (seed 000).

    Give ``frequency`` (one solve) or ``frequencies`` (a sweep: each solved in turn by
    the same compiled Krylov loop; ``frequency`` then defaults to the first of them and,
    if given, must equal it). :meth:`at` is the single-frequency scenario of one of them.

    The PML lies inside ``domain``; structures must stay out of it. Results hold the
    scattered E and H on the grid, and the bistatic RCS in the E- and H-planes when
    ``rcs`` is set.
    """

    type: Literal["FDFD3D"] = "FDFD3D"
    name: Name = Field("fdfd3d", description="Name used in outputs: 1-100 letters, digits, "
                       "_ - . (not starting with '.').")
    domain: Domain
    frequency: float = Field(..., description="Frequency in Hz (> 0); with "
                             "``frequencies``, their first (the default).")
    frequencies: list[float] | None = Field(
        None, description="A sweep: frequencies in Hz (each finite and > 0, at most 1000), "
        "solved in this order by one compiled loop; None: the single ``frequency``.")
    background: Medium = Field(default_factory=Medium, description="Must be vacuum for now.")
    structures: list[Structure] = Field(default_factory=list, description="Later ones win.")
    incident: PlaneWave = Field(default_factory=PlaneWave, description="Incident plane wave.")
    boundary: PML = Field(default_factory=PML, description="PML on every face.")
    storage: Literal["auto", "indices", "arrays", "separable"] = Field(
        "auto",
        description="Coefficients as uint16 indices into a table (CIS, seed 000), as arrays "
        "(CAS, seed 000), or 'separable': 1D curl factors and a uint8/16 permittivity index "
        "(needs mu_r = 1 everywhere; the fastest product, and the one fastdiag needs); "
        "'auto' (default): separable where every medium has mu_r = 1 and sigma_m = 0, "
        "else indices.",
    )
    solver: FDFDSolver = Field(default_factory=FDFDSolver, description="Krylov settings.")
    precision: Literal["complex128", "complex64"] = Field(
        "complex128", description="Field and coefficient precision."
    )
    subpixel: bool = Field(
        False, description="Smooth eps at E samples cut by a structure's surface instead "
        "of staircasing: the anisotropic tensor at the frequency, its off-diagonal part a "
        "symmetric sparse term of the operator (emjax.grid.subpixel); second order on "
        "curved surfaces (fdfd-sphere-rcs)."
    )
    rcs: bool = Field(True, description="Compute the E- and H-plane bistatic RCS.")
    rcs_angles: int = Field(181, ge=2, le=3601, description="Angles from 0 to 180 degrees in "
                            "each plane (at most 3601: 0.05 degree steps).")
    slice_axis: Literal["x", "y", "z"] = Field("z", description="Normal of the saved field slice.")
    strict: bool = Field(False, description="Turn resolution warnings into errors.")

    @model_validator(mode="before")
    @classmethod
    def _first_frequency(cls, data: Any) -> Any:
        """``frequency`` defaults to the first of ``frequencies``."""
        if isinstance(data, dict) and data.get("frequency") is None:
            fs = data.get("frequencies")
            if isinstance(fs, (list, tuple)) and not fs:
                raise ValueError("frequencies: 0 given; a sweep needs 1 to 1000 frequencies "
                                 "(or leave it out and give frequency)")
            if isinstance(fs, (list, tuple)):
                data = {**data, "frequency": fs[0]}
        return data

    @model_validator(mode="after")
    def _check(self):
        problems = []
        if not (self.frequency > 0 and math.isfinite(self.frequency)):
            problems.append(
                f"frequency = {self.frequency!r} Hz must be finite and > 0; give it in Hz"
            )
        problems += self._sweep_problems()
        if not problems:
            problems += self._grid_frequency_problems()
        bg = self.background
        if bg.eps_r != 1 or bg.mu_r != 1 or bg.sigma != 0 or bg.sigma_m != 0:
            problems.append(
                "background: the scattered-field formulation here needs a vacuum background "
                f"(eps_r = 1, mu_r = 1, lossless); got {self.background.model_dump()}"
            )
        cells = self.domain.cells
        t = self.boundary.thickness
        for a, ax in enumerate("xyz"):
            if 2 * t >= cells[a] - 2:
                problems.append(
                    f"boundary: PML thickness {t} cells on both {ax} faces leaves no interior "
                    f"in the {cells[a]} cells along {ax}; thin the PML or enlarge the domain"
                )
        for i, s in enumerate(self.structures):
            if isinstance(s.medium, PEC) or (
                isinstance(s.geometry, Voxels)
                and any(isinstance(m, PEC) for m in s.geometry.media.values())
            ):
                problems.append(
                    f"structures[{i}]: PEC is not supported by FDFD3D yet; use a Medium "
                    "with a large conductivity"
                )
            lo, hi = s.geometry.bounds()
            dlo, dhi, d = self.domain.lower, self.domain.upper, self.domain.spacing3
            for a, ax in enumerate("xyz"):
                ilo, ihi = dlo[a] + t * d[a], dhi[a] - t * d[a]
                if lo[a] < ilo - 1e-9 * d[a] or hi[a] > ihi + 1e-9 * d[a]:
                    problems.append(
                        f"structures[{i}] {s.geometry.type}: extends over {ax} in "
                        f"[{lo[a]:.6g}, {hi[a]:.6g}] m, into the PML (interior "
                        f"[{ilo:.6g}, {ihi:.6g}] m); move it inward, thin the PML or enlarge "
                        "the domain"
                    )
                    break
        if self.storage == "separable" and not self._nonmagnetic():
            problems.append(
                "storage = 'separable' needs mu_r = 1 and sigma_m = 0 in every medium; use "
                "storage = 'indices', 'arrays' or 'auto'")
        if self.solver.preconditioner == "fastdiag" and (
                self.resolved_storage != "separable" or self.precision != "complex128"):
            problems.append(
                f"solver.preconditioner = 'fastdiag' needs separable storage (mu_r = 1 and "
                f"sigma_m = 0 everywhere) and precision = 'complex128' (got storage = "
                f"{self.resolved_storage!r}, precision = {self.precision!r})")
        if problems:
            raise ValueError("\n".join(problems))  # one line each
        return self

    def _grid_frequency_problems(self) -> list[str]:
        """Frequencies the grid cannot represent: less than one cell per free-space
        wavelength, or more than :data:`MAX_CELLS_PER_WAVELENGTH`."""
        d = max(self.domain.spacing3)
        lo, hi = c0 / (MAX_CELLS_PER_WAVELENGTH * d), c0 / d
        names = [f"frequencies[{i}]" for i in range(len(self.sweep))] \
            if self.frequencies is not None else ["frequency"]
        return [f"{name} = {f!r} Hz puts {c0 / f / d:.3g} cells of {d:.4g} m in a free-space "
                f"wavelength; FDFD3D needs 1 to {MAX_CELLS_PER_WAVELENGTH:.0e} (on this "
                f"grid {lo:.3g} to {hi:.3g} Hz)"
                for name, f in zip(names, self.sweep, strict=True) if not lo <= f <= hi]

    def _sweep_problems(self) -> list[str]:
        """One line per bad entry of ``frequencies``."""
        fs = self.frequencies
        if fs is None:
            return []
        if not 1 <= len(fs) <= 1000:
            return [f"frequencies: {len(fs)} given; a sweep needs 1 to 1000 frequencies "
                    "(or leave it out and give frequency)"]
        out = [f"frequencies[{i}] = {f!r} Hz must be finite and > 0; give it in Hz"
               for i, f in enumerate(fs) if not (f > 0 and math.isfinite(f))]
        if not out and self.frequency != fs[0]:
            out.append(f"frequency = {self.frequency!r} Hz differs from frequencies[0] = "
                       f"{fs[0]!r} Hz; leave frequency out of a sweep (it defaults to the "
                       "first of frequencies)")
        return out

    # ------------------------------------------------------------ derived
    @property
    def sweep(self) -> list[float]:
        """The frequencies solved, in Hz: ``frequencies``, or ``[frequency]``."""
        return list(self.frequencies) if self.frequencies is not None else [self.frequency]

    def at(self, frequency: float) -> FDFD3D:
        """This scenario at one ``frequency`` (Hz) only (no sweep); re-validated."""
        data = {**self.model_dump(), "frequency": frequency, "frequencies": None}
        return type(self).model_validate(data)

    def _nonmagnetic(self) -> bool:
        return all(m.mu_r == 1 and m.sigma_m == 0 for m in self.media)

    @property
    def resolved_storage(self) -> str:
        """``storage`` with "auto" resolved: "separable" where every medium has mu_r = 1
        and sigma_m = 0 (the fastest product), else "indices"."""
        if self.storage != "auto":
            return self.storage
        return "separable" if self._nonmagnetic() else "indices"

    def resolved_preconditioner(self, storage: str | None = None,
                                precision: str | None = None) -> str:
        """``solver.preconditioner`` with "auto" resolved for ``storage`` and
        ``precision`` (default: this scenario's): "fastdiag" with separable storage,
        complex128 and COCG, else "none"."""
        pre = self.solver.preconditioner
        if pre != "auto":
            return pre
        fits = ((storage or self.resolved_storage) == "separable"
                and (precision or self.precision) == "complex128"
                and self.solver.method == "cocg")
        return "fastdiag" if fits else "none"

    @property
    def omega(self) -> float:
        """Angular frequency in rad/s."""
        return 2 * math.pi * self.frequency

    @property
    def wavelength(self) -> float:
        """Free-space wavelength in m."""
        return c0 / self.frequency

    def cells_per_wavelength(self) -> list[tuple[str, float]]:
        """(medium label, cells per wavelength in it) for every medium, coarsest spacing.

        The wavelength is c / (f |n|), |n| = |sqrt(eps mu)| with the losses (the scale
        1 / |k| of a lossy medium's field). A dispersive medium (PoleMedium) is read at
        the solve frequency, |n| = sqrt(|eps(f)|), and left out where Re eps(f) <= 0: a
        metal, whose field decays within a skin depth and has no wavelength to resolve
        (the rule of :func:`emjax.driver.advice.resolved_index`, which the time-domain
        advice applies over a band).
        """
        d = max(self.domain.spacing3)
        out = []
        for i, m in enumerate(self.media):
            eps_c = complex(m.eps_r, -m.sigma / (self.omega * 8.8541878128e-12))
            mu_c = complex(m.mu_r, -m.sigma_m / (self.omega * 1.25663706212e-6))
            n = abs((eps_c * mu_c) ** 0.5)
            label = m.name or ("background" if i == 0 else f"medium {i}")
            out.append((label, self.wavelength / n / d))
        for i, m in enumerate(self.pole_media):
            eps_c = complex(m.eps(self.frequency))
            if eps_c.real > 0:  # a metal (Re eps <= 0) is left out: see above
                out.append((m.name or f"dispersive medium {i}",
                            self.wavelength / math.sqrt(abs(eps_c)) / d))
        return out

    @property
    def monitors(self) -> tuple:
        """What ``emjax run`` draws and writes: the scattered-field entry of the Results."""
        from types import SimpleNamespace

        return (SimpleNamespace(type="DFTMonitor", name="scattered"),)

    def summary(self) -> str:
        """One line for logs: grid, frequency, storage and solver."""
        n = self.domain.cells
        fs = self.sweep
        at = (f"{fs[0] / 1e9:.4g} GHz" if len(fs) == 1 else
              f"{len(fs)} frequencies {min(fs) / 1e9:.4g}-{max(fs) / 1e9:.4g} GHz")
        return (f"FDFD {n[0]}x{n[1]}x{n[2]} cells at {at}, "
                f"{self.resolved_storage} storage, {self.solver.method} to tol "
                f"{self.solver.tol:g}, preconditioner {self.resolved_preconditioner()}, "
                f"{self.precision}")

    def estimate(self) -> dict[str, int]:
        """Device bytes the solve needs, by item and in ``total``; allocates nothing."""
        from .. import registry

        return registry.estimate(self)

    def run(self, **kwargs) -> Any:
        """Solve on whatever device JAX has (through :mod:`emjax.registry`); returns
        :class:`emjax.results.Results`."""
        from .. import registry

        return registry.run(self, **kwargs)


__all__ = ["FDFD3D", "PML", "FDFDSolver"]
