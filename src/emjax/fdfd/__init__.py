"""3D scattered-field FDFD (seed 000)."""

from ..registry import register

register("FDFD3D", run="emjax.fdfd.solver:run", estimate="emjax.fdfd.setup:estimate")
