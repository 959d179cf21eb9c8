"""The one-line note a student sees while a kernel compiles (numba found no machine code in
its cache): said once per kernel and process, for the outermost compilation only, silent
for functions outside the package and when MBCOURSE_COMPILE_MESSAGE=0. numba's own event
("numba:compile", raised only on a cache miss) is replayed here, so nothing compiles."""
import numba.core.event as ev
import pytest

import mbcourse.kernels as K
from mbcourse.kernels import common


def _compile(dispatcher, inner=None):
    ev.start_event("numba:compile", data={"dispatcher": dispatcher})
    if inner is not None:
        _compile(inner)
    ev.end_event("numba:compile", data={"dispatcher": dispatcher})


@pytest.fixture
def note(monkeypatch):
    monkeypatch.delenv("MBCOURSE_COMPILE_MESSAGE", raising=False)
    monkeypatch.setattr(K._COMPILE_NOTE, "said", set())
    return K._COMPILE_NOTE


def test_said_once_per_kernel_outermost_only(note, capsys):
    outer, inner = common.cholesky_factor_n, common.cholesky_solve
    _compile(outer, inner)
    _compile(outer)
    err = capsys.readouterr().err.splitlines()
    assert err == ["mbcourse: compiling the kernel cholesky_factor_n for this machine, once "
                   "(10 s to a minute; later runs load it from the cache) ..."]
    _compile(inner)                                  # compiled on its own: its own line
    assert "kernel cholesky_solve for" in capsys.readouterr().err
    assert note.depth == 0


def test_silent_when_turned_off_or_not_ours(note, capsys, monkeypatch):
    import numba

    @numba.njit
    def stranger(x):
        return x

    _compile(stranger)
    monkeypatch.setenv("MBCOURSE_COMPILE_MESSAGE", "0")
    _compile(common.cholesky_factor_n)
    assert capsys.readouterr().err == "" and note.depth == 0


def test_a_function_without_a_module_compiles(note, capsys):
    """mb.symbolic compiles code made by exec: its function has no module; the note must
    neither fail its compilation nor speak for it."""
    import numba

    namespace = {}
    exec("def made(x):\n    return 2.0 * x", namespace)
    made = numba.njit(namespace["made"])
    assert made.py_func.__module__ is None
    _compile(made)
    assert made(1.5) == 3.0 and capsys.readouterr().err == "" and note.depth == 0
