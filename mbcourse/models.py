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
* :func:`four_bar` and :func:`four_bar_state` — a planar Grashof crank-rocker (one loop).
* :func:`bricard`, :func:`n_four_bar`, :func:`flyball_governor` and their ``*_state``
  functions — problems A04 (Bricard's overconstrained 6R linkage), A02 (N parallelogram
  four-bars through singular positions) and A05 (the stiff flyball governor, with a rigid
  closed-loop variant) of the IFToMM multibody benchmark library
  (``benchmarks/iftomm_reference.md``).
* :func:`alyushin_robot` — the robot of Alyushin's Fig. 1 (two revolute pairs, a screw pair,
  a clamped load; chapter 7).
* :func:`andrews_squeezer` and :func:`andrews_squeezer_state` — Andrews' squeezing mechanism
  (seven bodies, three loops, a spring), the integrators' test of Hairer & Wanner.
"""

from __future__ import annotations

import numpy as np

from .errors import InconsistentStateError, ModelError
from .model import Model

__all__ = ["triple_pendulum", "double_pendulum", "crank_slider", "crank_slider_state", "solar_array",
           "solar_array_state", "bar_inertia", "floating_spacecraft", "spatial_manipulator", "solar_array_leaves", "table_3_1",
           "telegin_polar", "telegin_cartesian", "telegin_cylindrical_3",
           "telegin_cylindrical_4", "telegin_angular", "telegin_universal",
           "four_bar", "four_bar_state", "bricard", "bricard_state", "n_four_bar",
           "n_four_bar_state", "flyball_governor", "flyball_governor_state", "alyushin_robot",
           "andrews_squeezer", "andrews_squeezer_state"]

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


# ---------------------------------------------------------------------------------------
# Closed loops: a Grashof four-bar and three problems of the multibody benchmark library of
# the Laboratorio de Ingenieria Mecanica, Universidade da Coruna (M. Gonzalez, D. Dopico,
# U. Lugris, J. Cuadrado, "A benchmarking system for MBS simulation software: problem
# standardization and performance measurement", Multibody System Dynamics 16 (2006)
# 179-190), now the IFToMM multibody benchmark: A02 (N four-bar), A04 (Bricard) and A05
# (stiff flyball governor). The benchmark's own files (lim.ii.udc.es/mbsbenchmark/dist/
# A0k/A0k_specification.xml) could not be read here beyond their opening text; the
# geometry was taken from them as far as they go and otherwise from two independent
# published implementations that cite them: MBS-BOS, "Multi-Body Systems Benchmark in
# OpenSim" (github.com/RehabEngGroup/MBSbenchmarksInOpenSim, createModel.cpp of each
# problem) and the Project Chrono / simEngine3D course drivers of ME751 (Wisconsin, 2016).
# benchmarks/iftomm_reference.md collects what is published about each problem.


def _slender(mass, length, axis="x"):
    """Principal moments of a slender uniform rod along a body axis.

    ``m L^2 / 12`` about the transverse axes; the axial moment, zero for an ideal line, is
    set to ``1e-4`` of that (:meth:`Model.add_body` needs a positive definite tensor). It
    never enters a planar motion.
    """
    J = mass * length**2 / 12
    moments = [J, J, J]
    moments["xyz".index(axis)] = 1e-4 * J
    return moments


def _perp(angle):
    """Unit vector of ``angle + pi/2`` in the plane."""
    return np.array([-np.sin(angle), np.cos(angle)])


def four_bar(ground=0.4, crank=0.1, coupler=0.35, rocker=0.3, m_crank=0.2, m_coupler=0.7,
             m_rocker=0.6, g=9.81):
    """A planar Grashof crank-rocker four-bar in the vertical xy plane.

    Link lengths (m): ``ground`` ``|OC|``, ``crank`` ``|OA|``, ``coupler`` ``|AB|``,
    ``rocker`` ``|CB|``. The crank turns about ``O = (0, 0)``, the rocker about
    ``C = (ground, 0)``; all three moving links are uniform bars (:func:`bar_inertia`) and
    gravity is ``-g y``. The defaults (0.4, 0.1, 0.35, 0.3) satisfy Grashof's condition
    ``s + l = 0.5 < p + q = 0.65`` with the crank the shortest link, so the crank turns
    fully and the rocker swings; masses are 2 kg/m times the lengths.

    Joints, all revolute about z: ``"O"`` (ground-crank), ``"A"`` (crank-coupler), ``"B"``
    (coupler-rocker), ``"C"`` (ground-rocker; it closes the loop).
    ``q = (theta, beta - theta, phi - beta, phi)`` with the absolute angles ``theta``
    (crank, from x), ``beta`` (coupler, from A to B) and ``phi`` (rocker, from C to B).
    3 bodies x 3 planar coordinates - 4 joints x 2 rows = 1 degree of freedom; use
    :func:`four_bar_state` for consistent values.

    Raises
    ------
    ModelError
        If the lengths are not a Grashof crank-rocker (crank shortest and
        ``s + l < p + q``).

    Examples
    --------
    >>> m = four_bar()
    >>> m.n, m.nq, m.parameters["coupler"], m.graph.is_tree
    (3, 4, 0.35, False)
    """
    _positive(ground=ground, crank=crank, coupler=coupler, rocker=rocker, m_crank=m_crank,
              m_coupler=m_coupler, m_rocker=m_rocker)
    lengths = sorted([ground, crank, coupler, rocker])
    if crank != lengths[0] or not lengths[0] + lengths[3] < lengths[1] + lengths[2]:
        raise ModelError(
            f"not a Grashof crank-rocker: the crank must be the shortest link and s + l < p + q "
            f"(got ground={ground}, crank={crank}, coupler={coupler}, rocker={rocker})"
        )
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(ground=ground, crank=crank, coupler=coupler, rocker=rocker,
                            m_crank=m_crank, m_coupler=m_coupler, m_rocker=m_rocker, g=g)
    model.add_body("crank", m_crank, bar_inertia(m_crank, crank))
    model.add_body("coupler", m_coupler, bar_inertia(m_coupler, coupler))
    model.add_body("rocker", m_rocker, bar_inertia(m_rocker, rocker))
    model.add_joint("O", "revolute", "ground", "crank", child_point=(-crank / 2, 0, 0), axis=_Z)
    model.add_joint("A", "revolute", "crank", "coupler", parent_point=(crank / 2, 0, 0),
                    child_point=(-coupler / 2, 0, 0), axis=_Z)
    model.add_joint("B", "revolute", "coupler", "rocker", parent_point=(coupler / 2, 0, 0),
                    child_point=(rocker / 2, 0, 0), axis=_Z)
    model.add_joint("C", "revolute", "ground", "rocker", parent_point=(ground, 0, 0),
                    child_point=(-rocker / 2, 0, 0), axis=_Z)
    return model


def four_bar_state(model, theta, omega=0.0):
    """Consistent ``(q, qd)`` of :func:`four_bar` for a crank angle and rate.

    Position: ``B`` is the intersection of the circles of radius ``coupler`` about
    ``A = crank (cos theta, sin theta)`` and ``rocker`` about ``C``; the **open** branch is
    taken, ``phi = pi + atan2(C_y - A_y, C_x - A_x) - gamma`` with
    ``cos gamma = (rocker^2 + |AC|^2 - coupler^2) / (2 rocker |AC|)``, ``gamma`` in
    ``[0, pi]``: the rocker on the upper side of the line ``AC`` (B above the ground line
    for the default lengths). Rates: ``A + coupler e(beta) = C + rocker e(phi)``
    differentiated, a 2x2 linear system for ``dbeta/dt`` and ``dphi/dt``. The angles are
    continuous in ``theta`` (``q_A = beta - theta`` loses ``2 pi`` per crank turn).

    Examples
    --------
    >>> m = four_bar()
    >>> q, qd = four_bar_state(m, 0.0, 1.0)
    >>> round(float(q[3]), 6), round(float(qd[3]), 6)     # rocker angle and rate
    (1.895939, -0.333333)
    """
    p = model.parameters
    d, a, b, c = p["ground"], p["crank"], p["coupler"], p["rocker"]
    theta, omega = float(theta), float(omega)
    A = a * np.array([np.cos(theta), np.sin(theta)])
    AC = np.array([d, 0.0]) - A
    dist = np.hypot(*AC)
    cos_gamma = (c * c + dist * dist - b * b) / (2 * c * dist)
    if abs(cos_gamma) > 1:
        raise InconsistentStateError(f"the four-bar cannot be assembled at theta={theta:.4g}")
    phi = np.pi + np.arctan2(AC[1], AC[0]) - np.arccos(cos_gamma)
    B = np.array([d, 0.0]) + c * np.array([np.cos(phi), np.sin(phi)])
    beta = np.arctan2(*(B - A)[::-1])
    # a e'(theta) w + b e'(beta) w_beta = c e'(phi) w_phi
    w_beta, w_phi = np.linalg.solve(np.column_stack([b * _perp(beta), -c * _perp(phi)]),
                                    -a * _perp(theta) * omega)
    q = np.array([theta, beta - theta, phi - beta, phi])
    qd = np.array([omega, w_beta - omega, w_phi - w_beta, w_phi])
    return q, qd


def bricard(length=1.0, mass=1.0, width=0.1, g=9.81):
    """Bricard's overconstrained 6R linkage: problem A04 of the multibody benchmark.

    Five moving rods of length ``length`` and mass ``mass`` and the ground close a loop of
    six revolute joints along six edges of a cube of side ``length`` (a skew hexagon); each
    joint axis is perpendicular to both rods it joins and to the previous and next axes
    (the orthogonal Bricard linkage: equal link lengths, twists of 90 degrees, no offsets).
    At ``q = 0`` (the benchmark's initial configuration, released at rest) the joints are
    (points in m for ``length = 1``, axes)::

        "A" (0, 0, 0) y   ground-link1     "D" (1, -1, 1) y   link3-link4
        "B" (1, 0, 0) z   link1-link2      "E" (0, -1, 1) z   link4-link5
        "C" (1, -1, 0) x  link2-link3      "F" (0, 0, 1)  x   ground-link5

    Rod 1 runs along x from A to B, rod 2 along -y from B to C (``C`` is the benchmark's
    reference point ``P3``), rod 3 along z, rod 4 along -x, rod 5 along y back to F; the
    ground rod FA lies along -z. Gravity ``-g y``. Rods are uniform bars of square
    cross-section ``width`` (0.1 m in MBS-BOS, the OpenSim implementation of the benchmark;
    the Chrono and simEngine3D implementations use slender rods, ``m L^2 / 12``).

    Grubler-Kutzbach: 5 bodies x 6 - 6 joints x 5 = 0, yet the linkage moves with one
    degree of freedom: the 30 x 30 constraint Jacobian has rank 29, so forward dynamics
    needs ``redundant="lstsq"``. :func:`bricard_state` gives consistent states.

    Sources: A04_specification.xml of the benchmark library (González et al. 2006), whose
    text could not be read here; geometry and data as implemented, identically, by MBS-BOS
    (github.com/RehabEngGroup/MBSbenchmarksInOpenSim, src/A04-BricardsMechanism) and a
    Project Chrono ME751 driver citing http://lim.ii.udc.es/mbsbenchmark/dist/A04/
    A04_specification.xml. The benchmark simulates 10 s and compares the path of ``P3``.

    Examples
    --------
    >>> m = bricard()
    >>> m.n, m.m, m.nq, [j.name for j in m.joints]
    (5, 6, 6, ['A', 'B', 'C', 'D', 'E', 'F'])
    """
    _positive(length=length, mass=mass, width=width)
    L, h = length, length / 2
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(length=L, mass=mass, width=width, g=g)
    for k, axis in zip(range(1, 6), "xyzxy"):
        model.add_body(f"link{k}", mass, _rod(mass, L, axis, width))
    X, Y = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)
    model.add_joint("A", "revolute", "ground", "link1", child_point=(-h, 0, 0), axis=Y)
    model.add_joint("B", "revolute", "link1", "link2", parent_point=(h, 0, 0),
                    child_point=(0, h, 0), axis=_Z)
    model.add_joint("C", "revolute", "link2", "link3", parent_point=(0, -h, 0),
                    child_point=(0, 0, -h), axis=X)
    model.add_joint("D", "revolute", "link3", "link4", parent_point=(0, 0, h),
                    child_point=(h, 0, 0), axis=Y)
    model.add_joint("E", "revolute", "link4", "link5", parent_point=(-h, 0, 0),
                    child_point=(0, -h, 0), axis=_Z)
    model.add_joint("F", "revolute", "ground", "link5", parent_point=(0, 0, L),
                    child_point=(0, h, 0), axis=X)
    return model


def bricard_state(model, angle, rate=0.0):
    """Consistent ``(q, qd)`` of :func:`bricard` from the angle of joint ``"A"``.

    The linkage moves with three-fold symmetry: the joints alternate two angles,
    ``q = (a, -b, a, -b, a, b)`` (joint ``"F"`` is oriented from the ground, against the
    loop, hence its sign), and the loop closes when ``sin a sin b - sin a + sin b = 0``,
    i.e. ``sin b = sin a / (1 + sin a)`` (closure equations by computer algebra; the length
    drops out). This branch, ``b = arcsin(...)`` in ``[-pi/2, pi/2]``, is the one through
    the cube configuration ``q = 0`` and the one the benchmark's motion stays on (``a``
    swings between 0 and pi). ``db/da = cos a / ((1 + sin a)^2 cos b)``.

    Parameters
    ----------
    angle : float
        ``a``, the rotation of rod 1 about the vertical axis of joint ``"A"`` (rad), in
        ``(-pi/6, 7 pi/6)``; at the ends ``b = -pi/2`` and ``a`` turns back (the other
        branch, ``b = pi - arcsin(...)``, continues the closed configuration curve).
    rate : float
        ``da/dt``.

    Raises
    ------
    InconsistentStateError
        For ``sin a <= -1/2`` (no assembly on this branch, or its end point).

    Examples
    --------
    >>> import numpy as np
    >>> q, qd = bricard_state(bricard(), np.pi / 6, 1.0)     # sin b = 1/3
    >>> q.round(6).tolist()
    [0.523599, -0.339837, 0.523599, -0.339837, 0.523599, 0.339837]
    >>> qd.round(6).tolist()
    [1.0, -0.408248, 1.0, -0.408248, 1.0, 0.408248]
    """
    a, rate = float(angle), float(rate)
    s = np.sin(a)
    if not s > -0.5:
        raise InconsistentStateError(
            f"the Bricard linkage has no configuration on this branch at angle={a:.4g} rad "
            "(sin(angle) must exceed -1/2)"
        )
    sb = s / (1.0 + s)
    b = np.arcsin(sb)
    b_dot = np.cos(a) / ((1.0 + s) ** 2 * np.cos(b)) * rate
    q = np.array([a, -b, a, -b, a, b])
    qd = np.array([rate, -b_dot, rate, -b_dot, rate, b_dot])
    return q, qd


def n_four_bar(N=40, length=1.0, mass=1.0, g=9.81):
    """A row of ``N`` parallelogram four-bars: problem A02 of the multibody benchmark.

    ``2 N + 1`` uniform slender bars of length ``length`` and mass ``mass`` (1 m, 1 kg in
    the benchmark, ``J = m L^2 / 12``): ``N + 1`` cranks ``"crank0".."crankN"`` hinged to
    the ground at ``A_i = (i L, 0)`` (joints ``"A0".."AN"``) and ``N`` couplers
    ``"coupler1".."couplerN"``, coupler ``i`` joining the crank tips ``B_{i-1}`` (joint
    ``"P{i}"``, crank ``i-1`` to coupler ``i``) and ``B_i`` (joint ``"Q{i}"``, coupler ``i``
    to crank ``i``); all revolute about z, gravity ``-g y``. At ``q = 0`` the cranks are
    vertical (``B_i = (i L, L)``, the benchmark's initial configuration) and the couplers
    horizontal. Every crank turns by the same angle and the couplers translate: one degree
    of freedom (``3 (2N+1) - 2 (3N+1) = 1``). When the bars line up horizontally (crank
    angle ``+-pi/2``) the constraint Jacobian loses ``N`` ranks and the mechanism has
    ``N + 1`` instantaneous degrees of freedom: the singular positions the benchmark tests.

    The benchmark (A02_specification.xml of the library of González et al. 2006, as far as
    it could be read): ``N = 40``, 2N+1 links of 1 m with a uniformly distributed mass of
    1 kg, gravity 9.81 N/kg along ``-y``, initially in the figure's position with the
    x-velocity of ``B0`` equal to 1 m/s (:func:`n_four_bar_state` with ``angle = 0``,
    ``rate = -1 / length``), 20 s of dynamic simulation; reference solution: the position
    and velocity (x and y) of ``B0``; allowed errors 1e-1 (low precision) and 1e-3 (high),
    measured over 400 output steps with a threshold of 1e-3. MBS-BOS (the OpenSim
    implementation, github.com/RehabEngGroup/MBSbenchmarksInOpenSim) uses ``N = 2`` and
    10 s.

    Examples
    --------
    >>> m = n_four_bar(N=2)
    >>> m.n, m.m, m.nv, [j.name for j in m.joints][:4]
    (5, 7, 7, ['A0', 'P1', 'Q1', 'A1'])
    """
    if isinstance(N, bool) or not (isinstance(N, (int, np.integer)) and N >= 1):
        raise ModelError(f"N must be a positive integer (number of four-bar loops), got {N!r}")
    _positive(length=length, mass=mass)
    L, h = length, length / 2
    model = Model(gravity=(0.0, -g, 0.0))
    model.parameters = dict(N=int(N), length=L, mass=mass, g=g)
    model.add_body("crank0", mass, _slender(mass, L, "y"))
    model.add_joint("A0", "revolute", "ground", "crank0", child_point=(0, -h, 0), axis=_Z)
    for i in range(1, int(N) + 1):
        model.add_body(f"coupler{i}", mass, _slender(mass, L, "x"))
        model.add_body(f"crank{i}", mass, _slender(mass, L, "y"))
        model.add_joint(f"P{i}", "revolute", f"crank{i - 1}", f"coupler{i}",
                        parent_point=(0, h, 0), child_point=(-h, 0, 0), axis=_Z)
        model.add_joint(f"Q{i}", "revolute", f"coupler{i}", f"crank{i}",
                        parent_point=(h, 0, 0), child_point=(0, h, 0), axis=_Z)
        model.add_joint(f"A{i}", "revolute", "ground", f"crank{i}", parent_point=(i * L, 0, 0),
                        child_point=(0, -h, 0), axis=_Z)
    return model


def n_four_bar_state(model, angle, rate=0.0):
    """Consistent ``(q, qd)`` of :func:`n_four_bar` for a crank angle and rate.

    ``angle`` turns every crank counterclockwise from the vertical; the couplers keep their
    orientation, so ``q_Ai = angle``, ``q_Pi = -angle``, ``q_Qi = angle`` (and the same for
    the rates). The tip ``B0 = L (-sin angle, cos angle)`` moves with
    ``dx/dt = -L cos(angle) rate``: the benchmark's start is ``angle = 0``,
    ``rate = -1 / L`` (``dB0x/dt = 1`` m/s).

    Examples
    --------
    >>> q, qd = n_four_bar_state(n_four_bar(N=1), 0.2, -1.0)
    >>> q.tolist(), qd.tolist()
    ([0.2, -0.2, 0.2, 0.2], [-1.0, 1.0, -1.0, -1.0])
    """
    angle, rate = float(angle), float(rate)
    sign = np.array([1.0 if name[0] in "AQ" else -1.0 for name in model.q_names])
    return sign * angle, sign * rate


def flyball_governor(couplers="spring", shaft_length=1.0, rod_length=1.0, rod_width=0.01,
                     sleeve_size=0.1, density=3000.0, ball_mass=5.0, stiffness=8e5,
                     damping=4e4, rest_length=0.5, coupler_mass=None, g=9.81):
    """Watt's flyball governor: problem A05 (the stiff flyball governor) of the benchmark.

    Gravity ``-g z``. A vertical shaft (``"shaft"``, a ``shaft_length x rod_width x
    rod_width`` prism of density ``density``: 0.3 kg) turns freely about z on the ground
    (joint ``"spin"``, at the shaft's lower end, the origin). A cubic sleeve (``"sleeve"``,
    side ``sleeve_size``: 3 kg) slides along it (``"slide"``, prismatic along z,
    ``q = s`` = height of the sleeve's centre above the shaft's lower end). Two rods
    (``rod_length x rod_width x rod_width``, 0.3 kg) are hinged to the top of the shaft at
    ``x = +-sleeve_size / 2`` (joints ``"hinge1"``, ``"hinge2"``, axes ``+y`` and ``-y``, so
    that ``q = alpha``, the angle of each rod below the horizontal, on both sides) and carry
    a point mass ``ball_mass`` (5 kg) at their far ends; rod and ball are one body
    (``"arm1"``, ``"arm2"``, frame at their common centre of mass, x along the rod, away from
    the shaft for arm1 and towards it for arm2).

    ``couplers="spring"`` (the benchmark): the coupler rods are replaced by spring-dampers
    (``"spring1"``, ``"spring2"``: ``stiffness`` 8e5 N/m, ``damping`` 4e4 N s/m,
    ``rest_length`` 0.5 m) from the sleeve's sides ``(+-sleeve_size / 2, 0, 0)`` to the
    middles of the rods; the model is a tree (4 degrees of freedom) and stiff.
    ``couplers="rigid"``: Watt's original linkage, the two spring-dampers replaced by rigid
    couplers ``"coupler1"``, ``"coupler2"`` of length ``rest_length`` (our variant, mass
    ``coupler_mass``, default that of a ``rest_length x rod_width x rod_width`` prism:
    0.15 kg), joined by revolute joints ``"pin1"``, ``"pin2"`` (sleeve-coupler, axes
    ``-y``, ``+y``: ``q`` = the coupler's angle above the horizontal) and ``"elbow1"``,
    ``"elbow2"`` (coupler-arm, axes ``+y``, ``-y``): two closed loops, two degrees of
    freedom (spin and ``alpha``); with revolute joints in space each planar loop repeats 3
    rows (rank 34 of 40), so forward dynamics needs ``redundant="lstsq"``.

    The benchmark's start (:func:`flyball_governor_state` defaults): ``alpha = 30`` degrees,
    ``s = 0.5`` m (springs at their rest length), shaft spinning at ``2 pi`` rad/s, all else
    at rest; 10 s in MBS-BOS, whose reference output is the sleeve coordinate ``s``.

    Sources: A05_specification.xml of the benchmark library (González et al. 2006), readable
    here only by its title ("Stiff Flyball Governor"); dimensions, masses, spring data and
    the initial state from MBS-BOS (github.com/RehabEngGroup/MBSbenchmarksInOpenSim,
    src/A05-FlyballGovernor, and its documentation table), matched by an independent MATLAB
    driver that cites http://lim.ii.udc.es/mbsbenchmark/dist/A05/A05_specification.xml.

    Examples
    --------
    >>> m = flyball_governor()
    >>> m.q_names
    ['spin.angle', 'slide.displacement', 'hinge1.angle', 'hinge2.angle']
    >>> [round(b.mass, 6) for b in m.bodies[1:]]
    [0.3, 3.0, 5.3, 5.3]
    >>> flyball_governor("rigid").m, flyball_governor("rigid").graph.is_tree
    (8, False)
    """
    if couplers not in ("spring", "rigid"):
        raise ModelError(f"couplers must be 'spring' (the benchmark) or 'rigid', got "
                         f"{couplers!r}")
    _positive(shaft_length=shaft_length, rod_length=rod_length, rod_width=rod_width,
              sleeve_size=sleeve_size, density=density, ball_mass=ball_mass,
              rest_length=rest_length)
    if not (np.isfinite(stiffness) and stiffness >= 0 and np.isfinite(damping) and damping >= 0):
        raise ModelError(f"stiffness and damping must be non-negative, got {stiffness!r}, "
                         f"{damping!r}")
    H, L, w, e = shaft_length, rod_length, rod_width, sleeve_size / 2
    m_shaft = density * H * w * w
    m_rod = density * L * w * w
    m_sleeve = density * sleeve_size**3
    m_arm = m_rod + ball_mass
    c = (m_rod * L / 2 + ball_mass * L) / m_arm       # pivot to the arm's centre of mass
    J_arm = bar_inertia(m_rod, L, w)
    J_arm[1, 1] += m_rod * (L / 2 - c) ** 2 + ball_mass * (L - c) ** 2
    J_arm[2, 2] += m_rod * (L / 2 - c) ** 2 + ball_mass * (L - c) ** 2
    model = Model(gravity=(0.0, 0.0, -g))
    model.parameters = dict(couplers=couplers, shaft_length=H, rod_length=L, rod_width=w,
                            sleeve_size=sleeve_size, density=density, ball_mass=ball_mass,
                            stiffness=stiffness, damping=damping, rest_length=rest_length,
                            g=g, m_shaft=m_shaft, m_rod=m_rod, m_sleeve=m_sleeve,
                            arm_centre=c)
    model.add_body("shaft", m_shaft, _rod(m_shaft, H, "z", w))
    model.add_body("sleeve", m_sleeve, np.full(3, m_sleeve * sleeve_size**2 / 6))
    model.add_body("arm1", m_arm, J_arm)
    model.add_body("arm2", m_arm, J_arm)
    Y = np.array([0.0, 1.0, 0.0])
    model.add_joint("spin", "revolute", "ground", "shaft", child_point=(0, 0, -H / 2), axis=_Z)
    model.add_joint("slide", "prismatic", "shaft", "sleeve", parent_point=(0, 0, -H / 2),
                    axis=_Z)
    model.add_joint("hinge1", "revolute", "shaft", "arm1", parent_point=(e, 0, H / 2),
                    child_point=(-c, 0, 0), axis=Y)
    model.add_joint("hinge2", "revolute", "shaft", "arm2", parent_point=(-e, 0, H / 2),
                    child_point=(c, 0, 0), axis=-Y)
    middle = L / 2 - c                                 # rod middle, arm axes (arm1)
    if couplers == "spring":
        for k, sign in ((1, 1.0), (2, -1.0)):
            model.add_spring(f"spring{k}", "sleeve", f"arm{k}", point_a=(sign * e, 0, 0),
                             point_b=(sign * middle, 0, 0), stiffness=stiffness,
                             rest_length=rest_length, damping=damping)
        return model
    m_c = density * rest_length * w * w if coupler_mass is None else coupler_mass
    _positive(coupler_mass=m_c)
    model.parameters["coupler_mass"] = m_c
    lc = rest_length / 2
    for k, sign in ((1, 1.0), (2, -1.0)):
        model.add_body(f"coupler{k}", m_c, bar_inertia(m_c, rest_length, w))
        model.add_joint(f"pin{k}", "revolute", "sleeve", f"coupler{k}",
                        parent_point=(sign * e, 0, 0), child_point=(-sign * lc, 0, 0),
                        axis=-sign * Y)
        model.add_joint(f"elbow{k}", "revolute", f"coupler{k}", f"arm{k}",
                        parent_point=(sign * lc, 0, 0), child_point=(sign * middle, 0, 0),
                        axis=sign * Y)
    return model


def flyball_governor_state(model, alpha=np.pi / 6, alpha_rate=0.0, *, spin=0.0,
                           spin_rate=2 * np.pi):
    """Consistent ``(q, qd)`` of :func:`flyball_governor` with the couplers at rest length.

    The sleeve stands where the coupler (or the unstretched spring) of length ``l =
    rest_length`` reaches from the sleeve's side to the middle of the rod, below it::

        s = H - (L/2) sin(alpha) - w,   w = sqrt(l^2 - (L/2)^2 cos(alpha)^2),

    ``ds/dt = -(L/2) cos(alpha) (1 + (L/2) sin(alpha) / w) dalpha/dt``; the couplers of the
    rigid variant rise at ``gamma = atan2(w, (L/2) cos(alpha))`` above the horizontal
    (``q_pin = gamma``, ``q_elbow = alpha + gamma``). The defaults are the benchmark's
    start: ``alpha = 30`` degrees (so ``s = 0.5`` m), shaft at ``2 pi`` rad/s.

    Parameters
    ----------
    alpha, alpha_rate : float
        Angle of both rods below the horizontal (rad) and its rate.
    spin, spin_rate : float
        Shaft angle and angular velocity about z.

    Raises
    ------
    InconsistentStateError
        If ``(L/2) cos(alpha) > l`` (the coupler cannot reach the rod).

    Examples
    --------
    >>> q, qd = flyball_governor_state(flyball_governor())
    >>> q.round(6).tolist(), qd.round(6).tolist()
    ([0.0, 0.5, 0.523599, 0.523599], [6.283185, 0.0, 0.0, 0.0])
    """
    p = model.parameters
    H, h, lc = p["shaft_length"], p["rod_length"] / 2, p["rest_length"]
    alpha, alpha_rate = float(alpha), float(alpha_rate)
    u = h * np.cos(alpha)
    if u > lc:
        raise InconsistentStateError(
            f"the couplers cannot reach the rods at alpha={alpha:.4g} rad (horizontal reach "
            f"{u:.4g} > coupler length {lc:.4g})"
        )
    w = np.sqrt(lc * lc - u * u)
    s = H - h * np.sin(alpha) - w
    u_dot = -h * np.sin(alpha) * alpha_rate
    w_dot = -u * u_dot / w
    s_dot = -h * np.cos(alpha) * alpha_rate - w_dot
    q = [spin, s, alpha, alpha]
    qd = [spin_rate, s_dot, alpha_rate, alpha_rate]
    if p["couplers"] == "rigid":
        gamma = np.arctan2(w, u)
        gamma_dot = (u * w_dot - w * u_dot) / (lc * lc)
        q += [gamma, alpha + gamma, gamma, alpha + gamma]
        qd += [gamma_dot, alpha_rate + gamma_dot, gamma_dot, alpha_rate + gamma_dot]
    return np.array(q, dtype=float), np.array(qd, dtype=float)


def _box_inertia(mass, size):
    a, b, c = size
    return np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * mass / 12.0


def alyushin_robot(H=1.0, L1=0.8, lead=0.1, l3=0.5, m1=10.0, m2=5.0, m3=2.0, m_load=3.0,
                   load_size=(0.12, 0.1, 0.08), load_offset=(0.06, 0.05, -0.06), g=9.81):
    """The robot of Alyushin's Fig. 1: two revolute pairs and a screw pair, with a load.

    At ``q = 0`` (the initial configuration, whose coordinates are the material labels
    ``alpha``):

    * link 1, a column ``0.1 x 0.1 x H`` (mass ``m1``) from the origin to ``A = (0, 0, H)``,
      turns about ``z`` through the origin (joint ``"waist"``, (41));
    * link 2, an arm ``L1 x 0.08 x 0.08`` (``m2``) from ``A`` to ``B = (L1, 0, H)``, turns
      about link 1's ``y`` axis through ``A`` (``"shoulder"``, (42));
    * link 3, a screw ``l3 x 0.05 x 0.05`` (``m3``) from ``B`` along ``x``, turns about link
      2's ``x`` axis through ``B`` and advances ``lead`` per turn (``"screw"``, (43));
    * the load, a box ``load_size`` (``m_load``) clamped to the end of link 3 with its
      centre at ``(L1 + l3, 0, H) + load_offset`` (``"clamp"``, a fixed joint): off the
      screw's axis, so that the screw's turn moves it.

    All links are uniform boxes; gravity ``-g`` along ``z``. Coordinates:
    ``(waist, shoulder, screw)`` angles. :func:`mbcourse.kinetic.alyushin_motions` gives
    the same motion in the material description (41)–(47).

    Examples
    --------
    >>> m = alyushin_robot()
    >>> m.q_names
    ['waist.angle', 'shoulder.angle', 'screw.angle']
    >>> r, A = m.body_poses([0.0, 0.0, 2 * 3.141592653589793])   # one turn: advance by the lead
    >>> round(float(r[3, 0] - 0.8 - 0.25), 12)
    0.1
    """
    _positive(H=H, L1=L1, lead=lead, l3=l3, m1=m1, m2=m2, m3=m3, m_load=m_load, g=g)
    load_size = np.asarray(load_size, dtype=float)
    m = Model(gravity=(0.0, 0.0, -g))
    C1, C2, C3 = np.array([0, 0, H / 2]), np.array([L1 / 2, 0, H]), np.array([L1 + l3 / 2, 0, H])
    CL = np.array([L1 + l3, 0.0, H]) + np.asarray(load_offset, dtype=float)
    m.add_body("link1", m1, _box_inertia(m1, (0.1, 0.1, H)))
    m.add_body("link2", m2, _box_inertia(m2, (L1, 0.08, 0.08)))
    m.add_body("link3", m3, _box_inertia(m3, (l3, 0.05, 0.05)))
    m.add_body("load", m_load, _box_inertia(m_load, load_size))
    A, B = np.array([0.0, 0.0, H]), np.array([L1, 0.0, H])
    m.add_joint("waist", "revolute", "ground", "link1", child_point=-C1, axis=_Z)
    m.add_joint("shoulder", "revolute", "link1", "link2", parent_point=A - C1,
                child_point=A - C2, axis=(0.0, 1.0, 0.0))
    m.add_joint("screw", "screw", "link2", "link3", parent_point=B - C2, child_point=B - C3,
                axis=(1.0, 0.0, 0.0), lead=lead)
    m.add_joint("clamp", "fixed", "link3", "load", parent_point=CL - C3)
    m.parameters = dict(H=H, L1=L1, lead=lead, l3=l3, m1=m1, m2=m2, m3=m3, m_load=m_load,
                        load_size=tuple(load_size), load_offset=tuple(load_offset), g=g,
                        centres={"link1": tuple(C1), "link2": tuple(C2), "link3": tuple(C3),
                                 "load": tuple(CL)},
                        sizes={"link1": (0.1, 0.1, H), "link2": (L1, 0.08, 0.08),
                               "link3": (l3, 0.05, 0.05), "load": tuple(load_size)})
    return m


#: Andrews' squeezing mechanism's data (SI units), as in Hairer & Wanner, *Solving Ordinary
#: Differential Equations II*, section VII.7, and the Bari test set for IVP solvers.
ANDREWS_PARAMETERS = dict(
    m1=0.04325, m2=0.00365, m3=0.02373, m4=0.00706, m5=0.07050, m6=0.00706, m7=0.05498,
    i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7,
    i7=1.912e-5, xa=-0.06934, ya=-0.00227, xb=-0.03635, yb=0.03273, xc=0.014, yc=0.072,
    d=0.028, da=0.0115, e=0.02, ea=0.01421, rr=0.007, ra=0.00092, ss=0.035, sa=0.01874,
    sb=0.01043, sc=0.018, sd=0.02, ta=0.02308, tb=0.00916, u=0.04, ua=0.01228, ub=0.00449,
    zf=0.02, zt=0.04, fa=0.01421, c0=4530.0, l0=0.07785, mom=0.033)

#: The test set's consistent start ``(beta, Theta, gamma, Phi, delta, Omega, epsilon)`` at rest.
ANDREWS_START = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
                 0.222668390165885884674473185609, 0.487364979543842550225598953530,
                 -0.222668390165885884674473185609, 1.23054744454982119249735015568)


def andrews_squeezer():
    """Andrews' squeezing mechanism: seven planar bodies, three loops, a spring and a motor.

    The standard test of integrators for constrained mechanisms (Hairer & Wanner, *Solving
    Ordinary Differential Equations II*, section VII.7; the Bari test set for IVP solvers),
    with its data :data:`ANDREWS_PARAMETERS` (no gravity). Bodies ``K1``..``K7``; every
    joint is revolute about z:

    * ``"O"`` (ground-K1 at the origin, angle ``beta``) and ``"F"`` (K1-K2, ``Theta``): the
      crank, driven by the torque ``mom`` on K1, and the rod K2 to the point E;
    * ``"B"`` (ground-K3 at ``(xb, yb)``, ``gamma``): the triangle K3 with the spring of
      stiffness ``c0`` and rest length ``l0`` from its point D to the ground point C;
    * ``"A5"`` (ground-K5 at ``(xa, ya)``, ``delta``) and ``"H"`` (K5-K4, ``Phi``);
    * ``"A7"`` (ground-K7 at ``(xa, ya)``, ``epsilon``) and ``"G"`` (K7-K6, ``Omega``);
    * ``"E3"``, ``"E4"``, ``"E6"``: K2 meets K3, K4 and K6 at the point E (the default cut
      joints; 7 coordinates - 3 x 2 planar rows = 1 degree of freedom).

    ``q = (beta, Theta, gamma, delta, Phi, epsilon, Omega, q_E3, q_E4, q_E6)``: the first
    seven are the test set's angles in the order of this tree (the test set lists ``Phi``
    before ``delta`` and ``Omega`` before ``epsilon``), measured as there: K1 turns by
    ``beta``, K2 by ``beta + Theta``, K4 by ``delta + Phi``, K6 by ``epsilon + Omega``. The
    data give the centres of mass of K3, K5 and K7 only as distances from their pivots
    (``sqrt(sa^2 + sb^2)`` and so on), the one thing that enters the dynamics without
    gravity; they are placed at ``(sa, sb)``, ``(ta, tb)``, ``(ua, ub)`` in the bodies' axes.
    Use :func:`andrews_squeezer_state` for consistent states.

    Examples
    --------
    >>> m = andrews_squeezer()
    >>> m.n, m.nq, [j.name for j in m.joints][-3:], m.graph.is_tree
    (7, 10, ['E3', 'E4', 'E6'], False)
    """
    p = ANDREWS_PARAMETERS
    model = Model(gravity=(0.0, 0.0, 0.0))
    model.parameters = dict(p)
    for k in range(1, 8):
        model.add_body(f"K{k}", p[f"m{k}"], np.full(3, p[f"i{k}"]))
    E2 = (p["da"] - p["d"], 0, 0)                       # E on K2
    H5 = (p["zt"] - p["ta"], -p["tb"], 0)               # the hinge H on K5
    G7 = (-p["ua"], -p["u"] - p["ub"], 0)               # the hinge G on K7
    model.add_joint("O", "revolute", "ground", "K1", child_point=(-p["ra"], 0, 0), axis=_Z)
    model.add_joint("F", "revolute", "K1", "K2", parent_point=(p["rr"] - p["ra"], 0, 0),
                    child_point=(p["da"], 0, 0), axis=_Z)
    model.add_joint("B", "revolute", "ground", "K3", parent_point=(p["xb"], p["yb"], 0),
                    child_point=(-p["sa"], -p["sb"], 0), axis=_Z)
    model.add_joint("A5", "revolute", "ground", "K5", parent_point=(p["xa"], p["ya"], 0),
                    child_point=(-p["ta"], -p["tb"], 0), axis=_Z)
    model.add_joint("H", "revolute", "K5", "K4", parent_point=H5,
                    child_point=(0, p["e"] - p["ea"], 0), axis=_Z)
    model.add_joint("A7", "revolute", "ground", "K7", parent_point=(p["xa"], p["ya"], 0),
                    child_point=(-p["ua"], -p["ub"], 0), axis=_Z)
    model.add_joint("G", "revolute", "K7", "K6", parent_point=G7,
                    child_point=(p["fa"] - p["zf"], 0, 0), axis=_Z)
    model.add_joint("E3", "revolute", "K2", "K3", parent_point=E2,
                    child_point=(-p["sa"], -p["ss"] - p["sb"], 0), axis=_Z)
    model.add_joint("E4", "revolute", "K2", "K4", parent_point=E2, child_point=(0, -p["ea"], 0),
                    axis=_Z)
    model.add_joint("E6", "revolute", "K2", "K6", parent_point=E2, child_point=(p["fa"], 0, 0),
                    axis=_Z)
    model.add_spring("spring", "K3", "ground", point_a=(p["sd"] - p["sa"], -p["sc"] - p["sb"], 0),
                     point_b=(p["xc"], p["yc"], 0), stiffness=p["c0"], rest_length=p["l0"])
    model.add_force("K1", torque=(0.0, 0.0, p["mom"]), frame="world", name="motor")
    return model


def andrews_squeezer_state(model, angles=ANDREWS_START, rates=(0.0,) * 7):
    """The Model's ``(q, qd)`` of :func:`andrews_squeezer` from the test set's seven angles.

    ``angles`` and ``rates`` are ``(beta, Theta, gamma, Phi, delta, Omega, epsilon)`` and
    their rates in the test set's order (default: its consistent start at rest); the cut
    joints' angles follow from the bodies' (``q_E3 = gamma - beta - Theta``, ``q_E4 = delta
    + Phi - beta - Theta``, ``q_E6 = epsilon + Omega - beta - Theta``). The angles are taken
    as given: :func:`mbcourse.loops.assemble` makes other consistent states.

    Examples
    --------
    >>> q, qd = andrews_squeezer_state(andrews_squeezer())
    >>> q.round(4).tolist()[:7]
    [-0.0617, 0.0, 0.4553, 0.4874, 0.2227, 1.2305, -0.2227]
    """
    out = []
    for values, name in ((angles, "angles"), (rates, "rates")):
        try:
            v = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            v = np.full(1, np.nan)
        if v.shape != (7,) or not np.all(np.isfinite(v)):
            raise ModelError(f"andrews_squeezer_state: {name} must be 7 finite numbers "
                             f"(beta, Theta, gamma, Phi, delta, Omega, epsilon), got {values!r}")
        beta, theta, gamma, phi, delta, omega, eps = v
        rod = beta + theta
        out.append(np.array([beta, theta, gamma, delta, phi, eps, omega, gamma - rod,
                             delta + phi - rod, eps + omega - rod]))
    return out[0], out[1]
