"""Chapter 4 compiled: Ivanov's two solvers of ``M(q) qd = p`` and the compiled sweep.

:func:`ivanov_sweep_solve` (alg. of §3) and :func:`ivanov_cholesky_solve` (alg. of §4) run
Ivanov's elimination as printed, on the kinematics :func:`mbcourse.poisson.compiled_system`
packs, counting their arithmetic; :func:`sweep_velocities` is what
:func:`mbcourse.poisson.velocities` runs for the models the kernels cover: chapter 4's
articulated elimination (:mod:`~mbcourse.kernels.vereshchagin`) with the velocity terms and
gravity switched off solves ``M qd = p`` in O(n).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .common import OPTS
from .vereshchagin import vereshchagin_forward

__all__ = ["sweep_velocities", "ivanov_sweep_solve", "ivanov_cholesky_solve"]


@nb.njit(**OPTS)
def sweep_velocities(ints, geo, body, q, p, unused, qd):
    """``qd`` (B, nv) from ``M(q) qd = p`` for a batch by chapter 4's recursion with zero
    speeds and ``p`` as the generalized forces (``body`` without gravity: the front door's
    ``gravity=False``); ``unused`` keeps the kernels' signature. False if not finite."""
    return vereshchagin_forward(ints, geo, body, q, np.zeros_like(p), p, qd)


# ------------------------------------------- Ivanov's two solvers of (6), as printed
# Both kernels take the per-call kinematics of Ivanov's §1 (C_i, A_i, M_i about O_i in
# body axes, v*_i) already evaluated, and solve (6) for qd and mu, one configuration,
# ``repeats`` times (for timing). Every product is a dense loop over its operands' sizes
# (the 6x6 C_i as a general matrix, in both routes alike); each helper adds the
# multiplications and additions it performs to ``count`` = [multiplications (divisions and
# square roots included), additions (subtractions included)], so the two routes' arithmetic
# is counted from the code that runs, not estimated.

@nb.njit(**OPTS)
def _mm_c(A, B, out, r, kk, c, count, ta=False):
    """``out[:r, :c] = A[:r, :kk] @ B[:kk, :c]``, or ``A[:kk, :r].T @ B[:kk, :c]`` with
    ``ta``."""
    for i in range(r):
        for j in range(c):
            s = 0.0
            for k in range(kk):
                s += (A[k, i] if ta else A[i, k]) * B[k, j]
            out[i, j] = s
    count[0] += r * c * kk
    count[1] += r * c * (kk - 1)


@nb.njit(**OPTS)
def _mv_c(A, x, out, r, kk, count, ta=False):
    """``out[:r] = A[:r, :kk] @ x[:kk]``, or ``A[:kk, :r].T @ x[:kk]`` with ``ta``."""
    for i in range(r):
        s = 0.0
        for k in range(kk):
            s += (A[k, i] if ta else A[i, k]) * x[k]
        out[i] = s
    count[0] += r * kk
    count[1] += r * (kk - 1)


@nb.njit(**OPTS)
def _carry_inertia_c(phi, Ms, k, h, X, count):
    """A child's articulated terms carried to its parent ``k``: ``phi*_k += h``,
    ``M*_k += X`` (both routes, backward pass)."""
    for r in range(6):
        phi[k, r] += h[r]
        for cc in range(6):
            Ms[k, r, cc] += X[r, cc]
    count[1] += 42


@nb.njit(**OPTS)
def _carry_velocity_c(C, vk, vstar_c, out, count):
    """``out = C v_k + v*``: the parent's velocity carried to the child (both routes,
    forward pass)."""
    _mv_c(C, vk, out, 6, 6, count)
    for r in range(6):
        out[r] += vstar_c[r]
    count[1] += 6


@nb.njit(**OPTS)
def _velocity_momentum_c(Ai, qdi, ni, Msc, phic, s6, h, vc, muc, count):
    """A body's velocity and momentum once its joint rates ``qdi`` are known:
    ``v_i = (C v_k + v*) + A qd_i`` (``s6`` holds the bracket), ``mu_i = M* v_i + phi*``."""
    if ni > 0:
        _mv_c(Ai, qdi, h, 6, ni, count)
        for r in range(6):
            s6[r] += h[r]
        count[1] += 6
    _mv_c(Msc, s6, h, 6, 6, count)
    for r in range(6):
        vc[r] = s6[r]
        muc[r] = h[r] + phic[r]
    count[1] += 6


@nb.njit(**OPTS)
def _invert_c(V, D, n, count):
    """``D = V^-1`` (n x n) by Gauss-Jordan elimination without pivoting (V is SPD);
    False if a pivot is not positive."""
    for i in range(n):
        for j in range(n):
            D[i, j] = 1.0 if i == j else 0.0
    for k in range(n):
        piv = V[k, k]
        if not piv > 0.0:
            return False
        inv = 1.0 / piv
        count[0] += 1
        for j in range(n):
            V[k, j] *= inv
            D[k, j] *= inv
        count[0] += 2 * n
        for i in range(n):
            if i != k:
                f = V[i, k]
                for j in range(n):
                    V[i, j] -= f * V[k, j]
                    D[i, j] -= f * D[k, j]
                count[0] += 2 * n
                count[1] += 2 * n
    return True


@nb.njit(**OPTS)
def _chol_c(V, n, count):
    """``V = L L^T`` in place (lower triangle); False if ``V`` is not positive definite."""
    for j in range(n):
        s = V[j, j]
        for k in range(j):
            s -= V[j, k] * V[j, k]
        count[0] += j
        count[1] += j
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        V[j, j] = d
        count[0] += 1
        for i in range(j + 1, n):
            s = V[i, j]
            for k in range(j):
                s -= V[i, k] * V[j, k]
            V[i, j] = s / d
            count[0] += j + 1
            count[1] += j
    return True


@nb.njit(**OPTS)
def _lsolve_c(L, B, n, c, count):
    """``B[:n, :c] <- L^-1 B`` (forward substitution, L lower triangular)."""
    for j in range(c):
        for i in range(n):
            s = B[i, j]
            for k in range(i):
                s -= L[i, k] * B[k, j]
            B[i, j] = s / L[i, i]
            count[0] += i + 1
            count[1] += i


@nb.njit(**OPTS)
def _ltsolve_c(L, b, n, count):
    """``b[:n] <- L^-T b`` (back substitution with L^T)."""
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]
        count[0] += n - i
        count[1] += n - i - 1


@nb.njit(**OPTS)
def _sweep_eliminate(i, ints, C, A, vstar, p, Ms, phi, D, sw, vec, count):
    """One step of the sweep's backward pass (alg. of §3) for joint ``i``: ``D_i``, ``H_i``
    and the carry of ``M*_i``, ``phi*_i`` to the parent; ``sw`` holds six 6x6 work
    matrices, ``vec`` four 6-vectors. False if ``A_i^T M*_i A_i`` is not positive definite."""
    MA, G, H, X, Y, Vn = sw[0], sw[1], sw[2], sw[3], sw[4], sw[5]
    w, h, s6, t6 = vec[0], vec[1], vec[2], vec[3]
    k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
    Mc = Ms[c]
    _mv_c(Mc, vstar[c], w, 6, 6, count)                  # M* v* + phi*
    for r in range(6):
        w[r] += phi[c, r]
    count[1] += 6
    if ni > 0:
        _mm_c(Mc, A[i], MA, 6, 6, ni, count)             # M* A
        _mm_c(A[i], MA, Vn, ni, 6, ni, count, True)      # A^T M* A
        if not _invert_c(Vn, D[i], ni, count):           # D = (A^T M* A)^-1
            return False
        _mm_c(MA, D[i], G, 6, ni, ni, count)             # M* A D
        for r in range(6):                               # H = E - M* A D A^T
            for cc in range(6):
                s = 0.0
                for kk in range(ni):
                    s += G[r, kk] * A[i, cc, kk]
                H[r, cc] = (1.0 if r == cc else 0.0) - s
        count[0] += 36 * ni
        count[1] += 36 * ni                              # (ni - 1) adds and one subtraction
        _mv_c(G, p[vs:], s6, 6, ni, count)               # M* A D p
        _mv_c(H, w, t6, 6, 6, count)                     # H (M* v* + phi*)
        for r in range(6):
            t6[r] += s6[r]
        count[1] += 6
        _mm_c(H, Mc, X, 6, 6, 6, count)                  # H M*
    else:
        for r in range(6):
            t6[r] = w[r]
        X[:, :] = Mc
    _mm_c(X, C[i], Y, 6, 6, 6, count)                    # (H M*) C
    _mm_c(C[i], Y, X, 6, 6, 6, count, True)              # C^T (H M* C)
    _mv_c(C[i], t6, h, 6, 6, count, True)
    _carry_inertia_c(phi, Ms, k, h, X, count)            # phi*_k += h, M*_k += X
    return True


@nb.njit(**OPTS)
def ivanov_sweep_solve(ints, C, A, M, vstar, p, qd, mu, count, repeats):
    """Ivanov's sweep (alg. of §3), as printed: ``D_i = (A_i^T M*_i A_i)^-1`` by inversion,
    ``H_i = E - M*_i A_i D_i A_i^T`` formed, ``M*_k += C^T H M* C``,
    ``phi*_k += C^T [M* A D p + H (M* v* + phi*)]``; forward ``qd_i = D_i [p_i - A_i^T
    (phi*_i + M*_i (C_i v_k + v*_i))]``, ``v_i``, ``mu_i = M*_i v_i + phi*_i``.

    ``ints`` (m, 4): parent, child, first speed index, number of speeds ``n_i`` per joint
    (base-to-leaves order); ``C`` (m, 6, 6); ``A`` (m, 6, 6), the first ``n_i`` columns
    used; ``M`` (n + 1, 6, 6) about ``O_i``; ``vstar`` (n + 1, 6); ``p`` (nv,). Writes
    ``qd`` (nv,), ``mu`` (n + 1, 6) and adds the arithmetic to ``count`` (2,). Returns False
    if some ``A_i^T M*_i A_i`` is not positive definite."""
    m, n1 = ints.shape[0], M.shape[0]
    Ms = np.empty((n1, 6, 6))
    phi = np.empty((n1, 6))
    v = np.empty((n1, 6))
    D = np.zeros((m, 6, 6))
    sw = np.empty((6, 6, 6))                            # MA, G, H, X, Y, Vn
    vec = np.empty((4, 6))
    w, h, s6, t6 = vec[0], vec[1], vec[2], vec[3]
    for _ in range(repeats):
        Ms[:] = M
        phi[:] = 0.0
        for i in range(m - 1, -1, -1):                   # backward: leaves -> base
            if not _sweep_eliminate(i, ints, C, A, vstar, p, Ms, phi, D, sw, vec, count):
                return False
        for r in range(6):
            v[0, r] = 0.0
        for i in range(m):                               # forward: base -> leaves
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            _carry_velocity_c(C[i], v[k], vstar[c], s6, count)   # C v_k + v*
            if ni > 0:
                _mv_c(Ms[c], s6, h, 6, 6, count)         # phi* + M* (C v_k + v*)
                for r in range(6):
                    h[r] += phi[c, r]
                count[1] += 6
                _mv_c(A[i], h, t6, ni, 6, count, True)
                for r in range(ni):
                    t6[r] = p[vs + r] - t6[r]
                count[1] += ni
                _mv_c(D[i], t6, w, ni, ni, count)        # qd_i = D (p - A^T (...))
                for r in range(ni):
                    qd[vs + r] = w[r]
            _velocity_momentum_c(A[i], w, ni, Ms[c], phi[c], s6, h, v[c], mu[c], count)
        for r in range(6):
            mu[0, r] = phi[0, r]
    return True


@nb.njit(**OPTS)
def ivanov_cholesky_solve(ints, C, A, M, vstar, p, qd, mu, count, repeats):
    """Ivanov's block ``L^T D L`` algorithm (alg. of §4), as printed: ``L_i L_i^T =
    A_i^T M*_i A_i``, ``L_i x_i = p_i - A_i^T (phi*_i + M*_i v*_i)``, ``L_i V_i = A_i^T M*_i
    C_i``; ``M*_k += C^T M* C - V^T V``, ``phi*_k += C^T (M* v* + phi*) + V^T x``; forward
    ``L_i^T qd_i = x_i - V_i v_k``, ``v_i``, ``mu_i = M*_i v_i + phi*_i``. Arguments and
    result as :func:`ivanov_sweep_solve`."""
    m, n1 = ints.shape[0], M.shape[0]
    Ms = np.empty((n1, 6, 6))
    phi = np.empty((n1, 6))
    v = np.empty((n1, 6))
    L = np.zeros((m, 6, 6))
    V = np.zeros((m, 6, 6))
    x = np.zeros((m, 6))
    AtM, X, Y = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
    w, h, s6 = np.empty(6), np.empty(6), np.empty(6)
    for _ in range(repeats):
        Ms[:] = M
        phi[:] = 0.0
        for i in range(m - 1, -1, -1):                   # backward: leaves -> base
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            Mc = Ms[c]
            _mv_c(Mc, vstar[c], w, 6, 6, count)          # M* v* + phi*
            for r in range(6):
                w[r] += phi[c, r]
            count[1] += 6
            _mm_c(Mc, C[i], Y, 6, 6, 6, count)           # C^T M* C
            _mm_c(C[i], Y, X, 6, 6, 6, count, True)
            _mv_c(C[i], w, h, 6, 6, count, True)              # C^T (M* v* + phi*)
            if ni > 0:
                _mm_c(A[i], Mc, AtM, ni, 6, 6, count, True)   # A^T M*
                _mm_c(AtM, A[i], L[i], ni, 6, ni, count) # A^T M* A
                if not _chol_c(L[i], ni, count):         # = L L^T
                    return False
                _mv_c(A[i], w, s6, ni, 6, count, True)        # x = L^-1 (p - A^T (...))
                for r in range(ni):
                    x[i, r] = p[vs + r] - s6[r]
                count[1] += ni
                _lsolve_c(L[i], x[i].reshape((6, 1)), ni, 1, count)
                _mm_c(AtM, C[i], V[i], ni, 6, 6, count)  # V = L^-1 A^T M* C
                _lsolve_c(L[i], V[i], ni, 6, count)
                _mm_c(V[i], V[i], Y, 6, ni, 6, count, True)   # V^T V
                _mv_c(V[i], x[i], s6, 6, ni, count, True)     # V^T x
                for r in range(6):
                    h[r] += s6[r]
                    for cc in range(6):
                        X[r, cc] -= Y[r, cc]
                count[1] += 42
            _carry_inertia_c(phi, Ms, k, h, X, count)   # phi*_k += h, M*_k += X
        for r in range(6):
            v[0, r] = 0.0
        for i in range(m):                               # forward: base -> leaves
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            _carry_velocity_c(C[i], v[k], vstar[c], s6, count)   # C v_k + v*
            if ni > 0:
                _mv_c(V[i], v[k], w, ni, 6, count)       # L^T qd = x - V v_k
                for r in range(ni):
                    w[r] = x[i, r] - w[r]
                count[1] += ni
                _ltsolve_c(L[i], w, ni, count)
                for r in range(ni):
                    qd[vs + r] = w[r]
            _velocity_momentum_c(A[i], w, ni, Ms[c], phi[c], s6, h, v[c], mu[c], count)
        for r in range(6):
            mu[0, r] = phi[0, r]
    return True
