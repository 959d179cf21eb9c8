"""Which ``mbcourse`` routines an assignment makes unavailable in the sandbox, found from code.

    python homework/routes.py homework/source/ch5_inertial/ch5_inertial.ipynb

A homework asks students to compute quantities the library already computes; every routine
of the library that computes them (public or private, however it is reached) must be
unavailable while a submission runs. The list is generated, not written by hand:

1. **Roots**: the ``mbcourse`` routines the source's *test* cells use to compute their
   references (a static reading of the cells: ``mb.x.f``, ``from mbcourse.x import f``,
   aliases ``M = mb.x.C``, methods called on objects, attribute chains), and their
   *siblings*: the routines the project's own tests (``tests/``) compare with a root,
   repeated until nothing new turns up (``decompose_tree`` beside ``decompose_numeric``).
2. **Call graph**: every routine a root uses inside ``mbcourse``, transitively, from a static
   call graph of the package (AST; ``self.m`` resolves to the class and its bases; a method
   called on an object of unknown type resolves to every package method of that name, unless
   the name is also a method of a builtin or NumPy type such as ``copy`` or ``sum``),
   restricted to the modules of the routines the roots name.
3. **Kept** (the rule that leaves students the library's general infrastructure): a routine
   stays available when it is reached from what the student is *given or expected to use*:
   the read-only cells and the reference solution cells of the source, the package's own
   import-time code, the modules listed in :data:`INFRASTRUCTURE` (building models and their
   graphs, states, spatial algebra, errors, plotting, the grading helpers), every dunder
   method, properties, and routines named ``draw*``, ``plot*``, ``show*``. Reached from the
   roots and not from what is kept: *blocked* (the body raises). Reached from both:
   *guarded* (``guarded:`` entries: the body stays, behind a check that raises unless the
   caller is the library's own code other than ``mbcourse.grading``), so the reference
   solution never needs a blocked routine and building a model never fails.
4. The assignment's explicit list (``metadata.mbcourse.implement``) is added, whatever 3 says.

What this cannot stop: a student who copies the library's source text into a cell. See the
README (*For instructors*) for what catches that.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import pathlib
import sys

#: Modules whose routines always stay available: general infrastructure no assignment asks for.
INFRASTRUCTURE = ("mbcourse.model", "mbcourse.models", "mbcourse.joints", "mbcourse.state",
                  "mbcourse.errors", "mbcourse.spatial", "mbcourse.grading", "mbcourse.viz",
                  "mbcourse.viz3d", "mbcourse.urdf", "mbcourse.summary", "mbcourse.compiled",
                  "mbcourse.elements", "mbcourse.poses", "mbcourse.topology")


def _common_names():
    import numpy as np

    names = set()
    for t in (dict, list, str, set, tuple, int, float, bytes, object, np.ndarray, np.generic,
              np.random.Generator):
        names.update(n for n in dir(t))
    return names


class Package:
    """A static index of a package's routines and what each one refers to."""

    def __init__(self, name="mbcourse", root=None):
        if root is None:
            spec = importlib.util.find_spec(name)
            root = pathlib.Path(list(spec.submodule_search_locations)[0])
        self.name, self.root = name, pathlib.Path(root)
        self.modules = {}       # module name -> ast.Module
        self.defs = {}          # "mbcourse.m.f" / "mbcourse.m.C.f" -> FunctionDef
        self.classes = {}       # "mbcourse.m.C" -> (module, ClassDef)
        self.bindings = {}      # module -> {local name: qualified target}
        self.methods = {}       # method name -> [qualified]
        for path in sorted(self.root.rglob("*.py")):
            rel = path.relative_to(self.root).with_suffix("")
            parts = [name] + [p for p in rel.parts if p != "__init__"]
            mod = ".".join(parts)
            try:
                tree = ast.parse(path.read_text())
            except SyntaxError:
                continue
            self.modules[mod] = (tree, path.name == "__init__.py")
        for mod, (tree, is_pkg) in self.modules.items():
            self.bindings[mod] = self._bind(tree.body, mod, is_pkg)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.defs[f"{mod}.{node.name}"] = node
                elif isinstance(node, ast.ClassDef):
                    self.classes[f"{mod}.{node.name}"] = (mod, node)
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            q = f"{mod}.{node.name}.{item.name}"
                            self.defs[q] = item
                            self.methods.setdefault(item.name, []).append(q)
        self.common = _common_names()
        self._edges = {}

    # -- names ---------------------------------------------------------------------------
    def _bind(self, body, mod, is_pkg=False):
        """Import bindings and simple aliases (``X = a.b.c``) of a block of statements."""
        out = {}
        package = mod if is_pkg else mod.rpartition(".")[0]
        for node in body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        out[a.asname] = a.name
                    else:
                        out[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[:len(up) - (node.level - 1)] if node.level > 1 else up
                    base = ".".join(up + ([node.module] if node.module else []))
                for a in node.names:
                    if a.name != "*":
                        out[a.asname or a.name] = f"{base}.{a.name}"
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                chain = _chain(node.value)
                if chain:
                    out[node.targets[0].id] = chain
        return out

    def resolve(self, qual, depth=0):
        """A dotted name to what it names in the package: a routine, a class, a module or
        None (outside the package)."""
        if depth > 20 or not (qual == self.name or qual.startswith(self.name + ".")):
            return None
        if qual in self.defs or qual in self.classes or qual in self.modules:
            return qual
        head, _, last = qual.rpartition(".")
        owner = self.resolve(head, depth + 1) if head else None
        if owner is None:
            return None
        if owner in self.modules:
            target = self.bindings[owner].get(last)
            if target is not None and target != qual:
                return self.resolve(target, depth + 1)
            sub = f"{owner}.{last}"
            return sub if sub in self.modules else None
        if owner in self.classes:
            for cls in self._mro(owner):
                if f"{cls}.{last}" in self.defs:
                    return f"{cls}.{last}"
        return None

    def _mro(self, cls, seen=None):
        seen = seen if seen is not None else []
        if cls in seen or cls not in self.classes:
            return seen
        seen.append(cls)
        mod, node = self.classes[cls]
        for b in node.bases:
            chain = _chain(b)
            if chain:
                head, _, rest = chain.partition(".")
                target = self.bindings[mod].get(head, f"{mod}.{head}")
                base = self.resolve(target + ("." + rest if rest else ""))
                if base:
                    self._mro(base, seen)
        return seen

    def refs(self, node, scope, cls=None, guess=True):
        """The package routines (and classes) a piece of code refers to; ``scope`` is
        ``{local name: qualified}`` (a module's bindings and top-level names). ``guess``:
        ``obj.m(...)`` on an object of unknown type refers to every package method ``m``."""
        out = set()
        called = {id(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)} if guess else ()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load):
                chain = _chain(sub)
                head = chain.split(".")[0] if chain else None
                if head in ("self", "cls") and cls is not None:
                    parts = chain.split(".")
                    if len(parts) >= 2:
                        r = self.resolve(f"{cls}.{parts[1]}")
                        if r:
                            out.add(r)
                            continue
                if chain and head in scope:
                    r = self.resolve(scope[head] + chain[len(head):])
                    if r:
                        out.add(r)
                        continue
                if (id(sub) in called and sub.attr not in self.common
                        and not sub.attr.startswith("__")):      # obj.method(...): any class
                    out.update(self.methods.get(sub.attr, ()))
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in scope:
                r = self.resolve(scope[sub.id])
                if r:
                    out.add(r)
        return out

    def _scope(self, mod):
        scope = {n.rpartition(".")[2]: n for n in list(self.defs) + list(self.classes)
                 if n.rpartition(".")[0] == mod}
        scope.update(self.bindings[mod])
        return scope

    def edges(self, qual):
        """What a routine (or class: its constructor and dunders) refers to."""
        if qual in self._edges:
            return self._edges[qual]
        self._edges[qual] = set()
        if qual in self.classes:
            out = {q for q in self.defs if q.rpartition(".")[0] in self._mro(qual)
                   and q.rpartition(".")[2].startswith("__")}
        elif qual in self.defs:
            owner = qual.rpartition(".")[0]
            cls = owner if owner in self.classes else None
            mod = self.classes[cls][0] if cls else owner
            out = self.refs(self.defs[qual], self._scope(mod), cls)
        else:
            out = set()
        self._edges[qual] = out
        return out

    def closure(self, roots):
        seen, todo = set(), list(roots)
        while todo:
            q = todo.pop()
            if q in seen:
                continue
            seen.add(q)
            todo.extend(self.edges(q) - seen)
        return seen

    def import_time(self):
        """What the package's modules use when they are imported (class bodies included)."""
        out = set()
        for mod, (tree, _) in self.modules.items():
            scope = self._scope(mod)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out |= {r for d in node.decorator_list for r in self.refs(d, scope)}
                elif isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            out |= self.refs(item, scope)
                        else:
                            out |= {r for d in item.decorator_list for r in self.refs(d, scope)}
                    out |= {r for b in node.bases for r in self.refs(b, scope)}
                else:
                    out |= self.refs(node, scope)
        return out


def _chain(node):
    """``a.b.c`` of an attribute chain on a name (calls in between are skipped: ``a.b().c`` ->
    ``a.b.c`` is not produced; only pure chains)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


def _role(cell):
    """``test``, ``solution``, ``readonly`` or ``markdown`` (as homework/grader.py reads it)."""
    meta = cell.get("metadata", {})
    nbg = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    nbg = nbg if isinstance(nbg, dict) else {}
    if cell.get("cell_type") != "code":
        return "markdown"
    return "test" if nbg.get("grade") else "solution" if nbg.get("solution") else "readonly"


def _text(source):
    return "".join(source) if isinstance(source, list) else str(source)


def _strip_magics(code):
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in code.splitlines())


def _cells(nb, *roles):
    out = []
    for cell in nb["cells"]:
        if _role(cell) in roles:
            try:
                out.append(ast.parse(_strip_magics(_text(cell["source"]))))
            except SyntaxError:
                continue
    return out


TESTS = pathlib.Path(__file__).resolve().parents[1] / "tests"


def _test_functions(pkg, tests=TESTS):
    """For each test function of the project's tests (``tests/test_*.py``), the package
    routines it refers to."""
    out = []
    for path in sorted(pathlib.Path(tests).glob("test_*.py")):
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, OSError):
            continue
        scope = {k: v for k, v in pkg._bind(tree.body, "__main__").items()
                 if v.split(".")[0] == pkg.name}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                local = dict(scope)
                local.update({k: v for k, v in pkg._bind(
                    [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom,
                                                                ast.Assign))],
                    "__main__").items() if v.split(".")[0] == pkg.name})
                out.append(pkg.refs(node, local))
    return out


def siblings(pkg, roots, exclude, tests=TESTS):
    """Routines the project's tests compare with a root: every routine of a root's module
    that a test function refers to together with that root (``decompose_tree`` beside
    ``decompose_numeric``), except ``exclude``."""
    found = set()
    for refs in _test_functions(pkg, tests):
        for r in refs & roots:
            module = _module_of(pkg, r)
            found |= {q for q in refs if q in pkg.defs and _module_of(pkg, q) == module}
    return found - roots - exclude


def _module_of(pkg, qual):
    owner = qual.rpartition(".")[0]
    return pkg.classes[owner][0] if owner in pkg.classes else owner


_PACKAGE = None


def package():
    global _PACKAGE
    if _PACKAGE is None:
        _PACKAGE = Package()
    return _PACKAGE


def blocked_routes(source_nb, pkg=None):
    """The routines (``"mbcourse.m.f"``, ``"mbcourse.m.C.f"``) of the package to make
    unavailable for this assignment: the rule of the module docstring, sorted. Classes are not
    listed (their methods are)."""
    pkg = pkg or package()
    every = _cells(source_nb, "readonly", "solution", "test")
    scope = {}
    for tree in every:                               # the notebook's imports and aliases
        scope.update(pkg._bind(tree.body, "__main__"))
    scope = {k: v for k, v in scope.items() if v.split(".")[0] == pkg.name}
    infra = tuple(m + "." for m in INFRASTRUCTURE)
    direct = set()                                   # what the student's cells use by name
    for tree in _cells(source_nb, "readonly", "solution"):
        direct |= pkg.refs(tree, scope)
    kept_roots = direct | pkg.import_time() | set(pkg.classes)
    kept_roots |= {q for q in pkg.defs if q.startswith(infra)}

    def askable(q):
        node, last = pkg.defs.get(q), q.rpartition(".")[2]
        return (node is not None and q not in kept_roots and not q.startswith(infra)
                and not last.startswith(("__", "draw", "plot", "show"))   # dunders, pictures
                and not any(isinstance(d, ast.Name) and d.id == "property"
                            for d in node.decorator_list))               # attribute reads

    roots, named = set(), set()
    for tree in _cells(source_nb, "test"):
        roots |= {q for q in pkg.refs(tree, scope) if askable(q)}
        named |= {q for q in pkg.refs(tree, scope, guess=False) if askable(q)}
    modules = {_module_of(pkg, q) for q in named}    # other modules: general infrastructure
    roots = {q for q in roots if _module_of(pkg, q) in modules}
    while True:                                      # what the tests compare with them
        more = {q for q in siblings(pkg, roots, kept_roots) if askable(q)}
        if not more:
            break
        roots |= more
    kept = pkg.closure(kept_roots)
    reached = {q for q in pkg.closure(roots) if askable(q) and _module_of(pkg, q) in modules}
    return {q: "guarded" if q in kept else "full" for q in sorted(reached)}


#: Prefix of a routine that stays callable from inside the library (which needs it for
#: something the student is given) and raises when the student's code calls it.
GUARDED = "guarded:"


def routes(source_nb, pkg=None):
    """Everything made unavailable: :func:`blocked_routes` and the explicit
    ``metadata.mbcourse.implement`` list of the notebook (always fully blocked). A routine
    the library itself still needs (see the module docstring) is written ``"guarded:<name>"``."""
    explicit = set(source_nb.get("metadata", {}).get("mbcourse", {}).get("implement", []))
    out = {q: how for q, how in blocked_routes(source_nb, pkg).items() if q not in explicit}
    return sorted(explicit) + sorted(GUARDED + q if how == "guarded" else q
                                     for q, how in out.items())


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        nb = json.loads(pathlib.Path(arg).read_text())
        print(arg)
        for r in routes(nb):
            print("   ", r)
