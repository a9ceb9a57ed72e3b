"""FDTD on a Yee grid: 3D (seed 001) and 2D TMz/TEz (seed 002)."""

from ..registry import register

register("FDTD3D", run="emjax.fdtd.solver:run", estimate="emjax.fdtd.memory:estimate")
register("FDTD2D", run="emjax.fdtd.solver2d:run", estimate="emjax.fdtd.setup2d:estimate")
