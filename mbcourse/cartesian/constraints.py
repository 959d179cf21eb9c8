"""Elementary constraints in absolute (Cartesian) coordinates, Yudintsev section 2.

Every body ``k`` has its own coordinates: the centre-of-mass position ``r_k`` and the
orientation ``A_k`` (body axes to inertial axes) in space, or ``(x_k, y_k, phi_k)`` in the
plane. Its accelerations are ``ddX_k = (ddr_k, domega_k)`` with the angular acceleration in
**body axes** (spatial, 6 entries) or ``(ddx_k, ddy_k, ddphi_k)`` (planar, 3 entries).

An elementary constraint between bodies ``i`` and ``j`` is a scalar position-level
function ``g(X_i, X_j) = 0``. Twice differentiated it gives one row of the acceleration
equations (2.22)::

    Q_i ddX_i + Q_j ddX_j = b

Each function below returns ``(g, Q_i, Q_j, b)`` for a batch of states; the rows are the
exact derivatives of ``g`` (the tests check them against finite differences), so the same
functions serve the acceleration equations, the projection onto the constraint manifold
and Baumgarte stabilization.

* :func:`point_plane` — a point of body ``j`` stays on a plane of body ``i`` (2.10)–(2.22).
  Two of them make a point-on-line, three a spherical joint (2.44)–(2.45).
* :func:`perpendicular` — a vector of body ``j`` keeps its angle with a vector of body ``i``.
  Its row is the book's relative-rotation constraint (2.27)–(2.31) about ``n = u x w``
  with the opposite sign (equal rows for ``n = w x u``) at an assembled configuration with
  admissible velocities (tests); unlike the book's row it is the exact
  derivative of a position-level function, so drift can be measured and corrected.
* :func:`screw` — the advance along a screw joint's axis is the pitch times the angle
  turned (a point-plane function minus ``h theta``); with two point-plane and two
  perpendicular rows it makes a screw joint.
* :func:`planar_point_line` — the planar point-on-line constraint (2.33)–(2.43).
* :func:`planar_rotation` — the planar relative-rotation constraint (2.32).

Body states are passed as :class:`SpatialState` / :class:`PlanarState` slices: arrays with
a leading batch dimension.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import cross, mv, transpose


__all__ = [
    "SpatialState",
    "PlanarState",
    "point_plane",
    "perpendicular",
    "screw",
    "relative_rotation_row",
    "planar_point_line",
    "planar_rotation",
]

_OMEGA = np.array([[0.0, -1.0], [1.0, 0.0]])  # planar rotation by +90 degrees


@dataclass
class SpatialState:
    """Positions, orientations and velocities of one body for a batch of states.

    Attributes
    ----------
    r : (B, 3) centre of mass, inertial axes
    A : (B, 3, 3) body axes to inertial axes
    v : (B, 3) velocity of the centre of mass, inertial axes
    w : (B, 3) angular velocity, **body** axes
    """

    r: np.ndarray
    A: np.ndarray
    v: np.ndarray
    w: np.ndarray


@dataclass
class PlanarState:
    """Planar coordinates of one body for a batch: ``x`` (B, 2), ``phi`` (B,) and their
    rates ``v`` (B, 2), ``w`` (B,)."""

    x: np.ndarray
    phi: np.ndarray
    v: np.ndarray
    w: np.ndarray

    @property
    def A(self):
        """(B, 2, 2) rotation of the body axes."""
        c, s = np.cos(self.phi), np.sin(self.phi)
        return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def point_plane(n, rho_j, d, si, sj):
    """Point ``K`` of body ``j`` on a plane of body ``i``, Yudintsev (2.10)–(2.22).

    The plane has the unit normal ``n`` (body-``i`` axes) and passes through the point at
    ``d n`` from ``C_i``; ``K`` is at ``rho_j`` from ``C_j`` (body-``j`` axes)::

        g = n . rho_ij^(i) - d,   rho_ij^(i) = A_i^T (A_j rho_j + r_j - r_i)   (2.12), (2.15)

    Returns
    -------
    g : (B,)
    Q_i, Q_j : (B, 6)
        ``Q_i = [-n^T A_i^T, n^T tilde(rho_ij^(i))]``,
        ``Q_j = [n^T A_i^T, -n^T A_i^T A_j tilde(rho_j)]`` (2.22).
    b : (B,)
        ``n^T (2 w_i x A_i^T drho - w_i x (w_i x A_i^T rho) - A_i^T A_j w_j x (w_j x rho_j))``.

    Examples
    --------
    A point 1 m along the x axis of a body that spins about z at 1 rad/s, on the plane
    x = 1 of the fixed body: the row is ``ddx_j = 1`` (centripetal term), no violation.

    >>> import numpy as np
    >>> E = np.eye(3)[None]
    >>> ground = SpatialState(np.zeros((1, 3)), E, np.zeros((1, 3)), np.zeros((1, 3)))
    >>> body = SpatialState(np.zeros((1, 3)), E, np.zeros((1, 3)), np.array([[0, 0, 1.0]]))
    >>> g, Qi, Qj, b = point_plane(np.array([1.0, 0, 0]), np.array([1.0, 0, 0]), 1.0, ground, body)
    >>> float(g[0]), Qj[0].round(12).tolist(), float(b[0])
    (0.0, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)
    """
    Ai_T = transpose(si.A)
    rho0 = mv(sj.A, rho_j) + sj.r - si.r  # (2.15)
    rho_i = mv(Ai_T, rho0)  # (2.12)
    g = _dot(rho_i, n) - d
    nA = mv(si.A, n)  # n in inertial axes, i.e. n^T A_i^T as a row
    Qi = np.concatenate([-nA, cross(n, rho_i)], axis=-1)  # n^T skew(rho) x = (n x rho) . x
    Aij = Ai_T @ sj.A
    Qj = np.concatenate([nA, cross(rho_j, mv(transpose(Aij), n))], axis=-1)
    drho0 = mv(sj.A, cross(sj.w, rho_j)) + sj.v - si.v  # (2.16)
    wi = si.w
    term = (2.0 * cross(wi, mv(Ai_T, drho0))
            - cross(wi, cross(wi, rho_i))
            - mv(Aij, cross(sj.w, cross(sj.w, rho_j))))
    b = _dot(term, n)
    return g, Qi, Qj, b


def perpendicular(u, w, c0, si, sj):
    """Vector ``u`` of body ``i`` and vector ``w`` of body ``j`` keep ``u . w = c0``.

    ``g = u^T A_i^T A_j w - c0``; with two such rows a revolute joint keeps its axis, with
    three a prismatic joint keeps its orientation. Its row is the relative-rotation
    constraint (2.27)–(2.31) about ``n = u x w`` (see :func:`relative_rotation_row`).

    Returns
    -------
    g : (B,)
    Q_i, Q_j : (B, 6)
        Zero translational part; rotational parts ``u x w_i`` and ``w x u_j`` where
        ``w_i = A_i^T A_j w`` and ``u_j = A_j^T A_i u``.
    b : (B,)
    """
    Aij = transpose(si.A) @ sj.A
    w_in_i = mv(Aij, w)
    u_in_j = mv(transpose(Aij), u)
    g = _dot(w_in_i, u) - c0
    zero = np.zeros_like(w_in_i)
    Qi = np.concatenate([zero, cross(u, w_in_i)], axis=-1)
    Qj = np.concatenate([zero, cross(w, u_in_j)], axis=-1)
    dw_in_i = -cross(si.w, w_in_i) + mv(Aij, cross(sj.w, w))
    du_in_j = -cross(sj.w, u_in_j) + mv(transpose(Aij), cross(si.w, u))
    b = -(_dot(cross(u, dw_in_i), si.w) + _dot(cross(w, du_in_j), sj.w))
    return g, Qi, Qj, b


def screw(n, rho_j, d, pitch, u1, u2, w1, si, sj):
    """Advance along a screw's axis equal to the pitch times the angle turned.

    The screw joint of a child ``j`` on a parent ``i`` (axis ``n`` in body-``i`` axes, pitch
    ``h = lead / (2 pi)``) keeps the child's point ``K`` (``rho_j`` from ``C_j``, body-``j``
    axes) on the axis and lets the child turn only about it (two :func:`point_plane` rows
    across the axis and two :func:`perpendicular` rows); this row ties the advance to the
    turn::

        g = n . rho_ij^(i) - d - h theta,     rho_ij^(i) = A_i^T (A_j rho_j + r_j - r_i)

    with ``d = n . c_i`` (the parent's joint point, as in (2.12), (2.15)) and the angle
    turned ``theta = atan2(u2 . m, u1 . m)``, ``m = A_i^T A_j w1``: ``u1, u2`` complete
    ``n`` to a right-handed basis of body ``i`` and ``w1`` is the child vector that lies
    along ``u1`` at ``theta = 0``. Turns are counted by the advance, so ``g`` is taken on
    the branch nearest to zero (period ``lead = 2 pi h``).

    The first term is the point-plane function, whose derivatives are (2.22). With the
    relative angular velocity ``Omega = A_i^T A_j w_j - w_i`` (body-``i`` axes) the angle
    has ``dtheta/dt = c . Omega``, ``c = m x (x u2 - y u1) / (x^2 + y^2)``,
    ``x = u1 . m``, ``y = u2 . m``: on the joint's manifold (``m`` in the plane of ``u1,
    u2``) ``c = n`` and this is the relative-rotation row (2.27)–(2.31) about the axis;
    the row below is the exact derivative everywhere, so ``Q dX = dg/dt`` also off the
    manifold (drift, Baumgarte, projection).

    Returns
    -------
    g : (B,)
    Q_i, Q_j : (B, 6)
        Point-plane blocks (2.22) minus ``h (0, -c)`` and ``h (0, A_j^T A_i c)``.
    b : (B,)
        Point-plane ``b`` minus ``h (c . (w_i x A_i^T A_j w_j) - Omega . dc/dt)``.

    Examples
    --------
    A nut on the z axis of the ground, lead 0.1 m: a quarter turn must advance 0.025 m,
    and a nut turning at 2 rad/s must rise at 2 h = 0.0318 m/s.

    >>> import numpy as np
    >>> from mbcourse.spatial import axis_angle
    >>> E, z, x, y = np.eye(3)[None], np.array([0, 0, 1.0]), np.eye(3)[0], np.eye(3)[1]
    >>> h = 0.1 / (2 * np.pi)
    >>> ground = SpatialState(np.zeros((1, 3)), E, np.zeros((1, 3)), np.zeros((1, 3)))
    >>> nut = SpatialState(np.array([[0, 0, 0.025]]), axis_angle(z, np.pi / 2)[None],
    ...                    np.array([[0, 0, 2 * h]]), np.array([[0, 0, 2.0]]))
    >>> g, Qi, Qj, b = screw(z, np.zeros(3), 0.0, h, x, y, x, ground, nut)
    >>> abs(float(g[0])) < 1e-15, abs(float(Qj[0] @ np.r_[nut.v[0], nut.w[0]])) < 1e-15
    (True, True)
    """
    g, Qi, Qj, b = point_plane(n, rho_j, d, si, sj)
    R = transpose(si.A) @ sj.A
    m = mv(R, np.broadcast_to(w1, si.w.shape))  # the child's reference vector, i axes
    x, y = _dot(m, u1), _dot(m, u2)
    rho2 = (x * x + y * y)[..., None]
    s = x[..., None] * u2 - y[..., None] * u1
    c = cross(m, s) / rho2  # dtheta/dt = c . Omega
    R_wj = mv(R, sj.w)
    Omega = R_wj - si.w
    dm = cross(Omega, m)
    dx, dy = _dot(dm, u1), _dot(dm, u2)
    ds = dx[..., None] * u2 - dy[..., None] * u1
    dc = (cross(dm, s) + cross(m, ds) - 2.0 * (x * dx + y * dy)[..., None] * c) / rho2
    b_theta = _dot(c, cross(si.w, R_wj)) - _dot(Omega, dc)
    h = np.asarray(pitch, dtype=float)
    zero = np.zeros_like(c)
    Qi = Qi - h[..., None] * np.concatenate([zero, -c], axis=-1)
    Qj = Qj - h[..., None] * np.concatenate([zero, mv(transpose(R), c)], axis=-1)
    b = b - h * b_theta
    lead = 2.0 * np.pi * h
    g = g - h * np.arctan2(y, x)
    g = g - lead * np.round(g / lead)
    return g, Qi, Qj, b


def relative_rotation_row(n, si, sj):
    """The book's relative-rotation row (2.27)–(2.31): no relative rotation about ``n``.

    ``n`` is fixed in body ``i``; the velocity-level constraint is
    ``n^T (A_i^T A_j w_j - w_i) = 0`` and its derivative gives the row::

        -n^T dw_i + (A_j^T A_i n)^T dw_j = n^T tilde(w_i) A_i^T A_j w_j

    This is the textbook form, kept for teaching and for the tests; the assembled systems
    use :func:`perpendicular`, whose row equals it for ``n = w x u`` (minus it for
    ``n = u x w``) at assembled configurations with admissible velocities.

    Returns
    -------
    Q_i, Q_j : (B, 6)
    b : (B,)
    """
    Aij = transpose(si.A) @ sj.A
    zero = np.zeros(si.w.shape)
    Qi = np.concatenate([zero, -np.broadcast_to(n, si.w.shape)], axis=-1)
    Qj = np.concatenate([zero, mv(transpose(Aij), n)], axis=-1)
    b = _dot(cross(si.w, mv(Aij, sj.w)), n)
    return Qi, Qj, b


def planar_point_line(n, rho_j, d, si, sj):
    """Planar point-on-line constraint, Yudintsev (2.33)–(2.43).

    Point ``K`` of body ``j`` (at ``rho_j`` from ``C_j``, body-``j`` axes) stays on the line
    of body ``i`` with unit normal ``n`` (body-``i`` axes) at distance ``d`` from ``C_i``:
    ``g = n . A_i^T (A_j rho_j + r_j - r_i) - d``. Two of them with independent normals make
    a planar revolute joint; one (normal across the guide) and a :func:`planar_rotation`
    make a slider.

    Returns
    -------
    g : (B,)
    Q_i, Q_j : (B, 3)
    b : (B,)

    Examples
    --------
    >>> import numpy as np
    >>> ground = PlanarState(np.zeros((1, 2)), np.zeros(1), np.zeros((1, 2)), np.zeros(1))
    >>> crank = PlanarState(np.array([[0.5, 0.0]]), np.zeros(1), np.zeros((1, 2)), np.ones(1))
    >>> g, Qi, Qj, b = planar_point_line(np.array([1.0, 0.0]), np.array([-0.5, 0.0]), 0.0,
    ...                                  ground, crank)
    >>> float(g[0]), Qj[0].round(12).tolist(), float(b[0])
    (0.0, [1.0, 0.0, -0.0], -0.5)
    """
    Ai, Aj = si.A, sj.A
    Ai_T = transpose(Ai)
    rho0 = mv(Aj, rho_j) + sj.x - si.x
    rho_i = mv(Ai_T, rho0)
    g = _dot(rho_i, n) - d
    nA = mv(Ai, n)  # row n^T A_i^T
    Om_rho_i = rho_i @ _OMEGA.T
    Aj_rho = mv(Aj, rho_j)
    Om_Aj_rho = Aj_rho @ _OMEGA.T
    Qi = np.concatenate([-nA, -_dot(Om_rho_i, n)[..., None]], axis=-1)
    Qj = np.concatenate([nA, _dot(mv(Ai_T, Om_Aj_rho), n)[..., None]], axis=-1)
    wi, wj = si.w, sj.w
    dx = sj.v - si.v
    drho0 = wj[..., None] * Om_Aj_rho + dx
    drho_i = -wi[..., None] * Om_rho_i + mv(Ai_T, drho0)
    # d/dt A_i^T = -w_i Omega A_i^T (planar rotations commute with Omega)
    term1 = -wi * _dot(mv(Ai_T, dx @ _OMEGA.T), n)  # d/dt(n^T A_i^T) (v_j - v_i)
    term2 = -wi * _dot(drho_i @ _OMEGA.T, n)  # d/dt(-n^T Omega rho_i) w_i
    dA_row = (wj - wi)[..., None] * mv(Ai_T, Om_Aj_rho @ _OMEGA.T)
    term3 = wj * _dot(dA_row, n)  # d/dt(n^T A_i^T Omega A_j rho_j) w_j
    b = -(term1 + term2 + term3)
    return g, Qi, Qj, b


def planar_rotation(c0, si, sj):
    """Planar relative rotation held fixed, Yudintsev (2.32): ``g = phi_j - phi_i - c0``.

    ``g`` is wrapped into ``(-pi, pi]`` (angles are defined up to full turns). Returns
    ``(g, Q_i, Q_j, b)`` with ``Q_i = (0, 0, -1)``, ``Q_j = (0, 0, 1)``, ``b = 0``.
    """
    g = np.mod(sj.phi - si.phi - c0 + np.pi, 2 * np.pi) - np.pi
    Qi = np.zeros(si.phi.shape + (3,))
    Qi[..., 2] = -1.0
    return g, Qi, -Qi, np.zeros_like(g)
