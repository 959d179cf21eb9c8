"""Small rotation helpers shared by every formulation.

Conventions (used throughout the course):

* ``skew(a) @ b == np.cross(a, b)``: the book's tilde matrix.
* A rotation matrix ``R`` maps components in a rotated ("child") frame to the
  reference ("parent") frame: ``v_parent = R @ v_child``. Its columns are the
  child's unit vectors in parent components.
* Quaternions are scalar-first ``(w, x, y, z)`` and unit length.

Every function accepts a leading batch dimension: ``axis_angle(axis, q)`` with
``q`` of shape ``(B,)`` returns ``(B, 3, 3)``.

Examples
--------
>>> import numpy as np
>>> from mbcourse.spatial import skew, axis_angle
>>> bool(np.allclose(skew([1, 2, 3]) @ [4, 5, 6], np.cross([1, 2, 3], [4, 5, 6])))
True
>>> np.round(axis_angle([0, 0, 1], np.pi / 2) @ [1, 0, 0], 12) + 0.0
array([0., 1., 0.])
"""

from __future__ import annotations

import numpy as np

from .errors import ShapeError

__all__ = [
    "cross",
    "skew",
    "vee",
    "axis_angle",
    "quat_to_matrix",
    "matrix_to_quat",
    "quat_multiply",
    "quat_rate_matrix",
    "is_rotation",
    "mv",
    "transpose",
    "PIVOT_RTOL",
    "definite_cholesky",
    "pivot_scale",
]


_NEXT, _PREV = np.array([1, 2, 0]), np.array([2, 0, 1])


def _bad(fn, name, value, wanted):
    """The ShapeError of a helper given something that is not ``wanted``."""
    shape = getattr(value, "shape", None)
    got = f"shape {shape}" if shape is not None else repr(value)
    return ShapeError(f"{fn}: {name} must be {wanted}, got {got}")


def _floats(value, fn, name, wanted):
    """``value`` as a float array; a ShapeError naming the argument when it is not numbers."""
    if value is None or isinstance(value, (str, bytes)):
        raise _bad(fn, name, value, wanted)
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _bad(fn, name, value, wanted) from None


def _last(arr, size, fn, name, wanted, matrix=False):
    """Refuse an array whose last axis (two axes with ``matrix``) is not ``size``."""
    tail = arr.shape[-2:] if matrix else arr.shape[-1:]
    if tail != ((size, size) if matrix else (size,)):
        raise _bad(fn, name, arr, wanted)
    return arr


def cross(a, b):
    """``a x b`` over the last axis of arrays of 3-vectors (broadcast like ``np.cross``).

    The same products as ``np.cross`` without its per-call overhead (index arithmetic on
    small arrays, in-place products on large ones): 3–4x faster on the few vectors of one
    state, where the library spends most of its time.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.array([[1.0, 2.0, 3.0]]), np.array([[4.0, 5.0, 6.0]])
    >>> cross(a, b).tolist(), np.cross(a, b).tolist()
    ([[-3.0, 6.0, -3.0]], [[-3.0, 6.0, -3.0]])
    """
    try:
        a, b = np.asarray(a), np.asarray(b)
    except ValueError:  # ragged lists
        a, b = (_floats(v, "cross", name, "3-vectors, shape (..., 3)")
                for name, v in (("a", a), ("b", b)))
    if a.shape[-1:] != (3,) or b.shape[-1:] != (3,) or a.dtype.char in "SUV" \
            or b.dtype.char in "SUV":
        for name, v in (("a", a), ("b", b)):
            if v.dtype.char in "SUV":
                raise _bad("cross", name, v.tolist(), "3-vectors, shape (..., 3)")
            _last(v, 3, "cross", name, "3-vectors, shape (..., 3)")
    if a.size + b.size <= 3000:
        return a[..., _NEXT] * b[..., _PREV] - a[..., _PREV] * b[..., _NEXT]
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, dtype=np.result_type(a, b))
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        np.multiply(a[..., i], b[..., j], out=out[..., k])
        out[..., k] -= a[..., j] * b[..., i]
    return out


def mv(M, x):
    """Batched matrix times vector: ``(M @ x[..., None])[..., 0]``.

    Examples
    --------
    >>> mv(np.eye(3)[None] * 2.0, np.ones((1, 3)))
    array([[2., 2., 2.]])
    """
    try:
        return (M @ x[..., None])[..., 0]
    except (TypeError, ValueError, IndexError):
        M = _floats(M, "mv", "M", "matrices, shape (..., m, k)")
        x = _floats(x, "mv", "x", "vectors, shape (..., k)")
        if M.ndim < 2 or x.ndim < 1 or M.shape[-1] != x.shape[-1]:
            raise ShapeError(f"mv: M (..., m, k) and x (..., k) must agree in k, got shapes "
                             f"{M.shape} and {x.shape}") from None
        return (M @ x[..., None])[..., 0]


def transpose(M):
    """Swap the last two axes (batched transpose)."""
    if np.ndim(M) < 2:
        raise _bad("transpose", "M", np.asarray(M), "matrices, shape (..., m, k)")
    return np.swapaxes(M, -1, -2)


#: A pivot at or below this fraction of its scale counts as zero: the matrix is singular to
#: working precision (a coordinate that moves no mass, a lost direction), and a solve with
#: it would return rounding noise divided by rounding noise.
PIVOT_RTOL = 1e-12


def definite_cholesky(A):
    """The Cholesky factor ``L`` (``A = L L^T``, batched) of a matrix that is positive
    definite to working precision; ``numpy.linalg.LinAlgError`` otherwise, also when a
    pivot ``L_ii^2`` is at or below :data:`PIVOT_RTOL` of its diagonal entry ``A_ii`` (which
    ``numpy.linalg.cholesky`` accepts).

    Examples
    --------
    >>> definite_cholesky(np.diag([4.0, 9.0]))
    array([[2., 0.],
           [0., 3.]])
    >>> definite_cholesky(np.array([[1.0, 1.0], [1.0, 1.0 + 1e-14]]))
    Traceback (most recent call last):
    ...
    numpy.linalg.LinAlgError: singular to working precision
    """
    L = np.linalg.cholesky(A)
    if np.any(np.diagonal(L, axis1=-2, axis2=-1) ** 2
              <= PIVOT_RTOL * np.diagonal(A, axis1=-2, axis2=-1)):
        raise np.linalg.LinAlgError("singular to working precision")
    return L


def pivot_scale(M, S):
    """The scale against which the articulated pivot ``S^T M S`` (chapter 4's ``U_k``,
    Ivanov's ``A^T M* A``) is called zero: ``S``'s linear rows (0..2) times the largest
    mass on ``M``'s diagonal plus its angular rows (3..5) times the largest moment.
    ``M`` (..., 6, 6), ``S`` (..., 6) or (..., 6, k); returns (...). A direction that the
    joints outboard have taken out of ``M`` leaves ``S^T M S`` at rounding level while this
    scale stays that of the bodies.

    Examples
    --------
    >>> M = np.diag([2.0, 2.0, 2.0, 0.1, 0.1, 0.0])       # no moment about z left
    >>> float(pivot_scale(M, np.array([0, 0, 0, 0, 0, 1.0])))
    0.1
    """
    S = np.asarray(S, dtype=float)
    S = S[..., None] if S.ndim == np.ndim(M) - 1 else S
    diag = np.diagonal(M, axis1=-2, axis2=-1)
    return (np.sum(S[..., :3, :] ** 2, axis=(-2, -1)) * diag[..., :3].max(-1)
            + np.sum(S[..., 3:, :] ** 2, axis=(-2, -1)) * diag[..., 3:].max(-1))


def skew(a):
    """Skew-symmetric matrix of a vector: ``skew(a) @ b == a x b``.

    Parameters
    ----------
    a : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> skew([1.0, 2.0, 3.0])
    array([[ 0., -3.,  2.],
           [ 3.,  0., -1.],
           [-2.,  1.,  0.]])
    """
    a = _last(_floats(a, "skew", "a", "3-vectors, shape (..., 3)"), 3, "skew", "a",
              "3-vectors, shape (..., 3)")
    out = np.zeros(a.shape[:-1] + (3, 3))
    out[..., 0, 1] = -a[..., 2]
    out[..., 0, 2] = a[..., 1]
    out[..., 1, 0] = a[..., 2]
    out[..., 1, 2] = -a[..., 0]
    out[..., 2, 0] = -a[..., 1]
    out[..., 2, 1] = a[..., 0]
    return out


def vee(m):
    """Inverse of :func:`skew`: the vector of the skew-symmetric part of ``m``.

    Examples
    --------
    >>> vee(skew([1.0, 2.0, 3.0]))
    array([1., 2., 3.])
    """
    m = _last(_floats(m, "vee", "m", "3x3 matrices, shape (..., 3, 3)"), 3, "vee", "m",
              "3x3 matrices, shape (..., 3, 3)", matrix=True)
    return 0.5 * np.stack(
        [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]],
        axis=-1,
    )


def axis_angle(axis, angle):
    """Rotation matrix about a unit ``axis`` by ``angle`` (Rodrigues' formula).

    Parameters
    ----------
    axis : array_like, shape (3,) or (..., 3)
        Unit vector (not normalized here: callers validate).
    angle : float or array_like, shape (...)

    Returns
    -------
    ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> R = axis_angle([1.0, 0.0, 0.0], [0.0, np.pi])
    >>> R.shape
    (2, 3, 3)
    >>> np.round(R[1], 12) + 0.0
    array([[ 1.,  0.,  0.],
           [ 0., -1.,  0.],
           [ 0.,  0., -1.]])
    """
    axis = _last(_floats(axis, "axis_angle", "axis", "a 3-vector, shape (3,) or (..., 3)"), 3,
                 "axis_angle", "axis", "a 3-vector, shape (3,) or (..., 3)")
    angle = _floats(angle, "axis_angle", "angle", "a number or an array of numbers")
    K = skew(axis)
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def quat_to_matrix(quat):
    """Rotation matrix of a unit quaternion ``(w, x, y, z)``.

    Examples
    --------
    >>> c = np.cos(np.pi / 4); s = np.sin(np.pi / 4)
    >>> bool(np.allclose(quat_to_matrix([c, 0, 0, s]), axis_angle([0, 0, 1], np.pi / 2)))
    True
    """
    quat = _last(_floats(quat, "quat_to_matrix", "quat", "quaternions (w, x, y, z), shape "
                         "(..., 4)"), 4, "quat_to_matrix", "quat", "quaternions (w, x, y, z), "
                 "shape (..., 4)")
    w, x, y, z = np.moveaxis(quat, -1, 0)
    out = np.empty(quat.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def matrix_to_quat(R):
    """Unit quaternion ``(w, x, y, z)`` with ``w >= 0`` of a rotation matrix.

    Uses Shepperd's method (the numerically safe branch for every rotation).

    Examples
    --------
    >>> q = matrix_to_quat(axis_angle([0, 1, 0], 0.3))
    >>> bool(np.allclose(quat_to_matrix(q), axis_angle([0, 1, 0], 0.3)))
    True
    """
    R = _last(_floats(R, "matrix_to_quat", "R", "rotation matrices, shape (..., 3, 3)"), 3,
              "matrix_to_quat", "R", "rotation matrices, shape (..., 3, 3)", matrix=True)
    batch = R.shape[:-2]
    m = R.reshape(-1, 3, 3)
    d0, d1, d2 = m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]
    a21, a02, a10 = m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1]
    s01, s02, s12 = m[:, 0, 1] + m[:, 1, 0], m[:, 0, 2] + m[:, 2, 0], m[:, 1, 2] + m[:, 2, 1]
    t = np.stack([1 + d0 + d1 + d2, 1 + d0 - d1 - d2, 1 - d0 + d1 - d2, 1 - d0 - d1 + d2], axis=1)
    cands = np.stack(
        [
            np.stack([t[:, 0], a21, a02, a10], axis=1),
            np.stack([a21, t[:, 1], s01, s02], axis=1),
            np.stack([a02, s01, t[:, 2], s12], axis=1),
            np.stack([a10, s02, s12, t[:, 3]], axis=1),
        ],
        axis=1,
    )
    k = np.argmax(t, axis=1)
    rows = np.arange(m.shape[0])
    q = cands[rows, k] * (0.5 / np.sqrt(t[rows, k]))[:, None]
    q *= np.where(q[:, :1] < 0.0, -1.0, 1.0)
    return q.reshape(batch + (4,))


def quat_multiply(a, b):
    """Hamilton product ``a * b`` of quaternions ``(w, x, y, z)``.

    ``quat_to_matrix(quat_multiply(a, b)) == quat_to_matrix(a) @ quat_to_matrix(b)``.

    Examples
    --------
    >>> quat_multiply([0, 1, 0, 0], [0, 0, 1, 0])
    array([0., 0., 0., 1.])
    """
    wanted = "quaternions (w, x, y, z), shape (..., 4)"
    a = _last(_floats(a, "quat_multiply", "a", wanted), 4, "quat_multiply", "a", wanted)
    b = _last(_floats(b, "quat_multiply", "b", wanted), 4, "quat_multiply", "b", wanted)
    aw, av = a[..., :1], a[..., 1:]
    bw, bv = b[..., :1], b[..., 1:]
    w = aw * bw - np.sum(av * bv, axis=-1, keepdims=True)
    v = aw * bv + bw * av + np.cross(av, bv)
    return np.concatenate([w, v], axis=-1)


def quat_rate_matrix(quat):
    """Matrix ``W`` with ``dquat/dt = W @ omega`` for ``omega`` in the rotated (body) frame.

    For ``R = quat_to_matrix(quat)`` and ``dR/dt = R @ skew(omega)`` this is
    ``dquat/dt = 1/2 quat * (0, omega)``.

    Examples
    --------
    >>> quat_rate_matrix([1.0, 0.0, 0.0, 0.0]) + 0.0
    array([[0. , 0. , 0. ],
           [0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5]])
    """
    wanted = "quaternions (w, x, y, z), shape (..., 4)"
    quat = _last(_floats(quat, "quat_rate_matrix", "quat", wanted), 4, "quat_rate_matrix",
                 "quat", wanted)
    w, x, y, z = np.moveaxis(quat, -1, 0)
    W = np.stack(
        [
            np.stack([-x, -y, -z], axis=-1),
            np.stack([w, -z, y], axis=-1),
            np.stack([z, w, -x], axis=-1),
            np.stack([-y, x, w], axis=-1),
        ],
        axis=-2,
    )
    return 0.5 * W


def is_rotation(R, tol=1e-9):
    """True if ``R`` is a proper rotation matrix (orthonormal, det +1) within ``tol``.

    Examples
    --------
    >>> is_rotation(np.eye(3)), is_rotation(np.diag([1.0, 1.0, -1.0]))
    (True, False)
    """
    R = _floats(R, "is_rotation", "R", "an array of numbers")
    if R.shape[-2:] != (3, 3) or not np.all(np.isfinite(R)):
        return False
    ortho = np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max() <= tol
    return bool(ortho and np.all(np.abs(np.linalg.det(R) - 1.0) <= tol))
