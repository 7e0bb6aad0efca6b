"""flexmbs: dynamics of flexible multibody systems by the finite element method.

The data flow: mesh -> elements -> assembly -> model -> formulation -> integrator ->
results -> plots.

Start-up: ``import flexmbs`` loads no submodule (not even numpy).  Each public name of
``__all__`` is imported from its submodule when it is first used (``flexmbs.Model``,
``from flexmbs import run``; PEP 562 module ``__getattr__``), and so is a submodule used as an
attribute (``flexmbs.mesh.sample``, ``flexmbs.mechanisms.FourBar``), so a script pays only for what
it uses: plotting (matplotlib), HDF5 files (h5py), mesh files (meshio), sparse direct solvers
and Dask load inside the functions that need them.  ``flexmbs --version`` and ``flexmbs cases``
import no numpy at all (tests/test_startup.py).
"""
from .lazy import lazy_package

__version__ = "0.1.0"

# public name -> the module it comes from (a name equal to its module's last part is the module)
_PUBLIC = {
    "Mesh": "flexmbs.mesh", "MeshError": "flexmbs.mesh", "generate": "flexmbs.mesh",
    "Element": "flexmbs.elements", "Material": "flexmbs.elements", "Bar2": "flexmbs.elements",
    "BeamEB2D": "flexmbs.elements", "BeamEB3D": "flexmbs.elements", "Tri3": "flexmbs.elements",
    "Quad4": "flexmbs.elements", "Tet4": "flexmbs.elements", "Tet10": "flexmbs.elements",
    "Hex8": "flexmbs.elements",
    "Model": "flexmbs.model", "NodalLoad": "flexmbs.model", "DistributedLoad": "flexmbs.model",
    "SurfaceLoad": "flexmbs.model", "rayleigh_coefficients": "flexmbs.model",
    "motion": "flexmbs.motion",
    "FORMULATIONS": "flexmbs.formulations", "Lagrange": "flexmbs.formulations",
    "GibbsAppell": "flexmbs.formulations", "Hamilton": "flexmbs.formulations",
    "INTEGRATORS": "flexmbs.integrators", "simulate": "flexmbs.integrators",
    "natural_frequencies": "flexmbs.modal", "static_solution": "flexmbs.modal",
    "Results": "flexmbs.results",
    "run": "flexmbs.analysis",
    "io": "flexmbs.io", "progress": "flexmbs.progress", "load_results": "flexmbs.io",
    "rotations": "flexmbs.rotations",
    "System": "flexmbs.system",
    "RigidBodyEP": "flexmbs.bodies", "RigidBodyNatural": "flexmbs.bodies", "FlexibleBody": "flexmbs.bodies",
    "Node": "flexmbs.bodies",
    "PrescribedFrame": "flexmbs.constraints",
    "reduction": "flexmbs.reduction", "ReducedModel": "flexmbs.reduction",
}

__all__ = [*_PUBLIC, "__version__"]


__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
