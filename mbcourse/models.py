"""The course's example systems, each built as an ordinary :class:`mbcourse.Model`.

Every builder takes its dimensions as keyword arguments (SI units) and stores them in
``model.parameters``; systems with closed loops come with a function that returns a
consistent state ``(q, qd)`` from their independent coordinates.

* :func:`double_pendulum` — two uniform rods in a vertical plane (Yudintsev Figs. 2.2–2.3).
* :func:`crank_slider` and :func:`crank_slider_state` — Figs. 2.9–2.10: crank, connecting
  rod and slider; four joints, eight planar constraint rows (2.48), one degree of freedom.
* :func:`solar_array` and :func:`solar_array_state` — Fig. 2.1: two panels and a two-link
  deployment linkage, five revolute joints, one closed loop, two degrees of freedom.
* :func:`triple_pendulum` — the MATLAB program's pendulum of section 3.5 (chapter 4).
* :func:`floating_spacecraft` — a free-floating bus deploying two panels (chapter 3).
* :func:`spatial_manipulator` — a three-joint arm with gravity, for driven coordinates.
* :func:`solar_array_leaves` and :func:`table_3_1` — Fig. 3.7 and Table 3.1: a two-leaf
  panel unfolding from a spacecraft in uniform motion (planar tree, section 3.2.1).
"""

from __future__ import annotations

import numpy as np

from .errors import InconsistentStateError, ModelError
from .model import Model

__all__ = ["triple_pendulum", "double_pendulum", "crank_slider", "crank_slider_state", "solar_array",
           "solar_array_state", "bar_inertia", "floating_spacecraft", "spatial_manipulator", "solar_array_leaves", "table_3_1",
           "telegin_polar", "telegin_cartesian", "telegin_cylindrical_3",
           "telegin_cylindrical_4", "telegin_angular", "telegin_universal"]

_Z = (0.0, 0.0, 1.0)


def bar_inertia(mass, length, width=None):
    """Central inertia of a bar along its x axis with a square cross-section.

    ``width`` defaults to ``length / 20``.

    Examples
    --------
    >>> float(bar_inertia(12.0, 1.0, 1e-9)[2, 2])
    1.0
    """
    w = length / 20 if width is None else width
    return np.diag([mass * 2 * w * w, mass * (length**2 + w * w), mass * (length**2 + w * w)]) / 12


def _positive(**values):
    for name, value in values.items():
        if not (np.isfinite(value) and value > 0):
            raise ModelError(f"{name} must be a positive number, got {value!r}")


def double_pendulum(m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=9.81):
    """Two uniform rods hinged end to end, swinging in the vertical xy plane.

    Joint ``"A"`` fixes rod 1 to the ground at the origin; joint ``"B"`` joins the rods.
    ``q = (alpha_1, alpha_2 - alpha_1)``: the absolute angle of rod 1 from the x axis and
    the relative angle of rod 2 (revolute joints measure relative rotation).

    Examples
    --------
    >>> m = double_pendulum()
    >>> m.nq, m.n, m.parameters["l1"]
    (2, 2, 1.0)
    """
    _positive(m1=m1, m2=m2, l1=l1, l2=l2)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(m1=m1, m2=m2, l1=l1, l2=l2, g=g)
    model.add_body("rod1", m1, bar_inertia(m1, l1))
    model.add_body("rod2", m2, bar_inertia(m2, l2))
    model.add_joint("A", "revolute", "ground", "rod1", child_point=(-l1 / 2, 0, 0), axis=_Z)
    model.add_joint("B", "revolute", "rod1", "rod2", parent_point=(l1 / 2, 0, 0),
                    child_point=(-l2 / 2, 0, 0), axis=_Z)
    return model


def crank_slider(r=0.1, l=0.3, m_crank=0.5, m_rod=1.0, m_slider=2.0, g=9.81):
    """Crank–slider mechanism of Figs. 2.9–2.10.

    The crank ``O–A`` (length ``r``) turns about the origin; the connecting rod ``A–B``
    (length ``l > r``) drives the slider, whose point ``B`` runs along the x axis. Joints:
    ``"O"`` (ground–crank), ``"A"`` (crank–rod), ``"B"`` (rod–slider), all revolute about
    z, and ``"guide"`` (ground–slider, prismatic along x). The last joint closes the loop:
    3 bodies x 3 planar coordinates - 8 rows (2.48) = 1 degree of freedom.

    ``q = (crank angle, rod angle relative to the crank, slider angle relative to the rod,
    slider position)``; use :func:`crank_slider_state` for consistent values.

    Examples
    --------
    >>> m = crank_slider()
    >>> m.graph.is_tree, m.nv
    (False, 4)
    """
    _positive(r=r, l=l, m_crank=m_crank, m_rod=m_rod, m_slider=m_slider)
    if l <= r:
        raise ModelError(f"the connecting rod must be longer than the crank (l={l} <= r={r})")
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(r=r, l=l, m_crank=m_crank, m_rod=m_rod, m_slider=m_slider, g=g)
    model.add_body("crank", m_crank, bar_inertia(m_crank, r))
    model.add_body("rod", m_rod, bar_inertia(m_rod, l))
    model.add_body("slider", m_slider, np.diag([1.0, 1.0, 1.0]) * m_slider * (r / 2) ** 2 / 6)
    model.add_joint("O", "revolute", "ground", "crank", child_point=(-r / 2, 0, 0), axis=_Z)
    model.add_joint("A", "revolute", "crank", "rod", parent_point=(r / 2, 0, 0),
                    child_point=(-l / 2, 0, 0), axis=_Z)
    model.add_joint("B", "revolute", "rod", "slider", parent_point=(l / 2, 0, 0), axis=_Z)
    model.add_joint("guide", "prismatic", "ground", "slider", axis=(1.0, 0.0, 0.0))
    return model


def crank_slider_state(model, theta, omega=0.0):
    """Consistent ``(q, qd)`` of :func:`crank_slider` for a crank angle and rate.

    The rod angle ``beta`` solves ``r sin(theta) + l sin(beta) = 0`` (point B on the x
    axis), on the branch with B to the right of the crank.

    Examples
    --------
    >>> m = crank_slider(r=0.1, l=0.3)
    >>> q, qd = crank_slider_state(m, 0.0, 1.0)
    >>> q.round(6).tolist(), qd.round(6).tolist()
    ([0.0, 0.0, 0.0, 0.4], [1.0, -1.333333, 0.333333, 0.0])
    """
    r, l = model.parameters["r"], model.parameters["l"]
    theta = float(theta)
    beta = -np.arcsin(r * np.sin(theta) / l)
    beta_dot = -r * np.cos(theta) * omega / (l * np.cos(beta))
    x = r * np.cos(theta) + l * np.cos(beta)
    x_dot = -r * np.sin(theta) * omega - l * np.sin(beta) * beta_dot
    q = np.array([theta, beta - theta, -beta, x])
    qd = np.array([omega, beta_dot - omega, -beta_dot, x_dot])
    return q, qd


def triple_pendulum():
    """The triple pendulum of the MATLAB program of Yudintsev 3.5 (Fig. 3.20).

    Unit masses, unit inertia tensors (``J_z = 1``, a free parameter of the program, not a
    uniform rod: erratum E21), hinge vectors of length 1 along each rod's x axis (rods of
    length 2), unit weights along ``-y`` (gravity ``(0, -1, 0)``). The program uses absolute
    rod angles; the model's coordinates are the joints' relative angles, so the absolute
    angles are the cumulative sums ``phi = cumsum(q)``. At rest with the rods horizontal the
    absolute angular accelerations are ``(-0.5, 0, 0)``, as the MATLAB program with
    Fig. 3.20 (Vereshchagin's recursion) gives.

    Examples
    --------
    >>> m = triple_pendulum()
    >>> m.n, m.gravity.tolist()
    (3, [0.0, -1.0, 0.0])
    """
    model = Model(gravity=(0.0, -1.0, 0.0))
    model.parameters = dict(mass=1.0, inertia=1.0, half_length=1.0, weight=1.0)
    for k in (1, 2, 3):
        model.add_body(f"rod{k}", 1.0, np.eye(3))
    model.add_joint("j1", "revolute", "ground", "rod1", child_point=(-1, 0, 0), axis=_Z)
    model.add_joint("j2", "revolute", "rod1", "rod2", parent_point=(1, 0, 0),
                    child_point=(-1, 0, 0), axis=_Z)
    model.add_joint("j3", "revolute", "rod2", "rod3", parent_point=(1, 0, 0),
                    child_point=(-1, 0, 0), axis=_Z)
    return model


def floating_spacecraft(bus_mass=100.0, bus_size=(1.5, 1.2, 1.0), panel_mass=8.0,
                        panel_length=2.0, panel_width=0.8):
    """A free-floating spacecraft deploying two solar panels (no gravity, no base).

    The bus hangs from the inertial frame by a ``"free"`` joint (the book's fictitious
    joint, 3.44–3.69); each panel turns about a hinge ``"left"``/``"right"`` on a side of
    the bus, about the bus's y axis. Internal joint torques cannot change the linear and
    angular momentum of the system.

    ``q = (bus position (3), bus quaternion (4), left angle, right angle)``.

    Examples
    --------
    >>> m = floating_spacecraft()
    >>> m.nq, m.nv
    (9, 8)
    """
    _positive(bus_mass=bus_mass, panel_mass=panel_mass, panel_length=panel_length,
              panel_width=panel_width)
    a, b, c = bus_size
    model = Model()
    model.parameters = dict(bus_mass=bus_mass, bus_size=tuple(bus_size), panel_mass=panel_mass,
                            panel_length=panel_length, panel_width=panel_width)
    model.add_body("bus", bus_mass, bus_mass / 12 * np.diag([b * b + c * c, a * a + c * c,
                                                            a * a + b * b]))
    L, w, t = panel_length, panel_width, 0.03
    J = panel_mass / 12 * np.diag([w * w + t * t, L * L + t * t, L * L + w * w])
    model.add_body("left", panel_mass, J)
    model.add_body("right", panel_mass, J)
    model.add_joint("float", "free", "ground", "bus")
    model.add_joint("left", "revolute", "bus", "left", parent_point=(-a / 2, 0, 0),
                    child_point=(L / 2, 0, 0), axis=(0, 1, 0))
    model.add_joint("right", "revolute", "bus", "right", parent_point=(a / 2, 0, 0),
                    child_point=(-L / 2, 0, 0), axis=(0, 1, 0))
    return model


def spatial_manipulator(lengths=(0.4, 0.5, 0.4), masses=(4.0, 3.0, 2.0), g=9.81):
    """A three-joint arm in space: a waist about the vertical z axis, a shoulder and an
    elbow about horizontal axes (the classic anthropomorphic arm), with gravity along -z.

    ``q = (waist, shoulder, elbow)``, all revolute; at ``q = 0`` the upper arm and the
    forearm point along x.

    Examples
    --------
    >>> m = spatial_manipulator()
    >>> [j.kind for j in m.joints], m.nv
    (['revolute', 'revolute', 'revolute'], 3)
    """
    l0, l1, l2 = lengths
    m0, m1, m2 = masses
    _positive(l0=l0, l1=l1, l2=l2, m0=m0, m1=m1, m2=m2)
    model = Model(gravity=(0.0, 0.0, -g))
    model.parameters = dict(lengths=tuple(lengths), masses=tuple(masses), g=g)
    column = np.diag([m0 * (l0 * l0 / 12 + 0.01), m0 * (l0 * l0 / 12 + 0.01), m0 * 0.02])
    model.add_body("column", m0, column)
    model.add_body("upper_arm", m1, bar_inertia(m1, l1))
    model.add_body("forearm", m2, bar_inertia(m2, l2))
    model.add_joint("waist", "revolute", "ground", "column", child_point=(0, 0, -l0 / 2),
                    axis=_Z)
    model.add_joint("shoulder", "revolute", "column", "upper_arm", parent_point=(0, 0, l0 / 2),
                    child_point=(-l1 / 2, 0, 0), axis=(0, -1, 0))
    model.add_joint("elbow", "revolute", "upper_arm", "forearm", parent_point=(l1 / 2, 0, 0),
                    child_point=(-l2 / 2, 0, 0), axis=(0, -1, 0))
    return model


def solar_array(panel_length=1.0, panel_mass=4.0, panel_width=0.05, hinge_gap=0.3,
                arm_length=0.4, link_length=0.45, attach=0.3, link_mass=0.3):
    """The solar-array deployment mechanism of Fig. 2.1 (planar, no gravity).

    Dimensions are the course's choice (the book gives none): the spacecraft wall is the
    ground. Panel 1 (``panel_length``, ``panel_mass``) turns about hinge ``"H1"`` at the
    origin; panel 2, of the same size, is hinged to its far end (``"H2"``). A deployment
    arm of length ``arm_length`` turns about ``"H3"`` at ``(0, -hinge_gap)``; a link of
    length ``link_length`` joins the arm's tip (``"H4"``) to panel 1 at distance
    ``attach`` from H1 (``"H5"``); the five hinges close one loop.

    Ground, panel 1, link and arm form a four-bar (one degree of freedom); panel 2 folds
    freely about H2 (the second). 4 bodies x 3 coordinates - 5 hinges x 2 rows = 2.

    ``q`` = (H1: panel-1 angle, H2: panel-2 angle relative to panel 1, H3: arm angle,
    H4: link angle relative to the arm, H5: panel-1 angle relative to the link); use
    :func:`solar_array_state` for consistent values.

    Examples
    --------
    >>> m = solar_array()
    >>> m.n, m.m, m.graph.spanning_tree()[1].tolist()   # breadth-first search cuts H4
    (4, 5, [3])
    """
    _positive(panel_length=panel_length, panel_mass=panel_mass, hinge_gap=hinge_gap,
              arm_length=arm_length, link_length=link_length, attach=attach,
              link_mass=link_mass)
    L = panel_length
    model = Model(gravity=(0.0, 0.0, 0.0))
    model.parameters = dict(panel_length=L, panel_mass=panel_mass, hinge_gap=hinge_gap,
                            arm_length=arm_length, link_length=link_length, attach=attach,
                            link_mass=link_mass)
    model.add_body("panel1", panel_mass, bar_inertia(panel_mass, L, panel_width))
    model.add_body("panel2", panel_mass, bar_inertia(panel_mass, L, panel_width))
    model.add_body("arm", link_mass, bar_inertia(link_mass, arm_length))
    model.add_body("link", link_mass, bar_inertia(link_mass, link_length))
    model.add_joint("H1", "revolute", "ground", "panel1", child_point=(-L / 2, 0, 0), axis=_Z)
    model.add_joint("H2", "revolute", "panel1", "panel2", parent_point=(L / 2, 0, 0),
                    child_point=(-L / 2, 0, 0), axis=_Z)
    model.add_joint("H3", "revolute", "ground", "arm", parent_point=(0, -hinge_gap, 0),
                    child_point=(-arm_length / 2, 0, 0), axis=_Z)
    model.add_joint("H4", "revolute", "arm", "link", parent_point=(arm_length / 2, 0, 0),
                    child_point=(-link_length / 2, 0, 0), axis=_Z)
    model.add_joint("H5", "revolute", "link", "panel1", parent_point=(link_length / 2, 0, 0),
                    child_point=(attach - L / 2, 0, 0), axis=_Z)
    return model


def solar_array_state(model, theta1, fold, omega1=0.0, fold_rate=0.0):
    """Consistent ``(q, qd)`` of :func:`solar_array` from the panel-1 angle and the fold.

    The arm angle closes the four-bar: the arm tip ``E`` lies at ``link_length`` from the
    attachment point ``P`` on panel 1 (intersection of two circles, the branch with the
    arm to the right of the line ``H3–P``).

    Raises
    ------
    InconsistentStateError
        If the four-bar cannot be assembled at ``theta1``.
    """
    p = model.parameters
    a, c, e, d = p["hinge_gap"], p["arm_length"], p["link_length"], p["attach"]
    P = d * np.array([np.cos(theta1), np.sin(theta1)])
    O3 = np.array([0.0, -a])
    D = P - O3
    dist = np.linalg.norm(D)
    cos_gamma = (c * c + dist * dist - e * e) / (2 * c * dist)
    if abs(cos_gamma) > 1:
        raise InconsistentStateError(
            f"the deployment linkage cannot be assembled at theta1={theta1:.4g} rad"
        )
    theta3 = np.arctan2(D[1], D[0]) - np.arccos(cos_gamma)
    E = O3 + c * np.array([np.cos(theta3), np.sin(theta3)])
    theta4 = np.arctan2(*(P - E)[::-1])
    # rates: d/dt (P - E) is along the link's normal only: solve the 2x2 velocity closure
    u1 = np.array([-np.sin(theta1), np.cos(theta1)])
    u3 = np.array([-np.sin(theta3), np.cos(theta3)])
    u4 = np.array([-np.sin(theta4), np.cos(theta4)])
    # d * u1 * w1 = c * u3 * w3 + e * u4 * w4
    w3, w4 = np.linalg.solve(np.column_stack([c * u3, e * u4]), d * u1 * omega1)
    q = np.array([theta1, fold, theta3, theta4 - theta3, theta1 - theta4])
    qd = np.array([omega1, fold_rate, w3, w4 - w3, omega1 - w4])
    return q, qd


def solar_array_leaves(s10=1.0, h10=0.3, s12=1.2, h12=0.2, s21=0.9, h21=0.25, m1=2.0, m2=3.0,
                       J1=None, J2=None):
    """Deployment of a two-leaf solar-array panel, Yudintsev Fig. 3.7 (section 3.2.1).

    The spacecraft (body 0, ``"ground"``) moves uniformly in a straight line, so it is
    fixed here; the origin is hinge 1. Leaf 1 (``"leaf1"``) is hinged to the spacecraft at
    the origin (joint ``"hinge1"``), leaf 2 (``"leaf2"``) to leaf 1 (joint ``"hinge2"``);
    both revolute about z, no gravity. The hinge vectors (centre of mass to hinge, leaf
    axes) are the reconstruction that reproduces Table 3.1 (the book's errata page)::

        c11 = (-s10, h10),  c12 = (s12, -h12)   (leaf 1),   c22 = (-s21, -h21)   (leaf 2)

    Coordinates ``q = (phi_1, phi_2 - phi_1)`` (revolute joints measure relative angles;
    :func:`mbcourse.tree.planar.absolute_angles` gives the book's ``phi_1, phi_2``).

    Parameters
    ----------
    s10, h10, s12, h12, s21, h21 : float
        Hinge offsets (m), positive.
    m1, m2 : float
        Leaf masses (kg).
    J1, J2 : float, optional
        Central moments of inertia about z (kg m^2). Default: thin uniform plates whose
        length is the hinge-to-hinge span, ``J1 = m1 (s10 + s12)^2 / 12`` and
        ``J2 = m2 (2 s21)^2 / 12`` (leaf 2 reaches as far beyond its centre as its hinge).
        The in-plane moments are ``0.02 J`` and ``0.98 J`` (a thin plate in the xy plane).

    Examples
    --------
    >>> m = solar_array_leaves()
    >>> m.n, m.nq, m.parameters["s12"], round(m.parameters["J1"], 6)
    (2, 2, 1.2, 0.806667)
    """
    _positive(s10=s10, h10=h10, s12=s12, h12=h12, s21=s21, h21=h21, m1=m1, m2=m2)
    J1 = m1 * (s10 + s12) ** 2 / 12 if J1 is None else J1
    J2 = m2 * (2 * s21) ** 2 / 12 if J2 is None else J2
    _positive(J1=J1, J2=J2)
    model = Model(gravity=(0.0, 0.0, 0.0))
    model.parameters = dict(s10=s10, h10=h10, s12=s12, h12=h12, s21=s21, h21=h21, m1=m1,
                            m2=m2, J1=J1, J2=J2)
    model.add_body("leaf1", m1, [0.02 * J1, 0.98 * J1, J1])
    model.add_body("leaf2", m2, [0.02 * J2, 0.98 * J2, J2])
    model.add_joint("hinge1", "revolute", "ground", "leaf1", parent_point=(0.0, 0.0, 0.0),
                    child_point=(-s10, h10, 0.0), axis=_Z)
    model.add_joint("hinge2", "revolute", "leaf1", "leaf2", parent_point=(s12, -h12, 0.0),
                    child_point=(-s21, -h21, 0.0), axis=_Z)
    return model


def table_3_1(model):
    """The quantities of Yudintsev's Table 3.1 for a two-leaf panel, from the library.

    Computed by :func:`mbcourse.tree.planar.planar_parameters` (``d = C T`` (3.13),
    ``b_i0`` (3.26), ``b_ij = b_i0 - d_ij`` (3.20)) for a model built by
    :func:`solar_array_leaves`. Magnitudes in metres, angles (body angles in ``[0, 2 pi)``)
    in radians. The printed table gives ``beta_1 = beta_2 = 0``, which is wrong (erratum
    E14): here ``beta_1 = atan2(h10 + m2 h12 / M, -s10 - m2 s12 / M)`` and
    ``beta_2 = a_22`` come out of the hinge vectors.

    Returns
    -------
    dict
        Keys ``d11, d12, d21, d22, b11, b10, b12, b22, b20, a11, a12, a22, beta1, beta2``.

    Examples
    --------
    >>> import numpy as np
    >>> t = table_3_1(solar_array_leaves())
    >>> round(float(np.degrees(t["beta1"])), 2), round(float(np.degrees(t["beta2"])), 2)
    (166.28, 195.52)
    >>> t["d21"], round(t["b12"], 6)    # b12 = m1/M |c12|
    (0.0, 0.486621)
    """
    from .tree.planar import planar_parameters

    if model.n != 2 or [b.name for b in model.bodies[1:]] != ["leaf1", "leaf2"]:
        raise ModelError("table_3_1 needs the two-leaf model of solar_array_leaves()")
    p = planar_parameters(model)
    b_mag = np.linalg.norm(p.b, axis=-1)
    out = {}
    for i in (1, 2):
        for j in (1, 2):
            out[f"d{i}{j}"] = float(p.d_mag[i - 1, j - 1])
            out[f"b{i}{j}"] = float(b_mag[i - 1, j - 1])
        out[f"b{i}0"] = float(p.b0_mag[i - 1])
        out[f"beta{i}"] = float(p.beta[i - 1])
    out["a11"], out["a12"], out["a22"] = (float(p.a[0, 0]), float(p.a[0, 1]), float(p.a[1, 1]))
    keys = ["d11", "d12", "d21", "d22", "b11", "b10", "b12", "b22", "b20", "a11", "a12", "a22",
            "beta1", "beta2"]
    return {k: out[k] for k in keys}


# ---------------------------------------------------------------------------------------
# Telegin 2024 (chapter 5): the six manipulators of the paper's examples 1-6.
#
# Conventions of the paper (Telegin 2024, section 1): in the zero configuration all body frames
# are parallel to the fixed frame (x right, y up, z toward the viewer); ``e_i`` is the axis
# of a revolute joint, ``p_i`` the axis of a prismatic one; the joints are named after them
# ("e1", "p2", ...), so joint ``k`` carries the coordinate ``q_k``. The paper's poles
# ``O_i`` are points on the joint axes; the library puts body frames at centres of mass, so
# a body's offset from its pole appears as the joint's ``child_point``. The paper's
# combined parameters follow from the ones here: ``a_i = m_0i |O_i C_i|`` (``m_0i`` the mass
# of body ``i``), ``m_i`` = the mass of the subsystem ``i..N``, moments of inertia about
# axes through the poles (parallel-axis theorem).


def _rod(mass, length, axis="x", width=None):
    """Central principal moments of a bar of square cross-section along a body axis."""
    Jx, Jy, _ = np.diag(bar_inertia(mass, length, width))
    k = "xyz".index(axis)
    moments = [Jy, Jy, Jy]
    moments[k] = Jx
    return moments


def telegin_polar(m1=3.0, m2=1.0, l1=0.6, l2=0.8, g=9.81):
    """Telegin's example 1: a polar arm in the vertical xy plane (``N = 2``).

    Body 1 (``"turret"``, a bar of length ``l1``) turns about the fixed axis
    ``e_1 = z`` through the origin ``O_1`` (joint ``"e1"``); its centre of mass lies
    ``l1 / 2`` along its x axis. Body 2 (``"boom"``, a bar of length ``l2``) slides along
    the turret's axis ``p_2 = x_1`` (joint ``"p2"``); ``q_2 = |O_1 O_2|`` with the pole
    ``O_2`` at the boom's centre of mass. Gravity ``-g y``.

    The mass matrix is the paper's ``H = diag(I_1^z + I_2^z + m_2 q_2^2, m_2)`` with
    ``I_1^z = J_1^z + m_1 (l1/2)^2`` (about ``O_1``), ``I_2^z = J_2^z`` and ``m_2`` the
    boom's mass; so ``h_g1 = m_2 q_2 dq_1 dq_2`` and ``h_g2 = -m_2 q_2 dq_1^2``.

    Examples
    --------
    >>> m = telegin_polar()
    >>> [j.name for j in m.joints], [b.name for b in m.bodies[1:]]
    (['e1', 'p2'], ['turret', 'boom'])
    """
    _positive(m1=m1, m2=m2, l1=l1, l2=l2)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(example=1, m1=m1, m2=m2, l1=l1, l2=l2, g=g)
    model.add_body("turret", m1, _rod(m1, l1))
    model.add_body("boom", m2, _rod(m2, l2))
    model.add_joint("e1", "revolute", "ground", "turret", child_point=(-l1 / 2, 0, 0), axis=_Z)
    model.add_joint("p2", "prismatic", "turret", "boom", parent_point=(-l1 / 2, 0, 0),
                    axis=(1.0, 0.0, 0.0))
    return model


def telegin_cartesian(m1=4.0, m2=2.0, m3=1.0, l2=1.0, l3=0.5, g=9.81):
    """Telegin's example 2: a Cartesian arm in the vertical xy plane (``N = 3``).

    Body 1 (``"carriage"``) slides vertically, ``p_1 = y`` (joint ``"p1"``); body 2
    (``"arm"``, a bar of length ``l2``) slides horizontally through it, ``p_2 = x``
    (``"p2"``); body 3 (``"link"``, a bar of length ``l3``) turns about ``e_3 = z`` at the
    arm's right end ``O_3`` (``"e3"``), its centre of mass ``l3 / 2`` along its x axis.

    The mass matrix is the paper's ``H_11 = m_1``, ``H_22 = m_2``, ``H_33 = I_3``,
    ``H_31 = a_3 c_3``, ``H_32 = -a_3 s_3`` with the subsystem masses
    ``m_1 = m1 + m2 + m3``, ``m_2 = m2 + m3``, ``a_3 = m3 l3 / 2`` and ``I_3 = J_3^z +
    m3 (l3/2)^2``; all gyroscopic forces vanish.

    Examples
    --------
    >>> [j.name for j in telegin_cartesian().joints]
    ['p1', 'p2', 'e3']
    """
    _positive(m1=m1, m2=m2, m3=m3, l2=l2, l3=l3)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(example=2, m1=m1, m2=m2, m3=m3, l2=l2, l3=l3, g=g)
    model.add_body("carriage", m1, _rod(m1, 0.3))
    model.add_body("arm", m2, _rod(m2, l2))
    model.add_body("link", m3, _rod(m3, l3))
    model.add_joint("p1", "prismatic", "ground", "carriage", axis=(0.0, 1.0, 0.0))
    model.add_joint("p2", "prismatic", "carriage", "arm", axis=(1.0, 0.0, 0.0))
    model.add_joint("e3", "revolute", "arm", "link", parent_point=(l2 / 2, 0, 0),
                    child_point=(-l3 / 2, 0, 0), axis=_Z)
    return model


def telegin_cylindrical_3(m1=5.0, m2=2.0, m3=1.0, h1=1.0, l2=1.0, l3=0.6, g=9.81):
    """Telegin's example 3: a cylindrical arm with three joints (``N = 3``).

    Body 1 (``"column"``, vertical, height ``h1``) turns about ``e_1 = y`` (joint
    ``"e1"``); body 2 (``"arm"``, a horizontal bar of length ``l2``) slides radially along
    the column's x axis from its top (``"p2"``), ``q_2 = |O_1 O_2|`` with the pole ``O_2``
    at the arm's outer end (its centre of mass ``l2 / 2`` behind it); body 3 (``"rod"``, a
    vertical bar of length ``l3``) slides vertically through ``O_2`` (``"p3"``, axis ``y``),
    its centre of mass ``O_3`` on that vertical line.

    The mass matrix is the paper's ``H = diag(I_1^y + I_2^y + I_3^y + m_2 q_2^2 - 2 a_2 q_2,
    m_2, m_3)`` with ``m_2 = m2 + m3``, ``m_3 = m3``, ``a_2 = m2 l2 / 2`` and ``I_2^y`` about
    the vertical through ``O_2``.

    Examples
    --------
    >>> [j.name for j in telegin_cylindrical_3().joints]
    ['e1', 'p2', 'p3']
    """
    _positive(m1=m1, m2=m2, m3=m3, h1=h1, l2=l2, l3=l3)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(example=3, m1=m1, m2=m2, m3=m3, h1=h1, l2=l2, l3=l3, g=g)
    model.add_body("column", m1, _rod(m1, h1, "y"))
    model.add_body("arm", m2, _rod(m2, l2))
    model.add_body("rod", m3, _rod(m3, l3, "y"))
    model.add_joint("e1", "revolute", "ground", "column", child_point=(0, -h1 / 2, 0),
                    axis=(0.0, 1.0, 0.0))
    model.add_joint("p2", "prismatic", "column", "arm", parent_point=(0, h1 / 2, 0),
                    child_point=(l2 / 2, 0, 0), axis=(1.0, 0.0, 0.0))
    model.add_joint("p3", "prismatic", "arm", "rod", parent_point=(l2 / 2, 0, 0),
                    axis=(0.0, 1.0, 0.0))
    return model


def telegin_cylindrical_4(m1=5.0, m2=2.0, m3=1.5, m4=0.5, h1=1.2, l3=1.0, l4=0.4, g=9.81):
    """Telegin's example 4: a cylindrical arm with a wrist (``N = 4``).

    Body 1 (``"column"``) turns about ``e_1 = y`` (joint ``"e1"``); body 2
    (``"carriage"``) slides up the column, ``p_2 = y`` (``"p2"``), its centre of mass on the
    axis; body 3 (``"arm"``, a bar of length ``l3``) slides radially, ``p_3 = x_2``
    (``"p3"``), ``q_3 = |O_2 O_3|`` with the pole ``O_3`` at its outer end; body 4
    (``"wrist"``, a bar of length ``l4``) turns about ``e_4 = z`` at ``O_3`` (``"e4"``), its
    centre of mass ``l4 / 2`` along its x axis.

    Reproduces ``H_113 = 2 h_q``, ``h_q = m_3 q_3 + a_4 c_4 - a_3``, ``H_42 = a_4 c_4``,
    ``H_43 = -a_4 s_4`` (``m_3 = m3 + m4``, ``a_3 = m3 l3 / 2``, ``a_4 = m4 l4 / 2``) and
    ``H_114 = -2 I_q`` with ``I_q = [a_4 q_3 + (I_4^y - I_4^x) c_4] s_4`` (moments about
    ``O_3``). A restatement with ``(I_4^x - I_4^y)`` has the sign of the inertia term reversed
    (the book's errata page) (a whirling bar is pulled toward the horizontal, ``h_g4 = I_q dq_1^2 > 0``).

    Examples
    --------
    >>> [j.name for j in telegin_cylindrical_4().joints]
    ['e1', 'p2', 'p3', 'e4']
    """
    _positive(m1=m1, m2=m2, m3=m3, m4=m4, h1=h1, l3=l3, l4=l4)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(example=4, m1=m1, m2=m2, m3=m3, m4=m4, h1=h1, l3=l3, l4=l4, g=g)
    model.add_body("column", m1, _rod(m1, h1, "y"))
    model.add_body("carriage", m2, _rod(m2, 0.3, "y", width=0.2))
    model.add_body("arm", m3, _rod(m3, l3))
    model.add_body("wrist", m4, _rod(m4, l4))
    model.add_joint("e1", "revolute", "ground", "column", child_point=(0, -h1 / 2, 0),
                    axis=(0.0, 1.0, 0.0))
    model.add_joint("p2", "prismatic", "column", "carriage", axis=(0.0, 1.0, 0.0))
    model.add_joint("p3", "prismatic", "carriage", "arm", child_point=(l3 / 2, 0, 0),
                    axis=(1.0, 0.0, 0.0))
    model.add_joint("e4", "revolute", "arm", "wrist", parent_point=(l3 / 2, 0, 0),
                    child_point=(-l4 / 2, 0, 0), axis=_Z)
    return model


def telegin_angular(m1=6.0, m2=3.0, m3=2.0, h1=0.8, L=0.7, l3=0.6, g=9.81):
    """Telegin's example 5: the angular (anthropomorphic) arm (``N = 3``).

    Body 1 (``"column"``, height ``h1``) turns about ``e_1 = y`` (joint ``"e1"``); body 2
    (``"upper_arm"``, a bar of length ``L = |O_2 O_3|``) turns about ``e_2 = z`` at the
    column's top ``O_2`` on the vertical axis (``"e2"``); body 3 (``"forearm"``, a bar of
    length ``l3``) turns about ``e_3 = z`` at the upper arm's end ``O_3`` (``"e3"``). The
    centres of mass lie at the middles of the bars.

    Reproduces ``H_22 = I_2^z + I_3^z + m_3 L^2 + 2 L a_3 c_3``, ``H_32 = I_3^z + L a_3 c_3``,
    ``H_33 = I_3^z``, ``H_21 = H_31 = 0`` (``a_3 = m3 l3 / 2``, moments about the poles) and
    an ``H_11(q_2, q_3)`` with ``c_2^2``, ``c_23^2`` and ``c_2 c_23`` terms (illegible in the
    paper, erratum E27).

    Examples
    --------
    >>> [j.name for j in telegin_angular().joints]
    ['e1', 'e2', 'e3']
    """
    _positive(m1=m1, m2=m2, m3=m3, h1=h1, L=L, l3=l3)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(example=5, m1=m1, m2=m2, m3=m3, h1=h1, L=L, l3=l3, g=g)
    model.add_body("column", m1, _rod(m1, h1, "y"))
    model.add_body("upper_arm", m2, _rod(m2, L))
    model.add_body("forearm", m3, _rod(m3, l3))
    model.add_joint("e1", "revolute", "ground", "column", child_point=(0, -h1 / 2, 0),
                    axis=(0.0, 1.0, 0.0))
    model.add_joint("e2", "revolute", "column", "upper_arm", parent_point=(0, h1 / 2, 0),
                    child_point=(-L / 2, 0, 0), axis=_Z)
    model.add_joint("e3", "revolute", "upper_arm", "forearm", parent_point=(L / 2, 0, 0),
                    child_point=(-l3 / 2, 0, 0), axis=_Z)
    return model


def telegin_universal(m1=8.0, m2=6.0, m3=3.0, m4=1.5, m5=1.0, m6=0.5, l4=0.8, l5=0.3,
                      l6=0.2, r6=0.05, g=9.81):
    """Telegin's example 6: a universal arm on a Cartesian base (``N = 6``).

    Body 1 (``"base_z"``) slides along ``p_1 = z`` (joint ``"p1"``), body 2 (``"base_x"``)
    along ``p_2 = x`` (``"p2"``); body 3 (``"column"``) turns about the vertical
    ``e_3 = y`` (``"e3"``); body 4 (``"ram"``, a vertical bar of length ``l4``) slides down,
    ``p_4 = -y`` (``"p4"``); body 5 (``"wrist"``, a bar of length ``l5`` hanging below the
    pivot ``O_5`` at the ram's lower end) turns about ``e_5 = z_5`` (``"e5"``); body 6
    (``"tool"``, a cylinder of length ``l6`` and radius ``r6`` hanging below the wrist)
    spins about the wrist's own long axis (``"e6"``). The centres of mass of bodies 1-4 lie
    on the column's axis.

    The spin axis of the tool is the wrist's y axis (vertical in the zero configuration):
    that is what the paper's ``H_63 = I_6 c_5`` and ``H_65 = 0`` require ("``e_6 = z_6``"
    cannot be the axis in the all-frames-parallel convention). With
    ``a = a_5 + a_6`` (``a_5 = m5 |O_5 C_5|``, ``a_6 = m6 |O_5 C_6|``) the mass matrix is
    the paper's: ``H_11 = m_1``, ``H_22 = m_2``, ``H_44 = m_4`` (subsystem masses),
    ``H_31 = -a c_3 s_5``, ``H_32 = -a s_3 s_5``, ``H_33 = A - B c_5^2``,
    ``H_51 = -a s_3 c_5``, ``H_52 = a c_3 c_5``, ``H_54 = -a s_5``, ``H_55`` constant,
    ``H_63 = I_6 c_5``, ``H_66 = I_6`` with ``B = I_5^x - I_5^y + I_6^x - I_6^y`` (moments
    about ``O_5``).

    Examples
    --------
    >>> [j.name for j in telegin_universal().joints]
    ['p1', 'p2', 'e3', 'p4', 'e5', 'e6']
    """
    _positive(m1=m1, m2=m2, m3=m3, m4=m4, m5=m5, m6=m6, l4=l4, l5=l5, l6=l6, r6=r6)
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(example=6, m1=m1, m2=m2, m3=m3, m4=m4, m5=m5, m6=m6, l4=l4,
                            l5=l5, l6=l6, r6=r6, g=g)
    J6a = m6 * (3 * r6**2 + l6**2) / 12                      # about a diameter
    model.add_body("base_z", m1, [0.5 * m1, 0.5 * m1, 0.5 * m1])
    model.add_body("base_x", m2, [0.3 * m2, 0.3 * m2, 0.3 * m2])
    model.add_body("column", m3, _rod(m3, 0.5, "y", width=0.2))
    model.add_body("ram", m4, _rod(m4, l4, "y"))
    model.add_body("wrist", m5, _rod(m5, l5, "y"))
    model.add_body("tool", m6, [J6a, m6 * r6**2 / 2, J6a])
    model.add_joint("p1", "prismatic", "ground", "base_z", axis=_Z)
    model.add_joint("p2", "prismatic", "base_z", "base_x", axis=(1.0, 0.0, 0.0))
    model.add_joint("e3", "revolute", "base_x", "column", axis=(0.0, 1.0, 0.0))
    model.add_joint("p4", "prismatic", "column", "ram", axis=(0.0, -1.0, 0.0))
    model.add_joint("e5", "revolute", "ram", "wrist", parent_point=(0, -l4 / 2, 0),
                    child_point=(0, l5 / 2, 0), axis=_Z)
    model.add_joint("e6", "revolute", "wrist", "tool", parent_point=(0, -l5 / 2, 0),
                    child_point=(0, l6 / 2, 0), axis=(0.0, 1.0, 0.0))
    return model
