"""The kernel's schema: the rows `flexmbs.compiled` packs for csrc/index3_kernel.c, declared once.

Each fixed-width row the kernel reads (the system's header, a rigid body's inertia, a load, a
planar joint, a sensor, ...) is a `Record`: its fields by name, type and width.  The packer fills
a row through the field names (`Record.row`), and the C side reads it through the offsets that
setup.py generates from this module into csrc/kernel_schema.h (`c_header`: ``LOAD_R_ANCHOR``,
``LOAD_R_WIDTH``, the kind codes ``LOAD_SPRING_2D``, ...).  The kernel exports the signature it was
built with (``_flexmbs_kernel.SCHEMA``), which `flexmbs.compiled` compares with `signature` at
import: a kernel built from another declaration is not used (the numpy path runs and
`flexmbs.compiled.kernel_status` says to rebuild it).

`KINDS` is the registry of what users build (the body, constraint and load kinds): each has a
compiled evaluator (the records it is packed into) or a stated refusal, the reason
`flexmbs.compiled.Unsupported` gives (tests/test_kernel_schema.py checks that every exported kind
is in it).  `METHODS` does the same for the integration methods the kernel steps.

This module imports nothing but the standard library and `flexmbs.frozen` (which imports
nothing): setup.py loads the two by their paths to generate the header before the extension is
built, without importing flexmbs (or numpy).
docs/design.md, "The kernel's schema".
"""
from __future__ import annotations

from .frozen import FrozenFields

__all__ = ["Field", "Record", "RECORDS", "CODES", "KINDS", "METHODS", "SYSTEM_ARRAYS", "FLEX_ARRAYS", "arrays",
           "signature", "c_header"]


class Field(FrozenFields):
    """One named field of a `Record`: ``width`` numbers (a vector field), or one.  Frozen (`flexmbs.frozen`)."""

    def __init__(self, name: str, width: int = 1):
        self._set_fields(locals())


class Record(FrozenFields):
    """A fixed-width row of one of the kernel's arrays: ``prefix`` names it in C (``PREFIX_FIELD``
    offsets, ``PREFIX_WIDTH``), ``dtype`` is "i64" or "f64".  Frozen (`flexmbs.frozen`)."""

    def __init__(self, prefix: str, dtype: str, fields: tuple, doc: str = ""):
        self._set_fields(locals())

    @property
    def width(self) -> int:
        return sum(f.width for f in self.fields)

    def offsets(self) -> dict:
        """{field name: its first position in the row}."""
        out, at = {}, 0
        for f in self.fields:
            out[f.name] = at
            at += f.width
        return out

    def row(self, **values) -> list:
        """The row with each field's value given by name (all fields, no others); a vector field
        takes up to its width of numbers, the rest zero (a planar 2-vector in a 3-wide field).
        ValueError naming the record and the field otherwise."""
        names = [f.name for f in self.fields]
        missing = [n for n in names if n not in values]
        extra = [n for n in values if n not in names]
        if missing or extra:
            raise ValueError(f"kernel record {self.prefix}: fields {names}; missing {missing}, unknown {extra}")
        out = []
        for f in self.fields:
            v = values[f.name]
            items = [v] if f.width == 1 and not hasattr(v, "__len__") else list(_flat(v))
            if len(items) > f.width:
                raise ValueError(f"kernel record {self.prefix}: field {f.name!r} holds {f.width} numbers, got "
                                 f"{len(items)}")
            cast = int if self.dtype == "i64" else float
            out.extend(cast(x) for x in items)
            out.extend([cast(0)] * (f.width - len(items)))
        return out


def _flat(v):
    for x in v:
        if hasattr(x, "__len__"):
            yield from _flat(x)
        else:
            yield x


def _fields(*spec) -> tuple:
    return tuple(Field(*s) if isinstance(s, tuple) else Field(s) for s in spec)


HEADER = Record("HEADER", "i64", _fields(
    "n", "m", "n_rigid", "n_flex", "n_norm", "n_mark", "marker_width", "marker_elastic", "n_point", "n_dot1",
    "n_dot2", "n_dist", "n_angle", "n_load", "n_vector", "n_planar", "n_planar_revolute", "n_planar_prismatic",
    "n_coordinate_driver", "dim", "n_point_mass", "n_force", "n_screw", "formulation", "n_natural", "n_natural_load",
    "n_corot2d", "n_corot3d"),
                "the sizes of the packed system and the formulation its bodies' terms follow (FORMULATION codes); "
                "n_corot2d: CorotationalBeam2D bodies (COROT2D_I rows); n_corot3d: CorotationalBeam3D bodies "
                "(COROT3D_I rows)")
RIGID = Record("RIGID", "f64", _fields("mass", ("inertia", 9), ("centroid", 3)),
               "a RigidBodyEP: mass, inertia about the reference point, centroid (body coordinates)")
LOAD_I = Record("LOAD_I", "i64", _fields("kind", "offset", "local", "vector"),
                "a load: kind (LOAD codes), first coordinate of its body, body-fixed, index of its vector of t")
LOAD_R = Record("LOAD_R", "f64", _fields(("point", 3), ("anchor", 3), "stiffness", "rest_length", "damping"),
                "a load: body point s, the spring's anchor, stiffness, rest length, damping")
PLANAR_BODY = Record("PLANAR_BODY", "f64", _fields("mass", "inertia"), "a RigidBody2D: m, I_G")
PLANAR_JOINT = Record("PLANAR_JOINT", "i64", _fields("row", "offset_i", "offset_j"),
                      "a planar revolute or prismatic joint: first row, first coordinates (-1: the ground)")
PLANAR_REVOLUTE = Record("PLANAR_REVOLUTE", "f64", _fields(("s_i", 2), ("s_j", 2)), "its points in body coordinates")
PLANAR_PRISMATIC = Record("PLANAR_PRISMATIC", "f64", _fields(("s_i", 2), ("s_j", 2), ("a_i", 2), ("a_j", 2),
                                                             ("n_i", 2)), "its points, axes and normal")
COORDINATE_DRIVER = Record("COORDINATE_DRIVER", "i64", _fields("row", "coordinate"), "C = q_k - f(t)")
FLEX_I = Record("FLEX_I", "i64", _fields("offset", "n_elastic", "n_elements", "element_dofs", "damped", "axial",
                                         "n_kg", "n_mean_axis", "mean_axis_row", "modal_stress", "n_points",
                                         "n_loads", "n_nodal"),
                "a FlexibleBody's sizes and options; n_points: its mass points (Gibbs-Appell, 0 otherwise); n_loads: "
                "its Model's loads (time factors f_i, columns of Q), n_nodal: their (load, node) entries (NODAL rows)")
FLEX_R = Record("FLEX_R", "f64", _fields("mass", ("s", 3), ("J", 9), "EA"), "a FlexibleBody's invariants m, s, J; EA")
SENSOR_I = Record("SENSOR_I", "i64", _fields("kind", "offset_i", "offset_j", "out", "side_i", "side_j"),
                  "a controller's sensor: kind (SENSOR codes), first coordinates (-1: the ground), output index, "
                  "each body's kind (SIDE codes: ground, rigid, natural)")
SENSOR_R = Record("SENSOR_R", "f64", _fields(("u", 3), ("w", 3), ("x", 3)),
                  "its body-fixed vectors: angle x_i, y_i (body i), x_j (body j); rate z_i; point s")

NATURAL_I = Record("NATURAL_I", "i64", _fields("offset", "rigidity_row"),
                   "a RigidBodyNatural: its first coordinate (q = (R, a, b, c), 12), the first of the six rows of its "
                   "NaturalRigidity")
NATURAL_BODY = Record("NATURAL_BODY", "f64", _fields("mass", ("centroid", 3), ("second_moments", 9)),
                      "a RigidBodyNatural: m, centroid u_C, second moments Y_O = int s s^T dm about its reference "
                      "point (M = Sigma (x) I_3, Sigma = [[m, m u_C^T], [m u_C, Y_O]])")
POINT_MASS = Record("POINT_MASS", "f64", _fields("mass"), "a PointMass: m (its q is its position, dim of HEADER)")
FORCE_I = Record("FORCE_I", "i64", _fields("kind", "law", "side_i", "offset_i", "side_j", "offset_j", "vector"),
                 "a force element between two sides: its measure (FORCE codes), its law (LAW codes), each side's kind "
                 "(SIDE codes) and first coordinate (-1: the ground), index of its actuator's vector of t (-1: none)")
FORCE_R = Record("FORCE_R", "f64", _fields(("s_i", 3), ("s_j", 3), ("u_i", 3), ("w_i", 3), ("u_j", 3), ("a", 9),
                                           ("b", 9), ("stiffness", 6), ("damping", 6), "rest", "lower", "upper",
                                           "restitution", "exponent", "transition", "friction", "creep"),
                 "its points s_i, s_j (SpringDamper, Bushing, a prismatic joint's), directions u_i, w_i, u_j "
                 "(RotationalSpringDamper, a revolute joint's angle; u_i: a prismatic joint's axis), frame axes a "
                 "(body i), b (body j) (Bushing, 3 each), stiffnesses and dampings (one per measure), rest length, "
                 "angle or start of the sliding; a JointLimit's stops (+-inf: none), restitution, exponent and "
                 "transition speed; a JointFriction's friction and creep speed")

ADAPTIVE = Record("ADAPTIVE", "f64", _fields("rtol", "safety", "min_factor", "max_factor", "max_step", "t_end",
                                             "c_q", "c_v", "every_step", "t_cover"),
                  "the step-size control of index3-alpha-adaptive (StepControl's constants, max_step, t_end, the "
                  "local-error coefficients c_q, c_v; every_step 1: a row at every step point; t_cover: the first "
                  "output time not handed over, no trial step reaches it)")

RADAU = Record("RADAU", "f64", _fields("rtol", "newton_tol", "max_iter", "eps_q", "eps_v", "atol_lam", "fd_step",
                                       "gamma", "alpha", "beta", ("c", 3), ("ainv", 9), ("t", 9), ("ti", 9), ("d", 3),
                                       "safety", "max_growth", "max_shrink", "keep_jacobian", "keep_lu",
                                       "non_finite_retries", "max_step", "t_end", "divergence_limit", "crawl_step",
                                       "crawl_steps"),
               "radau-dae's steps (csrc ``radau_steps``): rtol, Newton's tolerance and iterations, the regularised "
               "rows' eps_q, eps_v, the multipliers' atol, the difference step of J, the eigenvalues gamma, alpha "
               "+- i beta of A^-1, the nodes c, A^-1, T, T^-1 (row-major), the error weights d; the step control's "
               "safety factor, growth and shrink limits, the rate below which J is kept, the step ratio below "
               "which the LU is kept, the retries after non-finite stages, max_step, t_end, the divergence "
               "limit, and the crawl's bound: more than crawl_steps trial steps in a row shorter than crawl_step "
               "[s] stop the run (flexmbs/integrators/radau_dae.py computes them)")

TIME_LAW = Record("TIME_LAW", "f64", _fields("kind", ("offset", 3), ("rate", 3)),
                  "how a group of the laws' time row (f, f', f'' of a driver; a load's vector) is evaluated: kind "
                  "(TIME codes) python, asked of Python (CompiledSystem.law_row), or affine, by the kernel as "
                  "offset + rate t (a law that declares ``affine``: constant_speed, a constant load)")

NODAL_I = Record("NODAL_I", "i64", _fields("kind", "load"),
                 "an entry of a FlexibleBody's nodal loads (FlexibleBody.nodal_loads): force or moment (NODAL codes), "
                 "the index i of its load in model.loads (its factor f_i(t))")
NODAL_R = Record("NODAL_R", "f64", _fields(("value", 3), ("point", 3)),
                 "its body-frame value at f = 1 and, for a force, its node's position x_j (body coordinates)")

COROT2D_I = Record("COROT2D_I", "i64", _fields("offset", "n_nodes", "n_elements", "first_element", "first_mass",
                                               "first_node"),
                   "a CorotationalBeam2D: first coordinate, its nodes and elements; where its rows start in "
                   "corot2d_elements, corot2d_reals (first_element), corot2d_mass (first_mass: its (3 n_nodes)^2 "
                   "block) and corot2d_weights (first_node)")
COROT2D_E = Record("COROT2D_E", "i64", _fields("node_i", "node_j"), "an element of a CorotationalBeam2D: its nodes")
COROT2D_R = Record("COROT2D_R", "f64", _fields("length0", "angle0", "EA", "EI"),
                   "an element of a CorotationalBeam2D: reference chord length L_0 and angle beta_0, EA, EI")

COROT3D_I = Record("COROT3D_I", "i64", _fields("offset", "n_nodes", "n_elements", "first_element", "first_mass",
                                               "first_node"),
                   "a CorotationalBeam3D: first coordinate, its nodes and elements; where its rows start in "
                   "corot3d_elements, corot3d_reals (first_element), corot3d_mass (first_mass: its constant "
                   "translational (6 n_nodes)^2 block) and corot3d_nodes (first_node)")
COROT3D_E = Record("COROT3D_E", "i64", _fields("node_i", "node_j"), "an element of a CorotationalBeam3D: its nodes")
COROT3D_R = Record("COROT3D_R", "f64", _fields("length0", ("frame0", 9), "EA", "GJ", "EIy", "EIz"),
                   "an element of a CorotationalBeam3D: reference chord length L_0, reference frame E_0 (row-major, "
                   "columns e1_0, e2_0, e3_0), EA, GJ, EI_y, EI_z")
COROT3D_N = Record("COROT3D_N", "f64", _fields("weight", ("inertia", 9)),
                   "a node of a CorotationalBeam3D: its share w_k of the weight (Q_g = w_k g) and its lumped rotary "
                   "inertia J0_k in the reference axes (row-major)")

RECORDS = (HEADER, RIGID, LOAD_I, LOAD_R, PLANAR_BODY, PLANAR_JOINT, PLANAR_REVOLUTE, PLANAR_PRISMATIC,
           COORDINATE_DRIVER, FLEX_I, FLEX_R, SENSOR_I, SENSOR_R, NATURAL_I, NATURAL_BODY,
           POINT_MASS, FORCE_I, FORCE_R, ADAPTIVE, TIME_LAW, NODAL_I, NODAL_R, RADAU, COROT2D_I, COROT2D_E, COROT2D_R,
           COROT3D_I, COROT3D_E, COROT3D_R, COROT3D_N)

#: the arrays of a packed system, by name (the dict `flexmbs.compiled.CompiledSystem` hands the kernel:
#: ``_flexmbs_kernel.system(arrays)``; C reads each by the key ``ARRAY_<NAME>``); "flexible" is a list
#: with one dict of `FLEX_ARRAYS` per flexible body (``FLEX_ARRAY_<NAME>``)
SYSTEM_ARRAYS = (
    "header", "gravity", "rigid_offsets", "rigid", "norms",
    "marker_R", "marker_p", "marker_e", "marker_cols", "marker_point", "marker_y0", "marker_Phi",
    "point_rows", "dot1_rows", "dot2_rows", "dist_rows", "dist_lengths", "angle_rows", "screw_rows", "screw_pitches",
    "load_i", "load_r", "planar_offsets", "planar_bodies", "planar_revolute_rows", "planar_revolute",
    "planar_prismatic_rows", "planar_prismatic", "coordinate_drivers", "point_mass_offsets", "point_masses",
    "force_i", "force_r", "time_laws", "marker_kind", "natural_i", "natural_bodies", "natural_load_i",
    "natural_load_r", "flexible",
    "corot2d_i", "corot2d_elements", "corot2d_reals", "corot2d_mass", "corot2d_weights",
    "corot3d_i", "corot3d_elements", "corot3d_reals", "corot3d_mass", "corot3d_nodes")
FLEX_ARRAYS = ("ints", "reals", "m_O", "d", "S_indptr", "S_indices", "S_data", "M_dd", "K_dd", "C_dd", "axial_L",
               "axial_a", "axial_G", "axial_idx", "kg_keys", "kg_indptr", "kg_indices", "kg_data", "B", "modal_G",
               "point_m", "point_x", "point_Phi_indptr", "point_Phi_indices", "point_Phi_data",
               "load_Q", "load_vectors", "nodal_i", "nodal_r", "nodal_Phi")


def arrays(names: tuple, what: str, **values) -> dict:
    """The dict of arrays ``values`` by the declared ``names`` (all of them, no others); ValueError
    naming ``what`` and the missing or unknown names otherwise."""
    missing = [n for n in names if n not in values]
    extra = [n for n in values if n not in names]
    if missing or extra:
        raise ValueError(f"kernel arrays of {what}: missing {missing}, unknown {extra}")
    return values


#: the kind codes (C enums PREFIX_NAME = index, N_PREFIX_KINDS); LOAD: (spec kind, body dim) of
#: `flexmbs.bodies.loads`; SENSOR: `flexmbs.control.Sensor.kernel` kinds; FORCE: the force elements
#: between bodies by their measure (`flexmbs.forces`: SpringDamper, RotationalSpringDamper, Bushing; "slide":
#: a prismatic joint's sliding; "_2d" in the plane); LAW: linear (F = -k (g - g0) - c g' + f_a), a joint
#: stop or joint friction (`flexmbs.constraints.limits`);
#: SIDE: what a force element's side is (the ground, a RigidBodyEP, a RigidBody2D, a PointMass, a RigidBodyNatural);
#: FORMULATION: the inertia terms the kernel evaluates (HEADER formulation): Lagrange's M and Q_v, or
#: Gibbs-Appell's M_GA and g of dS/dq'' = M_GA q'' + g (docs/formulations_system.md); TIME: how a group of the
#: laws' time row is evaluated in index3-alpha-adaptive's trial steps (TIME_LAW rows; a float code there);
#: NODAL: an entry of a FlexibleBody's nodal loads, a force (on its node) or a moment (on the frame);
#: MARKER: how a marker of the joint batch is evaluated (``marker_kind``): "frame", r = R + A(p) (y0 + Phi q[e])
#: (RigidBodyEP, FlexibleBody, the ground), or "natural", r = R + x a + y b + z c (RigidBodyNatural, its 12
#: columns ``marker_cols``, y0 = (x, y, z); a vector without the R term), or "corot3d", a node k of a
#: CorotationalBeam3D (its three columns ``marker_cols``: a point r = x_k, or a vector R(psi_k) y0)
CODES = {
    "LOAD": ("torque", "point", "spring", "torque_2d", "point_2d", "spring_2d"),
    "SENSOR": ("angle", "rate", "position", "velocity", "omega"),
    "FORCE": ("spring", "rotational", "bushing", "slide", "spring_2d", "rotational_2d", "bushing_2d", "slide_2d"),
    "LAW": ("linear", "stop", "friction"),
    "SIDE": ("ground", "rigid", "planar", "point", "natural"),
    "FORMULATION": ("lagrange", "gibbs_appell"),
    "TIME": ("python", "affine"),
    "NODAL": ("force", "moment"),
    "MARKER": ("frame", "natural", "corot3d"),
}

#: the registry of kinds users build: "compiled: <how>" or "refused: <why>" (the reason
#: `flexmbs.compiled.Unsupported` gives)
KINDS = {
    # bodies (flexmbs.bodies)
    "RigidBodyEP": "compiled: RIGID row, its Euler-parameter norm, its loads (LOAD rows)",
    "RigidBody2D": "compiled: PLANAR_BODY row, its loads (LOAD rows)",
    "FlexibleBody": "compiled: FLEX_I, FLEX_R rows and its invariants' arrays (reference 'supports' or 'mean-axis'; "
                    "stiffening 'none', 'axial-strain', 'omega' or 'modal-stress'), and for Gibbs-Appell its mass "
                    "points' arrays (point_*); its Model's nodal loads (load_Q, load_vectors, NODAL rows, nodal_Phi; "
                    "their functions of t in the time rows)",
    "RigidBodyNatural": "compiled: NATURAL_I, NATURAL_BODY rows (M = Sigma (x) I_3, its weight; both "
                        "formulations), its markers in the joint batch (marker_kind natural), its loads (LOAD rows "
                        "in natural_load_*), the force elements on it (SIDE natural) and its controllers' sensors "
                        "(SENSOR_I side natural)",
    "PointMass": "compiled: POINT_MASS row (no loads of its own: a point mass with loads is refused)",
    "CorotationalBeam2D": "compiled: COROT2D_I, COROT2D_E, COROT2D_R rows, its constant mass matrix (corot2d_mass), "
                          "its weight (corot2d_weights) and the elements' corotational internal forces (csrc "
                          "corot2d_bodies), both formulations (M_GA = M, g = 0); its K_el is left to the finite-"
                          "difference tangent, as the numpy System gives none; joints on its nodes: PlanarRevolute, "
                          "a 2D Spherical (planar revolute rows), PlanarPrismatic on Node(0); SpringDamper and "
                          "RotationalSpringDamper on its nodes (planar FORCE sides); a beam with loads of its own is "
                          "refused (user callables), and so are Bushing, JointLimit and JointFriction on it",
    "CorotationalBeam3D": "compiled: COROT3D_I, COROT3D_E, COROT3D_R, COROT3D_N rows, its constant translational "
                          "mass (corot3d_mass); csrc corot3d_bodies evaluates M(q) = that mass plus T J0 T^T on each "
                          "node's rotation vector and Q = the weight + the rotary quadratic-velocity terms - the "
                          "elements' corotational internal forces, in Lagrange's form only (Gibbs-Appell refused: the "
                          "numpy GibbsAppellSystem has no terms for it to follow); K_t, C_t by the kernel's finite "
                          "differences; joints on its nodes through the joint batch (marker_kind corot3d: a node's "
                          "point x_k, node 0's section vectors R(psi_0) u; a joint with axes on the beam and its "
                          "point on another node than Node(0) refused); SpringDamper on its nodes (FORCE side point); "
                          "a beam with loads of its own refused (user callables), and so are RotationalSpringDamper, "
                          "Bushing, JointLimit and JointFriction on it",
    "TreeBody": "refused: tree (relative-coordinate) bodies are not evaluated by the compiled kernel",
    # constraints (flexmbs.constraints)
    "EulerParameterNorm": "compiled: the norm rows of RigidBodyEP",
    "MeanAxisConditions": "compiled: the B rows of a FlexibleBody",
    "Joint": "compiled: the joint batch (a joint of the primitives point, dot1, dot2, dist)",
    "Spherical": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays); in the plane, planar "
                 "revolute rows between RigidBody2D bodies, CorotationalBeam2D nodes and the ground",
    "Revolute": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays)",
    "Cylindrical": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays)",
    "Prismatic": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays)",
    "Translational": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays)",
    "Fixed": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays)",
    "PointOnLine": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays)",
    "Distance": "compiled: the joint batch (its marker, point, dot1, dot2 and dist arrays); in the plane refused: "
                "planar joint batches are compiled only for point rows (2D Spherical)",
    "AngleDriver": "compiled: the joint batch (its angle rows) and its law in the time rows",
    "CoordinateDriver": "compiled: COORDINATE_DRIVER row and its law in the time rows",
    "Universal": "compiled: the joint batch (its marker, point and dot1 arrays)",
    "Screw": "compiled: the joint batch (its marker, dot1, dot2 and screw arrays)",
    "GearPair": "refused: velocity-level ratio constraints (gears) are not evaluated by the compiled kernel",
    "RackPinion": "refused: velocity-level ratio constraints (rack and pinion) are not evaluated by the compiled "
                  "kernel",
    "PlanarRevolute": "compiled: PLANAR_JOINT, PLANAR_REVOLUTE rows (between RigidBody2D bodies, CorotationalBeam2D "
                      "nodes and the ground)",
    "PlanarPrismatic": "compiled: PLANAR_JOINT, PLANAR_PRISMATIC rows (between RigidBody2D bodies, a "
                       "CorotationalBeam2D's Node(0) and the ground; on another node of a beam refused: its point "
                       "moves with that node while its axis turns with node 0's section)",
    "NaturalRigidity": "compiled: the six rows of its body's NATURAL_I row (C, C_q, gamma = -2 d_i' . d_j', C_t = 0)",
    "PrescribedFrame": "refused: prescribed frames are not evaluated by the compiled kernel",
    "VelocityConstraint": "refused: non-holonomic (velocity) constraints are not evaluated by the compiled kernel",
    "KnifeEdge": "refused: non-holonomic (velocity) constraints are not evaluated by the compiled kernel",
    # loads (flexmbs.bodies.loads, by their spec)
    "torque_load": "compiled: LOAD row (torque, torque_2d) and its vector in the time rows",
    "point_load": "compiled: LOAD row (point, point_2d) and its vector in the time rows",
    "spring_to_ground": "compiled: LOAD row (spring, spring_2d)",
    "user load callable": "refused: a user's own load callable cannot be evaluated by the compiled kernel",
    # force elements between bodies (flexmbs.forces)
    "SpringDamper": "compiled: FORCE_I, FORCE_R rows (spring, spring_2d) between RigidBodyEP, RigidBody2D, PointMass, "
                    "RigidBodyNatural, CorotationalBeam2D and CorotationalBeam3D nodes and the ground, its actuator "
                    "in the time rows",
    "RotationalSpringDamper": "compiled: FORCE_I, FORCE_R rows (rotational, rotational_2d) between RigidBodyEP, "
                              "RigidBody2D, RigidBodyNatural, CorotationalBeam2D (node 0's section) and the ground, "
                              "its actuator in the time rows",
    "Bushing": "compiled: FORCE_I, FORCE_R rows (bushing, bushing_2d) between RigidBodyEP, RigidBody2D, PointMass, "
               "RigidBodyNatural and the ground",
    "ForceLaw": "refused: a user's force law is a Python callable, which the compiled kernel cannot evaluate",
    # stops and friction on a joint's coordinate (flexmbs.constraints.limits), force elements too
    "JointLimit": "compiled: FORCE_I, FORCE_R rows (rotational or slide, law stop) on a revolute or prismatic "
                  "joint between RigidBodyEP, RigidBody2D, PointMass, RigidBodyNatural and the ground",
    "JointFriction": "compiled: FORCE_I, FORCE_R rows (rotational or slide, law friction) on a revolute or "
                     "prismatic joint between RigidBodyEP, RigidBody2D, PointMass, RigidBodyNatural and the ground",
    # contact (flexmbs.contact), a force element on the numpy path
    "Contact": "refused: contact runs on the numpy path (its active pairs change from step to step; the broad "
               "and narrow phases are numpy array code, no kernel rows)",
}


#: the registry of the methods the kernel steps (`flexmbs.integrators.index3_alpha`): "compiled: <how>" or
#: "refused: <why>" (a method's ``kernel_reason`` when it runs on the numpy path); a method not listed runs there
METHODS = {
    "index3-alpha": "compiled: the correction loop of csrc ``py_steps`` (its Params), a fixed schedule of steps",
    "hht": "compiled: the same loop with HHT's coefficients",
    "newmark": "compiled: the same loop with Newmark's coefficients",
    "index3-alpha-adaptive": "compiled: the same loop and its step-size control (ADAPTIVE row, csrc ``Adaptive``); "
                             "C_t and gamma of every constraint in C (csrc ``constraint_rates``), the laws' time "
                             "row in C where each law declares ``affine`` (TIME_LAW rows: constant_speed, constant "
                             "loads), else asked of Python once per trial step (a user's own law of t)",
    "radau-dae": "compiled: its steps between outputs in one call of csrc ``radau_steps`` (RADAU row): the "
                 "trial interval, the starting values, J by differences, the real and complex LUs, the Newton "
                 "iteration of the stages, the error estimate, the step control and the accepted step, and the "
                 "outputs in the last step (the dense output projected onto the constraints; numpy's least "
                 "squares in Python where C_q lost rank); the laws' time rows in C where each law declares "
                 "``affine``, else asked of Python once per trial step (a user's own law of t)",
    "index3-alpha-adaptive, regularized": "refused: step-size control (index3-alpha-adaptive) with "
                                          "`regularization` > 0 (redundant constraints) runs on the numpy path: its "
                                          "projections are least-squares solves",
}


def signature() -> str:
    """The declaration as one line: each record's prefix, type and fields (name:width), and the
    kind codes; the kernel exports the one it was built with (``SCHEMA``)."""
    parts = [f"{r.prefix}/{r.dtype}:" + ",".join(f"{f.name}:{f.width}" for f in r.fields) for r in RECORDS]
    parts += [f"{k}=" + ",".join(v) for k, v in CODES.items()]
    parts += ["ARRAY=" + ",".join(SYSTEM_ARRAYS), "FLEX_ARRAY=" + ",".join(FLEX_ARRAYS)]
    return ";".join(parts)


def c_header() -> str:
    """csrc/kernel_schema.h: the offsets and widths of every record, the kind codes and the signature."""
    lines = ["/* Generated by setup.py from flexmbs/kernel_schema.py: do not edit (docs/design.md, \"The kernel's",
             "   schema\"). */", "#ifndef FLEXMBS_KERNEL_SCHEMA_H", "#define FLEXMBS_KERNEL_SCHEMA_H", ""]
    for r in RECORDS:
        lines.append(f"/* {r.prefix} ({r.dtype}): {r.doc} */")
        for name, at in r.offsets().items():
            lines.append(f"#define {r.prefix}_{name.upper()} {at}")
        lines.append(f"#define {r.prefix}_WIDTH {r.width}")
        lines.append("")
    for k, names in CODES.items():
        body = ", ".join(f"{k}_{n.upper()} = {i}" for i, n in enumerate(names))
        lines.append(f"enum {{ {body}, N_{k}_KINDS = {len(names)} }};")
    lines.append("")
    for prefix, names in (("ARRAY", SYSTEM_ARRAYS), ("FLEX_ARRAY", FLEX_ARRAYS)):
        lines += [f'#define {prefix}_{name.upper()} "{name}"' for name in names]
    lines += ["", f'#define KERNEL_SCHEMA "{signature()}"', "", "#endif", ""]
    return "\n".join(lines)
