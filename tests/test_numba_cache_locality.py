"""A cached numba kernel calls only compiled functions of its own module.

numba's on-disk cache (``cache=True``) keys a kernel's machine code on its own source file
(modification time and size) and its own bytecode. A compiled helper it calls is compiled into
it, but a change to the helper's file is not noticed: a kernel whose helper lives in another
file keeps the old helper's machine code, and its old numbers, until its own cache is cleared.
So every compiled function a cached kernel calls is defined in the kernel's module, or in a
module that the kernel's module *pins*: a line ``# numba cache pin: MODULE HASH``, HASH the
first 16 hex digits of the SHA-256 of MODULE's file. An edit of MODULE makes the pin stale and
this test fail until the pin is updated; updating it edits the caller's file, which renews the
caller's cache. numpy's pairwise summation (``nlgeval.correlation._numpy_sums``), shared by
three modules' kernels, is pinned so.

The walk imports every nlgeval module whose source mentions numba and follows, for each
cached dispatcher, the global names its bytecode (and that of its nested functions) reads:
a dispatcher, or an attribute of a module that is one, defined in another module is an offence.

Module-level constants are compiled in the same way (numba freezes a global's value into the
kernel) and go stale the same way. The two rules every coefficient shares, ``MIN_PAIRS`` and
``CONSTANT_RTOL`` (``nlgeval.correlation._constant``), are read by kernels of several modules on
purpose (one rule, one definition; its docstring says to clear the caches after changing one);
any other constant a cached kernel takes from another nlgeval module is an offence.
"""

from __future__ import annotations

import ast
import dis
import hashlib
import importlib
import inspect
import pkgutil
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import nlgeval

ROOT = Path(nlgeval.__file__).resolve().parent


def numba_modules(package: types.ModuleType) -> list[str]:
    """Names of the modules of ``package`` whose source mentions numba (the others cannot
    define a kernel; importing all of them would start the web app's dependencies)."""
    names = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        spec = importlib.util.find_spec(info.name)
        origin = spec.origin if spec else None
        if origin and origin.endswith(".py") and "numba" in Path(origin).read_text("utf-8"):
            names.append(info.name)
    return names


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _called(kernel: Dispatcher) -> Iterator[tuple[str, Dispatcher]]:
    """The dispatchers ``kernel`` reads: globals, attributes of global modules, closures."""
    func = kernel.py_func
    for code in _codes(func.__code__):
        ops = list(dis.get_instructions(code))
        for k, op in enumerate(ops):
            if op.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                continue
            obj = func.__globals__.get(op.argval)
            if isinstance(obj, Dispatcher):
                yield op.argval, obj
            elif isinstance(obj, types.ModuleType) and k + 1 < len(ops) \
                    and ops[k + 1].opname in ("LOAD_ATTR", "LOAD_METHOD"):
                inner = getattr(obj, ops[k + 1].argval, None)
                if isinstance(inner, Dispatcher):
                    yield f"{op.argval}.{ops[k + 1].argval}", inner
    for cell in func.__closure__ or ():
        if isinstance(cell.cell_contents, Dispatcher):
            yield cell.cell_contents.py_func.__name__, cell.cell_contents


def cached_kernels(module_names: list[str]) -> list[tuple[str, Dispatcher]]:
    """``(module.name, dispatcher)`` of every cached dispatcher defined in the modules."""
    out = []
    for name in module_names:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == name \
                    and not isinstance(obj._cache, NullCache):  # cache=True
                out.append((f"{name}.{attr}", obj))
    return out


PIN = re.compile(r"^# numba cache pin: (\S+) ([0-9a-f]{16})\b", re.MULTILINE)


def source_hash(module_name: str) -> str:
    """The first 16 hex digits of the SHA-256 of a module's file (what a pin records)."""
    return hashlib.sha256(Path(sys.modules[module_name].__file__).read_bytes()).hexdigest()[:16]


def pins(module_name: str) -> dict[str, str]:
    """Module -> hash of the ``# numba cache pin:`` lines of a module's file."""
    return dict(PIN.findall(Path(sys.modules[module_name].__file__).read_text("utf-8")))


def foreign_calls(kernels: list[tuple[str, Dispatcher]]) -> list[str]:
    """``kernel -> helper (module)`` for each compiled helper from another module that the
    kernel's module does not pin at the helper module's current hash."""
    offences = []
    for where, kernel in kernels:
        own = kernel.py_func.__module__
        for label, helper in _called(kernel):
            other = helper.py_func.__module__
            if other == own:
                continue
            pinned, now = pins(own).get(other), source_hash(other)
            if pinned != now:
                why = "no pin" if pinned is None else f"stale pin {pinned}"
                offences.append(f"{where} -> {label} ({other}; {why}: write "
                                f"'# numba cache pin: {other} {now}' in {own})")
    return list(dict.fromkeys(offences))  # a helper called twice is one offence


#: Constants cached kernels may read from another module (see the module docstring).
SHARED_CONSTANTS = {"MIN_PAIRS", "CONSTANT_RTOL"}


def foreign_constants(kernels: list[tuple[str, Dispatcher]]) -> dict[str, set[str]]:
    """Name -> kernels, for each non-callable global a kernel reads that its module imports
    from another module of its package (``from nlgeval... import NAME``)."""
    out: dict[str, set[str]] = {}
    for where, kernel in kernels:
        module = sys.modules[kernel.py_func.__module__]
        top = module.__name__.split(".")[0]
        imported = {a.asname or a.name for node in ast.walk(ast.parse(inspect.getsource(module)))
                    if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0]
                    == top for a in node.names}
        for code in _codes(kernel.py_func.__code__):
            for op in dis.get_instructions(code):
                obj = kernel.py_func.__globals__.get(op.argval)
                if op.opname == "LOAD_GLOBAL" and op.argval in imported and not callable(obj) \
                        and not isinstance(obj, types.ModuleType):
                    out.setdefault(op.argval, set()).add(where)
    return out


def _decorated_cached(path: Path) -> int:
    """How many functions of a file carry ``@njit(cache=True...)``/``@jit(cache=True...)``."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                if not isinstance(dec, ast.Call):
                    continue
                name = getattr(dec.func, "id", None) or getattr(dec.func, "attr", "")  # numba.njit
                cached = any(k.arg == "cache" and getattr(k.value, "value", False)
                             for k in dec.keywords)
                count += name in ("njit", "jit") and cached
    return count


def test_cached_kernels_call_only_their_own_modules_compiled_functions() -> None:
    kernels = cached_kernels(numba_modules(nlgeval))
    # the walk sees every cached kernel the sources declare (none hidden from it)
    declared = sum(_decorated_cached(p) for p in ROOT.rglob("*.py"))
    assert len(kernels) == declared > 50
    assert foreign_calls(kernels) == []


def test_cached_kernels_read_only_the_shared_constants_of_other_modules() -> None:
    found = foreign_constants(cached_kernels(numba_modules(nlgeval)))
    assert set(found) == SHARED_CONSTANTS, found  # a stale entry fails too
    from nlgeval.correlation import _constant

    for name in SHARED_CONSTANTS:  # defined once, where the cache warning is
        assert name in vars(_constant) and "clear" in (_constant.__doc__ or "")


def test_the_walk_finds_a_helper_from_another_module(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # the offence this file guards against, built in a throw-away package: it must be found,
    # through a from-import, a module attribute and a nested function alike
    pkg = tmp_path / "cachepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", "utf-8")
    (pkg / "helpers.py").write_text(
        "from numba import njit\n\nSTEP = 3\n\n@njit(cache=True)\ndef twice(x):\n"
        "    return 2 * x\n",
        "utf-8")
    (pkg / "kernels.py").write_text(
        "from numba import njit\nfrom cachepkg import helpers\nfrom cachepkg.helpers import "
        "STEP, twice\n\n@njit(cache=True)\ndef own(x):\n    return x + STEP\n\n"
        "@njit(cache=True)\ndef fine(x):\n    return own(x)\n\n"
        "@njit(cache=True)\ndef direct(x):\n    return twice(x)\n\n"
        "@njit(cache=True)\ndef by_module(x):\n    return helpers.twice(x)\n\n"
        "@njit(cache=True)\ndef nested(x):\n    def inner(y):\n        return twice(y)\n"
        "    return inner(x)\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        package = importlib.import_module("cachepkg")
        kernels = cached_kernels(numba_modules(package))
        assert sorted(k for k, _ in kernels) == [
            "cachepkg.helpers.twice", "cachepkg.kernels.by_module", "cachepkg.kernels.direct",
            "cachepkg.kernels.fine", "cachepkg.kernels.nested", "cachepkg.kernels.own"]
        now = source_hash("cachepkg.helpers")
        fix = f"no pin: write '# numba cache pin: cachepkg.helpers {now}' in cachepkg.kernels"
        assert foreign_calls(kernels) == [
            f"cachepkg.kernels.direct -> twice (cachepkg.helpers; {fix})",
            f"cachepkg.kernels.by_module -> helpers.twice (cachepkg.helpers; {fix})",
            f"cachepkg.kernels.nested -> twice (cachepkg.helpers; {fix})"]
        assert foreign_constants(kernels) == {"STEP": {"cachepkg.kernels.own"}}
        # a pin at the helper module's hash makes the calls legitimate; once the helper
        # module changes, the pin is stale and every call is an offence again
        source = (pkg / "kernels.py").read_text("utf-8")
        (pkg / "kernels.py").write_text(f"# numba cache pin: cachepkg.helpers {now}\n{source}",
                                        "utf-8")
        assert foreign_calls(kernels) == []
        (pkg / "helpers.py").write_text((pkg / "helpers.py").read_text("utf-8")
                                        .replace("2 * x", "x + x"), "utf-8")
        stale = foreign_calls(kernels)
        assert len(stale) == 3 and all(f"stale pin {now}" in o for o in stale)
    finally:
        for name in [m for m in sys.modules if m == "cachepkg" or m.startswith("cachepkg.")]:
            del sys.modules[name]
