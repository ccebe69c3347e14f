"""Every public function documents its parameters and its result (issue 27): a numpydoc
``Parameters`` section naming each parameter of the signature, and a ``Returns`` (or
``Yields``) section. Public = named in a package's ``__all__``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator

import pytest

import nlgeval


def public_functions() -> Iterator[tuple[str, Callable[..., object]]]:
    """(qualified name, function) for every function named in a package ``__all__``."""
    seen: set[int] = set()
    for info in pkgutil.walk_packages(nlgeval.__path__, "nlgeval."):
        if not info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if inspect.isfunction(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{obj.__module__}.{obj.__qualname__}", obj


def missing_sections(fn: Callable[..., object]) -> list[str]:
    """What the docstring of ``fn`` lacks: the sections, or the parameters its
    ``Parameters`` section does not name."""
    doc = inspect.getdoc(fn) or ""
    params = [p for p in inspect.signature(fn).parameters.values()]
    problems = []
    if params and not re.search(r"^Parameters\n-{10}", doc, re.M):
        problems.append("Parameters section")
    elif params:
        section = doc.split("Parameters\n----------", 1)[1]
        section = re.split(r"\n(?:Returns|Yields|Raises|Examples|Notes|See Also)\n-+", section)[0]
        named = set(re.findall(r"^\**([A-Za-z_]\w*)(?=\s*(?:,|:|$))", section, re.M))
        named |= {n.strip("* ") for line in re.findall(r"^([\w*, ]+?)\s*:", section, re.M)
                  for n in line.split(",")}
        problems += [f"parameter {p.name!r}" for p in params if p.name not in named]
    if not re.search(r"^(Returns|Yields)\n-{6,}", doc, re.M):
        problems.append("Returns section")
    return problems


@pytest.mark.parametrize("name, fn", list(public_functions()), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_public_function_has_numpydoc_sections(name: str, fn: Callable[..., object]) -> None:
    assert not missing_sections(fn), f"{name}: missing {', '.join(missing_sections(fn))}"


def test_the_check_finds_a_missing_parameter() -> None:
    def documented(a: int, b: int = 1) -> int:
        """Sum.

        Parameters
        ----------
        a : int
            First.

        Returns
        -------
        int
            The sum.
        """
        return a + b

    assert missing_sections(documented) == ["parameter 'b'"]
