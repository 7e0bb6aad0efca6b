"""Assembly: DOF numbering, sparse global arrays and the inertia invariants."""
from .assembler import Assembler, element_dofs
from .invariants import BodyInvariants, assemble_invariants, tilde

__all__ = ["Assembler", "element_dofs", "BodyInvariants", "assemble_invariants", "tilde"]
