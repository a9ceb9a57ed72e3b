"""How an FDTD run keeps E and H between half-steps: in its arithmetic dtype, or in
16 bits (issue #23, item 2: ``storage_dtype`` = "bfloat16" or "float16").

With 16-bit storage the state holds E and H as 16-bit arrays; each half-step loads
what it reads to float32, updates in float32 and stores its result, so the scheme is
the float32 leapfrog whose fields are rounded to 16 bits after every half-step (the
field the next half-step reads is the stored one). XLA fuses the conversions and the
scale into the update kernels: the bulk step moves 36 B per cell instead of 72. CPML
psi, dispersive polarizations, TF/SF grids and the monitors' sums stay float32;
monitors read the stored fields.

bfloat16 has float32's exponent range and 8 significant bits. float16 has 11 but
holds magnitudes only from 6.1e-5 (below: fewer bits) to 65504, so fields are stored
divided by a scale: for E the power of 2 nearest the run's largest drive (the largest
increment a point source adds to its edge in one step, a plane wave's amplitude; V/m),
for H that over the vacuum impedance, again a power of 2 (A/m). Powers of 2 make
loading and storing exact inverses, so a stored field is loaded and stored again
without change. A run whose fields outgrow 65504 scales overflows; the NaN guard
stops it and names the storage (:mod:`emjax.driver.guard`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import eta0

NARROW = {"bfloat16": jnp.bfloat16, "float16": jnp.float16}
"""The 16-bit storage dtypes a scenario's ``storage_dtype`` names."""


@dataclass(frozen=True)
class FieldStorage:
    """dtype: the stored dtype of E and H (None: the run's arithmetic dtype, nothing
    converted); compute: the arithmetic dtype; scale_E (V/m), scale_H (A/m): the field
    one stored unit stands for (powers of 2)."""

    dtype: np.dtype | None = None
    compute: np.dtype | None = None
    scale_E: float = 1.0
    scale_H: float = 1.0

    @property
    def narrow(self) -> bool:
        """Whether fields are stored in fewer bits than they are updated in."""
        return self.dtype is not None

    def scale(self, kind: str) -> float:
        """The scale of ``kind`` ("E" or "H")."""
        return self.scale_E if kind == "E" else self.scale_H

    def load(self, F: tuple, kind: str) -> tuple:
        """Stored components of ``kind`` ("E" or "H") as arithmetic arrays (V/m, A/m)."""
        if not self.narrow:
            return F
        s = self.scale(kind)
        return tuple(f.astype(self.compute) if s == 1.0 else f.astype(self.compute) * s
                     for f in F)

    def store(self, F: tuple, kind: str) -> tuple:
        """Arithmetic components of ``kind`` in the stored dtype (rounded to nearest)."""
        if not self.narrow:
            return F
        s = self.scale(kind)
        return tuple((f if s == 1.0 else f * (1.0 / s)).astype(self.dtype) for f in F)

    def kept(self, F: tuple, kind: str) -> tuple:
        """:meth:`store` whose result is written to memory as it stands: left to itself,
        XLA kept the float32 H^(n+1/2) in memory and rounded it inside the E update (54
        instead of 36 B per cell per step, on an H100); a barrier stops that."""
        return jax.lax.optimization_barrier(self.store(F, kind)) if self.narrow else F

    @property
    def itemsize(self) -> int:
        """Bytes per stored field sample (0: the arithmetic dtype's)."""
        return np.dtype(self.dtype).itemsize if self.narrow else 0

    def largest(self, kind: str) -> float:
        """The largest magnitude of ``kind`` the storage holds (V/m, A/m)."""
        return float(np.finfo(self.dtype).max) * self.scale(kind)

    def overflow_note(self) -> str:
        """The NaN guard's note on float16's range ("" for other storage)."""
        if not self.narrow or self.dtype != np.float16:
            return ""
        return (f" (storage_dtype = 'float16' holds |E| up to {self.largest('E'):.3g} V/m and "
                f"|H| up to {self.largest('H'):.3g} A/m: past that it overflows; "
                "'bfloat16' has float32's range)")

    def describe(self) -> dict:
        """The run metadata's view: dtype name and scales (None when not narrow)."""
        return {"storage_dtype": np.dtype(self.dtype).name if self.narrow else None,
                "storage_scale_E": self.scale_E, "storage_scale_H": self.scale_H}


AS_COMPUTED = FieldStorage()
"""Fields stored in the run's arithmetic dtype: loading and storing are the identity."""


def _power_of_2(x: float) -> float:
    """The power of 2 nearest ``x`` in log, within 2^+-100; 1 for 0 or non-finite x."""
    if not (math.isfinite(x) and x > 0):
        return 1.0
    return 2.0 ** min(100, max(-100, round(math.log2(x))))


def field_storage(storage_dtype: str | None, compute, drive: float) -> FieldStorage:
    """The storage of a run: ``storage_dtype`` as the scenario names it (None, "bfloat16",
    "float16"), its arithmetic dtype ``compute`` and its largest drive ``drive`` (V/m:
    point-source increments per step, plane-wave amplitudes; sets float16's scale)."""
    if storage_dtype is None:
        return FieldStorage()
    dtype = np.dtype(NARROW[storage_dtype])
    if storage_dtype != "float16":
        return FieldStorage(dtype=dtype, compute=np.dtype(compute))
    scale_E = _power_of_2(drive)
    return FieldStorage(dtype=dtype, compute=np.dtype(compute), scale_E=scale_E,
                        scale_H=_power_of_2(scale_E / eta0))
