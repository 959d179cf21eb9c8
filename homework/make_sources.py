"""Author the nbgrader source notebooks of the homework from the compact description below.

Run ``python homework/make_sources.py`` after editing a task: it rewrites
``homework/source/<assignment>/<assignment>.ipynb``. ``--check`` only compares (exit 1 if a
committed notebook is out of date). Every assignment is a list of cells:

* ``md(text)`` — a markdown cell (locked, so a student cannot lose the statement);
* ``given(id, code)`` — read-only code the student runs (data, helpers);
* ``task(id, points, statement, solution, tests)`` — one task: its statement, the solution
  cell (the code between ``### BEGIN SOLUTION`` / ``### END SOLUTION`` is replaced by a stub
  in the release) and an autograded test cell worth ``points``. Test cells start with the
  visible tests (they print what passed); the lines between ``### BEGIN HIDDEN TESTS`` and
  ``### END HIDDEN TESTS`` are removed from the release and run only when grading.

Tests call the student's function through :func:`mbcourse.grading.check_call` (a raising or
endless function becomes a sentence, not a traceback) and compare with
:func:`mbcourse.grading.check`. Hidden tests use parameters and seeds that differ from the
visible ones and take their expected values from the library; every seed written in a hidden
block becomes a per-term one (:func:`per_term`: ``default_rng(N)`` -> ``hidden_rng(N)``,
``seed=N`` -> ``seed=hidden_seed(N)``, drawn from the instructor's ``SEED``). Visible expected values
are literals computed here from the library when the notebooks are written.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
import textwrap

import numpy as np

import mbcourse as mb
from mbcourse.grading import notebook_cell

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE / "source"
TIMEOUT = 5  # seconds a student function may run in a test (check_call)


def lit(x, digits=12):
    """A Python literal for a value computed from the library (visible expected values)."""
    a = np.asarray(x, dtype=float)
    a = np.where(np.abs(a) < 10.0 ** -digits, 0.0, np.round(a, digits)) + 0.0
    if np.all(a == np.rint(a)) and np.all(np.abs(a) < 1e9):
        a = a.astype(int)
    return repr(a.tolist())


def md(text):
    return ("md", textwrap.dedent(text).strip())


def given(grade_id, code):
    return ("given", grade_id, textwrap.dedent(code).strip())


def task(grade_id, points, statement, solution, tests):
    return ("task", grade_id, points, textwrap.dedent(statement).strip(),
            textwrap.dedent(solution).strip(), per_term(textwrap.dedent(tests).strip()))


#: How the hidden tests' seeds become per-term seeds (:func:`per_term`): a fixed seed ``N``
#: written in a hidden block is the stream number of ``mbcourse.grading.hidden_seed(N)`` =
#: ``[N, term seed]``, so ``make grade ... SEED=...`` draws other inputs every term.
PER_TERM = [
    (r"np\.random\.default_rng\((\d+)\)", r"hidden_rng(\1)"),
    (r"\bseed=(\d+)(?=[,)])", r"seed=hidden_seed(\1)"),
    (r"\b(branched_tree|slider_arm)\((\d+)\)", r"\1(hidden_seed(\2))"),
    (r"\brandom_arm\((\d+), (\d+)\)", r"random_arm(\1, hidden_seed(\2))"),
    (r"\brandom_cloud\((\w+), (\w+)\)", r"random_cloud(\1, hidden_seed(\2))"),
]
_HIDDEN_BLOCK = re.compile(r"(### BEGIN HIDDEN TESTS[^\n]*\n)(.*?)(### END HIDDEN TESTS)", re.S)


def per_term(tests):
    """A test cell's text with the hidden tests' fixed seeds replaced by per-term ones.

    Inside ``### BEGIN/END HIDDEN TESTS`` every seed goes through
    :func:`mbcourse.grading.hidden_seed` (rules: :data:`PER_TERM`), and the block imports it
    first; the visible tests (released to students) are unchanged. A literal
    ``default_rng(<number>)`` left in a hidden block is an error.
    """
    def hide(m):
        body = m.group(2)
        for pattern, repl in PER_TERM:
            body = re.sub(pattern, repl, body)
        if re.search(r"default_rng\(\s*\d", body):
            raise ValueError(f"a hidden test keeps a fixed seed: {body[:200]}")
        indent = re.match(r"[ \t]*", body).group(0)
        return (m.group(1) + f"{indent}from mbcourse.grading import hidden_rng, hidden_seed\n"
                + body + m.group(3))

    return _HIDDEN_BLOCK.sub(hide, tests)


SETUP = given("setup", f"""
    # Run this cell first. Failed checks print one sentence; `%xmode Context` shows full tracebacks.
    %xmode Minimal
    import numpy as np
    import mbcourse as mb
    from mbcourse.grading import check, check_call
    TIMEOUT = {TIMEOUT}  # seconds your function may take in a test
""")

HEADER = """
    ## How this homework works

    Write your code in the cells that say `# YOUR CODE HERE` (replace the line
    `raise NotImplementedError()`), then run the test cell below it: it prints
    `... visible tests passed` or one sentence saying what is wrong. When you submit, your
    answer cells run again in a fresh kernel, your functions are called with the inputs of
    **hidden tests** (other mechanisms, other numbers), and the assignment's own test cells
    check the results: a task scores its points only if all its tests pass, so make your
    function general, not tuned to the visible example. Warnings and printed output never
    cost points; a cell may run 20 s, a call 10 s. Do not rename the functions;
    *Kernel → Restart & Run All* before you submit.
"""

# --------------------------------------------------------------------------- chapter 1
FIG_1_3 = ([1, 6, 4, 6, 4, 6, 7], [6, 2, 3, 4, 5, 7, 0])
_chain = ([0, 1], [1, 2])
_fork = ([0, 1, 1, 3], [1, 2, 3, 4])
_mixed = ([2, 0, 1], [1, 2, 3])  # the arc between s_1 and s_2 points toward the base

CH1 = [
    md("""
    # Homework 1 — the graph of a system of bodies (10 points)

    Bodies $s_0, \\dots, s_n$ ($s_0$ is the base) are joined by arcs $u_1, \\dots, u_m$. Arc
    $u_a$ leaves body $i^+(a)$ and enters body $i^-(a)$; in Python `i_plus[a - 1]` is
    $i^+(a)$. The incidence matrix has $S_{ia} = +1$ if $i = i^+(a)$, $-1$ if $i = i^-(a)$,
    else 0; we store all $n + 1$ rows (row 0 is $S_0$). For a tree ($m = n$) the path
    matrix $T$ ($n \\times n$, rows = arcs, columns = bodies $1..n$) has
    $T_{ai} = +1$ if $u_a$ lies on the path from $s_0$ to $s_i$ and points toward $s_0$,
    $-1$ if it lies on it and points toward $s_i$, 0 otherwise.
    """),
    md(HEADER),
    SETUP,
    given("random_tree", """
    def random_tree(n, seed):
        \"\"\"A random tree with n bodies besides s_0 and random arc directions.\"\"\"
        rng = np.random.default_rng(seed)
        i_plus, i_minus = [], []
        for k in range(1, n + 1):
            parent = int(rng.integers(0, k))
            pair = [parent, k] if rng.random() < 0.5 else [k, parent]
            i_plus.append(pair[0])
            i_minus.append(pair[1])
        return i_plus, i_minus

    i_plus_13, i_minus_13 = [1, 6, 4, 6, 4, 6, 7], [6, 2, 3, 4, 5, 7, 0]  # Fig. 1.3, Table 1.1
    """),
    task("incidence", 3, """
    ## Task 1 (3 points): the incidence matrix

    Write `incidence(i_plus, i_minus)` returning the full incidence matrix $S$, shape
    $(n + 1) \\times m$, where $n$ is the largest body number used.
    """, """
    def incidence(i_plus, i_minus):
        \"\"\"Incidence matrix S, shape (n + 1, m): row 0 is S_0, column a - 1 is arc u_a.\"\"\"
        ### BEGIN SOLUTION
        n = max(max(i_plus), max(i_minus))
        S = np.zeros((n + 1, len(i_plus)), dtype=int)
        S[list(i_plus), np.arange(len(i_plus))] = 1
        S[list(i_minus), np.arange(len(i_minus))] = -1
        return S
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "S[i, a-1] = +1 if arc u_a leaves s_i, -1 if it enters s_i; row 0 is the base s_0"
    S = check_call("incidence", globals().get("incidence"), {_chain[0]}, {_chain[1]}, timeout=TIMEOUT)
    check("S", S, {lit(mb.graph.incidence_matrix(*_chain))}, hint=hint)
    S = check_call("incidence", globals().get("incidence"), {_mixed[0]}, {_mixed[1]}, timeout=TIMEOUT)
    check("S", S, {lit(mb.graph.incidence_matrix(*_mixed))}, hint=hint)
    print("incidence: visible tests passed")
    ### BEGIN HIDDEN TESTS
    for ip, im in [(i_plus_13, i_minus_13), random_tree(9, seed=101), random_tree(12, seed=202),
                   ([0, 0, 0], [1, 2, 3])]:
        S = check_call("incidence", globals().get("incidence"), ip, im, timeout=TIMEOUT)
        check("S", S, mb.graph.incidence_matrix(ip, im), hint=hint)
    ### END HIDDEN TESTS
    """),
    task("path", 4, """
    ## Task 2 (4 points): the path matrix

    Write `path(i_plus, i_minus)` returning the path matrix $T$ of a tree. Check your
    result with identities (1.4)–(1.5): $T S = E$ ($S$ without row 0) and
    $T^T S_0^T = -1_n$.
    """, """
    def path(i_plus, i_minus):
        \"\"\"Path matrix T (n x n) of a tree: T[a-1, i-1] = +1 / -1 / 0.\"\"\"
        ### BEGIN SOLUTION
        n = len(i_plus)
        S = np.zeros((n + 1, n))
        S[list(i_plus), np.arange(n)] = 1.0
        S[list(i_minus), np.arange(n)] = -1.0
        return np.rint(np.linalg.inv(S[1:])).astype(int)  # (1.5): T S = E
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "T[a-1, i-1] = +1 if u_a is on the path from s_0 to s_i and points toward s_0, -1 if toward s_i"
    T = check_call("path", globals().get("path"), {_chain[0]}, {_chain[1]}, timeout=TIMEOUT)
    check("T", T, {lit(mb.graph.path_matrix(*_chain))}, hint=hint)
    T = check_call("path", globals().get("path"), {_fork[0]}, {_fork[1]}, timeout=TIMEOUT)
    check("T", T, {lit(mb.graph.path_matrix(*_fork))}, hint=hint)
    print("path: visible tests passed")
    ### BEGIN HIDDEN TESTS
    for ip, im in [(i_plus_13, i_minus_13), random_tree(8, seed=303), random_tree(15, seed=404),
                   ([2, 0, 1], [1, 2, 3])]:
        T = check_call("path", globals().get("path"), ip, im, timeout=TIMEOUT)
        check("T", T, mb.graph.path_matrix(ip, im), hint=hint)
    ### END HIDDEN TESTS
    """),
    task("preceding_arc", 3, """
    ## Task 3 (3 points): the preceding arc

    The arc that precedes body $s_k$ is the one incident to $s_k$ that lies on the path
    from $s_0$ to $s_k$: the unique $a$ with $S_{ka} T_{ak} \\neq 0$. Write
    `preceding_arc(S, T, k)` returning its number $a$ (1-based, as in the book), given the
    full incidence matrix `S` (row 0 included) and the path matrix `T`.
    """, """
    def preceding_arc(S, T, k):
        \"\"\"Number a (1..n) of the arc preceding body s_k.\"\"\"
        ### BEGIN SOLUTION
        S, T = np.asarray(S), np.asarray(T)
        return int(np.flatnonzero((S[k] != 0) & (T[:, k - 1] != 0))[0]) + 1
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "look for the arc a with S[k, a-1] != 0 and T[a-1, k-1] != 0; return a, not a - 1"
    S, T = mb.graph.incidence_matrix({_fork[0]}, {_fork[1]}), mb.graph.path_matrix({_fork[0]}, {_fork[1]})
    arcs = [check_call("preceding_arc", globals().get("preceding_arc"), S, T, k, timeout=TIMEOUT)
            for k in range(1, 5)]
    check("[preceding_arc(S, T, k) for k in 1..4]", arcs, {lit([mb.graph.predecessor(mb.graph.incidence_matrix(*_fork), mb.graph.path_matrix(*_fork), k)[0] + 1 for k in range(1, 5)])}, hint=hint)
    print("preceding_arc: visible tests passed")
    ### BEGIN HIDDEN TESTS
    for ip, im in [(i_plus_13, i_minus_13), random_tree(10, seed=505), random_tree(7, seed=606)]:
        S, T = mb.graph.incidence_matrix(ip, im), mb.graph.path_matrix(ip, im)
        n = T.shape[0]
        arcs = [check_call("preceding_arc", globals().get("preceding_arc"), S, T, k, timeout=TIMEOUT)
                for k in range(1, n + 1)]
        check("[preceding_arc(S, T, k) for k in 1..n]", arcs,
              [mb.graph.predecessor(S, T, k)[0] + 1 for k in range(1, n + 1)], hint=hint)
    ### END HIDDEN TESTS
    """),
]


# --------------------------------------------------------------------------- chapter 2
def _spatial(r, A):
    z = np.zeros((1, 3))
    return mb.cartesian.constraints.SpatialState(np.asarray(r, float)[None], np.asarray(A)[None], z, z)


def _rot(axis, angle):
    axis = np.asarray(axis, float)
    return mb.spatial.axis_angle(axis / np.linalg.norm(axis), angle)


_pp = dict(n=[0.0, 0.6, 0.8], rho_j=[0.5, -0.2, 0.1], d=0.3, r_i=[1.0, 0.0, 0.5],
           ai=([0, 0, 1], 0.4), r_j=[1.2, 0.7, 0.4], aj=([1, 1, 0], -0.3))


def _pp_row():
    p = _pp
    si, sj = _spatial(p["r_i"], _rot(*p["ai"])), _spatial(p["r_j"], _rot(*p["aj"]))
    g, Qi, Qj, _ = mb.cartesian.constraints.point_plane(np.array(p["n"]), np.array(p["rho_j"]),
                                                        p["d"], si, sj)
    return g[0], np.concatenate([Qi[0], Qj[0]])


_kkt_M = np.diag([2.0, 2.0, 0.5])
_kkt_Q = np.array([[1.0, 0.0, -0.5], [0.0, 1.0, 0.0]])
_kkt_F = np.array([0.0, -19.62, 0.3])
_kkt_b = np.array([0.1, 0.0])


def _kkt_ref(M, Q, F, b):
    N = M.shape[0]
    H = np.block([[M, Q.T], [Q, np.zeros((Q.shape[0],) * 2)]])
    z = np.linalg.solve(H, np.concatenate([F, b]))
    return np.concatenate([z[:N], -z[N:]])


CH2 = [
    md("""
    # Homework 2 — constraints in Cartesian coordinates (10 points)

    Body $k$ has its centre of mass at $r_k$ and the orientation matrix $A_k$ (body axes
    to inertial axes). A point $K$ of body $j$, at $\\rho_j$ from $C_j$ (body-$j$ axes),
    must stay on a plane of body $i$ with unit normal $n$ (body-$i$ axes) passing at
    distance $d$ from $C_i$ (2.10)–(2.22):

    $$\\rho_{ij}^{(i)} = A_i^T (A_j \\rho_j + r_j - r_i), \\qquad
      g = n^T \\rho_{ij}^{(i)} - d = 0 .$$

    Differentiated twice, $g$ gives one row of the acceleration equations
    $Q_i \\ddot X_i + Q_j \\ddot X_j = b$ with $\\ddot X_k = (\\ddot r_k, \\dot\\omega_k)$
    (angular acceleration in **body** axes) and

    $$Q_i = \\big[-n^T A_i^T,\\; n^T \\tilde\\rho_{ij}^{(i)}\\big], \\qquad
      Q_j = \\big[n^T A_i^T,\\; -n^T A_i^T A_j \\tilde\\rho_j\\big],$$

    where $\\tilde a$ is the skew-symmetric matrix with $\\tilde a x = a \\times x$.
    """),
    md(HEADER),
    SETUP,
    given("rotation", """
    def rotation(axis, angle):
        \"\"\"Rotation matrix about an axis (normalized here) by an angle in radians.\"\"\"
        axis = np.asarray(axis, dtype=float)
        return mb.spatial.axis_angle(axis / np.linalg.norm(axis), angle)
    """),
    task("gap", 3, """
    ## Task 1 (3 points): the constraint function

    Write `gap(n, rho_j, d, r_i, A_i, r_j, A_j)` returning the number $g$ (zero when the
    point lies on the plane).
    """, """
    def gap(n, rho_j, d, r_i, A_i, r_j, A_j):
        \"\"\"g = n . A_i^T (A_j rho_j + r_j - r_i) - d, a number.\"\"\"
        ### BEGIN SOLUTION
        rho_ij = A_i.T @ (A_j @ rho_j + r_j - r_i)
        return float(n @ rho_ij - d)
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "rho_ij^(i) = A_i^T (A_j rho_j + r_j - r_i) is expressed in body-i axes, like n"
    args = (np.array({_pp['n']}), np.array({_pp['rho_j']}), {_pp['d']}, np.array({_pp['r_i']}),
            rotation({_pp['ai'][0]}, {_pp['ai'][1]}), np.array({_pp['r_j']}), rotation({_pp['aj'][0]}, {_pp['aj'][1]}))
    g = check_call("gap", globals().get("gap"), *args, timeout=TIMEOUT)
    check("g", g, {lit(_pp_row()[0])}, hint=hint)
    print("gap: visible tests passed")
    ### BEGIN HIDDEN TESTS
    from mbcourse.cartesian.constraints import SpatialState, point_plane
    rng = np.random.default_rng(2024)
    for trial in range(4):
        n = rng.normal(size=3); n /= np.linalg.norm(n)
        rho_j, r_i, r_j, d = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), rng.normal()
        A_i, A_j = rotation(rng.normal(size=3), rng.uniform(-3, 3)), rotation(rng.normal(size=3), rng.uniform(-3, 3))
        z = np.zeros((1, 3))
        ref = point_plane(n, rho_j, d, SpatialState(r_i[None], A_i[None], z, z),
                          SpatialState(r_j[None], A_j[None], z, z))[0][0]
        g = check_call("gap", globals().get("gap"), n, rho_j, d, r_i, A_i, r_j, A_j, timeout=TIMEOUT)
        check("g", g, ref, hint=hint)
    ### END HIDDEN TESTS
    """),
    task("row", 4, """
    ## Task 2 (4 points): the constraint row

    Write `row(n, rho_j, r_i, A_i, r_j, A_j)` returning the 12 numbers
    $(Q_i, Q_j)$ as one array of shape `(12,)`: 3 translational and 3 rotational entries
    for body $i$, then the same for body $j$. (Hint: $n^T \\tilde a\\, x = n \\cdot (a \\times x) = (n \\times a)^T x$.)
    """, """
    def row(n, rho_j, r_i, A_i, r_j, A_j):
        \"\"\"(Q_i, Q_j) of the point-on-plane constraint, shape (12,).\"\"\"
        ### BEGIN SOLUTION
        rho_ij = A_i.T @ (A_j @ rho_j + r_j - r_i)
        nA = A_i @ n
        return np.concatenate([-nA, np.cross(n, rho_ij), nA, np.cross(rho_j, A_j.T @ nA)])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "n^T skew(a) x = (n x a) . x; the rotational entries act on body-axis angular accelerations"
    args = (np.array({_pp['n']}), np.array({_pp['rho_j']}), np.array({_pp['r_i']}),
            rotation({_pp['ai'][0]}, {_pp['ai'][1]}), np.array({_pp['r_j']}), rotation({_pp['aj'][0]}, {_pp['aj'][1]}))
    Q = check_call("row", globals().get("row"), *args, timeout=TIMEOUT)
    check("(Q_i, Q_j)", Q, {lit(_pp_row()[1])}, hint=hint)
    print("row: visible tests passed")
    ### BEGIN HIDDEN TESTS
    from mbcourse.cartesian.constraints import SpatialState, point_plane
    rng = np.random.default_rng(4048)
    for trial in range(4):
        n = rng.normal(size=3); n /= np.linalg.norm(n)
        rho_j, r_i, r_j = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        A_i, A_j = rotation(rng.normal(size=3), rng.uniform(-3, 3)), rotation(rng.normal(size=3), rng.uniform(-3, 3))
        z = np.zeros((1, 3))
        _, Qi, Qj, _ = point_plane(n, rho_j, 0.0, SpatialState(r_i[None], A_i[None], z, z),
                                   SpatialState(r_j[None], A_j[None], z, z))
        Q = check_call("row", globals().get("row"), n, rho_j, r_i, A_i, r_j, A_j, timeout=TIMEOUT)
        check("(Q_i, Q_j)", Q, np.concatenate([Qi[0], Qj[0]]), hint=hint)
    ### END HIDDEN TESTS
    """),
    task("kkt", 3, """
    ## Task 3 (3 points): accelerations and reactions

    With all rows stacked, the equations of motion of the separate bodies are
    $M \\ddot X = F + Q^T \\lambda$ (the reactions $Q^T\\lambda$ act on the bodies) and
    $Q \\ddot X = b$. Write `kkt(M, Q, F, b)` returning one array
    $(\\ddot X, \\lambda)$ of length $N + n_c$ (first the $N$ accelerations, then the $n_c$
    multipliers). Solve one linear system; do not invert $M$.
    """, """
    def kkt(M, Q, F, b):
        \"\"\"(ddX, lambda) with M ddX = F + Q^T lambda and Q ddX = b.\"\"\"
        ### BEGIN SOLUTION
        N, nc = M.shape[0], Q.shape[0]
        H = np.block([[M, -Q.T], [Q, np.zeros((nc, nc))]])
        return np.linalg.solve(H, np.concatenate([F, b]))
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "M ddX - Q^T lambda = F and Q ddX = b: mind the sign of lambda"
    M, Q = np.array({_kkt_M.tolist()}), np.array({_kkt_Q.tolist()})
    F, b = np.array({_kkt_F.tolist()}), np.array({_kkt_b.tolist()})
    z = check_call("kkt", globals().get("kkt"), M, Q, F, b, timeout=TIMEOUT)
    check("(ddX, lambda)", z, {lit(_kkt_ref(_kkt_M, _kkt_Q, _kkt_F, _kkt_b))}, hint=hint)
    print("kkt: visible tests passed")
    ### BEGIN HIDDEN TESTS
    from mbcourse.cartesian.solvers import solve_dense
    model = mb.models.crank_slider(r=0.12, l=0.35, m_crank=0.4, m_rod=1.1, m_slider=1.7)
    for theta, omega in hidden_rng(2).uniform([-np.pi, -3.0], [np.pi, 3.0], size=(2, 2)):
        q, qd = mb.models.crank_slider_state(model, theta, omega)
        eq = mb.cartesian.equations(model, q, qd)
        ddX, lam = solve_dense(model, eq)
        z = check_call("kkt", globals().get("kkt"), eq.dense_M(), eq.dense_Q()[0], eq.F[0].ravel(),
                       eq.b[0], timeout=TIMEOUT)
        check("(ddX, lambda)", z, np.concatenate([ddX[0].ravel(), lam[0]]), rtol=1e-6, atol=1e-8, hint=hint)
    ### END HIDDEN TESTS
    """),
]

# --------------------------------------------------------------------------- chapter 3
_dp3 = mb.models.double_pendulum(m1=1.0, m2=3.0, l1=2.0, l2=1.0)
_bary = mb.tree.barycentre
_d3 = _bary.d_vectors(_dp3)

BRANCHED = """
    def branched_tree(seed):
        \"\"\"A random tree of 5 rigid bodies on revolute joints (body 1 on the base).\"\"\"
        rng = np.random.default_rng(seed)
        model = mb.Model()
        for k in range(1, 6):
            model.add_body(f"b{k}", rng.uniform(0.5, 3.0), rng.uniform(1.0, 2.0, size=3))
        for k, p in enumerate([0, 1, 1, 2, 3], start=1):
            model.add_joint(f"j{k}", "revolute", p, k, parent_point=rng.normal(size=3) if p else (0, 0, 0),
                            child_point=rng.normal(size=3), axis=rng.normal(size=3))
        return model
"""

CH3 = [
    md("""
    # Homework 3 — augmented bodies and barycentres (10 points)

    For joints whose joint point is fixed on both bodies, the hinge vector $c_{ia}$ runs
    from $C_i$ to the joint $u_a$ (body-$i$ axes) and $C_{ia} = S_{ia} c_{ia}$ (3.5). Then
    (3.13) $d_{ij} = \\sum_a C_{ia} T_{aj}$. The augmented body $i$ is body $i$ plus, at
    the end of each hinge vector, a point mass equal to all the mass hanging on through
    that joint; its centre of mass is the barycentre $B_i$, and $b_{ij}$ runs from $B_i$
    to the point where body $j$'s mass sits:

    $$b_{i0} = \\frac{1}{M} \\sum_j m_j d_{ij}, \\qquad b_{ij} = b_{i0} - d_{ij}, \\qquad
      \\sum_j m_j b_{ij} = 0 \\qquad (3.19), (3.20), (3.26),$$

    and the inertia of augmented body $i$ about its inboard joint is (3.24)
    $K_i = J_i + \\sum_k m_k (|d_{ik}|^2 E - d_{ik} d_{ik}^T)$.

    Arrays: bodies $1..n$ at positions $0..n-1$; `C[i-1, a-1]` is the 3-vector $C_{ia}$,
    so `C` has shape `(n, m, 3)`; `d[i-1, j-1]` is $d_{ij}$, shape `(n, n, 3)`.
    """),
    md(HEADER),
    SETUP,
    given("data", """
    # The double pendulum (rods of 2 m and 1 m, masses 1 kg and 3 kg), as the library sees it
    model = mb.models.double_pendulum(m1=1.0, m2=3.0, l1=2.0, l2=1.0)
    C = mb.tree.barycentre.hinge_vectors(model)   # (n, m, 3)
    T = model.graph.T                             # (m, n) path matrix
    m = model.masses()                            # (n,)
    J = model.inertias()                          # (n, 3, 3) central inertia tensors
    """ + BRANCHED),
    task("d_vectors", 3, """
    ## Task 1 (3 points): the vectors $d_{ij}$

    Write `d_vectors(C, T)` returning `d` of shape `(n, n, 3)` from (3.13).
    """, """
    def d_vectors(C, T):
        \"\"\"d[i-1, j-1] = sum_a C[i-1, a] T[a, j-1], shape (n, n, 3).\"\"\"
        ### BEGIN SOLUTION
        return np.einsum("iax,aj->ijx", C, T)
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "d_ij = sum over arcs a of C_ia T_aj, a 3-vector for every pair (i, j)"
    d = check_call("d_vectors", globals().get("d_vectors"), C, T, timeout=TIMEOUT)
    check("d", d, {lit(_d3)}, hint=hint)
    print("d_vectors: visible tests passed")
    ### BEGIN HIDDEN TESTS
    for mdl in [mb.models.spatial_manipulator(), branched_tree(7), branched_tree(8)]:
        d = check_call("d_vectors", globals().get("d_vectors"), mb.tree.barycentre.hinge_vectors(mdl),
                       mdl.graph.T, timeout=TIMEOUT)
        check("d", d, mb.tree.barycentre.d_vectors(mdl), hint=hint)
    ### END HIDDEN TESTS
    """),
    task("barycentre_vectors", 4, """
    ## Task 2 (4 points): barycentric vectors

    Write `barycentre_vectors(d, m)` returning `b` of shape `(n, n, 3)`,
    `b[i-1, j-1]` $= b_{ij}$. Check (3.19) on your result: $\\sum_j m_j b_{ij} = 0$.
    """, """
    def barycentre_vectors(d, m):
        \"\"\"b[i-1, j-1] = b_i0 - d_ij with b_i0 = sum_j m_j d_ij / M, shape (n, n, 3).\"\"\"
        ### BEGIN SOLUTION
        b0 = np.einsum("j,ijx->ix", m, d) / np.sum(m)
        return b0[:, None, :] - d
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "b_i0 is the mass-weighted mean of d_i1 .. d_in (divide by the total mass), b_ij = b_i0 - d_ij"
    b = check_call("barycentre_vectors", globals().get("barycentre_vectors"), {lit(_d3)}, np.array({lit(_dp3.masses())}, dtype=float), timeout=TIMEOUT)
    check("b", b, {lit(_bary.barycentre_vectors(_dp3)[1])}, hint=hint)
    print("barycentre_vectors: visible tests passed")
    ### BEGIN HIDDEN TESTS
    for mdl in [mb.models.spatial_manipulator(masses=(2.0, 5.0, 1.5)), branched_tree(11), branched_tree(12)]:
        b = check_call("barycentre_vectors", globals().get("barycentre_vectors"),
                       mb.tree.barycentre.d_vectors(mdl), mdl.masses(), timeout=TIMEOUT)
        check("b", b, mb.tree.barycentre.barycentre_vectors(mdl)[1], hint=hint)
    ### END HIDDEN TESTS
    """),
    task("augmented_inertias", 3, """
    ## Task 3 (3 points): inertia of the augmented bodies

    Write `augmented_inertias(J, d, m)` returning `K` of shape `(n, 3, 3)` from (3.24).
    """, """
    def augmented_inertias(J, d, m):
        \"\"\"K[i-1] = J_i + sum_k m_k (|d_ik|^2 E - d_ik d_ik^T), shape (n, 3, 3).\"\"\"
        ### BEGIN SOLUTION
        sq = np.einsum("ikx,ikx->ik", d, d)
        outer = np.einsum("ikx,iky->ikxy", d, d)
        return J + np.einsum("k,ikxy->ixy", m, sq[..., None, None] * np.eye(3) - outer)
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "sum over k of m_k (|d_ik|^2 E - d_ik d_ik^T), added to J_i (parallel-axis theorem for point masses)"
    K = check_call("augmented_inertias", globals().get("augmented_inertias"), J, {lit(_d3)}, m, timeout=TIMEOUT)
    check("K", K, {lit(_bary.augmented_inertias(_dp3))}, hint=hint)
    print("augmented_inertias: visible tests passed")
    ### BEGIN HIDDEN TESTS
    for mdl in [mb.models.spatial_manipulator(lengths=(0.3, 0.6, 0.5)), branched_tree(21), branched_tree(22)]:
        K = check_call("augmented_inertias", globals().get("augmented_inertias"), mdl.inertias(),
                       mb.tree.barycentre.d_vectors(mdl), mdl.masses(), timeout=TIMEOUT)
        check("K", K, mb.tree.barycentre.augmented_inertias(mdl), hint=hint)
    ### END HIDDEN TESTS
    """),
]

# --------------------------------------------------------------------------- chapter 4
CHAIN_DATA = """
    def chain_data(model, q, qd, tau):
        \"\"\"The library's recursion (mb.vereshchagin.articulated) for a planar chain of revolute
        joints about z, unpacked per body k = 1..n (inertial axes, centres of mass):

        M_star, Q_star : articulated mass matrix (6, 6) and force (6,) of body k (3.177)
        M_own          : body k's own mass matrix diag(m_k E, A_k J_k A_k^T)
        S              : (6,) motion of body k per unit rate of its joint
        rho            : (3,) from the parent's centre of mass to body k's
        pred           : (6,) C_k w_parent + w0_k, the acceleration of body k at ddq_k = 0
        ddq            : the joint acceleration the library computes
        \"\"\"
        ddq, w, M_star, Q_star = mb.vereshchagin.articulated(model, q, qd, tau)
        z = np.array([0.0, 0.0, 1.0])
        angle, out = 0.0, {}
        r_parent = np.zeros(3)
        for k, joint in enumerate(model.joints, start=1):
            A_parent = mb.spatial.axis_angle(z, angle)
            angle += q[k - 1]
            A = mb.spatial.axis_angle(z, angle)
            joint_point = r_parent + (A_parent @ joint.parent_point if k > 1 else joint.parent_point)
            r = joint_point - A @ joint.child_point
            S = np.concatenate([np.cross(z, r - joint_point), z])
            M_own = np.zeros((6, 6))
            M_own[:3, :3] = model.masses()[k - 1] * np.eye(3)
            M_own[3:, 3:] = A @ model.inertias()[k - 1] @ A.T
            out[k] = dict(M_star=M_star[k], Q_star=Q_star[k], M_own=M_own, S=S, rho=r - r_parent,
                          pred=w[k] - S * ddq[k - 1], ddq=ddq[k - 1])
            r_parent = r
        return out
"""

_dp4 = mb.models.double_pendulum(m1=2.0, m2=0.7, l1=1.3, l2=0.8)
_q4, _qd4, _tau4 = [0.4, -0.9], [1.2, 0.5], [0.3, -0.2]
_ns4 = {"np": np, "mb": mb}
exec(textwrap.dedent(CHAIN_DATA), _ns4)
_data4 = _ns4["chain_data"](_dp4, np.array(_q4), np.array(_qd4), np.array(_tau4))


def _C(rho):
    C = np.eye(6)
    C[:3, 3:] = -mb.spatial.skew(np.asarray(rho, float))
    return C


CH4 = [
    md("""
    # Homework 4 — one step of Vereshchagin's recursion (10 points)

    Every body $k$ is kept separate, with its acceleration $w_k = (a_k, \\varepsilon_k)$
    (centre of mass, inertial axes). The kinematics of joint $k$ (3.174):
    $w_k = C_k w_{p(k)} + S_k \\ddot q_k + w^0_k$, with

    $$C_k = \\begin{bmatrix} E & -\\tilde\\rho_k \\\\ 0 & E \\end{bmatrix},$$

    $\\rho_k$ from the parent's centre of mass to body $k$'s. The backward pass (leaves to
    root) folds every body's **articulated** mass matrix $M^*_k$ into its parent (3.178):

    $$M^*_{p(k)} \\mathrel{+}= C_k^T \\Big(M^*_k - \\frac{M^*_k S_k S_k^T M^*_k}{U_k}\\Big) C_k,
      \\qquad U_k = S_k^T M^*_k S_k,$$

    and the forward pass (root to leaves) gives each joint acceleration (3.176):

    $$\\ddot q_k = U_k^{-1} \\Big(\\tau_k + S_k^T \\big(Q^*_k - M^*_k (C_k w_{p(k)} + w^0_k)\\big)\\Big).$$

    `chain_data` below runs the library's recursion on a planar chain and unpacks, for
    every body, the quantities you need (one degree of freedom per joint, so $U_k$ is a
    number).
    """),
    md(HEADER),
    SETUP,
    given("chain_data", CHAIN_DATA + """
    model = mb.models.double_pendulum(m1=2.0, m2=0.7, l1=1.3, l2=0.8)
    data = chain_data(model, np.array([0.4, -0.9]), np.array([1.2, 0.5]), np.array([0.3, -0.2]))
    """),
    task("spatial_transform", 2, """
    ## Task 1 (2 points): the matrix $C_k$

    Write `spatial_transform(rho)` returning the $6 \\times 6$ matrix $C_k$ for the vector
    $\\rho_k$ (shape `(3,)`).
    """, """
    def spatial_transform(rho):
        \"\"\"C = [[E, -skew(rho)], [0, E]], shape (6, 6).\"\"\"
        ### BEGIN SOLUTION
        x, y, z = rho
        C = np.eye(6)
        C[:3, 3:] = -np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        return C
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "skew(rho) x = rho x x; the upper-right block is -skew(rho), so a_k = a_p + eps_p x rho"
    C = check_call("spatial_transform", globals().get("spatial_transform"), np.array([1.0, 2.0, 3.0]), timeout=TIMEOUT)
    check("C", C, {lit(_C([1.0, 2.0, 3.0]))}, hint=hint)
    print("spatial_transform: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(77)
    for trial in range(3):
        rho = rng.normal(size=3)
        ref = np.eye(6)
        ref[:3, 3:] = -mb.spatial.skew(rho)
        C = check_call("spatial_transform", globals().get("spatial_transform"), rho, timeout=TIMEOUT)
        check("C", C, ref, hint=hint)
    ### END HIDDEN TESTS
    """),
    task("fold", 4, """
    ## Task 2 (4 points): the backward step

    Write `fold(M_star, S, rho)` returning body $k$'s contribution (6 × 6) to its parent's
    articulated mass matrix. In a chain the parent has one child, so the library's
    $M^*_{1}$ minus body 1's own mass matrix must equal `fold` of body 2.
    """, """
    def fold(M_star, S, rho):
        \"\"\"C^T (M* - M* S S^T M* / U) C with U = S^T M* S, shape (6, 6).\"\"\"
        ### BEGIN SOLUTION
        C = spatial_transform(rho)
        MS = M_star @ S
        return C.T @ (M_star - np.outer(MS, MS) / (S @ MS)) @ C
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "U = S^T M* S is a number; the bracket is M* - (M* S)(M* S)^T / U, then C^T [...] C"
    F = check_call("fold", globals().get("fold"), data[2]["M_star"], data[2]["S"], data[2]["rho"], timeout=TIMEOUT)
    check("fold(body 2)", F, data[1]["M_star"] - data[1]["M_own"], rtol=1e-7, atol=1e-9, hint=hint)
    print("fold: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(4242)
    for mdl in [mb.models.triple_pendulum(), mb.models.double_pendulum(m1=0.6, m2=2.5, l1=0.9, l2=1.7)]:
        for trial in range(2):
            n = mdl.nv
            dat = chain_data(mdl, rng.uniform(-3, 3, n), rng.uniform(-2, 2, n), rng.uniform(-1, 1, n))
            for k in range(2, n + 1):  # in a chain body k is the only child of body k - 1
                F = check_call("fold", globals().get("fold"), dat[k]["M_star"], dat[k]["S"], dat[k]["rho"],
                               timeout=TIMEOUT)
                check(f"fold(body {{k}})", F, dat[k - 1]["M_star"] - dat[k - 1]["M_own"],
                      rtol=1e-7, atol=1e-9, hint=hint)
    ### END HIDDEN TESTS
    """),
    task("joint_acceleration", 4, """
    ## Task 3 (4 points): the forward step

    Write `joint_acceleration(M_star, Q_star, S, pred, tau)` returning $\\ddot q_k$ (a
    number) from (3.176), where `pred` is $C_k w_{p(k)} + w^0_k$.
    """, """
    def joint_acceleration(M_star, Q_star, S, pred, tau):
        \"\"\"ddq_k = (tau + S^T (Q* - M* pred)) / (S^T M* S).\"\"\"
        ### BEGIN SOLUTION
        return float((tau + S @ (Q_star - M_star @ pred)) / (S @ M_star @ S))
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "ddq_k = (tau_k + S_k^T (Q*_k - M*_k pred)) / U_k with U_k = S_k^T M*_k S_k"
    for k, tau in [(1, 0.3), (2, -0.2)]:
        a = check_call("joint_acceleration", globals().get("joint_acceleration"), data[k]["M_star"],
                       data[k]["Q_star"], data[k]["S"], data[k]["pred"], tau, timeout=TIMEOUT)
        check(f"ddq_{{k}}", a, {{1: {lit(_data4[1]['ddq'])}, 2: {lit(_data4[2]['ddq'])}}}[k], rtol=1e-7, atol=1e-9, hint=hint)
    print("joint_acceleration: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(9090)
    for mdl in [mb.models.triple_pendulum(), mb.models.double_pendulum(m1=0.6, m2=2.5, l1=0.9, l2=1.7)]:
        n = mdl.nv
        q, qd, tau = rng.uniform(-3, 3, n), rng.uniform(-2, 2, n), rng.uniform(-1, 1, n)
        dat = chain_data(mdl, q, qd, tau)
        for k in range(1, n + 1):
            a = check_call("joint_acceleration", globals().get("joint_acceleration"), dat[k]["M_star"],
                           dat[k]["Q_star"], dat[k]["S"], dat[k]["pred"], tau[k - 1], timeout=TIMEOUT)
            check(f"ddq_{{k}}", a, dat[k]["ddq"], rtol=1e-7, atol=1e-9, hint=hint)
        check("ddq (forward dynamics)", [dat[k]["ddq"] for k in range(1, n + 1)],
              mb.vereshchagin.forward_dynamics(mdl, q, qd, tau), rtol=1e-9, atol=1e-12)
    ### END HIDDEN TESTS
    """),
]

# --------------------------------------------------------------------------- chapter 5
_dp5 = mb.models.double_pendulum()
_q5, _qd5 = np.array([0.3, 0.4]), np.array([1.0, -2.0])
_dec5 = mb.inertial.decompose_numeric(_dp5, _q5, _qd5)

CH5_HIDDEN = """
    rng = np.random.default_rng({seed})
    cases = [mb.models.triple_pendulum(), mb.models.spatial_manipulator(), mb.models.telegin_polar()]
    for mdl in cases:  # (hidden tests must not overwrite the notebook's q, qd, dH)
        q_h, qd_h = rng.uniform(-2, 2, mdl.nq), rng.uniform(-2, 2, mdl.nv)
        ref = mb.inertial.decompose_numeric(mdl, q_h, qd_h).{part}
        dH_h = mb.inertial.mass_matrix_derivatives(mdl, q_h)
        h = check_call("{name}", globals().get("{name}"), dH_h, qd_h, timeout=TIMEOUT)
        check("{var}", h, ref, rtol=1e-7, atol=1e-9, hint=hint)
"""



def _hidden5(**fields):
    """The hidden tests of a chapter-5 task, indented to sit inside a test-cell template."""
    return textwrap.indent(textwrap.dedent(CH5_HIDDEN.format(**fields)).strip(), "    ").lstrip()


CH5 = [
    md("""
    # Homework 5 — splitting the inertial forces (10 points)

    Lagrange's equations $H(q)\\ddot q + h = Q$ contain the velocity-product forces
    $h = \\dot H \\dot q - \\partial T/\\partial q$. With $H_{jik} = \\partial H_{ji}/\\partial q_k$
    ($j \\ge i$) Telegin splits $h = h_c + h_o + h_g$ into centrifugal, Coriolis and
    gyroscopic forces:

    $$h_{ci} = \\tfrac12 H_{iii} \\dot q_i^2 + \\sum_{j>i} H_{jij} \\dot q_j^2 \\qquad (2)$$

    $$h_{oi} = \\tfrac12 \\dot q_i \\sum_{k\\ne i} H_{iik} \\dot q_k
      + \\sum_{j>i} \\dot q_j \\sum_{k\\ne j} H_{jik} \\dot q_k \\qquad (3)$$

    $$h_{gi} = \\sum_{j<i} \\dot H_{ij} \\dot q_j + \\tfrac12 \\dot H_{ii} \\dot q_i
      - \\frac{\\partial T}{\\partial q_i}, \\qquad
      \\frac{\\partial T}{\\partial q_i} = \\tfrac12 \\dot q^T \\frac{\\partial H}{\\partial q_i} \\dot q,
      \\qquad \\dot H = \\sum_k \\frac{\\partial H}{\\partial q_k} \\dot q_k \\qquad (5)$$

    The centrifugal forces contain squares of velocities only, the Coriolis forces
    products of different velocities, and the gyroscopic forces do no work:
    $\\sum_i h_{gi} \\dot q_i = 0$. Below, `dH[j, i, k]` $= \\partial H_{ji}/\\partial q_k$
    (0-based indices) comes from the library's mass matrix.
    """),
    md(HEADER),
    SETUP,
    given("data", """
    model = mb.models.double_pendulum()
    q, qd = np.array([0.3, 0.4]), np.array([1.0, -2.0])
    dH = mb.inertial.mass_matrix_derivatives(model, q)   # dH[j, i, k] = dH_ji / dq_k
    """),
    task("centrifugal", 3, """
    ## Task 1 (3 points): centrifugal forces

    Write `centrifugal(dH, qd)` returning $h_c$ (shape `(N,)`) from (2).
    """, """
    def centrifugal(dH, qd):
        \"\"\"h_c of Telegin's formula (2), shape (N,).\"\"\"
        ### BEGIN SOLUTION
        N = len(qd)
        return np.array([0.5 * dH[i, i, i] * qd[i] ** 2
                         + sum(dH[j, i, j] * qd[j] ** 2 for j in range(i + 1, N)) for i in range(N)])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "only squares qd_j^2 appear: 1/2 H_iii qd_i^2 plus H_jij qd_j^2 for j > i"
    h = check_call("centrifugal", globals().get("centrifugal"), dH, qd, timeout=TIMEOUT)
    check("h_c", h, {lit(_dec5.centrifugal)}, rtol=1e-7, atol=1e-9, hint=hint)
    print("centrifugal: visible tests passed")
    ### BEGIN HIDDEN TESTS
    {_hidden5(seed=55, part="centrifugal", name="centrifugal", var="h_c")}
    ### END HIDDEN TESTS
    """),
    task("coriolis", 3, """
    ## Task 2 (3 points): Coriolis forces

    Write `coriolis(dH, qd)` returning $h_o$ (shape `(N,)`) from (3).
    """, """
    def coriolis(dH, qd):
        \"\"\"h_o of Telegin's formula (3), shape (N,).\"\"\"
        ### BEGIN SOLUTION
        N = len(qd)
        return np.array([0.5 * qd[i] * sum(dH[i, i, k] * qd[k] for k in range(N) if k != i)
                         + sum(qd[j] * sum(dH[j, i, k] * qd[k] for k in range(N) if k != j)
                               for j in range(i + 1, N)) for i in range(N)])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "only products of different velocities appear; the sums skip k = i (first term) and k = j (second)"
    h = check_call("coriolis", globals().get("coriolis"), dH, qd, timeout=TIMEOUT)
    check("h_o", h, {lit(_dec5.coriolis)}, rtol=1e-7, atol=1e-9, hint=hint)
    print("coriolis: visible tests passed")
    ### BEGIN HIDDEN TESTS
    {_hidden5(seed=66, part="coriolis", name="coriolis", var="h_o")}
    ### END HIDDEN TESTS
    """),
    task("gyroscopic", 4, """
    ## Task 3 (4 points): gyroscopic forces

    Write `gyroscopic(dH, qd)` returning $h_g$ (shape `(N,)`) from (5). Check that
    $\\sum_i h_{gi} \\dot q_i = 0$ for your result.
    """, """
    def gyroscopic(dH, qd):
        \"\"\"h_g of Telegin's formula (5), shape (N,).\"\"\"
        ### BEGIN SOLUTION
        qd = np.asarray(qd, dtype=float)
        Hdot = dH @ qd
        dT = 0.5 * np.einsum("j,jik,i->k", qd, dH, qd)
        return np.array([Hdot[i, :i] @ qd[:i] + 0.5 * Hdot[i, i] * qd[i] for i in range(len(qd))]) - dT
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "Hdot = sum_k dH[:, :, k] qd_k; dT/dq_i = 1/2 qd^T dH[:, :, i] qd; only j < i in the first sum"
    h = check_call("gyroscopic", globals().get("gyroscopic"), dH, qd, timeout=TIMEOUT)
    check("h_g", h, {lit(_dec5.gyroscopic)}, rtol=1e-7, atol=1e-9, hint=hint)
    print("gyroscopic: visible tests passed")
    ### BEGIN HIDDEN TESTS
    {_hidden5(seed=77, part="gyroscopic", name="gyroscopic", var="h_g")}
    ### END HIDDEN TESTS
    """),
]

# --------------------------------------------------------------------------- chapter 6
FOUR_BAR = """
    def four_bar_model(links):
        \"\"\"The planar four-bar with links = (d, a, b, c) in metres: ground O-C, crank O-A,
        coupler A-B, rocker C-B; O at the origin, C = (d, 0). Joints (revolute about z), in
        this order: O (ground-crank), A (crank-coupler), C (ground-rocker) -- the reduced
        tree -- and B (coupler-rocker), the joint we cut. Model coordinates (q1, q2, q3, q_B).\"\"\"
        d, a, b, c = links
        model = mb.Model(gravity=(0.0, -9.81, 0.0))
        for name, length in (("crank", a), ("coupler", b), ("rocker", c)):  # uniform bars
            model.add_body(name, 2.0 * length, mb.models.bar_inertia(2.0 * length, length))
        z = (0.0, 0.0, 1.0)
        model.add_joint("O", "revolute", "ground", "crank", child_point=(-a / 2, 0, 0), axis=z)
        model.add_joint("A", "revolute", "crank", "coupler", parent_point=(a / 2, 0, 0),
                        child_point=(-b / 2, 0, 0), axis=z)
        model.add_joint("C", "revolute", "ground", "rocker", parent_point=(d, 0, 0),
                        child_point=(-c / 2, 0, 0), axis=z)
        model.add_joint("B", "revolute", "coupler", "rocker", parent_point=(b / 2, 0, 0),
                        child_point=(c / 2, 0, 0), axis=z)
        return model


    def closed(model, q_guess):
        \"\"\"Tree coordinates (3,) near q_guess that close the loop, q1 held (mb.loops.assemble).\"\"\"
        q, _ = mb.loops.assemble(model, np.r_[q_guess, 0.0], independent=["O.angle"], cut=["B"])
        return q[:3]


    def jacobian_fd(fun, q, h=1e-6):
        \"\"\"Central differences: column k is (fun(q + h e_k) - fun(q - h e_k)) / (2 h).\"\"\"
        q = np.asarray(q, dtype=float)
        return np.stack([(np.asarray(fun(q + h * e), dtype=float)
                          - np.asarray(fun(q - h * e), dtype=float)) / (2 * h)
                         for e in np.eye(len(q))], axis=-1)
"""

# The hidden tests' reference: the gap B' - B'' and its Jacobian from the library's body
# poses and body velocity Jacobians (kinematics(...).X: rows vx, vy, wz of every body).
LIBRARY_ROWS = """
    def library_rows(mdl, q):
        \"\"\"(f, H) of the cut joint B from the library's body poses and Jacobians.\"\"\"
        qf = np.r_[q, 0.0]
        r, A = mdl.body_poses(qf)
        X = mb.loops.kinematics(mdl, qf, cut=["B"]).X[0]
        pB, cB = A[2] @ mdl.joint("B").parent_point, A[3] @ mdl.joint("B").child_point
        point = lambda k, p: X[k, :2] + np.outer([-p[1], p[0]], X[k, 2])
        return (r[2] + pB - r[3] - cB)[:2], point(2, pB) - point(3, cB)
"""

# Other linkages (d, a, b, c) of the hidden tests, with a guess near a closed configuration.
CASES6 = "[((0.5, 0.12, 0.45, 0.3), [2.0, -1.0, 1.5]), ((0.3, 0.2, 0.35, 0.25), [-1.0, 2.5, 1.5])]"


def _block(code):
    """Code inserted into a test-cell template at 4 spaces of indentation."""
    return textwrap.indent(textwrap.dedent(code).strip(), "    ").lstrip()


_ns6 = {"np": np, "mb": mb}
exec(textwrap.dedent(FOUR_BAR) + textwrap.dedent(LIBRARY_ROWS), _ns6)
_links6 = (0.4, 0.1, 0.35, 0.3)
_fb6 = _ns6["four_bar_model"](_links6)
_q_open6 = np.array([0.6, 0.9, 1.8])
_q_closed6 = _ns6["closed"](_fb6, [0.6, 1.2, 1.9])
_f_open6, _H_open6 = _ns6["library_rows"](_fb6, _q_open6)
_H_lib6 = mb.loops.constraints(_fb6, np.r_[_q_closed6, 0.0], cut=["B"])["H"]
_qd6 = np.array([1.0, -0.5, 2.0])
_v6 = _qd6 - np.linalg.pinv(_H_lib6) @ (_H_lib6 @ _qd6)

CH6 = [
    md("""
    # Homework 6 — closed loops: the cut-joint method (10 points)

    A planar four-bar: the ground link $OC$ of length $d$ ($O$ at the origin, $C = (d, 0)$),
    the crank $OA$ (length $a$), the coupler $AB$ (length $b$) and the rocker $CB$ (length
    $c$), joined by revolute joints about $z$. Its graph has a cycle. The cut-joint method
    (Yudintsev 3.6) cuts one joint of the loop — here joint $B$ between the coupler and the
    rocker — and keeps the tree that is left, the *reduced system*, with the coordinates
    of its joints $O$, $A$, $C$:

    $$q = (q_1, q_2, q_3):\\quad q_1 \\text{ crank angle from the } x \\text{ axis}, \\quad
      q_2 \\text{ coupler angle relative to the crank}, \\quad
      q_3 \\text{ rocker angle from the } x \\text{ axis}.$$

    So the **absolute** angles are $\\varphi_1 = q_1$, $\\varphi_2 = q_1 + q_2$,
    $\\varphi_3 = q_3$. The cut joint still has to hold: the coupler's end point
    $B' = a\\,e(\\varphi_1) + b\\,e(\\varphi_2)$ must coincide with the rocker's end point
    $B'' = (d, 0) + c\\,e(\\varphi_3)$, where $e(\\varphi) = (\\cos\\varphi, \\sin\\varphi)$.
    These are the two loop-closure rows of the cut joint,

    $$f(q) = B'(q) - B''(q) = 0 \\qquad \\text{(ground axes; the coupler's point minus the rocker's)},$$

    with the Jacobian $H = \\partial f / \\partial q$ (3.191), a $2 \\times 3$ matrix: speeds
    are consistent when $H \\dot q = 0$, and the reactions of the cut joint enter the
    reduced system's equations as $H^T \\lambda$: $-A \\ddot q + B + H^T \\lambda = 0$,
    $H \\ddot q = \\gamma$.

    The library writes the same two conditions in the coupler's axes and with the opposite
    sign: `mb.loops.constraints(model, np.r_[q, 0.0], cut=["B"])` returns
    $f_{lib} = -A_2^T f$ ($A_2$ the coupler's rotation) — the same zeros and the same length
    $|f_{lib}| = |f|$ — and, at a closed configuration, $H_{lib} = -A_2^T H$: the same row
    space, hence the same consistent speeds. (The fourth entry of the Model's coordinates is
    the angle of the cut joint $B$ itself; the rows do not read it.)
    """),
    md(HEADER),
    SETUP,
    given("four_bar", FOUR_BAR + """

    links = (0.4, 0.1, 0.35, 0.3)                 # d, a, b, c (m)
    model = four_bar_model(links)
    q_open = np.array([0.6, 0.9, 1.8])            # (q1, q2, q3): the loop is open here
    q_closed = closed(model, [0.6, 1.2, 1.9])     # crank at 0.6 rad, loop closed
    """),
    task("cut_rows", 3, """
    ## Task 1 (3 points): the rows of the cut joint

    Write `cut_rows(q, links)` returning $f = B' - B''$ (shape `(2,)`, ground axes) at the
    tree coordinates `q` $= (q_1, q_2, q_3)$ (mind: $q_2$ is relative to the crank) for
    `links` $= (d, a, b, c)$. It is zero exactly when the loop is closed.
    """, """
    def cut_rows(q, links):
        \"\"\"f = B' - B'' (ground axes), shape (2,), at the tree coordinates q = (q1, q2, q3).\"\"\"
        ### BEGIN SOLUTION
        d, a, b, c = links
        phi1, phi2, phi3 = q[0], q[0] + q[1], q[2]  # absolute angles
        return np.array([a * np.cos(phi1) + b * np.cos(phi2) - d - c * np.cos(phi3),
                         a * np.sin(phi1) + b * np.sin(phi2) - c * np.sin(phi3)])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "B' = a e(q1) + b e(q1 + q2), B'' = (d, 0) + c e(q3) with e(phi) = (cos phi, sin phi); f = B' - B''"
    f = check_call("cut_rows", globals().get("cut_rows"), q_open, links, timeout=TIMEOUT)
    check("f at q_open", f, {lit(_f_open6)}, hint=hint)
    f = check_call("cut_rows", globals().get("cut_rows"), q_closed, links, timeout=TIMEOUT)
    check("f at q_closed", f, [0, 0], hint=hint)
    print("cut_rows: visible tests passed")
    ### BEGIN HIDDEN TESTS
    {_block(LIBRARY_ROWS)}
    rng = np.random.default_rng(616)
    for lk, guess in {CASES6}:
        mdl = four_bar_model(lk)
        for trial in range(3):
            q_h = rng.uniform(-np.pi, np.pi, 3)
            f = check_call("cut_rows", globals().get("cut_rows"), q_h, lk, timeout=TIMEOUT)
            check("f", f, library_rows(mdl, q_h)[0], hint=hint)
            f_lib = mb.loops.constraints(mdl, np.r_[q_h, 0.0], cut=["B"])["f"]
            check("|f| (the length of the library's rows)", np.linalg.norm(f), np.linalg.norm(f_lib), hint=hint)
        q_h = closed(mdl, guess)
        f = check_call("cut_rows", globals().get("cut_rows"), q_h, lk, timeout=TIMEOUT)
        check("f at a closed configuration", f, np.zeros(2), hint=hint)
    ### END HIDDEN TESTS
    """),
    task("H_matrix", 4, """
    ## Task 2 (4 points): the Jacobian $H$

    Write `H_matrix(q, links)` returning $H = \\partial f / \\partial q$ (shape `(2, 3)`,
    row $i$ = gradient of $f_i$ over $(q_1, q_2, q_3)$), differentiated by hand. Check it
    with `jacobian_fd(lambda q: cut_rows(q, links), q_open)`; the hidden tests also compare
    the row space of your $H$ with the library's at closed configurations.
    """, """
    def H_matrix(q, links):
        \"\"\"H = df/dq of cut_rows, shape (2, 3).\"\"\"
        ### BEGIN SOLUTION
        d, a, b, c = links
        phi1, phi2, phi3 = q[0], q[0] + q[1], q[2]  # absolute angles
        return np.array([[-a * np.sin(phi1) - b * np.sin(phi2), -b * np.sin(phi2), c * np.sin(phi3)],
                         [a * np.cos(phi1) + b * np.cos(phi2), b * np.cos(phi2), -c * np.cos(phi3)]])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "H[i, k] = df_i/dq_k: q1 turns the crank and the coupler, q2 only the coupler, q3 only the rocker"
    tight = " (differentiate by hand: finite differences are not accurate enough)"
    H = check_call("H_matrix", globals().get("H_matrix"), q_open, links, timeout=TIMEOUT)
    check("H at q_open", H, {lit(_H_open6)}, rtol=1e-10, atol=1e-12, hint=hint + tight)
    own = jacobian_fd(lambda q: check_call("cut_rows", globals().get("cut_rows"), q, links, timeout=TIMEOUT), q_open)
    check("H (central differences of your cut_rows)", H, own, rtol=1e-6, atol=1e-8,
          hint="H must be the derivative of your f")
    print("H_matrix: visible tests passed")
    ### BEGIN HIDDEN TESTS
    {_block(LIBRARY_ROWS)}

    def row_projector(M):
        M = np.asarray(M, dtype=float)
        return M.T @ np.linalg.solve(M @ M.T, M)

    rng = np.random.default_rng(626)
    for lk, guess in {CASES6}:
        mdl = four_bar_model(lk)
        for trial in range(3):
            q_h = rng.uniform(-np.pi, np.pi, 3)
            H = check_call("H_matrix", globals().get("H_matrix"), q_h, lk, timeout=TIMEOUT)
            check("H", H, library_rows(mdl, q_h)[1], rtol=1e-10, atol=1e-12, hint=hint + tight)
            own = jacobian_fd(lambda q: check_call("cut_rows", globals().get("cut_rows"), q, lk,
                                                   timeout=TIMEOUT), q_h)
            check("H (central differences of your cut_rows)", H, own, rtol=1e-6, atol=1e-8,
                  hint="H must be the derivative of your f")
        q_h = closed(mdl, guess)
        H = check_call("H_matrix", globals().get("H_matrix"), q_h, lk, timeout=TIMEOUT)
        check("H at a closed configuration", H, library_rows(mdl, q_h)[1], hint=hint)
        H_lib = mb.loops.constraints(mdl, np.r_[q_h, 0.0], cut=["B"])["H"]
        check("rank of H", np.linalg.matrix_rank(H), np.linalg.matrix_rank(H_lib), hint=hint)
        check("projector onto the rows of H (the library's consistent speeds)", row_projector(H),
              row_projector(H_lib), hint=hint)
    ### END HIDDEN TESTS
    """),
    task("project_velocity", 3, """
    ## Task 3 (3 points): projecting the speeds

    Integrated numerically, the speeds drift off $H \\dot q = 0$. The projection used by
    `mb.loops.simulate(..., stabilization="projection")` after every step replaces them by
    the nearest consistent speeds (minimum norm of the correction):

    $$v = \\dot q - H^T (H H^T)^{-1} H \\dot q .$$

    Write `project_velocity(H, qd)` returning $v$ for any $H$ with full row rank (shape
    `(k, N)`, `qd` shape `(N,)`). Solve a linear system instead of inverting $H H^T$.
    The result must depend on the row space of $H$ only (rows in any combination).
    """, """
    def project_velocity(H, qd):
        \"\"\"The speeds nearest to qd with H v = 0, shape (N,).\"\"\"
        ### BEGIN SOLUTION
        H, qd = np.asarray(H, dtype=float), np.asarray(qd, dtype=float)
        return qd - H.T @ np.linalg.solve(H @ H.T, H @ qd)
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "solve (H H^T) y = H qd, then v = qd - H^T y; the rows of H need not be orthonormal"
    H_lib = mb.loops.constraints(model, np.r_[q_closed, 0.0], cut=["B"])["H"]
    v = check_call("project_velocity", globals().get("project_velocity"), H_lib, np.array({lit(_qd6)}, dtype=float),
                   timeout=TIMEOUT)
    check("v", v, {lit(_v6)}, hint=hint)
    check("H v (the loop stays closed)", H_lib @ np.asarray(v, dtype=float), [0, 0], hint=hint)
    print("project_velocity: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(636)
    for lk, guess in {CASES6}:
        mdl = four_bar_model(lk)
        q_h = closed(mdl, guess)
        H_h = mb.loops.constraints(mdl, np.r_[q_h, 0.0], cut=["B"])["H"]
        for trial in range(2):
            qd_h = rng.normal(size=3)
            ref = qd_h - np.linalg.pinv(H_h) @ (H_h @ qd_h)
            v = check_call("project_velocity", globals().get("project_velocity"), H_h, qd_h, timeout=TIMEOUT)
            check("v", v, ref, hint=hint)
            fdot = mb.loops.constraints(mdl, np.r_[q_h, 0.0], np.r_[v, 0.0], cut=["B"])["fdot"]
            check("the library's fdot at your speeds", fdot, np.zeros(2), hint=hint)
            mix = rng.normal(size=(2, 2)) + 3.0 * np.eye(2)  # other rows, the same row space
            v = check_call("project_velocity", globals().get("project_velocity"), mix @ H_h, qd_h,
                           timeout=TIMEOUT)
            check("v (rows of H combined)", v, ref, hint=hint)
    for k, N in [(1, 4), (3, 6), (2, 5)]:
        H_h, qd_h = rng.normal(size=(k, N)), rng.normal(size=N)
        v = check_call("project_velocity", globals().get("project_velocity"), H_h, qd_h, timeout=TIMEOUT)
        check("v", v, qd_h - np.linalg.pinv(H_h) @ (H_h @ qd_h), hint=hint)
    ### END HIDDEN TESTS
    """),
]


# --------------------------------------------------------------------------- chapter 7
K7 = mb.kinetic

CLOUD7 = """
    def random_cloud(count, seed):
        \"\"\"Random point masses: points (count, 3) and masses (count,).\"\"\"
        rng = np.random.default_rng(seed)
        return rng.normal(size=(count, 3)), rng.uniform(0.5, 2.0, count)


    def link_motion(pole_y, pole_z, rate_y, rate_z, theta_y0=0.0, theta_z0=0.0):
        \"\"\"A turn about an axis parallel to y through pole_y, then about z through pole_z.\"\"\"
        K = mb.kinetic
        return K.compose(K.PlaneRotation("y", pole_y, K.uniform(theta_y0, rate_y)),
                         K.PlaneRotation("z", pole_z, K.uniform(theta_z0, rate_z)))


    def link_state(motion, body, t):
        \"\"\"(m, v_C, omega, J_C) at time t: the mass, the velocity of the centre of mass, the
        observer-frame angular velocity and the CURRENT central inertia tensor.\"\"\"
        pts, w = body.quadrature()
        x = motion.position(pts, t)
        m = w.sum()
        C = w @ x / m
        v_C = w @ motion.velocity(pts, t) / m
        return m, v_C, motion.angular_velocity(t), mb.kinetic.moments(x, w, C)["J"]

    points, masses = random_cloud(6, seed=7)
    pole = np.array([0.1, -0.2, 0.3])
"""

_ns7 = {"np": np, "mb": mb}
exec(textwrap.dedent(CLOUD7), _ns7)
_pts7, _w7, _pole7 = _ns7["points"], _ns7["masses"], _ns7["pole"]
_J7 = K7.moments(_pts7, _w7, _pole7)["J"]
_m07 = K7.moments(_pts7, _w7, np.zeros(3))
_I7 = (_m07["I"][0], _m07["I"][1], _m07["products"]["xy"])
_dth7 = 0.7
_prod7 = K7.product_after_rotation(*_I7, _dth7)
_prod7_direct = K7.moments(K7.PlaneRotation("z", angle=_dth7).position(_pts7, 0.0), _w7,
                           np.zeros(3))["products"]["xy"]
assert abs(_prod7 - _prod7_direct) < 1e-12
_box7 = K7.Box(3.0, (0.6, 0.2, 0.1), centre=(0.3, 0.0, 0.05))
_motion7 = _ns7["link_motion"]((0.0, 0.0, 0.0), (0.5, 0.1, 0.0), 1.3, -0.8, 0.2, 0.4)
_t7 = 0.6
_E7 = K7.kinetic_energy(_motion7, _box7, _t7)
assert abs(K7.energy_koenig(*_ns7["link_state"](_motion7, _box7, _t7)) - _E7) < 1e-12

CH7 = [
    md("""
    # Homework 7 — kinetic energy of a rigid body (10 points)

    Alyushin (2022) describes a motion in *material* coordinates: a particle is labelled by
    its initial position $\\alpha$ and moves to $x(\\alpha, t)$. A plane rotation about an
    axis parallel to $x$, $y$ or $z$ through a pole $P$ is such a map,
    `mb.kinetic.PlaneRotation(axis, pole, angle)`, and motions are superposed by composition,
    `mb.kinetic.compose(inner, outer)`. The kinetic energy is the definition (10),

    $$E = \\tfrac12 \\int |v|^2 \\, dm ,$$

    which `mb.kinetic.kinetic_energy(motion, body, t)` evaluates by quadrature over a body's
    mass distribution. About a pole $P$ the axial second moments are
    $I_k = \\int (x_k - x_{Pk})^2 \\, dm$, the products
    $I_{jk} = \\int (x_j - x_{Pj})(x_k - x_{Pk}) \\, dm$ and the polar moments, e.g.
    $J_P^z = \\int \\big((x - x_P)^2 + (y - y_P)^2\\big) \\, dm = I_x + I_y$: the diagonal of
    the inertia tensor about $P$, `mb.kinetic.moments(points, masses, pole)["J"]`.
    """),
    md(HEADER),
    SETUP,
    given("bodies", CLOUD7),
    task("polar_moment", 3, """
    ## Task 1 (3 points): a polar moment

    Write `polar_moment(points, masses, pole, axis)` returning the polar moment
    $J_P^{axis} = \\int \\big((x_j - x_{Pj})^2 + (x_k - x_{Pk})^2\\big) \\, dm$ of point masses
    (`points` shape `(K, 3)`, `masses` shape `(K,)`) about the pole, where $j$, $k$ are the
    two coordinates other than `axis` (`"x"`, `"y"` or `"z"`). It is a number.
    """, """
    def polar_moment(points, masses, pole, axis):
        \"\"\"J_P^axis = sum of m ((x_j - x_Pj)^2 + (x_k - x_Pk)^2) over the other two axes.\"\"\"
        ### BEGIN SOLUTION
        d = np.asarray(points, dtype=float) - np.asarray(pole, dtype=float)
        others = [i for i in range(3) if i != "xyz".index(axis)]
        return float(np.asarray(masses, dtype=float) @ np.sum(d[:, others] ** 2, axis=1))
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "J_P^z = sum m ((x - x_P)^2 + (y - y_P)^2): the squared distance from the axis through P, not from P"
    for k, axis in enumerate("xyz"):
        J = check_call("polar_moment", globals().get("polar_moment"), points, masses, pole, axis, timeout=TIMEOUT)
        check(f"J_P^{{axis}}", J, {lit(np.diag(_J7))}[k], hint=hint)
    print("polar_moment: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(717)
    for count, seed in [(1, 71), (9, 72), (25, 73)]:
        pts_h, w_h = random_cloud(count, seed)
        pole_h = rng.normal(size=3)
        J_ref = mb.kinetic.moments(pts_h, w_h, pole_h)["J"]
        for k, axis in enumerate("xyz"):
            J = check_call("polar_moment", globals().get("polar_moment"), pts_h, w_h, pole_h, axis,
                           timeout=TIMEOUT)
            check(f"J_P^{{axis}}", J, J_ref[k, k], hint=hint)
    box = mb.kinetic.Box(2.0, (0.4, 0.3, 0.2), centre=(0.1, 0.2, -0.3))
    pts_h, w_h = box.quadrature()
    J = check_call("polar_moment", globals().get("polar_moment"), pts_h, w_h, np.zeros(3), "z", timeout=TIMEOUT)
    check("J_P^z of a box", J, mb.kinetic.moments(pts_h, w_h, np.zeros(3))["J"][2, 2], hint=hint)
    ### END HIDDEN TESTS
    """),
    task("product_xy", 3, """
    ## Task 2 (3 points): a product of inertia after a rotation

    Turn the body about $z$ through the origin by $\\Delta\\theta$. With the initial axial
    second moments $I_\\alpha = \\int \\alpha^2 \\, dm$, $I_\\beta = \\int \\beta^2 \\, dm$ and
    the initial product $I_{\\alpha\\beta} = \\int \\alpha \\beta \\, dm$, the product
    $I_{xy} = \\int x y \\, dm$ after the turn is (33)

    $$I_{xy} = \\tfrac12 \\sin(2\\Delta\\theta)\\,(I_\\alpha - I_\\beta) + \\cos(2\\Delta\\theta)\\, I_{\\alpha\\beta}.$$

    Write `product_xy(I_a, I_b, I_ab, dtheta)` returning it (a number). Check it against
    the product computed from the rotated points,
    `mb.kinetic.PlaneRotation("z", angle=dtheta).position(points, 0.0)`.
    """, """
    def product_xy(I_a, I_b, I_ab, dtheta):
        \"\"\"I_xy after a turn dtheta about z, (33).\"\"\"
        ### BEGIN SOLUTION
        return 0.5 * np.sin(2.0 * dtheta) * (I_a - I_b) + np.cos(2.0 * dtheta) * I_ab
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "x = alpha cos - beta sin, y = alpha sin + beta cos: multiply out x y; the angles are doubled"
    I0 = mb.kinetic.moments(points, masses, np.zeros(3))
    args = (I0["I"][0], I0["I"][1], I0["products"]["xy"], {_dth7})
    P = check_call("product_xy", globals().get("product_xy"), *args, timeout=TIMEOUT)
    check("I_xy", P, {lit(_prod7)}, hint=hint)
    P = check_call("product_xy", globals().get("product_xy"), *args[:3], 0.0, timeout=TIMEOUT)
    check("I_xy with no turn", P, {lit(_I7[2])}, hint=hint)
    print("product_xy: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(727)
    for count, seed in [(3, 74), (8, 75), (20, 76)]:
        pts_h, w_h = random_cloud(count, seed)
        I0 = mb.kinetic.moments(pts_h, w_h, np.zeros(3))
        I_a, I_b, I_ab = I0["I"][0], I0["I"][1], I0["products"]["xy"]
        for dth in [rng.uniform(-np.pi, np.pi), np.pi / 4, -2.5]:
            P = check_call("product_xy", globals().get("product_xy"), I_a, I_b, I_ab, dth, timeout=TIMEOUT)
            check("I_xy", P, mb.kinetic.product_after_rotation(I_a, I_b, I_ab, dth), hint=hint)
            turned = mb.kinetic.PlaneRotation("z", angle=dth).position(pts_h, 0.0)
            check("I_xy of the rotated points", P,
                  mb.kinetic.moments(turned, w_h, np.zeros(3))["products"]["xy"], hint=hint)
    ### END HIDDEN TESTS
    """),
    task("link_energy", 4, """
    ## Task 3 (4 points): the kinetic energy of a link

    A link (a box) turns about an axis parallel to $y$ and, carried by that, about an axis
    parallel to $z$ (`link_motion`). König's theorem (40) gives its energy

    $$E = \\tfrac12 m |v_C|^2 + \\tfrac12 \\omega^T J_C \\, \\omega$$

    with the velocity $v_C$ of the centre of mass, the angular velocity $\\omega$ in the
    **observer's** (fixed) axes — not the two joint rates (erratum E33) — and the **current**
    central inertia tensor $J_C$, not the initial one (erratum E31). Write
    `link_energy(m, v_C, omega, J_C)` returning $E$ (a number); `link_state` computes the
    right arguments from the library. The tests compare with the definition (10),
    `mb.kinetic.kinetic_energy(motion, body, t)`.
    """, """
    def link_energy(m, v_C, omega, J_C):
        \"\"\"Koenig (40): 1/2 m |v_C|^2 + 1/2 omega^T J_C omega.\"\"\"
        ### BEGIN SOLUTION
        v_C, omega, J_C = (np.asarray(a, dtype=float) for a in (v_C, omega, J_C))
        return float(0.5 * m * v_C @ v_C + 0.5 * omega @ J_C @ omega)
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = ("1/2 m v_C.v_C + 1/2 omega.(J_C omega): omega in observer axes, not the joint rates (E33); "
            "J_C the current central inertia, not the initial one (E31)")
    body = mb.kinetic.Box(3.0, (0.6, 0.2, 0.1), centre=(0.3, 0.0, 0.05))
    motion = link_motion((0.0, 0.0, 0.0), (0.5, 0.1, 0.0), 1.3, -0.8, 0.2, 0.4)
    E = check_call("link_energy", globals().get("link_energy"), *link_state(motion, body, 0.6), timeout=TIMEOUT)
    check("E", E, {lit(_E7)}, hint=hint)
    print("link_energy: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(737)
    for trial in range(5):
        body_h = mb.kinetic.Box(rng.uniform(0.5, 5.0), rng.uniform(0.05, 1.0, 3), centre=rng.normal(size=3),
                                orientation=np.linalg.qr(rng.normal(size=(3, 3)))[0])
        motion_h = link_motion(rng.normal(size=3), rng.normal(size=3), *rng.normal(size=4))
        t_h = rng.uniform(0.0, 2.0)
        E = check_call("link_energy", globals().get("link_energy"), *link_state(motion_h, body_h, t_h),
                       timeout=TIMEOUT)
        check("E", E, mb.kinetic.kinetic_energy(motion_h, body_h, t_h), rtol=1e-9, hint=hint)
    ### END HIDDEN TESTS
    """),
]


# --------------------------------------------------------------------------- chapter 8
ARMS8 = """
    def random_arm(n, seed):
        \"\"\"The paper's example (Fig. 2) with random geometry: n revolute joints about random
        axes, each followed by a link of random length along a random direction; the gripper
        is at the end of the last link.\"\"\"
        rng = np.random.default_rng(seed)
        return mb.accuracy.revolute_chain(rng.uniform(0.3, 1.2, n), axes=rng.normal(size=(n, 3)),
                                          links=rng.normal(size=(n, 3)))


    def slider_arm(seed):
        \"\"\"A spatial arm with a prismatic joint: revolute q1, a link, prismatic q2, revolute q3,
        a link, and the gripper at a random point of the last frame.\"\"\"
        rng = np.random.default_rng(seed)
        M = mb.accuracy.Motion
        return mb.accuracy.Chain([M("rotation", rng.normal(size=3), q=0),
                                  M("translation", rng.normal(size=3), p=rng.uniform(0.3, 1.2)),
                                  M("translation", rng.normal(size=3), q=1),
                                  M("rotation", rng.normal(size=3), q=2),
                                  M("translation", rng.normal(size=3), p=rng.uniform(0.3, 1.2))],
                                 point=0.3 * rng.normal(size=3))


    def joint_data(arm, q):
        \"\"\"At the configuration q: the joint axes e (n, 3) and joint points O (n, 3) in fixed
        axes, the kinds delta (n,) (1 revolute, 0 prismatic) and the gripper point R (3,).\"\"\"
        frames, origins = arm.frames(q)   # after each elementary motion; index 0 is the base
        i = arm.nu                        # the elementary motion of each joint coordinate
        e = np.einsum("kxy,ky->kx", frames[i], arm.axes[i])
        return e, origins[i], arm.delta[i].astype(int), arm.pose(q)[1]

    arm = random_arm(3, seed=8)
    q = np.array([0.4, -0.9, 1.3])
    a, b = arm.influence(q)               # (9), each (3, n): the data of Task 2
    lengths = arm.p                       # the link lengths l_1, ..., l_n
"""

_ns8 = {"np": np, "mb": mb}
exec(textwrap.dedent(ARMS8), _ns8)
_arm8, _q8 = _ns8["arm"], _ns8["q"]
_b8 = _arm8.influence(_q8)[1]
_planar8 = mb.accuracy.revolute_chain([1.0, 0.5])
_b8_planar = _planar8.influence([0.0, np.pi / 2])[1]
_bkl8 = _arm8.coefficients(_q8).b_kl
_lengths8 = [1.0, 0.5, 0.25]
_bnd8 = [mb.accuracy.revolute_bounds(_lengths8, 0.01), mb.accuracy.revolute_bounds(_arm8.p, 0.02)]
_bnd8 = [[r["position"], r["rho1"]] for r in _bnd8]

CH8 = [
    md("""
    # Homework 8 — accuracy of a manipulator chain (10 points)

    Eliseev and Khomenko describe a serial chain as a sequence of elementary motions from the
    base outward. Joint $k$ ($k = 1, \\dots, n$ from the base, coordinate $q_k$) is a
    rotation ($\\delta_k = 1$) about, or a translation ($\\delta_k = 0$) along, the unit axis
    $e_k$; $O_k$ is the origin of the frame the joint moves (a point of its axis) and $R$
    the gripper point. All vectors are in fixed axes at the nominal configuration. Small
    errors $\\Delta q$ of the coordinates turn the gripper's frame by a small rotation
    $\\theta$ and move the gripper point by $\\Delta r$. To first order, with the influence
    coefficients (9),

    $$\\theta \\approx \\sum_k a_k \\Delta q_k, \\qquad \\Delta r \\approx \\sum_k b_k \\Delta q_k,
      \\qquad a_k = \\delta_k e_k, \\qquad
      b_k = (1 - \\delta_k)\\, e_k + \\delta_k\\, e_k \\times (R - O_k).$$

    To second order (10), (16), $\\Delta r \\approx \\sum_k b_k \\Delta q_k
    + \\tfrac12 \\sum_k \\sum_l b_{kl} \\Delta q_k \\Delta q_l$ with

    $$b_{kl} = \\begin{cases} a_k \\times b_l, & k \\le l \\\\ a_l \\times b_k, & k > l \\end{cases}
      \\qquad \\text{(symmetric: the } a \\text{ of the joint nearer the base crossed with the }
      b \\text{ of the farther one)}$$

    (the orientation's $a_{kl} = a_k \\times a_l$ for $k < l$, else 0). In the library a
    chain is an `mb.accuracy.Chain`: `arm.influence(q)` returns $(a, b)$, each of shape
    `(3, n)` (column $k - 1$ is joint $k$), `arm.exact_errors(q, dq)` the exact
    $(\\theta, \\Delta r)$ and `arm.coefficients(q)` all coefficients of (9) and (10).
    """),
    md(HEADER),
    SETUP,
    given("arms", ARMS8),
    task("position_coefficients", 3, """
    ## Task 1 (3 points): first-order position coefficients

    Write `position_coefficients(e, O, delta, R)` returning the array $b$ of shape `(3, n)`
    whose column $k - 1$ is $b_k$ of (9), given the joint axes `e` (shape `(n, 3)`, row
    $k - 1$ is $e_k$), the joint points `O` (shape `(n, 3)`), the kinds `delta` (shape
    `(n,)`: 1 revolute, 0 prismatic) and the gripper point `R` (shape `(3,)`). Your function
    must handle prismatic joints too: try it on `joint_data(slider_arm(seed), q)` and compare
    with `slider_arm(seed).influence(q)[1]`.
    """, """
    def position_coefficients(e, O, delta, R):
        \"\"\"b (3, n) of (9): column k is (1 - delta_k) e_k + delta_k e_k x (R - O_k).\"\"\"
        ### BEGIN SOLUTION
        e, O, R = (np.asarray(x, dtype=float) for x in (e, O, R))
        d = np.asarray(delta, dtype=float)[:, None]
        return ((1.0 - d) * e + d * np.cross(e, R - O)).T
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = ("b_k = (1 - delta_k) e_k + delta_k e_k x (R - O_k): the lever runs from the joint "
            "point to the gripper; joint k is column k - 1 of a (3, n) array")
    b_k = check_call("position_coefficients", globals().get("position_coefficients"), *joint_data(arm, q),
                     timeout=TIMEOUT)
    check("b", b_k, {lit(_b8)}, hint=hint)
    planar = mb.accuracy.revolute_chain([1.0, 0.5])  # links along x, axes along z
    b_k = check_call("position_coefficients", globals().get("position_coefficients"),
                     *joint_data(planar, [0.0, np.pi / 2]), timeout=TIMEOUT)
    check("b of the planar arm at q = (0, pi/2)", b_k, {lit(_b8_planar)}, hint=hint)
    print("position_coefficients: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(818)
    M_h = mb.accuracy.Motion
    scara_h = mb.accuracy.Chain([M_h("translation", (0, 0, 1), q=0), M_h("rotation", (0, 0, 1), q=1),
                                 M_h("translation", (1, 0, 0), p=0.7), M_h("rotation", (0, 0, 1), q=2),
                                 M_h("translation", (1, 0, 0), p=0.4)], point=(0.0, 0.1, -0.2))
    manipulator_h = mb.accuracy.chain(mb.models.spatial_manipulator(), "forearm", (0.2, 0.0, 0.0))
    for arm_h in [random_arm(1, 81), random_arm(6, 82), slider_arm(83), slider_arm(84), scara_h,
                  manipulator_h]:
        q_h = rng.uniform(-np.pi, np.pi, arm_h.nq)
        b_k = check_call("position_coefficients", globals().get("position_coefficients"),
                         *joint_data(arm_h, q_h), timeout=TIMEOUT)
        check("b", b_k, arm_h.influence(q_h)[1], hint=hint)
    ### END HIDDEN TESTS
    """),
    task("second_order_b", 4, """
    ## Task 2 (4 points): second-order position coefficients

    Write `second_order_b(a, b)` returning $b_{kl}$ of (10) as an array of shape
    `(3, n, n)` (entry `[:, k - 1, l - 1]` is $b_{kl}$), given the first-order coefficients
    `a` and `b` (each of shape `(3, n)`, joints numbered from the base). The tests also
    check that your $b_{kl}$ turns the linear model into a second-order one: for small
    errors, $\\Delta r - \\sum_k b_k \\Delta q_k$ from `arm.exact_errors(q, dq)` must be
    $\\tfrac12 \\sum_k \\sum_l b_{kl} \\Delta q_k \\Delta q_l$ up to terms of third order.
    """, """
    def second_order_b(a, b):
        \"\"\"b_kl (3, n, n) of (10): a of the joint nearer the base x b of the farther one.\"\"\"
        ### BEGIN SOLUTION
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        n = a.shape[1]
        out = np.zeros((3, n, n))
        for k in range(n):
            for l in range(n):
                out[:, k, l] = np.cross(a[:, min(k, l)], b[:, max(k, l)])
        return out
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = ("b_kl = a_m x b_M with m = min(k, l) and M = max(k, l): the nearer joint's a crossed "
            "with the farther joint's b, in that order; the diagonal is a_k x b_k")


    def second_order_rest(arm_, q_, b_kl_, dq_):
        \"\"\"|exact dr - linear - 1/2 sum b_kl dq_k dq_l| / |exact dr - linear|.\"\"\"
        rest = arm_.exact_errors(q_, dq_)[1] - arm_.influence(q_)[1] @ dq_
        second = 0.5 * np.einsum("xkl,k,l->x", np.asarray(b_kl_, dtype=float), dq_, dq_)
        return np.linalg.norm(rest - second) / np.linalg.norm(rest)


    B_kl = check_call("second_order_b", globals().get("second_order_b"), a, b, timeout=TIMEOUT)
    check("b_kl", B_kl, {lit(_bkl8)}, hint=hint)
    dq_small = np.array([1e-4, -0.7e-4, 0.5e-4])
    check("|exact dr - linear - your second-order term| / |exact dr - linear| at |dq| ~ 1e-4",
          second_order_rest(arm, q, B_kl, dq_small), 0.0, atol=2e-3, hint=hint)
    print("second_order_b: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(828)
    manipulator_h = mb.accuracy.chain(mb.models.spatial_manipulator(), "forearm", (0.2, 0.0, 0.0))
    for arm_h in [random_arm(1, 85), random_arm(4, 86), random_arm(7, 87), slider_arm(88), manipulator_h]:
        q_h = rng.uniform(-np.pi, np.pi, arm_h.nq)
        a_h, b_h = arm_h.influence(q_h)
        B_kl = check_call("second_order_b", globals().get("second_order_b"), a_h, b_h, timeout=TIMEOUT)
        check("b_kl", B_kl, arm_h.coefficients(q_h).b_kl, hint=hint)
        dq_h = 1e-4 * rng.uniform(-1.0, 1.0, arm_h.nq)
        check("|exact dr - linear - your second-order term| / |exact dr - linear| at |dq| ~ 1e-4",
              second_order_rest(arm_h, q_h, B_kl, dq_h), 0.0, atol=2e-3, hint=hint)
    ### END HIDDEN TESTS
    """),
    task("position_bounds", 3, """
    ## Task 3 (3 points): a-priori bounds of the position error

    The paper's example (Fig. 2): $n$ revolute joints, joint $k$ followed by a link of length
    $l_k$, the gripper at the end of link $n$, identical drives $|\\Delta q_k| \\le \\Delta$.
    Since $|b_k| \\le \\beta_k = \\sum_{i \\ge k} l_i$ and $|b_{kl}| \\le \\beta_{\\max(k, l)}$,
    for every configuration and every such error (28) and (26) give

    $$\\|\\Delta r\\| \\le \\Delta \\sum_{k=1}^n k\\, l_k, \\qquad
      \\|\\rho^1\\| = \\Big\\|\\Delta r - \\sum_k b_k \\Delta q_k\\Big\\| \\le
      \\frac{\\Delta^2}{2} \\sum_{k=1}^n k^2 l_k .$$

    Write `position_bounds(lengths, Delta)` returning both bounds as an array of shape
    `(2,)`: first (28), then (26). The tests draw errors at the corners $\\pm\\Delta$ with
    `mb.accuracy.monte_carlo(arm, q, Delta, extreme=True)` and check that no sample exceeds
    your bounds; a straight planar arm comes within a fraction of a percent of both.
    """, """
    def position_bounds(lengths, Delta):
        \"\"\"(Delta sum k l_k, Delta^2 / 2 sum k^2 l_k), k = 1..n from the base: (28) and (26).\"\"\"
        ### BEGIN SOLUTION
        l = np.asarray(lengths, dtype=float)
        k = np.arange(1, len(l) + 1)
        return np.array([Delta * (k @ l), 0.5 * Delta ** 2 * (k ** 2 @ l)])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = "k counts the joints from 1 at the base: (28) is Delta sum k l_k, (26) is Delta^2/2 sum k^2 l_k"


    def exceeding(arm_, q_, Delta_, bounds_, samples=400, seed=0):
        \"\"\"Shares of corner errors whose |dr| and |rho^1| exceed the two bounds.\"\"\"
        mc = mb.accuracy.monte_carlo(arm_, q_, Delta_, samples=samples, seed=seed, extreme=True)
        bounds_ = np.asarray(bounds_, dtype=float)
        return [np.mean(np.linalg.norm(mc.dr, axis=1) > bounds_[0]), np.mean(mc.rho1 > bounds_[1])]


    bnd = check_call("position_bounds", globals().get("position_bounds"), {_lengths8}, 0.01, timeout=TIMEOUT)
    check("the bounds (28), (26)", bnd, {lit(_bnd8[0])}, hint=hint)
    bnd = check_call("position_bounds", globals().get("position_bounds"), lengths, 0.02, timeout=TIMEOUT)
    check("the bounds (28), (26)", bnd, {lit(_bnd8[1])}, hint=hint)
    check("shares of samples above your bounds (28), (26)", exceeding(arm, q, 0.02, bnd, seed=1), [0, 0],
          hint=hint)
    straight = mb.accuracy.revolute_chain(lengths)
    check("shares of samples above your bounds (straight planar arm)",
          exceeding(straight, np.zeros(3), 0.02, bnd, seed=2), [0, 0], hint=hint)
    print("position_bounds: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(838)
    for n_h, Delta_h in [(1, 0.05), (2, 0.1), (5, 0.03), (8, 0.01)]:
        l_h = rng.uniform(0.2, 1.5, n_h)
        ref = mb.accuracy.revolute_bounds(l_h, Delta_h)
        bnd = check_call("position_bounds", globals().get("position_bounds"), l_h, Delta_h, timeout=TIMEOUT)
        check("the bounds (28), (26)", bnd, [ref["position"], ref["rho1"]], hint=hint)
        arm_h = mb.accuracy.revolute_chain(l_h, axes=rng.normal(size=(n_h, 3)), links=rng.normal(size=(n_h, 3)))
        check("shares of samples above your bounds (28), (26)",
              exceeding(arm_h, rng.uniform(-np.pi, np.pi, n_h), Delta_h, bnd, seed=n_h), [0, 0], hint=hint)
        check("shares of samples above your bounds (straight planar arm)",
              exceeding(mb.accuracy.revolute_chain(l_h), np.zeros(n_h), Delta_h, bnd, seed=10 + n_h), [0, 0],
              hint=hint)
    bnd = check_call("position_bounds", globals().get("position_bounds"), list(l_h), Delta_h, timeout=TIMEOUT)
    check("the bounds (28), (26) (lengths given as a list)", bnd, [ref["position"], ref["rho1"]], hint=hint)
    ### END HIDDEN TESTS
    """),
]


# --------------------------------------------------------------------------- chapter 9
MODELS9 = """
    def falling_rod(theta, length=1.0, mass=1.0):
        \"\"\"(M, j) of a uniform rod free in the x-z plane, coordinates q = (x, z, turn about y),
        whose end (-length/2, 0, 0) touches the floor z = 0 with the rod at the angle theta
        (0 < theta < pi/2) to the floor: the mass matrix (3, 3) and the contact's row (3,).\"\"\"
        m = mb.Model(gravity=(0, 0, -9.81))
        m.add_body("sx", 0.0, [0, 0, 0])
        m.add_body("sz", 0.0, [0, 0, 0])
        m.add_body("rod", mass, [1e-6, mass * length ** 2 / 12, mass * length ** 2 / 12])
        m.add_joint("x", "prismatic", "ground", "sx", axis=(1, 0, 0))
        m.add_joint("z", "prismatic", "sx", "sz", axis=(0, 0, 1))
        m.add_joint("turn", "revolute", "sz", "rod", axis=(0, 1, 0))
        m.add_contact("end", "rod", (-length / 2, 0, 0))
        q = np.array([0.0, 0.5 * length * np.sin(theta), -theta])  # the end on the floor
        return mb.tree.mass_matrix(m, q), mb.contact.gap_jacobian(m, q)[0]


    def ball(radius, restitution, g, mass=1.0):
        \"\"\"A ball on a vertical slide (its coordinate: the height of its centre) over the
        floor z = 0, in gravity g.\"\"\"
        m = mb.Model(gravity=(0, 0, -g))
        m.add_body("ball", mass, [0.4 * mass * radius ** 2] * 3)
        m.add_joint("drop", "prismatic", "ground", "ball", axis=(0, 0, 1))
        m.add_contact("floor", "ball", (0, 0, 0), radius=radius, restitution=restitution)
        return m


    M_rod, j_rod = falling_rod(0.5)
    qd_rod = np.array([0.3, -2.0, 1.0])   # sliding, falling and turning as its end lands
"""

_ns9 = {"np": np, "mb": mb}
exec(textwrap.dedent(MODELS9), _ns9)
_M9, _j9, _qd9 = _ns9["M_rod"], _ns9["j_rod"], _ns9["qd_rod"]
assert _j9 @ _qd9 < 0                                  # the end approaches the floor
_imp9 = {e: mb.contact.impulse(_M9, _j9[None], _qd9, e) for e in (0.5, 0.0)}
_loss9 = {e: 0.5 * _qd9 @ _M9 @ _qd9 - 0.5 * _imp9[e][0] @ _M9 @ _imp9[e][0] for e in (0.5, 0.0)}
_drops9 = [(1.0, 0.5, 9.81, 4), (0.5, 1.0, 9.81, 3), (1.0, 0.0, 9.81, 3)]


def _bounces9(h0, e, g, n, radius=0.1):
    """The first n impact times of the library's dropped ball (visible literals)."""
    T0 = np.sqrt(2 * h0 / g)
    res = mb.contact.simulate(_ns9["ball"](radius, e, g), (0.0, (2 * n - 0.5) * T0), [h0 + radius])
    return np.array([t for t, _, _ in res.impacts])[:n]


_times9 = [_bounces9(*d) for d in _drops9]
assert [len(t) for t in _times9] == [4, 3, 1]

CH9 = [
    md("""
    # Homework 9 — contact and impacts (10 points)

    A contact is a *unilateral* constraint: a gap $g(q) \\ge 0$ that the motion may close but
    not cross, with the rate $\\dot g = j\\, \\dot q$ ($j$ a row of length $n$). When the gap
    closes with $j \\dot q^- < 0$ the speeds jump while $q$ does not: the generalized momenta
    jump by the impulse $j^T \\Lambda$ of the contact,

    $$M (\\dot q^+ - \\dot q^-) = j^T \\Lambda, \\qquad \\Lambda \\ge 0 ,$$

    and Newton's law of restitution, with the coefficient $0 \\le e \\le 1$, asks the gap to
    open again at $e$ times the speed at which it closed: $j \\dot q^+ = -e\\, j \\dot q^-$.
    With several contacts at once this is the linear complementarity problem of the
    chapter, in $W = J M^{-1} J^T$ (`mb.contact.impulse(M, J, qd_minus, e)`); here there is
    one contact, and $W = j M^{-1} j^T$ is a number. `mb.contact.simulate(model, t_span, q0)`
    integrates a model with contacts (`model.add_contact`) and lists its impacts
    `(t, name, impulse)` in `.impacts`.
    """),
    md(HEADER),
    SETUP,
    given("models", MODELS9),
    task("impact_single", 4, """
    ## Task 1 (4 points): the impact of one contact

    Solve the two equations above for one frictionless contact: the impulse is

    $$\\Lambda = -\\frac{(1 + e)\\, j \\dot q^-}{j M^{-1} j^T}
      \\quad \\text{if } j \\dot q^- < 0, \\qquad \\dot q^+ = \\dot q^- + M^{-1} j^T \\Lambda ,$$

    and a contact that does not approach ($j \\dot q^- \\ge 0$) gets no impulse:
    $\\dot q^+ = \\dot q^-$, $\\Lambda = 0$. Write `impact_single(M, j, qd_minus, e)` returning
    the pair `(qd_plus, Lambda)`: an array of shape `(n,)` and a number, for a symmetric
    positive definite `M` (shape `(n, n)`), the row `j` (shape `(n,)`) and the speeds
    `qd_minus` (shape `(n,)`). Solve with $M$; do not invert it. Try it on the rod of the
    cell above, `impact_single(M_rod, j_rod, qd_rod, 0.5)`, and compare with
    `mb.contact.impulse(M_rod, j_rod[None], qd_rod, 0.5)`.
    """, """
    def impact_single(M, j, qd_minus, e):
        \"\"\"(qd_plus, Lambda) of one frictionless contact with row j and Newton's restitution e.\"\"\"
        ### BEGIN SOLUTION
        M, j = np.asarray(M, dtype=float), np.asarray(j, dtype=float).ravel()
        qd_minus = np.asarray(qd_minus, dtype=float)
        approach = j @ qd_minus
        if approach >= 0.0:                  # the gap opens or slides: no impulse
            return qd_minus.copy(), 0.0
        Minv_jt = np.linalg.solve(M, j)
        Lambda = -(1.0 + e) * approach / (j @ Minv_jt)
        return qd_minus + Minv_jt * Lambda, float(Lambda)
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import GradingFailure, check, check_call
    hint = ("Lambda = -(1 + e) (j qd-) / (j M^-1 j^T) only when j qd- < 0 (else no impulse), "
            "and qd+ = qd- + M^-1 j^T Lambda: the momenta M qd jump by j^T Lambda")


    def pair(result):
        \"\"\"(qd_plus, Lambda) of what impact_single returned, or a failure that says why not.\"\"\"
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise GradingFailure("`impact_single()` must return a pair (qd_plus, Lambda); it "
                                 f"returned {{type(result).__name__}}")
        return result


    qd_plus, Lam = pair(check_call("impact_single", globals().get("impact_single"), M_rod, j_rod, qd_rod,
                                   0.5, timeout=TIMEOUT))
    check("qd_plus", qd_plus, {lit(_imp9[0.5][0])}, hint=hint)
    check("Lambda", Lam, {lit(_imp9[0.5][1][0])}, hint=hint)
    check("the gap's rate after the impact, j qd_plus", j_rod @ np.asarray(qd_plus, dtype=float),
          {lit(-0.5 * _j9 @ _qd9)}, hint=hint)
    qd_plus, Lam = pair(check_call("impact_single", globals().get("impact_single"), M_rod, j_rod, qd_rod,
                                   0.0, timeout=TIMEOUT))
    check("qd_plus (e = 0)", qd_plus, {lit(_imp9[0.0][0])}, hint=hint)
    check("Lambda (e = 0)", Lam, {lit(_imp9[0.0][1][0])}, hint=hint)
    qd_plus, Lam = pair(check_call("impact_single", globals().get("impact_single"), M_rod, j_rod, -qd_rod,
                                   0.5, timeout=TIMEOUT))
    check("qd_plus of a contact that opens", qd_plus, -qd_rod, hint=hint)
    check("Lambda of a contact that opens", Lam, 0.0, hint=hint)
    print("impact_single: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(919)
    for n_h in [1, 2, 3, 5, 8]:
        A_h = rng.normal(size=(n_h, n_h))
        M_h = A_h @ A_h.T + n_h * np.eye(n_h)            # symmetric positive definite
        j_h, qd_h = rng.normal(size=n_h), rng.normal(size=n_h)
        qd_h = -qd_h if j_h @ qd_h > 0 else qd_h         # the contact approaches
        for e_h in [0.0, rng.uniform(0.1, 0.9), 1.0]:
            qd_ref, Lam_ref = mb.contact.impulse(M_h, j_h[None], qd_h, e_h)
            qd_plus, Lam = pair(check_call("impact_single", globals().get("impact_single"), M_h, j_h, qd_h,
                                           e_h, timeout=TIMEOUT))
            check("qd_plus", qd_plus, qd_ref, hint=hint)
            check("Lambda", Lam, Lam_ref[0], hint=hint)
        qd_ref, Lam_ref = mb.contact.impulse(M_h, j_h[None], -qd_h, 0.5)
        qd_plus, Lam = pair(check_call("impact_single", globals().get("impact_single"), M_h, j_h, -qd_h,
                                       0.5, timeout=TIMEOUT))
        check("qd_plus of a contact that opens", qd_plus, qd_ref, hint=hint)
        check("Lambda of a contact that opens", Lam, Lam_ref[0], hint=hint)
    for trial in range(3):
        M_h, j_h = falling_rod(rng.uniform(0.1, 1.4), rng.uniform(0.3, 2.0), rng.uniform(0.5, 5.0))
        qd_h = np.array([rng.normal(), -rng.uniform(0.5, 5.0), rng.normal()])
        e_h = rng.uniform(0.0, 1.0)
        qd_ref, Lam_ref = mb.contact.impulse(M_h, j_h[None], qd_h, e_h)
        qd_plus, Lam = pair(check_call("impact_single", globals().get("impact_single"), M_h, j_h, qd_h, e_h,
                                       timeout=TIMEOUT))
        check("qd_plus of a rod", qd_plus, qd_ref, hint=hint)
        check("Lambda of a rod", Lam, Lam_ref[0], hint=hint)
    ### END HIDDEN TESTS
    """),
    task("energy_loss", 3, """
    ## Task 2 (3 points): the energy an impact takes

    The kinetic energy is $T(\\dot q) = \\tfrac12 \\dot q^T M \\dot q$. Show, with task 1's
    $\\Lambda$, that the impact of one contact takes

    $$T(\\dot q^-) - T(\\dot q^+) = \\frac{1 - e^2}{2}\\,
      \\frac{(j \\dot q^-)^2}{j M^{-1} j^T} \\ge 0$$

    (Carnot's theorem for $e = 0$; nothing is lost for $e = 1$), and nothing when the contact
    does not approach. Write `energy_loss(M, j, qd_minus, e)` returning this number.
    """, """
    def energy_loss(M, j, qd_minus, e):
        \"\"\"T(qd-) - T(qd+) of one frictionless contact's impact, a number >= 0.\"\"\"
        ### BEGIN SOLUTION
        M, j = np.asarray(M, dtype=float), np.asarray(j, dtype=float).ravel()
        approach = j @ np.asarray(qd_minus, dtype=float)
        if approach >= 0.0:
            return 0.0
        return 0.5 * (1.0 - e ** 2) * approach ** 2 / (j @ np.linalg.solve(M, j))
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = ("T(qd-) - T(qd+) = (1 - e^2)/2 (j qd-)^2 / (j M^-1 j^T) for an approaching contact "
            "(j qd- < 0), 0 otherwise; T = 1/2 qd^T M qd")
    dT = check_call("energy_loss", globals().get("energy_loss"), M_rod, j_rod, qd_rod, 0.5, timeout=TIMEOUT)
    check("energy lost (e = 0.5)", dT, {lit(_loss9[0.5])}, hint=hint)
    dT = check_call("energy_loss", globals().get("energy_loss"), M_rod, j_rod, qd_rod, 0.0, timeout=TIMEOUT)
    check("energy lost (e = 0)", dT, {lit(_loss9[0.0])}, hint=hint)
    dT = check_call("energy_loss", globals().get("energy_loss"), M_rod, j_rod, qd_rod, 1.0, timeout=TIMEOUT)
    check("energy lost (e = 1)", dT, 0.0, hint=hint)
    dT = check_call("energy_loss", globals().get("energy_loss"), M_rod, j_rod, -qd_rod, 0.5, timeout=TIMEOUT)
    check("energy lost by a contact that opens", dT, 0.0, hint=hint)
    print("energy_loss: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(929)
    for n_h in [1, 2, 4, 7]:
        A_h = rng.normal(size=(n_h, n_h))
        M_h = A_h @ A_h.T + n_h * np.eye(n_h)            # symmetric positive definite
        j_h, qd_h = rng.normal(size=n_h), rng.normal(size=n_h)
        qd_h = -qd_h if j_h @ qd_h > 0 else qd_h         # the contact approaches
        for e_h in [0.0, rng.uniform(0.1, 0.9), 1.0]:
            closed = 0.5 * (1 - e_h ** 2) * (j_h @ qd_h) ** 2 / (j_h @ np.linalg.solve(M_h, j_h))
            qd_ref = mb.contact.impulse(M_h, j_h[None], qd_h, e_h)[0]
            dT = check_call("energy_loss", globals().get("energy_loss"), M_h, j_h, qd_h, e_h, timeout=TIMEOUT)
            check("energy lost", dT, closed, hint=hint)
            check("energy lost, against T(qd-) - T(qd+) of the library's impact", dT,
                  0.5 * qd_h @ M_h @ qd_h - 0.5 * qd_ref @ M_h @ qd_ref, rtol=1e-7, atol=1e-9, hint=hint)
        dT = check_call("energy_loss", globals().get("energy_loss"), M_h, j_h, -qd_h, 0.5, timeout=TIMEOUT)
        check("energy lost by a contact that opens", dT, 0.0, hint=hint)
    M_h, j_h = falling_rod(rng.uniform(0.1, 1.4), rng.uniform(0.3, 2.0), rng.uniform(0.5, 5.0))
    qd_h, e_h = np.array([rng.normal(), -rng.uniform(0.5, 5.0), rng.normal()]), rng.uniform(0.0, 1.0)
    qd_ref = mb.contact.impulse(M_h, j_h[None], qd_h, e_h)[0]
    dT = check_call("energy_loss", globals().get("energy_loss"), M_h, j_h, qd_h, e_h, timeout=TIMEOUT)
    check("energy lost by a rod", dT, 0.5 * qd_h @ M_h @ qd_h - 0.5 * qd_ref @ M_h @ qd_ref, hint=hint)
    ### END HIDDEN TESTS
    """),
    task("bounce_times", 3, """
    ## Task 3 (3 points): the times of a bouncing ball's impacts

    A ball is dropped from rest with a gap $h_0$ between its lowest point and the floor, in
    gravity $g$, and bounces with the restitution $e$. It reaches the floor at
    $t_0 = \\sqrt{2 h_0 / g}$ with the speed $v_0 = g t_0$, leaves it after impact $k$ with
    $e^{k+1} v_0$, and so flies $2 e^{k+1} t_0$ until the next impact:

    $$t_k = t_0 \\Big(1 + 2 \\sum_{i=1}^{k} e^i\\Big)
      = t_0 \\Big(1 + \\frac{2e\\,(1 - e^k)}{1 - e}\\Big), \\qquad k = 0, 1, \\dots$$

    Write `bounce_times(h0, e, g, n)` returning the array of the times of the first `n`
    impacts, $t_0, \\dots, t_{n-1}$. Take care of the ends of the range of $e$: for $e = 1$
    the fraction is $0/0$ (the sum is $k$), and for $e = 0$ the ball stays on the floor
    after its first impact, so there is only one impact (return the array $[t_0]$). The
    tests compare your times with those of `mb.contact.simulate` on `ball(radius, e, g)` of
    the cell above, dropped from the height `h0 + radius`, to 1e-8 s.
    """, """
    def bounce_times(h0, e, g, n):
        \"\"\"The times (array) of the first n impacts of a ball dropped from rest at the gap h0.\"\"\"
        ### BEGIN SOLUTION
        t0 = np.sqrt(2.0 * h0 / g)
        if e == 0:                           # lands plastically and stays
            return np.array([t0])[:n]
        flights = 2.0 * t0 * float(e) ** np.arange(1, n)   # after impacts 0 .. n-2
        return t0 + np.concatenate([[0.0], np.cumsum(flights)])
        ### END SOLUTION
    """, f"""
    from mbcourse.grading import check, check_call
    hint = ("t_k = t_0 (1 + 2 (e + e^2 + ... + e^k)) with t_0 = sqrt(2 h0 / g); for e = 1 the sum is k, "
            "for e = 0 there is one impact only")
    t_k = check_call("bounce_times", globals().get("bounce_times"), *{_drops9[0]}, timeout=TIMEOUT)
    check("impact times (e = 0.5)", t_k, {lit(_times9[0])}, rtol=0, atol=1e-8, hint=hint)
    t_k = check_call("bounce_times", globals().get("bounce_times"), *{_drops9[1]}, timeout=TIMEOUT)
    check("impact times (e = 1)", t_k, {lit(_times9[1])}, rtol=0, atol=1e-8, hint=hint)
    t_k = check_call("bounce_times", globals().get("bounce_times"), *{_drops9[2]}, timeout=TIMEOUT)
    check("impact times (e = 0)", t_k, {lit(_times9[2])}, rtol=0, atol=1e-8, hint=hint)
    print("bounce_times: visible tests passed")
    ### BEGIN HIDDEN TESTS
    rng = np.random.default_rng(939)
    for e_h, n_h in [(rng.uniform(0.3, 0.8), 4), (rng.uniform(0.85, 0.99), 5), (1.0, 3), (0.0, 2),
                     (rng.uniform(0.3, 0.9), 1)]:
        h0_h, g_h, r_h = rng.uniform(0.2, 2.0), rng.uniform(1.0, 25.0), rng.uniform(0.01, 0.3)
        T0_h = np.sqrt(2 * h0_h / g_h)
        res = mb.contact.simulate(ball(r_h, e_h, g_h), (0.0, (2 * n_h - 0.5) * T0_h), [h0_h + r_h])
        t_ref = np.array([t for t, _, _ in res.impacts])[:n_h]     # the library's first n impacts
        t_k = check_call("bounce_times", globals().get("bounce_times"), h0_h, e_h, g_h, n_h, timeout=TIMEOUT)
        check("impact times", t_k, t_ref, rtol=0, atol=1e-8, hint=hint)
    ### END HIDDEN TESTS
    """),
]


# What each assignment asks students to build themselves: while a submission is graded
# (homework/grader.py) these library routines are replaced by an error in the sandbox's copy
# of mbcourse, and the assignment says so. An empty list says openly that the library may be
# called (chapter 4's routines take a Model; the tasks hand over bare matrices).
IMPLEMENT = {
    "ch1_graphs": ["mbcourse.graph.incidence_matrix", "mbcourse.graph.path_matrix",
                   "mbcourse.graph.predecessor", "mbcourse.graph.predecessors"],
    "ch2_cartesian": ["mbcourse.cartesian.constraints.point_plane",
                      "mbcourse.cartesian.solvers.solve_dense",
                      "mbcourse.loops._kkt"],   # another module's KKT solver: no call links it
    "ch3_tree": ["mbcourse.tree.barycentre.d_vectors", "mbcourse.tree.barycentre.barycentre_vectors",
                 "mbcourse.tree.barycentre.augmented_inertias"],
    "ch4_recursion": [],
    "ch5_inertial": ["mbcourse.inertial._parts"],
    "ch6_loops": ["mbcourse.loops.constraints"],
    "ch7_energy": ["mbcourse.kinetic.moments", "mbcourse.kinetic.product_after_rotation",
                   "mbcourse.kinetic.kinetic_energy"],
    "ch8_accuracy": ["mbcourse.accuracy.revolute_bounds", "mbcourse.accuracy.bounds",
                     "mbcourse.accuracy.Chain.influence", "mbcourse.accuracy.Chain.coefficients",
                     "mbcourse.accuracy.influence", "mbcourse.accuracy.second_order"],
    "ch9_contact": ["mbcourse.contact.impulse", "mbcourse.contact.simulate"],
}


def implement_note(routines):
    """The markdown cell that tells students what is unavailable while grading."""
    if not routines:
        return md("""
        **Calling the library.** You may call any part of `mbcourse` in your answers.
        """)
    names = ", ".join(f"`{('mb.' + r.split('.', 1)[1]).replace('._parts', ' (its split of h)')}`"
                      for r in routines)
    return md(f"""
    **What you build yourself.** While your notebook is graded, these library routines are
    not available (calling them raises an error that says so): {names}, nor are the
    library's other routines that compute the same quantities (the grader finds them from
    the tests and the library's code). The rest of `mbcourse` is, and the test cells use the
    library to check you.
    """)


ASSIGNMENTS = {
    "ch1_graphs": CH1,
    "ch2_cartesian": CH2,
    "ch3_tree": CH3,
    "ch4_recursion": CH4,
    "ch5_inertial": CH5,
    "ch6_loops": CH6,
    "ch7_energy": CH7,
    "ch8_accuracy": CH8,
    "ch9_contact": CH9,
}


def build(cells, implement=()):
    """The nbformat-4 notebook (dict) of one assignment."""
    out = []
    cells = list(cells)
    k = next((i for i, spec in enumerate(cells)
              if spec[0] == "md" and "## How this homework works" in spec[1]), None)
    if k is not None:
        cells.insert(k + 1, implement_note(list(implement)))
    for spec in cells:
        if spec[0] == "md":
            out.append(notebook_cell(spec[1], "readonly", cell_type="markdown"))
        elif spec[0] == "given":
            out.append(notebook_cell(spec[2], "readonly", grade_id=spec[1]))
        else:
            _, gid, points, statement, solution, tests = spec
            out.append(notebook_cell(statement, "readonly", grade_id=f"{gid}_task", cell_type="markdown"))
            out.append(notebook_cell(solution, "solution", grade_id=f"{gid}_solution"))
            out.append(notebook_cell(tests, "tests", grade_id=f"{gid}_tests", points=points))
    for i, cell in enumerate(out):
        cell["id"] = cell["metadata"].get("nbgrader", {}).get("grade_id", f"cell-{i}").replace("_", "-")
        if isinstance(cell["source"], str):
            cell["source"] = cell["source"].splitlines(keepends=True)
    return {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                           "name": "python3"},
            "language_info": {"name": "python"},
            "mbcourse": {"implement": list(implement)},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def points(cells):
    return sum(spec[2] for spec in cells if spec[0] == "task")


def dumps(nb):
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def path_of(name):
    return SOURCE / name / f"{name}.ipynb"


def _normalized(text):
    """Numbers rounded to 8 significant digits: last-digit differences across platforms in
    the visible literals do not count as changes."""
    return re.sub(r"-?\d+\.\d+(e[-+]?\d+)?", lambda m: f"{float(m.group()):.8g}", text)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check_only = "--check" in argv
    stale = []
    for name, cells in ASSIGNMENTS.items():
        assert points(cells) == 10, f"{name}: {points(cells)} points, expected 10"
        text = dumps(build(cells, IMPLEMENT[name]))
        target = path_of(name)
        if check_only:
            if not target.exists() or _normalized(target.read_text()) != _normalized(text):
                stale.append(str(target.relative_to(HERE.parent)))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"wrote {target.relative_to(HERE.parent)}")
    if stale:
        print("out of date (run python homework/make_sources.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
