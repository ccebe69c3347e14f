"""Reading data pickles without running code: an unpickler that only rebuilds numpy scalars.

Loading a pickle calls whatever callables it names, so a pickle from elsewhere can run any code
(the warning at the top of Python's :mod:`pickle` documentation). Some published corpora are
nonetheless distributed as pickles of plain dicts, lists, strings and numbers with a few numpy
scalars in them (REALSumm, Bhandari et al. 2020). :func:`load_data_pickle` reads such a file with
an :class:`pickle.Unpickler` whose ``find_class`` -- the only way a pickle can reach a callable,
including through the ``copyreg`` extension codes -- returns numpy's scalar and dtype
reconstructors and refuses every other global with an :class:`~nlgeval.errors.InputError`,
before anything is called.
"""

from __future__ import annotations

import importlib
import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from nlgeval.errors import InputError

#: (module, name) globals a data pickle may name: numpy's scalar reconstructor (its home moved
#: from ``numpy.core.multiarray`` to ``numpy._core.multiarray`` in numpy 2) and ``numpy.dtype``
ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset({
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "dtype"),
})


def _numpy_scalar_reconstructor() -> Any:
    """numpy's ``scalar`` from wherever this numpy keeps it (no deprecation warning)."""
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return importlib.import_module(module).scalar
        except (ImportError, AttributeError):
            continue
    raise InputError("this numpy has no scalar reconstructor (numpy._core.multiarray.scalar)")


class _DataUnpickler(pickle.Unpickler):
    """An unpickler that resolves only :data:`ALLOWED_GLOBALS`."""

    def __init__(self, file: Any, source: str) -> None:
        super().__init__(file)
        self._source = source

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS:
            raise InputError(
                f"refused to load: the pickle names the global '{module}.{name}', and only "
                "numpy's scalar and dtype reconstructors are allowed in a data pickle (loading "
                "it could run code); nothing was executed", file=self._source)
        if name == "dtype":
            return np.dtype
        return _numpy_scalar_reconstructor()


def loads_data_pickle(data: bytes, source: str = "<bytes>") -> Any:
    """Unpickle ``data``, allowing only numpy scalars and dtypes as non-builtin objects.

    Examples
    --------
    Plain data and numpy scalars come back; any other global is refused before it runs:

    >>> import pickle
    >>> import numpy as np
    >>> loads_data_pickle(pickle.dumps({"a": [1, "x"], "b": np.float64(0.5)}))
    {'a': [1, 'x'], 'b': np.float64(0.5)}
    >>> import os
    >>> class Evil:
    ...     def __reduce__(self):
    ...         return (os.system, ("echo hacked",))
    >>> try:
    ...     loads_data_pickle(pickle.dumps(Evil()), "evil.pkl")
    ... except InputError as err:
    ...     print(str(err)[:60])
    evil.pkl: refused to load: the pickle names the global 'posi
    """
    try:
        return _DataUnpickler(io.BytesIO(data), source).load()
    except InputError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, MemoryError) as exc:
        raise InputError(f"not a readable data pickle ({type(exc).__name__}: {exc})",
                         file=source) from None


def load_data_pickle(path: str | Path) -> Any:
    """Read a pickle file of plain data (see :func:`loads_data_pickle`).

    Examples
    --------
    >>> import pickle, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "scores.pkl"
    >>> _ = path.write_bytes(pickle.dumps({"doc": {"score": 0.25}}))
    >>> load_data_pickle(path)
    {'doc': {'score': 0.25}}
    >>> tmp.cleanup()
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    return loads_data_pickle(data, str(path))


__all__ = ["ALLOWED_GLOBALS", "load_data_pickle", "loads_data_pickle"]
