"""Chapter 5: Telegin's six manipulators (examples 1-6), mass matrices DERIVED from the
geometry of the models in ``mbcourse.models`` and compared with the paper (Telegin's
examples 1-6; the errata page, E22-E27).

Parameter mapping. The models' bodies have their frames at the centres of mass; the symbolic
parameters below are the models' own: ``M_k`` the mass of body ``k`` (the paper's
``m_0k``), ``d_k`` the distance of its centre of mass from its pole ``O_k`` (a point on
its joint axis), ``J_k`` its central principal moments. The paper's combined parameters are

* ``m_i``  = mass of the SUBSYSTEM ``i..N`` = ``M_i + ... + M_N``;
* ``a_i``  = ``m_0i |O_i C_i|`` = ``M_i d_i``;
* ``I_i``  = moment about an axis through the pole ``O_i``: ``J_i + M_i d_i^2`` for an axis
  perpendicular to ``O_i C_i``, ``J_i`` for the axis along ``O_i C_i``.

Expressions stay small: ``derive(..., simplify=False)`` and differences tested with
``expand`` + ``trigsimp``.
"""

import numpy as np
import pytest
import sympy as sp

import mbcourse as mb
from mbcourse.inertial import decompose, decompose_numeric, forming_bodies

POS = dict(positive=True)


def zero(e):
    """Exact test of a trigonometric polynomial for zero: expand, write ``sin q``, ``cos q``
    as symbols ``s, c`` and reduce modulo ``s^2 + c^2 - 1`` (a normal form; much faster
    than ``simplify``)."""
    e = sp.expand(sp.expand_trig(sp.sympify(e)))
    if e == 0:
        return True
    args = sorted({f.args[0] for f in e.atoms(sp.sin, sp.cos)}, key=str)
    for k, x in enumerate(args):
        c, s = sp.symbols(f"_c{k} _s{k}")
        e = e.xreplace({sp.cos(x): c, sp.sin(x): s})
        e = sp.rem(sp.expand(e), c**2 + s**2 - 1, c)
    return sp.expand(e) == 0


def mzero(M):
    return all(zero(e) for e in M)


def derive(model, **par):
    """Derive with the given parameters (keys with "__" for "." in names)."""
    return mb.symbolic.derive(model, parameters={k.replace("__", "."): v for k, v in par.items()},
                              simplify=False)


def masses(model, M):
    return {f"{b.name}.mass": M[k] for k, b in enumerate(model.bodies[1:])}


def check_facts(s, H):
    """Facts 22 and 23 on a derived mass matrix: the split is complete, the gyroscopic
    forces do no work, and the serial-chain forms (12)-(17) hold.

    ``H`` is a compact form of ``s.H`` (the caller has checked ``H == s.H``); the
    decomposition of the compact form is compared with the model's own ``s.h``, which keeps
    the expressions small. Returns the Decomposition.
    """
    assert mzero(s.H - H)
    q, qd = s.q, s.qd
    N = len(q)
    d = decompose(H, q, qd, simplify=False)
    v = sp.Matrix(qd)
    assert mzero(d.total - s.h)                                           # (1): complete
    assert zero((d.gyroscopic.T * v)[0])                                  # zero power
    assert zero(((d.centrifugal + d.coriolis).T * v)[0] - (v.T * d.H_dot * v)[0] / 2)
    # fact 23, a serial chain: H_kj (k >= j) depends only on q_{j+1..N}
    for j in range(N):
        for k in range(j, N):
            assert sp.expand(H[k, j]).free_symbols.isdisjoint(q[:j + 1])
    assert zero(d.centrifugal[N - 1]) and zero(d.coriolis[N - 1])          # (17)
    assert zero(d.dT_dq[0])
    assert zero(d.gyroscopic[0] - d.H_dot[0, 0] * qd[0] / 2)              # h_g1 = h^g_o1
    # (12): h_ci = sum_{j>i} H_jij dq_j^2
    for i in range(N):
        hc = sum(sp.diff(H[j, i], q[j]) * qd[j] ** 2 for j in range(i + 1, N))
        assert zero(d.centrifugal[i] - hc)
    return d


# ------------------------------------------------------------------ example 1, polar arm
def test_example_1_polar_arm():
    model = mb.models.telegin_polar()
    M1, M2, d1, J1z, J2z = sp.symbols("M1 M2 d1 J1z J2z", **POS)
    s = derive(model, **masses(model, (M1, M2)), turret__inertia=(1, 1, J1z),
               boom__inertia=(1, 1, J2z), e1__child_point=(-d1, 0, 0),
               p2__parent_point=(-d1, 0, 0))
    q1, q2 = s.q
    dq1, dq2 = s.qd
    # the paper: I_1^z about O_1 (on the axis), I_2^z about O_2 = C_2, m_2 = mass of body 2
    I1, I2, m2 = J1z + M1 * d1**2, J2z, M2
    paper = sp.diag(I1 + I2 + m2 * q2**2, m2)
    d = check_facts(s, paper)
    assert mzero(d.centrifugal)                                           # h_c1 = H_212 = 0
    assert zero(d.coriolis[0] - m2 * q2 * dq1 * dq2)                      # h_o1 = h_g1
    assert zero(d.gyroscopic[0] - m2 * q2 * dq1 * dq2)
    assert zero(d.dT_dq[1] - m2 * q2 * dq1**2)
    assert zero(d.gyroscopic[1] + m2 * q2 * dq1**2)


# -------------------------------------------------------------- example 2, Cartesian arm
def test_example_2_cartesian_arm():
    model = mb.models.telegin_cartesian()
    M = sp.symbols("M1:4", **POS)
    d3, J3z = sp.symbols("d3 J3z", **POS)
    s = derive(model, **masses(model, M), link__inertia=(1, 1, J3z), e3__child_point=(-d3, 0, 0))
    q, dq = s.q, s.qd
    c3, s3 = sp.cos(q[2]), sp.sin(q[2])
    m1, m2, a3, I3 = sum(M), M[1] + M[2], M[2] * d3, J3z + M[2] * d3**2
    paper = sp.Matrix([[m1, 0, a3 * c3], [0, m2, -a3 * s3], [a3 * c3, -a3 * s3, I3]])
    d = check_facts(s, paper)
    assert mzero(d.gyroscopic)                                            # all h_g = 0
    assert mzero(d.coriolis)
    assert mzero(d.centrifugal - sp.Matrix([-a3 * s3 * dq[2]**2, -a3 * c3 * dq[2]**2, 0]))
    assert zero(s.H[2, 0].diff(q[2]) - s.H[2, 1]) and zero(s.H[2, 1].diff(q[2]) + s.H[2, 0])


# ------------------------------------------------------------ example 3, cylindrical arm
def test_example_3_cylindrical_arm():
    model = mb.models.telegin_cylindrical_3()
    M = sp.symbols("M1:4", **POS)
    d2, J1y, J2y, J3y = sp.symbols("d2 J1y J2y J3y", **POS)
    s = derive(model, **masses(model, M), column__inertia=(1, J1y, 1),
               arm__inertia=(1, J2y, 1), rod__inertia=(1, J3y, 1),
               p2__child_point=(d2, 0, 0), p3__parent_point=(d2, 0, 0))
    q, dq = s.q, s.qd
    # I_2^y about the vertical through O_2 (arm's outer end), a_2 = M2 d2, m_2 = M2 + M3
    I1, I2, I3 = J1y, J2y + M[1] * d2**2, J3y
    m2, m3, a2 = M[1] + M[2], M[2], M[1] * d2
    paper = sp.diag(I1 + I2 + I3 + m2 * q[1]**2 - 2 * a2 * q[1], m2, m3)
    d = check_facts(s, paper)
    mq2 = m2 * q[1] - a2
    assert zero(s.H[0, 0].diff(q[1]) - 2 * mq2)
    assert zero(d.gyroscopic[0] - mq2 * dq[0] * dq[1])
    assert zero(d.coriolis[0] - mq2 * dq[0] * dq[1])
    assert zero(d.gyroscopic[1] + mq2 * dq[0]**2)
    assert mzero(d.centrifugal)


# --------------------------------------------------- example 4, cylindrical arm, 4 joints
def test_example_4_cylindrical_arm_with_wrist():
    model = mb.models.telegin_cylindrical_4()
    M = sp.symbols("M1:5", **POS)
    d3, d4, J1y, J2y, J3y, J4x, J4y, J4z = sp.symbols("d3 d4 J1y J2y J3y J4x J4y J4z", **POS)
    s = derive(model, **masses(model, M), column__inertia=(1, J1y, 1),
               carriage__inertia=(1, J2y, 1), arm__inertia=(1, J3y, 1),
               wrist__inertia=(J4x, J4y, J4z), p3__child_point=(d3, 0, 0),
               e4__parent_point=(d3, 0, 0), e4__child_point=(-d4, 0, 0))
    q, dq = s.q, s.qd
    H = s.H
    c4, s4 = sp.cos(q[3]), sp.sin(q[3])
    m2, m3, a3, a4 = sum(M[1:]), M[2] + M[3], M[2] * d3, M[3] * d4
    I4x, I4y, I4z = J4x, J4y + M[3] * d4**2, J4z + M[3] * d4**2              # about O_4 = O_3
    # legible or reconstructed entries (H_11 only through its derivatives, E27)
    assert zero(H[1, 1] - m2) and zero(H[2, 2] - m3) and zero(H[3, 3] - I4z)
    assert zero(H[3, 1] - a4 * c4) and zero(H[3, 2] + a4 * s4)
    assert all(zero(H[i, j]) for i, j in [(1, 0), (2, 0), (3, 0), (2, 1)])
    hq = m3 * q[2] + a4 * c4 - a3
    Iq = (a4 * q[2] + (I4y - I4x) * c4) * s4          # corrected sign of the inertia term
    Iq_printed = (a4 * q[2] + (I4x - I4y) * c4) * s4
    assert zero(H[0, 0].diff(q[2]) - 2 * hq)
    assert zero(H[0, 0].diff(q[3]) + 2 * Iq)
    assert not zero(H[0, 0].diff(q[3]) + 2 * Iq_printed)
    H11 = (J1y + J2y + J3y + M[2] * d3**2 + m3 * q[2]**2 - 2 * a3 * q[2]
           + 2 * a4 * q[2] * c4 + I4x + (I4y - I4x) * c4**2)
    Hc = sp.Matrix(H)
    Hc[0, 0] = H11
    d = check_facts(s, Hc.applyfunc(lambda e: sp.trigsimp(sp.expand(e))))
    hgo1 = (hq * dq[2] - Iq * dq[3]) * dq[0]
    assert zero(d.gyroscopic[0] - hgo1) and zero(d.coriolis[0] - hgo1)
    assert zero(d.centrifugal[1] + a4 * s4 * dq[3]**2)
    assert zero(d.centrifugal[2] + a4 * c4 * dq[3]**2)
    assert zero(d.gyroscopic[2] + hq * dq[0]**2)
    assert zero(d.gyroscopic[3] - Iq * dq[0]**2)


# ----------------------------------------------------------------- example 5, angular arm
def test_example_5_angular_arm_and_erratum_E26():
    model = mb.models.telegin_angular()
    M = sp.symbols("M1:4", **POS)
    L, d2, d3 = sp.symbols("L d2 d3", **POS)
    J1y, J2x, J2y, J2z, J3x, J3y, J3z = sp.symbols("J1y J2x J2y J2z J3x J3y J3z", **POS)
    s = derive(model, **masses(model, M), column__inertia=(1, J1y, 1),
               upper_arm__inertia=(J2x, J2y, J2z), forearm__inertia=(J3x, J3y, J3z),
               e2__child_point=(-d2, 0, 0), e3__parent_point=(L - d2, 0, 0),
               e3__child_point=(-d3, 0, 0))
    q, dq = s.q, s.qd
    H = s.H
    c2, c3, s3, c23 = sp.cos(q[1]), sp.cos(q[2]), sp.sin(q[2]), sp.cos(q[1] + q[2])
    m3, a3 = M[2], M[2] * d3
    I2z, I3z = J2z + M[1] * d2**2, J3z + M[2] * d3**2                       # about the poles
    assert zero(H[1, 1] - (I2z + I3z + m3 * L**2 + 2 * L * a3 * c3))
    assert zero(H[2, 1] - (I3z + L * a3 * c3)) and zero(H[2, 2] - I3z)
    assert zero(H[1, 0]) and zero(H[2, 0])
    # H_11 is illegible (E27); the derived one has the c2^2, c23^2 and c2 c23 terms
    I2x, I2y, I3x, I3y = J2x, J2y + M[1] * d2**2, J3x, J3y + M[2] * d3**2
    H11 = (J1y + I2x + (I2y - I2x) * c2**2 + m3 * L**2 * c2**2 + 2 * L * a3 * c2 * c23
           + I3x + (I3y - I3x) * c23**2)
    Hc = sp.Matrix([[H11, 0, 0],
                    [0, I2z + I3z + m3 * L**2 + 2 * L * a3 * c3, I3z + L * a3 * c3],
                    [0, I3z + L * a3 * c3, I3z]])
    d = check_facts(s, Hc)
    H = Hc
    H112, H113, H223, H323 = (H[0, 0].diff(q[1]), H[0, 0].diff(q[2]), H[1, 1].diff(q[2]),
                              H[2, 1].diff(q[2]))
    assert zero(d.centrifugal[0])
    hg1 = dq[0] * (H112 * dq[1] + H113 * dq[2]) / 2
    assert zero(d.coriolis[0] - hg1) and zero(d.gyroscopic[0] - hg1)
    assert zero(d.centrifugal[1] + L * a3 * s3 * dq[2]**2)
    assert zero(d.coriolis[1] + L * a3 * s3 * dq[1] * dq[2])
    hg2 = (H223 * dq[1] * dq[2] - H112 * dq[0]**2) / 2
    assert zero(d.gyroscopic[1] - hg2)
    hg2_printed = H223 * dq[1] * dq[2] / 2 - H112 * dq[0]**2             # E26: 1/2 lost
    assert not zero(d.gyroscopic[1] - hg2_printed)
    assert zero(d.dT_dq[2] - ((H113 * dq[0]**2 + H223 * dq[1]**2) / 2 + dq[1] * H323 * dq[2]))
    assert zero(d.gyroscopic[2] + (H113 * dq[0]**2 + H223 * dq[1]**2) / 2)
    assert forming_bodies(model, 1) == {"carrying": ["e1"], "carried": ["e3"]}


# ----------------------------------------------------------- example 6, universal arm
def test_example_6_universal_arm_and_errata_E23_E24():
    model = mb.models.telegin_universal()
    M = sp.symbols("M1:7", **POS)
    d5, d6 = sp.symbols("d5 d6", **POS)
    J3y, J4y, J5x, J5y, J5z, J6x, J6y = sp.symbols("J3y J4y J5x J5y J5z J6x J6y", **POS)
    # the tool is symmetric about its spin axis (J6z = J6x); O_6 taken at O_5 on that axis
    s = derive(model, **masses(model, M), column__inertia=(1, J3y, 1), ram__inertia=(1, J4y, 1),
               wrist__inertia=(J5x, J5y, J5z), tool__inertia=(J6x, J6y, J6x),
               e5__child_point=(0, d5, 0), e6__parent_point=(0, d5, 0),
               e6__child_point=(0, d6, 0))
    q, dq = s.q, s.qd
    c3, s3, c5, s5 = sp.cos(q[2]), sp.sin(q[2]), sp.cos(q[4]), sp.sin(q[4])
    # paper's parameters: subsystem masses, a = a5 + a6 (about O_5), A, B, I6, H55
    m1, m2, m4, a = sum(M), sum(M[1:]), sum(M[3:]), M[4] * d5 + M[5] * d6
    I5x, I6x = J5x + M[4] * d5**2, J6x + M[5] * d6**2
    A, B, I6 = J3y + J4y + I5x + I6x, I5x - J5y + I6x - J6y, J6y
    H55 = J5z + M[4] * d5**2 + J6x + M[5] * d6**2
    P = sp.zeros(6, 6)
    P[0, 0], P[1, 1], P[3, 3], P[4, 4], P[5, 5] = m1, m2, m4, H55, I6
    P[2, 0], P[2, 1], P[2, 2] = -a * c3 * s5, -a * s3 * s5, A - B * c5**2
    P[4, 0], P[4, 1], P[4, 3] = -a * s3 * c5, a * c3 * c5, -a * s5
    P[5, 2] = I6 * c5
    P = sp.Matrix(6, 6, lambda i, j: P[max(i, j), min(i, j)])
    d = check_facts(s, P)
    hc, ho, hg = d.centrifugal, d.coriolis, d.gyroscopic
    assert zero(hc[0] - a * s3 * s5 * (dq[2]**2 + dq[4]**2))
    assert zero(ho[0] + 2 * a * c3 * c5 * dq[2] * dq[4])
    assert zero(hc[1] + a * c3 * s5 * (dq[2]**2 + dq[4]**2))
    assert zero(ho[1] + 2 * a * s3 * c5 * dq[2] * dq[4])
    assert zero(hc[3] + a * c5 * dq[4]**2)
    assert zero(ho[2] - (B * s5 * c5 * dq[2] * dq[4] - I6 * s5 * dq[4] * dq[5]))
    assert zero(hg[2] - B * s5 * c5 * dq[2] * dq[4])                       # E24
    assert zero(hg[4] - (I6 * dq[5] - B * c5 * dq[2]) * s5 * dq[2])
    assert zero(hg[5] + I6 * s5 * dq[2] * dq[4])
    # E23: h_o1 != h^g_o1 (= 1/2 dH_11 dq_1 = 0) in this example
    assert zero(d.H_dot[0, 0]) and not zero(ho[0])
    # E24: the printed h_g3 (with the Coriolis term -I6 s5 dq5 dq6) would do work
    hg3_printed = hg[2] - I6 * s5 * dq[4] * dq[5]
    assert zero(hg3_printed * dq[2] + hg[4] * dq[4] + hg[5] * dq[5]
                + I6 * s5 * dq[2] * dq[4] * dq[5])
    totals = [a * (s3 * s5 * (dq[2]**2 + dq[4]**2) - 2 * c3 * c5 * dq[2] * dq[4]),
              -a * (c3 * s5 * (dq[2]**2 + dq[4]**2) + 2 * s3 * c5 * dq[2] * dq[4]),
              (2 * B * c5 * dq[2] - I6 * dq[5]) * s5 * dq[4],
              -a * c5 * dq[4]**2,
              (I6 * dq[5] - B * c5 * dq[2]) * s5 * dq[2],
              -I6 * s5 * dq[2] * dq[4]]
    assert mzero(d.total - sp.Matrix(totals))


# ------------------------------------------------- the numeric split against the symbolic
@pytest.mark.parametrize("builder", ["telegin_polar", "telegin_cylindrical_4",
                                     "telegin_angular"])
def test_numeric_split_equals_symbolic(builder):
    model = getattr(mb.models, builder)()
    s = mb.symbolic.derive(model, simplify=False)          # the model's numbers, exact
    d = decompose(s.H.applyfunc(sp.expand), s.q, s.qd, simplify=False)
    parts = sp.lambdify([s.q, s.qd], [d.centrifugal, d.coriolis, d.gyroscopic, d.dT_dq],
                        "numpy")
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd = rng.uniform(-1.5, 1.5, model.nq), rng.normal(size=model.nv)
        if builder != "telegin_angular":
            q[1:] = np.abs(q[1:]) + 0.3                       # positive extensions
        dn = decompose_numeric(model, q, qd)
        for got, want in zip((dn.centrifugal, dn.coriolis, dn.gyroscopic, dn.dT_dq),
                             parts(q, qd)):
            np.testing.assert_allclose(got, np.ravel(want).astype(float), atol=1e-8)
        assert abs(dn.gyroscopic @ qd) < 1e-9
        # and the total is the library's velocity-product term tau(qdd=0) + gravity
        h_lib = mb.tree.inverse_dynamics(model, q, qd, np.zeros(model.nv))
        h_lib = h_lib - mb.tree.inverse_dynamics(model, q, np.zeros(model.nv),
                                                 np.zeros(model.nv))
        np.testing.assert_allclose(dn.total, h_lib, atol=1e-8)


def test_builders_store_parameters_and_are_chains():
    for k, name in enumerate(["telegin_polar", "telegin_cartesian", "telegin_cylindrical_3",
                              "telegin_cylindrical_4", "telegin_angular", "telegin_universal"]):
        model = getattr(mb.models, name)(g=1.0)
        assert model.parameters["example"] == k + 1 and model.parameters["g"] == 1.0
        assert model.graph.is_tree and model.nq == model.nv
        assert [j.parent for j in model.joints] == list(range(model.n))   # a serial chain
        assert all(j.name[0] in "ep" for j in model.joints)
    with pytest.raises(mb.ModelError):
        mb.models.telegin_polar(m2=-1.0)
