"""Assembly: DOF numbering, sparse global arrays and the inertia invariants.

The names load with their module when first used (`flexmbs.lazy.lazy_package`): a rigid run needs
`assembler.dense_array` (`flexmbs.formulations.terms`) but not the invariants of a finite element
body, whose module creates a dataclass at import (docs/design.md "Hot-import classes are plain
classes")."""
from ..lazy import lazy_package

_PUBLIC = {"Assembler": "flexmbs.assembly.assembler", "element_dofs": "flexmbs.assembly.assembler",
           "BodyInvariants": "flexmbs.assembly.invariants", "assemble_invariants": "flexmbs.assembly.invariants",
           "tilde": "flexmbs.assembly.invariants"}
__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
