"""Contact with friction between bodies: shapes, the broad and narrow phases, the law, and `Contact`,
a force element of ``System(forces=[...])`` (docs/multibody.md, "Contact"; docs/design.md, "Contact")."""
from .broad import brute_force_pairs, overlapping_pairs
from .element import Contact, ContactState
from .law import ContactLaw, damping_of_restitution, hunt_crossley_chi, restitution_of_damping
from .shapes import Box, Capsule, Hole, Plane, Points, Shape, Sphere, Surface

__all__ = ["Contact", "ContactState", "ContactLaw", "Shape", "Sphere", "Plane", "Box", "Capsule", "Hole", "Points",
           "Surface",
           "overlapping_pairs", "brute_force_pairs", "restitution_of_damping", "damping_of_restitution",
           "hunt_crossley_chi"]
