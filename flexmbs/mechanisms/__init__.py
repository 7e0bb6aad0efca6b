"""Rigid planar mechanisms and flexible links on their prescribed frames.

linkage.py      vector loops: Newton positions, velocities, accelerations, branches, errors
four_bar.py     FourBar, Grashof type;  slider_crank.py  SliderCrank (with offset)
frames.py       a link's chord frame as a flexmbs.motion.PlanarMotion for a crank-angle law
flexible.py     the flexible link as a Model (pinned-pinned / pinned-sliding, slider mass)
"""
from .linkage import (AssemblyError, ChordKinematics, Linkage, LinkageState, MechanismError,
                      SingularPositionError, Vec, constant_speed)
from .four_bar import FourBar, GrashofType, grashof
from .slider_crank import SliderCrank
from .frames import LinkFrame, link_motion
from .flexible import (ENDS, beam_on_frame, chord_deflection, displacement_along, flexible_link, global_shape,
                       guide_load)

__all__ = ["AssemblyError", "ChordKinematics", "Linkage", "LinkageState", "MechanismError",
           "SingularPositionError", "Vec", "constant_speed", "FourBar", "GrashofType", "grashof",
           "SliderCrank", "LinkFrame", "link_motion", "ENDS", "beam_on_frame", "chord_deflection",
           "displacement_along", "flexible_link", "global_shape", "guide_load"]
