"""Time-domain Discrete Geometric Approach (seed 004) on tetrahedral meshes.

Modules: ``mesh`` (TetMesh, checks, quality, RCM and Morton renumbering, meshio I/O),
``structured`` (dependency-free box and cylinder meshers), ``generate`` (scenario mesh
specs, optional gmsh), ``complex`` (primal/dual incidence, fractioned unknowns),
``local`` (fractioned local matrices, node sums, SPD inverses; NumPy or the device),
``mass`` (node buckets, the operators, sparse reference), ``layout`` (the memory
orders of the XLA and Pallas kernels), ``edges`` (edge-sum tables), ``arrays`` (the
kernels' packed arrays, bytes per half-step), ``step`` (pure JAX kernels), ``pallas``
(Triton kernels), ``stability`` (power iteration, eigsh of the pencil), ``cache`` (the
set-up cache), ``setup`` (the lowering: scenario to DGASetup), ``solver`` (the scan
driver). Kernel modules import neither pydantic nor the model.
"""

from ..registry import register

register("DGATD", run="emjax.dga.solver:run", estimate="emjax.dga.solver:estimate",
         prepare="emjax.dga.solver:DGASolver")
