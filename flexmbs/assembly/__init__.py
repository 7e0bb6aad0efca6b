"""Assembly: DOF numbering, sparse global arrays and the inertia invariants."""
from .assembler import Assembler
from .invariants import BodyInvariants, assemble_invariants, tilde

__all__ = ["Assembler", "BodyInvariants", "assemble_invariants", "tilde"]
