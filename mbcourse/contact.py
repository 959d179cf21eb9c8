"""Chapter 9: unilateral constraints -- joint limits, contact and impacts.

A joint stop (:meth:`Model.add_joint_limit`) and a point or sphere above a plane
(:meth:`Model.add_contact`) are *unilateral* constraints: a gap ``g(q) >= 0`` that the motion
may close but not cross. Their rates are rows of the generalized speeds, ``dg/dt = J qd``
(a row ``+-1`` for a stop; ``n^T`` times the point's Jacobian for a contact).

Impulsive law (``law="impulse"``)
    Between events the model moves freely, or with some gaps held shut as bilateral
    constraints (resting contact; sticking or sliding with Coulomb friction). An event is
    located by root finding on ``g`` (a gap closes), on a holding force (it falls to zero) or
    on a sliding speed (it stops). At a closing gap the speeds jump while ``q`` does not: the
    generalized momenta ``p = M qd`` (chapter 4's Poisson impulses, Ivanov's state) jump by the
    generalized impulse ``J^T Lambda``, ``M (qd+ - qd-) = J^T Lambda``. Newton's law asks ``dg/dt+ >= -e
    dg/dt-`` with ``Lambda >= 0`` and complementarity: a linear complementarity problem (LCP)
    in ``W = J M^-1 J^T`` for simultaneous impacts (:func:`impulse`). Poisson's law splits the
    impact into compression (``e = 0``) and restitution (``e`` times the compression
    impulse). A contact that arrives slower than ``rest_speed`` lands plastically, and a
    bounce whose apex would stay below ``GAP_TOL`` ends in resting contact: a Zeno sequence
    of ever smaller bounces ends at rest (under gravity the apex rule, which takes over
    below an arrival speed of about ``sqrt(2 g GAP_TOL)``, usually comes first).
Compliant law (``law="compliant"``)
    A Hunt-Crossley force ``k delta^p (1 + d ddelta/dt / v-)`` on each penetration ``delta``,
    whose damping ``d`` is calibrated so that an isolated impact rebounds with exactly the
    contact's ``e`` (:func:`hunt_crossley_damping`); as ``k`` grows the motion tends to the
    impulsive law's.

Examples
--------
A ball of radius 0.1 dropped from 1 m on a floor with ``e = 0.5`` rises to ``e^2 (1 - 0.1)``
above the floor's contact height after its first bounce:

>>> import numpy as np, mbcourse as mb
>>> m = mb.Model(gravity=(0, 0, -9.81))
>>> _ = m.add_body("ball", 1.0, [0.004, 0.004, 0.004])
>>> _ = m.add_joint("drop", "prismatic", "ground", "ball", axis=(0, 0, 1))
>>> _ = m.add_contact("floor", "ball", (0, 0, 0), radius=0.1, restitution=0.5)
>>> res = mb.contact.simulate(m, (0.0, 1.0), [1.0])
>>> t, name, impulse = res.impacts[0]
>>> v = np.sqrt(2 * 9.81 * 0.9)                # the speed at the floor
>>> name, round(float(t / np.sqrt(2 * 0.9 / 9.81)), 12), round(float(impulse / (1.5 * v)), 12)
('floor', 1.0, 1.0)
>>> round(float(res.q[:, 0][res.t > t].max()) - 0.1, 10)   # 0.25 * 0.9
0.225
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import kinematics as _kin
from . import poses as _poses
from .errors import (IntegrationError, ModelError, ShapeError, SingularSystemError,
                     TopologyError)
from .model import Model
from .sim import (Trajectory, check_method, check_t_eval, initial_state, integrate,
                  prepare as _sim_prepare)
from .tree.general import forward_dynamics, mass_matrix

__all__ = ["simulate", "impulse", "gaps", "gap_jacobian", "Impact", "ContactTrajectory",
           "hunt_crossley_damping", "LAWS"]

#: The contact laws of :func:`simulate`.
LAWS = ("impulse", "compliant")
_RESTITUTION_LAWS = ("newton", "poisson")
#: A gap at most this small counts as shut (event location puts a closing gap within
#: about 1e-16 of zero; a bounce whose apex stays below this ends the Zeno sequence).
GAP_TOL = 1e-12


# ---------------------------------------------------------------------- results
class Impact(tuple):
    """One impact: a tuple ``(t, name, impulse)`` with those names as attributes.

    ``impulse`` is the normal impulse ``Lambda >= 0`` (N s; for a joint stop the generalized
    impulse, N m s or N s, pushing the coordinate back inside). The friction impulse and the
    jump of the generalized momenta are in :class:`ContactTrajectory`'s ``tangential`` and
    ``dp``, in the same order.
    """

    __slots__ = ()

    def __new__(cls, t, name, impulse):
        return super().__new__(cls, (float(t), str(name), float(impulse)))

    t = property(lambda self: self[0])
    name = property(lambda self: self[1])
    impulse = property(lambda self: self[2])


@dataclass
class ContactTrajectory(Trajectory):
    """:class:`mbcourse.sim.Trajectory` of :func:`simulate`, with its impacts.

    Attributes
    ----------
    impacts : list of Impact
        ``(t, name, impulse)`` in time order; simultaneous impacts share ``t``.
    tangential : list of ndarray
        The friction impulse (world axes) of each impact (zeros for a stop).
    dp : list of ndarray
        The jump of the generalized momenta ``J^T Lambda`` of each impact, (nv,).
    law : str
        ``"impulse"`` or ``"compliant"``.

    At an impact the samples hold the state just before and just after it (the same ``t``
    twice) unless ``t_eval`` was given.
    """

    impacts: list = field(default_factory=list)
    tangential: list = field(default_factory=list)
    dp: list = field(default_factory=list)
    law: str = "impulse"


# ------------------------------------------------------------- the gap functions
@dataclass(frozen=True)
class _Gaps:
    names: tuple
    side: np.ndarray        # 0: a stop's lower side, 1: upper side, 2: a contact
    e: np.ndarray
    mu: np.ndarray
    iq: np.ndarray          # stops: coordinate index in q and qd
    iv: np.ndarray
    bound: np.ndarray
    contacts: tuple         # (row, body, point, normal, offset, radius, t1, t2)


def _tangents(n):
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = a - n * (n @ a)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def _prepare(model):
    def build():
        names, side, e, mu, iq, iv, bound, contacts = [], [], [], [], [], [], [], []
        for lim in model.joint_limits:
            j = lim.joint
            for k, value in ((0, lim.lower), (1, lim.upper)):
                if np.isfinite(value):
                    names.append(f"{lim.name}:{'lower' if k == 0 else 'upper'}")
                    side.append(k)
                    e.append(lim.restitution)
                    mu.append(0.0)
                    iq.append(j.q_slice.start)
                    iv.append(j.v_slice.start)
                    bound.append(value)
        for c in model.contacts:
            contacts.append((len(names), c.body, np.array(c.point), np.array(c.normal),
                             c.offset, c.radius) + _tangents(np.array(c.normal)))
            names.append(c.name)
            side.append(2)
            e.append(c.restitution)
            mu.append(c.friction)
            iq.append(-1)
            iv.append(-1)
            bound.append(0.0)
        return _Gaps(tuple(names), np.array(side, int), np.array(e), np.array(mu),
                     np.array(iq, int), np.array(iv, int), np.array(bound), tuple(contacts))

    return model.prepared("contact.gaps", build)


def _check(model, what):
    if not isinstance(model, Model):
        raise ShapeError(f"{what}: the first argument must be the Model, got "
                         f"{type(model).__name__}")
    if model.mimics:
        raise ModelError(f"{what}: the model has coupled coordinates (mimic joints "
                         f"{[c.joint for c in model.mimics]}); contact dynamics runs on "
                         "models without them (model.uncoupled() gives one)")


def _geometry(model, U, q, qd=None, t=0.0, rows=True):
    """Gaps (m,), and with ``rows``: normal rows (m, nv), tangent rows (m, 2, nv) and the
    rates' bias ``Jdot qd`` of both, (m,) and (m, 2)."""
    m, nv = len(U.names), model.nv
    g = np.zeros(m)
    stop = U.side < 2
    sign = np.where(U.side == 0, 1.0, -1.0)
    g[stop] = sign[stop] * (q[U.iq[stop]] - U.bound[stop])
    if not rows:
        for row, body, point, n, offset, radius, *_ in U.contacts:
            P, _ = _kin.frame_pose(model, q, body, point, t=t)
            g[row] = n @ P - offset - radius
        return g
    Jn, Jt = np.zeros((m, nv)), np.zeros((m, 2, nv))
    dn, dt = np.zeros(m), np.zeros((m, 2))
    for k in np.flatnonzero(stop):
        Jn[k, U.iv[k]] = sign[k]
    zero = np.zeros(nv)
    for row, body, point, n, offset, radius, t1, t2 in U.contacts:
        P, _ = _kin.frame_pose(model, q, body, point, t=t)
        g[row] = n @ P - offset - radius
        J = _kin.jacobian(model, q, body, point, t=t)
        a, alpha = _kin.frame_acceleration(model, q, qd, zero, body, point, t=t)
        lin = J[:3] + radius * np.cross(n, J[3:].T).T      # the sphere's lowest point
        Jn[row] = n @ J[:3]
        Jt[row] = np.stack([t1 @ lin, t2 @ lin])
        ac = a + radius * np.cross(n, alpha)
        dn[row] = n @ a
        dt[row] = (t1 @ ac, t2 @ ac)
    return g, Jn, Jt, dn, dt


def gaps(model, q, *, t=0.0):
    """The gaps of the model's joint stops and contacts, shape (m,), and their names.

    A stop gives ``q - lower`` and ``upper - q`` (named ``"joint:lower"``,
    ``"joint:upper"``; an infinite side none), a contact ``normal . x - offset - radius``;
    the motion keeps every gap non-negative.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> _ = m.add_joint_limit("B", -0.5, 0.5)
    >>> g, names = gaps(m, [0.0, 0.2])
    >>> names, g.round(12).tolist()
    (('B:lower', 'B:upper'), [0.7, 0.3])
    """
    _check(model, "mb.contact.gaps")
    state = model.check_state(q, t=t)
    if state.q.shape[0] != 1:
        raise ShapeError(f"mb.contact.gaps takes one configuration, shape ({model.nq},)")
    U = _prepare(model)
    return _geometry(model, U, state.q[0], t=state.t, rows=False), U.names


def gap_jacobian(model, q, *, t=0.0):
    """The rows ``dg/dt = J qd`` of :func:`gaps`, shape (m, nv).

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> _ = m.add_joint_limit("B", -0.5, 0.5)
    >>> gap_jacobian(m, [0.0, 0.2]).tolist()
    [[0.0, 1.0], [0.0, -1.0]]
    """
    _check(model, "mb.contact.gap_jacobian")
    state = model.check_state(q, t=t)
    if state.q.shape[0] != 1:
        raise ShapeError(f"mb.contact.gap_jacobian takes one configuration, shape "
                         f"({model.nq},)")
    U = _prepare(model)
    qd = np.zeros(model.nv)
    return _geometry(model, U, state.q[0], qd, state.t)[1]


# ------------------------------------------------------------- the impact laws
def _lcp(W, c, tol=1e-13):
    """``Lambda >= 0``, ``w = W Lambda + c >= 0``, ``Lambda . w = 0`` for a symmetric positive
    semi-definite ``W``: the active-set method of Lawson and Hanson on
    ``min Lambda^T W Lambda / 2 + c^T Lambda`` (exact after finitely many steps). A singular
    ``W`` (more rows than speeds) is made definite by ``1e-13`` of its largest eigenvalue,
    which picks one of the equivalent impulses and changes ``w`` by as little."""
    m = len(c)
    x = np.zeros(m)
    if m == 0:
        return x
    eig = np.linalg.eigvalsh(W)
    if eig[0] <= 1e-12 * max(eig[-1], 1e-300):       # singular: rows outnumber the speeds
        W = W + np.eye(m) * 1e-13 * max(eig[-1], 1e-300)
    scale = max(np.abs(c).max(), 1e-300)
    P = np.zeros(m, bool)
    for _ in range(10 * m + 10):
        w = -(W @ x + c)
        free = ~P & (w > tol * scale)
        if not free.any():
            return np.maximum(x, 0.0)
        P[np.flatnonzero(free)[np.argmax(w[free])]] = True
        for _ in range(3 * m + 10):
            z = np.zeros(m)
            idx = np.flatnonzero(P)
            z[idx] = np.linalg.solve(W[np.ix_(idx, idx)], -c[idx])
            if np.all(z[idx] > 0):
                x = z
                break
            bad = idx[z[idx] <= 0]
            alpha = np.min(x[bad] / np.maximum(x[bad] - z[bad], 1e-300))
            x = x + alpha * (z - x)
            P &= x > tol * np.abs(x).max(initial=1e-300)
            x[~P] = 0.0
    raise SingularSystemError(f"the impact's complementarity problem ({m} rows) did not "
                              "converge")


def _friction_pgs(W, c, mu, fixed=None, sweeps=20000, tol=1e-14):
    """Normal and tangential impulses of contacts with Coulomb friction: projected
    Gauss-Seidel on blocks (normal, two tangents) per contact, the tangent pair projected
    on the disk ``|Lambda_t| <= mu Lambda_n`` (the friction cone, not linearized). One
    step length for both tangents keeps Coulomb's law (the friction impulse opposes the
    sliding) at the fixed point. ``fixed``: the normal impulses are given, the friction is
    solved for (Poisson's restitution phase)."""
    k = len(mu)
    lam = np.zeros(3 * k)
    if fixed is not None:
        lam[0::3] = fixed
    diag = np.diag(W).copy()
    tiny = 1e-14 * max(np.abs(diag).max(), 1e-300)
    for _ in range(sweeps):
        change = 0.0
        for i in range(k):
            n = 3 * i
            old = lam[n:n + 3].copy()
            if fixed is None and diag[n] > tiny:
                lam[n] = max(0.0, lam[n] - (W[n] @ lam + c[n]) / diag[n])
            step = max(diag[n + 1], diag[n + 2])
            if mu[i] > 0 and step > tiny:      # a point that cannot slide has no friction
                lt = lam[n + 1:n + 3] - (W[n + 1:n + 3] @ lam + c[n + 1:n + 3]) / step
                r = np.linalg.norm(lt)
                cap = mu[i] * lam[n]
                lam[n + 1:n + 3] = lt if r <= cap else lt * (cap / r)
            change = max(change, np.abs(lam[n:n + 3] - old).max())
        if change <= tol * max(np.abs(lam).max(), 1e-300):
            return lam
    raise SingularSystemError(
        f"the frictional impact of {k} contacts did not converge in {sweeps} Gauss-Seidel "
        "sweeps (very different inertias along the tangents); use the compliant law")


def impulse(M, J, qd_minus, restitution, *, law="newton", friction=None, tangents=None):
    """The speeds after a simultaneous impact at the gaps with rows ``J``, and the impulses.

    Solves ``M (qd+ - qd-) = J^T Lambda``, ``Lambda >= 0``, with Newton's law
    ``J qd+ >= -e J qd-`` for the rows that approach (``>= 0`` for the others), each row
    either pushing (``Lambda_i > 0``) with equality or idle: the LCP
    ``w = W Lambda + (J qd- + e min(J qd-, 0)) >= 0``, ``W = J M^-1 J^T``. ``law="poisson"``:
    a compression (``e = 0``), then ``e`` times its impulses, repeated while a row still
    approaches. With several rows Newton's law may *gain* energy (a separating row held
    shut), and so may Poisson's law when the rows have different coefficients; with one
    coefficient for all rows Poisson's law never does. :func:`simulate` redoes such an
    impact with Poisson's law, and then with the smallest coefficient for all rows.

    Parameters
    ----------
    M : array_like, (nv, nv)
        Symmetric positive definite mass matrix.
    J : array_like, (m, nv)
        The gaps' rows (``dg/dt = J qd``).
    qd_minus : array_like, (nv,)
    restitution : float or array_like (m,)
        In [0, 1].
    law : {"newton", "poisson"}
    friction : array_like (m,), optional
        Coulomb coefficients (needs ``tangents``).
    tangents : array_like (m, 2, nv), optional
        The rows of each contact point's two tangential speeds.

    Returns
    -------
    qd_plus : ndarray (nv,)
    Lambda : ndarray (m,), or (m, 3) with friction: normal and two tangential impulses

    Examples
    --------
    Newton's cradle of three unit balls, the first arriving at 1 m/s, as one simultaneous
    Newton impact with ``e = 1``: energy is kept, yet the answer is not the cradle's ``(0, 0,
    1)``:

    >>> import numpy as np
    >>> J = np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]])   # rates of the two gaps
    >>> v, lam = impulse(np.eye(3), J, [1.0, 0.0, 0.0], 1.0)
    >>> (3 * v).round(12).tolist(), (3 * lam).round(12).tolist()
    ([-1.0, 2.0, 2.0], [4.0, 2.0])
    """
    what = "mb.contact.impulse"
    v = _numbers(qd_minus, "qd_minus", what, ndim=1)
    nv = v.shape[0]
    M = _numbers(M, "M", what, shape=(nv, nv), hint="the mass matrix, (nv, nv) with nv = "
                 "len(qd_minus)")
    J = _numbers(J, "J", what, ndim=2, hint="the gaps' rows, (m, nv)")
    if J.shape[1] != nv or J.shape[0] == 0:
        raise ShapeError(f"{what}: J must have shape (m, {nv}) with m >= 1 (one row per gap),"
                         f" got {J.shape}")
    if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * np.abs(M).max()):
        raise ModelError(f"{what}: M must be symmetric (a mass matrix)")
    m = J.shape[0]
    e = _per_row(restitution, "restitution", what, m)
    if np.any(e < 0) or np.any(e > 1):
        raise ModelError(f"{what}: restitution must lie in [0, 1], got {e.tolist()}")
    if law not in _RESTITUTION_LAWS:
        raise ModelError(f"{what}: law must be one of {_RESTITUTION_LAWS}, got {law!r}")
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise SingularSystemError(f"{what}: M is not positive definite") from None
    mu = None if friction is None else _per_row(friction, "friction", what, m)
    if mu is not None and np.any(mu < 0):
        raise ModelError(f"{what}: friction must be non-negative, got {mu.tolist()}")
    if mu is not None and np.any(mu > 0):
        T = _numbers(tangents, "tangents", what, shape=(m, 2, nv),
                     hint="each contact's two tangential rows")
        rows = np.concatenate([J[:, None, :], T], axis=1).reshape(3 * m, nv)
        return _solve_impact(L, rows, v, e, law, mu)
    return _solve_impact(L, J, v, e, law, None)


def _numbers(value, name, what, ndim=None, shape=None, hint=""):
    """``value`` as a finite float array of the given shape or number of dimensions."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ShapeError(f"{what}: {name} must be an array of numbers, got {value!r:.40}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{what}: {name} must be an array of numbers, got "
                         f"{type(value).__name__}") from None
    if (shape is not None and arr.shape != shape) or (ndim is not None and arr.ndim != ndim):
        want = f"shape {shape}" if shape is not None else f"{ndim} dimension(s)"
        raise ShapeError(f"{what}: {name} must have {want}"
                         f"{' (' + hint + ')' if hint else ''}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what}: {name} must be finite, got NaN or inf")
    return arr


def _per_row(value, name, what, m):
    """A number, or one per row (``m``), as a finite float array (m,)."""
    if isinstance(value, (bool, np.bool_)):
        raise ModelError(f"{what}: {name} must be a number or {m} numbers, got {value!r}")
    arr = _numbers(value, name, what)
    if arr.ndim > 1 or arr.size not in (1, m):
        raise ShapeError(f"{what}: {name} must be a number or {m} numbers (one per row of "
                         f"J), got shape {arr.shape}")
    return np.broadcast_to(arr.reshape(-1), (m,)).astype(float)


def _solve_impact(L, rows, v, e, law, mu):
    """Newton's or Poisson's impact with the Cholesky factor ``L`` of M; ``rows`` are the
    normal rows, or (normal, tangent, tangent) per contact with friction ``mu``.

    Poisson's law: a compression (plastic, with friction), then a restitution phase that
    adds ``e`` times the compression's normal impulses (friction solved again for it). If
    that leaves a row approaching (simultaneous contacts), the impact is repeated on the new
    speeds (after 100 passes, a last plastic one ends a sequence that ping-pongs between
    rows); with one ``e`` for all rows and no friction each pass keeps or loses energy."""
    from scipy.linalg import cho_solve
    MinvJt = cho_solve((L, True), rows.T)
    W = rows @ MinvJt
    W = 0.5 * (W + W.T)
    step = 1 if mu is None else 3
    normal = np.arange(rows.shape[0]) % step == 0
    lam = np.zeros(rows.shape[0])
    scale = max(np.abs(rows @ v).max(), 1e-300)
    for n_pass in range(102):
        u = rows @ (v + MinvJt @ lam)
        # approaching beyond round-off (and beyond _lcp's regularization of a singular W)
        tol = 1e-12 * (scale + np.abs(W).max() * np.abs(lam).max(initial=0.0))
        if not np.any(u[normal] < -tol) and (law == "newton" or n_pass > 0):
            break
        if law == "newton" or n_pass >= 100:   # (Poisson's passes that ping-pong between
            e = e if law == "newton" else np.zeros_like(e)   # rows end with a plastic one)
            c = u.copy()
            c[normal] += e * np.minimum(u[normal], 0.0)
            lam = lam + (_lcp(W, c) if mu is None else _friction_pgs(W, c, mu))
            continue
        comp = _lcp(W, u) if mu is None else _friction_pgs(W, u, mu)
        lam = lam + comp
        if mu is None:
            lam = lam + e * comp
        else:
            u = rows @ (v + MinvJt @ lam)
            lam = lam + _friction_pgs(W, u, mu, fixed=e * comp[normal])
    else:
        raise SingularSystemError("the impact's rows still approach after a plastic pass")
    qd_plus = v + MinvJt @ lam
    return qd_plus, (lam if mu is None else lam.reshape(-1, 3))


# ----------------------------------------------------------- Hunt-Crossley law
_HC_CACHE = {}


def hunt_crossley_damping(restitution, exponent=1.5):
    """The dimensionless damping ``d`` of the Hunt-Crossley force
    ``F = k delta^p (1 + d (d delta/dt) / v-)`` with which a mass meeting the contact at
    ``v-`` leaves it at exactly ``restitution * v-`` (``F`` kept >= 0).

    Scaling ``delta`` and ``t`` by the contact's own length and time turns the impact of
    any mass, stiffness and speed into ``x'' = -x^p (1 + d x')``, ``x(0) = 0``,
    ``x'(0) = 1``; ``d`` is found once per ``(e, p)`` by root finding on its exit speed.
    Below ``e = 1e-3`` the damping is that of ``e = 1e-3`` (no finite ``d`` stops the mass
    dead): the contact then leaves at ``1e-3 v-``.

    Examples
    --------
    >>> d = hunt_crossley_damping(0.8)
    >>> round(d, 6)
    0.373146
    >>> hunt_crossley_damping(1.0)
    0.0
    """
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq
    for value, name in ((restitution, "restitution"), (exponent, "exponent")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise ModelError(f"hunt_crossley_damping: {name} must be a number, got {value!r}")
    e, p = float(restitution), float(exponent)
    if not 0.0 <= e <= 1.0:
        raise ModelError(f"hunt_crossley_damping: restitution must lie in [0, 1], got {e}")
    if not 1.0 <= p <= 10.0:
        raise ModelError(f"hunt_crossley_damping: exponent must lie in [1, 10] (1: linear, "
                         f"1.5: Hertz), got {p}")
    if e == 1.0:
        return 0.0
    key = (e, p)
    if key in _HC_CACHE:
        return _HC_CACHE[key]
    e_eff = max(e, 1e-3)

    def exit_speed(d):
        def rhs(_, y):
            x = max(y[0], 0.0)
            return [y[1], -max(x ** p * (1.0 + d * y[1]), 0.0)]
        out = lambda _, y: y[0]                                        # noqa: E731
        out.terminal, out.direction = True, -1
        sol = solve_ivp(rhs, (0.0, 1e4), [0.0, 1.0], events=out, rtol=1e-12, atol=1e-14,
                        method="DOP853", first_step=1e-6)
        if not sol.t_events[0].size:      # stopped inside: no rebound
            return 0.0
        return -sol.y_events[0][0][1]

    hi = 1.0
    while exit_speed(hi) > e_eff:
        hi *= 2.0
    d = brentq(lambda d: exit_speed(d) - e_eff, 0.0, hi, xtol=1e-14, rtol=1e-13)
    _HC_CACHE[key] = d
    return d
# ------------------------------------------------------------------- simulation
@dataclass
class _Mode:
    """What holds during a smooth phase: the shut gaps (bilateral rows), which of them
    stick (two tangent rows) and which slide (direction ``s`` in the tangent plane)."""
    closed: tuple = ()
    stick: tuple = ()
    slide: dict = field(default_factory=dict)


class _Dynamics:
    """The model's equations of motion with some gaps shut: ``M qdd = B + tau + D^T
    lambda``, ``J qdd + Jdot qd = 0`` (``D = J`` but for sliding friction, whose force is
    ``-mu lambda_n s`` along the tangent rows, ``s`` the direction of sliding).

    ``M^-1 (B + tau)`` and ``M^-1 D^T`` come from chapter 3's forward dynamics (compiled
    where the kernels take the model): one batched call with the forces ``tau`` and ``tau
    + D_k^T``, whose differences are the columns ``M^-1 D_k^T``.
    """

    def __init__(self, model, U, tau_fn):
        self.model, self.U, self.tau_fn = model, U, tau_fn
        self._key = None

    def accelerations(self, t, q, qd, extra=None):
        """``M^-1 (B + tau + extra_k)`` for the rows ``extra_k`` (none: one row)."""
        nv = self.model.nv
        tau = np.zeros(nv) if self.tau_fn is None else self.tau_fn(t, q, qd)
        taus = tau[None] if extra is None else np.vstack([tau, tau + extra])
        B = taus.shape[0]
        return forward_dynamics(self.model, np.repeat(q[None], B, axis=0),
                                np.repeat(qd[None], B, axis=0), taus, t=t)

    def solve(self, t, q, qd, mode, geo=None):
        """``(qdd, lambda_n (per closed gap), lambda_t (per sticking gap, 2))``."""
        key = (t, q.tobytes(), qd.tobytes(), id(mode))
        if key == self._key:
            return self._value
        if not mode.closed:
            out = self.accelerations(t, q, qd)[0], np.zeros(0), np.zeros((0, 2))
        else:
            if geo is None:
                geo = _geometry(self.model, self.U, q, qd, t)
            _, Jn, Jt, dn, dt = geo
            closed, stick = list(mode.closed), list(mode.stick)
            J = np.concatenate([Jn[closed], Jt[stick].reshape(-1, Jn.shape[1])])
            b = np.concatenate([dn[closed], dt[stick].reshape(-1)])
            D = J.copy()
            for r, i in enumerate(closed):
                if i in mode.slide:
                    # along the sliding velocity; its direction at the phase's start
                    # until the speed is tiny or has turned back (then the event that
                    # ends the slide is near, and a direction flipping inside a step's
                    # stages would make the step size crawl)
                    s0, vt = mode.slide[i], Jt[i] @ qd
                    speed = np.linalg.norm(vt)
                    s = vt / speed if speed > 1e-9 and vt @ s0 > 0 else s0
                    D[r] -= self.U.mu[i] * (s @ Jt[i])
            acc = self.accelerations(t, q, qd, D)
            a0, MinvDt = acc[0], (acc[1:] - acc[0]).T
            # redundant rows (a box standing on four corners): the least-norm forces
            lam = np.linalg.lstsq(J @ MinvDt, -(J @ a0 + b), rcond=1e-10)[0]
            qdd = a0 + MinvDt @ lam
            out = qdd, lam[:len(closed)], lam[len(closed):].reshape(-1, 2)
        self._key, self._value = key, out
        return out


def _world_tangential(U, i, lam):
    """Gap ``i``'s friction impulse in world axes from ``lam = (normal, t1, t2)`` (zeros for
    a stop, or without friction rows)."""
    if U.side[i] < 2 or np.size(lam) < 3:
        return np.zeros(3)
    c = next(c for c in U.contacts if c[0] == i)
    return lam[1] * c[6] + lam[2] * c[7]


def _energy(M, qd):
    return 0.5 * qd @ M @ qd


def _energy_safe_impact(M, L, rows, qd, e, law, mu):
    """:func:`_solve_impact`, redone where it would add kinetic energy: a Newton impact with
    Poisson's law; a Poisson impact whose rows have different coefficients (the simulator
    gives a row that arrives slower than ``rest_speed`` e = 0) with the smallest one for
    all rows, which never gains energy without friction (each pass loses
    ``(1 - e^2) Lambda_c^T W Lambda_c / 2``)."""
    before = _energy(M, qd)
    grows = lambda v: _energy(M, v) > before * (1 + 1e-12) + 1e-300      # noqa: E731
    new, lam = _solve_impact(L, rows, qd, e, law, mu)
    if grows(new) and law == "newton":
        new, lam = _solve_impact(L, rows, qd, e, "poisson", mu)
    if grows(new) and np.ptp(e) > 0:
        new, lam = _solve_impact(L, rows, qd, np.full_like(e, e.min()), "poisson", mu)
    return new, lam


class _Run:
    """One call of :func:`simulate` with the impulsive law."""

    def __init__(self, model, U, tau_fn, law, rest_speed, gap_tol, max_impacts):
        self.model, self.U = model, U
        self.dyn = _Dynamics(model, U, tau_fn)
        self.law, self.rest_speed, self.gap_tol = law, rest_speed, gap_tol
        self.max_impacts = max_impacts
        self.impacts, self.tangential, self.dp = [], [], []

    # ---- impacts
    def impact(self, t, q, qd, release=(), slip=()):
        """Resolve every closing gap at ``(t, q)``: the new speeds and the smooth-phase
        mode that follows."""
        U, model = self.U, self.model
        for _ in range(8):
            geo = _geometry(model, U, q, qd, t)
            g, Jn, Jt, dn, dt = geo
            near = np.flatnonzero(g <= self.gap_tol)
            un = Jn[near] @ qd
            if not near.size or not np.any(un < -self.rest_speed):
                break
            e = np.where(-un > self.rest_speed, U.e[near], 0.0)
            M = mass_matrix(model, q, t=t)
            L = np.linalg.cholesky(M)
            mu = U.mu[near]
            fric = np.any(mu > 0)
            rows = (np.concatenate([Jn[near][:, None, :], Jt[near]], axis=1)
                    .reshape(3 * near.size, -1) if fric else Jn[near])
            new, lam = _energy_safe_impact(M, L, rows, qd, e, self.law, mu if fric else None)
            lam = lam.reshape(near.size, -1)
            for k, i in enumerate(near):
                if lam[k, 0] > 1e-14 * max(np.abs(lam).max(), 1e-300):
                    self.impacts.append(Impact(t, U.names[i], lam[k, 0]))
                    self.tangential.append(_world_tangential(self.U, i, lam[k]))
                    self.dp.append(rows.reshape(near.size, -1, rows.shape[1])[k].T @ lam[k])
            if len(self.impacts) > self.max_impacts:
                raise IntegrationError(
                    f"mb.contact.simulate: more than max_impacts={self.max_impacts} impacts "
                    f"by t={t:.6g}; a Zeno sequence that does not settle (raise rest_speed, "
                    f"now {self.rest_speed:g}) or a mechanism that keeps hitting")
            qd = new
        return qd, self.mode(t, q, qd, release, slip)

    # ---- the mode of a smooth phase
    def mode(self, t, q, qd, release=(), slip=()):
        """Which gaps stay shut (held by a non-negative force) after ``(t, q, qd)``;
        ``release``: gaps whose force has just fallen to zero, ``slip``: sticking contacts
        that have just reached the friction cone (they start to slide)."""
        U = self.U
        geo = _geometry(self.model, U, q, qd, t)
        g, Jn, Jt, dn, dt = geo
        un = Jn @ qd
        resting = [i for i in np.flatnonzero(g <= self.gap_tol) if un[i] <= self.rest_speed]
        closed = [i for i in resting if i not in release]
        stick, slide = [], {}
        for i in closed:
            if U.mu[i] > 0:
                vt = Jt[i] @ qd
                if np.linalg.norm(vt) <= self.rest_speed:
                    stick.append(i)
                else:
                    slide[i] = vt / np.linalg.norm(vt)
        for _ in range(4 * len(resting) + 4):
            mode = _Mode(tuple(closed), tuple(stick), dict(slide))
            qdd, lam_n, lam_t = self.dyn.solve(t, q, qd, mode, geo)
            scale = max(np.abs(lam_n).max(initial=0.0), 1e-300)
            if lam_n.size and lam_n.min() < -1e-12 * scale:
                i = closed[int(np.argmin(lam_n))]
                closed.remove(i)
                stick = [k for k in stick if k != i]
                slide.pop(i, None)
                continue
            acc = Jn @ qdd + dn
            opened = [i for i in resting if i not in closed and i not in release
                      and acc[i] < -1e-12 * max(np.abs(acc).max(), 1.0)]
            if opened:
                closed.append(opened[0])
                continue
            over = [(k, i) for k, i in enumerate(stick)
                    if np.linalg.norm(lam_t[k]) > U.mu[i] * lam_n[closed.index(i)]
                    * ((1 - 1e-9) if i in slip else (1 + 1e-12))]
            if over:
                k, i = over[0]
                stick.remove(i)
                slide[i] = -lam_t[k] / np.linalg.norm(lam_t[k])
                continue
            return mode
        raise IntegrationError(f"mb.contact.simulate: no consistent contact mode at "
                               f"t={t:.6g} (gaps {[U.names[i] for i in resting]})")

    # ---- events of a smooth phase
    def events(self, mode, t_start, q, qd):
        """Terminal events of a smooth phase: a gap closes; a gap that has just opened
        reaches its apex (its rate falls to zero; until then its value is 0 to rounding
        and no root finder could tell the next closing from the last); a holding force
        falls to zero; a sticking contact reaches the friction cone; a slide stops."""
        U, model, dyn = self.U, self.model, self.dyn
        nq = model.nq
        out, what = [], []
        closed = list(mode.closed)
        g, Jn = _geometry(model, U, q, qd, t_start)[:2]
        rate = Jn @ qd
        for i in range(len(U.names)):
            if i in mode.closed:
                continue
            if g[i] <= self.gap_tol and rate[i] > 0:
                out.append(lambda t, y, i=i: _geometry(model, U, y[:nq], y[nq:], t)[1][i]
                           @ y[nq:])
                what.append(("apex", i))
            else:
                out.append(lambda t, y, i=i: _geometry(model, U, y[:nq], rows=False, t=t)[i])
                what.append(("gap", i))
        for r, i in enumerate(closed):
            out.append(lambda t, y, r=r: dyn.solve(t, y[:nq], y[nq:], mode)[1][r])
            what.append(("release", i))
        for k, i in enumerate(mode.stick):
            r = closed.index(i)

            def slip(t, y, k=k, r=r, i=i):
                _, lam_n, lam_t = dyn.solve(t, y[:nq], y[nq:], mode)
                return U.mu[i] * lam_n[r] - np.linalg.norm(lam_t[k])
            out.append(slip)
            what.append(("slip", i))
        for i, s in mode.slide.items():
            def stop(t, y, i=i, s=s):
                Jt = _geometry(model, U, y[:nq], y[nq:], t)[2]
                return s @ (Jt[i] @ y[nq:])
            out.append(stop)
            what.append(("stop", i))
        for fn in out:
            fn.terminal, fn.direction = True, -1
        return out, what

    def rhs(self, mode):
        model, dyn = self.model, self.dyn
        nq = model.nq
        quats = _sim_prepare(model).quaternions

        def rhs(t, y):
            q, qd = y[:nq], y[nq:]
            if quats:
                q = model.normalize_q(q)
            qdd = dyn.solve(t, q, qd, mode)[0]
            return np.concatenate([_poses.qdot(model, q, qd) if quats else qd, qdd])
        return rhs


def simulate(model, t_span, q0, qd0=None, tau=None, *, law="impulse", restitution_law="newton",
             method="DOP853", rtol=1e-10, atol=1e-10, t_eval=None, max_step=np.inf,
             rest_speed=1e-6, max_impacts=10000, stiffness=1e7, exponent=1.5,
             slip_speed=1e-4):
    """Integrate the motion of a model with joint stops and contacts (chapter 9).

    Parameters
    ----------
    model : Model
        A tree (no closed loops, no mimic joints) with :meth:`~mbcourse.Model.add_joint_limit`
        and :meth:`~mbcourse.Model.add_contact` elements.
    t_span, q0, qd0, tau
        As for :func:`mbcourse.sim.simulate`. ``q0`` may not violate a gap by more than
        1e-9.
    law : {"impulse", "compliant"}
        Rigid contact with impacts, or Hunt-Crossley forces.
    restitution_law : {"newton", "poisson"}
        The impulsive law's impact law. An impact that would add energy (possible with
        simultaneous impacts) is solved with Poisson's law instead, and if its rows have
        different coefficients, with the smallest one for all of them.
    method, rtol, atol, t_eval, max_step
        Passed to :func:`scipy.integrate.solve_ivp` for every smooth phase.
    rest_speed : float
        A gap closing slower than this lands plastically and a shut gap whose tangential
        speed is below it sticks (m/s, or rad/s for a stop).
    max_impacts : int
        Stop with :class:`~mbcourse.errors.IntegrationError` beyond this many impacts.
    stiffness, exponent, slip_speed
        The compliant law: ``F = stiffness delta^exponent (1 + d ddelta/dt / v-)`` (N/m^p,
        N m/rad^p for a stop), Coulomb's friction smoothed below ``slip_speed``.

    Returns
    -------
    ContactTrajectory
        With ``impacts``, a list of ``(t, name, impulse)``.

    Examples
    --------
    A pendulum released horizontally hits a stop at the bottom with ``e = 0.5``: it arrives
    at ``sqrt(3 g / l)`` (a uniform rod of length ``l = 1``) and leaves at half that:

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("rod", 1.0, [1e-3, 1 / 12, 1 / 12])
    >>> _ = m.add_joint("pin", "revolute", "ground", "rod", child_point=(-0.5, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> _ = m.add_joint_limit("pin", -np.pi / 2, np.pi, restitution=0.5)
    >>> res = mb.contact.simulate(m, (0.0, 1.0), [0.0])
    >>> t, name, impulse = res.impacts[0]
    >>> name, round(float(impulse / (1.5 * np.sqrt(3 * 9.81) / 3)), 9)  # 1.5 w I, I = 1/3
    ('pin:lower', 1.0)
    """
    what = "mb.contact.simulate"
    _check(model, what)
    t0, t1, q0, qd0, tau_fn = initial_state(model, t_span, q0, qd0, tau)
    method, t_eval = check_method(method), check_t_eval(t_eval, t0, t1)
    _check_options(what, model, law, restitution_law, rest_speed, stiffness, slip_speed,
                   exponent, max_impacts)
    U = _prepare(model)
    g0 = _geometry(model, U, q0, t=t0, rows=False)
    if np.any(g0 < -1e-9):
        bad = {U.names[i]: float(g0[i]) for i in np.flatnonzero(g0 < -1e-9)}
        raise ModelError(f"{what}: q0 violates gaps {bad} (negative: a point below its "
                         "plane or a joint beyond its stop); start on the allowed side")
    options = dict(method=method, rtol=rtol, atol=atol, max_step=max_step)
    if law == "compliant":
        return _simulate_compliant(model, U, t0, t1, q0, qd0, tau_fn, t_eval, options,
                                   stiffness, float(exponent), slip_speed)
    run = _Run(model, U, tau_fn, restitution_law, rest_speed, GAP_TOL, max_impacts)
    nq = model.nq
    qd_start = qd0
    qd0, state = run.impact(t0, q0, qd0)
    state = {"mode": state}

    def setup(t, y):
        events, state["what"] = run.events(state["mode"], t, y[:nq], y[nq:])
        return run.rhs(state["mode"]), events

    def on_event(k, t, y):
        kind, i = state["what"][k]
        q = model.normalize_q(y[:nq]) if _sim_prepare(model).quaternions else y[:nq]
        qd, state["mode"] = run.impact(t, q, y[nq:], (i,) if kind == "release" else (),
                                       (i,) if kind == "slip" else ())
        return np.concatenate([q, qd])

    t_all, y_all, sol = _phases(what, t0, t1, np.concatenate([q0, qd0]), slice(nq, None),
                                t_eval, options, setup, on_event)
    if run.impacts and run.impacts[0].t == t0 and t_eval is None:    # an impact at t0
        t_all = np.concatenate([[t0], t_all])
        y_all = np.concatenate([np.concatenate([q0, qd_start])[:, None], y_all], axis=1)
    qs = model.normalize_q(y_all[:nq].T) if _sim_prepare(model).quaternions else y_all[:nq].T
    return ContactTrajectory(model, t_all, qs, y_all[nq:].T, sol, None, impacts=run.impacts,
                             tangential=run.tangential, dp=run.dp, law="impulse")


def _check_options(what, model, law, restitution_law, rest_speed, stiffness, slip_speed,
                   exponent, max_impacts):
    if _sim_prepare(model).loop_joints:
        raise TopologyError(f"{what}: joints {list(_sim_prepare(model).loop_joints)} close "
                            "loops; contact dynamics runs on trees")
    if law not in LAWS:
        raise ModelError(f"{what}: law must be one of {LAWS}, got {law!r}")
    if restitution_law not in _RESTITUTION_LAWS:
        raise ModelError(f"{what}: restitution_law must be one of {_RESTITUTION_LAWS}, got "
                         f"{restitution_law!r}")
    for value, name in ((rest_speed, "rest_speed"), (stiffness, "stiffness"),
                        (slip_speed, "slip_speed")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not (np.isfinite(value) and value > 0):
            raise ModelError(f"{what}: {name} must be a positive number, got {value!r}")
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)) \
            or not (np.isfinite(exponent) and exponent >= 1):
        raise ModelError(f"{what}: exponent must be a number >= 1, got {exponent!r}")
    if isinstance(max_impacts, bool) or not isinstance(max_impacts, int) or max_impacts < 1:
        raise ModelError(f"{what}: max_impacts must be a positive integer, got "
                         f"{max_impacts!r}")


def _phases(what, t0, t1, y0, speeds, t_eval, options, setup, on_event):
    """Integrate smooth phases from ``t0`` to ``t1``: ``setup(t, y) -> (rhs, events)`` for
    each, ``on_event(k, t, y) -> y`` after the phase's terminal event ``k``. An event that
    changes the state (an impact) leaves two samples at its time, before and after (unless
    ``t_eval`` is given); one that does not, one sample."""
    ts, ys = [], []
    t, y = t0, y0
    same = 0                    # events in a row without time passing
    while True:
        rhs, events = setup(t, y)
        te = None if t_eval is None else t_eval[(t_eval >= t) & (t_eval <= t1)]
        if te is not None and ts and te.size and te[0] == t:
            te = te[1:]
        sol = integrate(what, rhs, t, t1, y, lambda z: z[speeds], events=events, t_eval=te,
                        **options)
        # a phase with no t_eval point: solve_ivp gives empty lists
        tp = np.asarray(sol.t, dtype=float).reshape(-1)
        yp = np.asarray(sol.y, dtype=float).reshape(len(y), -1)
        if ts and tp.size and ts[-1].size and tp[0] == ts[-1][-1] \
                and np.array_equal(yp[:, 0], ys[-1][:, -1]):
            tp, yp = tp[1:], yp[:, 1:]         # an event that changed nothing: one sample
        ts.append(tp)
        ys.append(yp)
        if sol.status == 0:
            break
        k = next(k for k, tk in enumerate(sol.t_events) if tk.size)
        same = same + 1 if float(sol.t_events[k][0]) == t else 0
        if same > 1000:
            raise IntegrationError(f"{what}: the contact events do not advance in time at "
                                   f"t={t:.6g} (1000 in a row); the contact mode cannot be "
                                   "decided there")
        t = float(sol.t_events[k][0])
        if t_eval is None and sol.t[-1] != t:
            ts.append(np.array([t]))
            ys.append(sol.y_events[k][0][:, None])
        y = on_event(k, t, sol.y_events[k][0].copy())
        if t >= t1:                             # the next phase would start it
            if t_eval is None:
                ts.append(np.array([t]))
                ys.append(y[:, None])
            break
    return np.concatenate(ts), np.concatenate(ys, axis=1), sol


#: The compliant law's damping uses an approach speed of at least this (m/s or rad/s): a
#: contact that starts at rest would otherwise be infinitely damped.
HC_MIN_SPEED = 1e-2


def _crossings(model, U, start):
    """Terminal events on every gap crossing zero either way; at a restart on a root
    (``start["t"]``) the gap that fired reads as the side it moves to."""
    events = []
    for i in range(len(U.names)):
        def ev(t, y, i=i):
            if t == start["t"] and start["sign"][i]:
                return start["sign"][i] * 1e-300
            return _geometry(model, U, y[:model.nq], rows=False, t=t)[i]
        ev.terminal, ev.direction = True, 0
        events.append(ev)
    return events


def _hunt_crossley_forces(t, q, qd, *, model, U, on, k, p, d, v_minus, slip):
    """Generalized force of the compliant contacts, and per contact the normal force and
    the friction force's two tangential components (integrated into the impulses). Only
    contacts that have begun (``on``) push: a trial stage of a step that crosses a gap feels
    no force, so the event finds the crossing in free motion."""
    m = len(U.names)
    if not on.any():
        return np.zeros(model.nv), np.zeros(3 * m)
    g, Jn, Jt, _, _ = _geometry(model, U, q, qd, t)
    delta = np.where(on, np.maximum(-g, 0.0), 0.0)
    rate = -(Jn @ qd)
    F = np.zeros((m, 3))
    F[:, 0] = np.where(delta > 0, k * delta ** p * (1.0 + d * rate / v_minus), 0.0)
    F[:, 0] = np.maximum(F[:, 0], 0.0)
    for i in np.flatnonzero((F[:, 0] > 0) & (U.mu > 0)):
        vt = Jt[i] @ qd
        F[i, 1:] = -U.mu[i] * F[i, 0] * vt / np.sqrt(vt @ vt + slip * slip)
    Q = Jn.T @ F[:, 0] + np.einsum("ijk,ij->k", Jt, F[:, 1:])
    return Q, F.reshape(-1)


def _simulate_compliant(model, U, t0, t1, q0, qd0, tau_fn, t_eval, options, k, p, slip):
    """The compliant law: Hunt-Crossley normal forces, smoothed Coulomb friction; a gap
    that closes starts a contact (its approach speed kept for the damping), one that opens
    ends it and records its impact with the impulses integrated over the contact (a contact
    still on at ``t1`` is recorded with what it has delivered so far)."""
    nq, nv, m = model.nq, model.nv, len(U.names)
    d = np.array([hunt_crossley_damping(e, p) for e in U.e])
    v_minus = np.full(m, HC_MIN_SPEED)
    onset = np.full(m, np.nan)
    on = _geometry(model, U, q0, t=t0, rows=False) <= 0        # touching at the start
    onset[on] = t0
    quats = _sim_prepare(model).quaternions
    dyn = _Dynamics(model, U, tau_fn)

    law = dict(model=model, U=U, on=on, k=k, p=p, d=d, v_minus=v_minus, slip=slip)

    def rhs(t, y):
        q, qd = y[:nq], y[nq:nq + nv]
        if quats:
            q = model.normalize_q(q)
        Q, F = _hunt_crossley_forces(t, q, qd, **law)
        qdd = dyn.accelerations(t, q, qd, Q[None])[1]
        return np.concatenate([_poses.qdot(model, q, qd) if quats else qd, qdd, F])

    start = {"t": t0, "sign": np.zeros(m)}
    events = _crossings(model, U, start)
    impacts, tangential, dp = [], [], []

    def record(i, t, y):
        """The impact of contact ``i`` begun at ``onset[i]``: the impulses integrated over
        it, the momentum jump with the rows at its end (a short contact barely moves)."""
        _, Jn, Jt, _, _ = _geometry(model, U, y[:nq], y[nq:nq + nv], t)
        lam = y[nq + nv + 3 * i:nq + nv + 3 * i + 3]
        impacts.append(Impact(onset[i], U.names[i], lam[0]))
        tangential.append(_world_tangential(U, i, lam))
        dp.append(Jn[i] * lam[0] + Jt[i].T @ lam[1:])

    def on_event(i, t, y):
        Jn = _geometry(model, U, y[:nq], y[nq:nq + nv], t)[1]
        rate = Jn[i] @ y[nq:nq + nv]
        if rate < 0:                                    # a contact begins
            v_minus[i] = max(-rate, HC_MIN_SPEED)
            onset[i] = t
            on[i] = True
            y[nq + nv + 3 * i:nq + nv + 3 * i + 3] = 0.0
        elif np.isfinite(onset[i]):                     # it ends: its impact
            on[i] = False
            record(i, t, y)
            onset[i] = np.nan
        start["t"], start["sign"] = t, np.zeros(m)
        start["sign"][i] = 1.0 if rate >= 0 else -1.0
        return y

    t_all, y_all, sol = _phases("mb.contact.simulate", t0, t1,
                                np.concatenate([q0, qd0, np.zeros(3 * m)]), slice(nq, nq + nv),
                                t_eval, options, lambda t, y: (rhs, events), on_event)
    for i in np.flatnonzero(np.isfinite(onset)):        # contacts still on at t1
        record(i, float(sol.t[-1]), sol.y[:, -1])
    q_all = model.normalize_q(y_all[:nq].T) if quats else y_all[:nq].T
    order = np.argsort([imp.t for imp in impacts], kind="stable")
    return ContactTrajectory(model, t_all, q_all, y_all[nq:nq + nv].T, sol, None,
                             impacts=[impacts[j] for j in order],
                             tangential=[tangential[j] for j in order],
                             dp=[dp[j] for j in order], law="compliant")
