"""Metric options: :class:`Option` (type, default, help) and the spec strings that set them,
``name:key=value[,key=value]`` (:func:`parse_spec`) and ``--metrics`` lists
(:func:`parse_metric_list`), in the spirit of sacrebleu's metric signatures (Post, 2018)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nlgeval.errors import InputError

_TRUE = {"true", "yes", "1", "on", "y", "t"}
_FALSE = {"false", "no", "0", "off", "n", "f"}


@dataclass(frozen=True)
class Option:
    """One option of a metric: its type, default and help text.

    ``type`` is ``bool``, ``int``, ``float`` or ``str``; ``choices`` restricts string options.

    Examples:
        >>> Option(bool, False, "lowercase").parse("bleu", "lowercase", "yes")
        True
        >>> Option(int, 4).parse("bleu", "max_ngram_order", " 3 ")
        3
    """

    type: type
    default: Any
    help: str = ""
    choices: tuple[str, ...] | None = None

    def parse(self, metric: str, key: str, value: Any) -> Any:
        """Convert a (string) value to the option's type or raise a clear :class:`InputError`."""
        where = f"metric '{metric}', option '{key}'"
        if self.type is bool:
            if isinstance(value, bool):
                return value
            s = str(value).strip().lower()
            if s in _TRUE:
                return True
            if s in _FALSE:
                return False
            raise InputError(f"{where}: expected true or false, got {value!r}")
        if self.type is int:
            if isinstance(value, bool):
                raise InputError(f"{where}: expected an integer, got {value!r}")
            try:
                return int(str(value).strip())
            except ValueError:
                raise InputError(f"{where}: expected an integer, got {value!r}") from None
        if self.type is float:
            try:
                return float(str(value).strip())
            except ValueError:
                raise InputError(f"{where}: expected a number, got {value!r}") from None
        s = str(value).strip()
        if self.choices is not None and s not in self.choices:
            raise InputError(f"{where}: expected one of {', '.join(self.choices)}, got {s!r}")
        return s

    def format(self, value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``"bleu:lowercase=true,tokenize=intl"`` into a name and an option dict.

    Parameters
    ----------
    spec : str
        ``"name"`` or ``"name:key=value[,key=value]"``.

    Returns
    -------
    tuple of (str, dict of str to str)
        The metric name and its options, values as written.

    Examples
    --------
    >>> parse_spec("bleu:lowercase=true,tokenize=intl")
    ('bleu', {'lowercase': 'true', 'tokenize': 'intl'})
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"empty metric specification {spec!r}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    opts: dict[str, str] = {}
    if rest.strip():
        for part in rest.split(","):
            if not part.strip():
                continue
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise InputError(
                    f"metric '{spec}': option '{part.strip()}' must look like key=value "
                    "(e.g. bleu:lowercase=true)"
                )
            key = key.strip()
            if key in opts:
                raise InputError(f"metric '{spec}': option '{key}' given twice")
            opts[key] = value.strip()
    return name, opts


def parse_metric_list(text: str) -> list[str]:
    """Split ``--metrics``.

    Metrics are separated by ';' or by ',' -- a comma-separated part containing '=' but no ':'
    continues the previous spec's options, so ``bleu:lowercase=true,tokenize=intl,chrf``
    means ``bleu:lowercase=true,tokenize=intl`` and ``chrf``.

    Parameters
    ----------
    text : str
        The ``--metrics`` value.

    Returns
    -------
    list of str
        One metric spec per metric, in order.

    Examples
    --------
    >>> parse_metric_list("bleu:lowercase=true,tokenize=intl,chrf")
    ['bleu:lowercase=true,tokenize=intl', 'chrf']
    >>> parse_metric_list("bleu;rougeL")
    ['bleu', 'rougeL']
    """
    out: list[str] = []
    for chunk in text.split(";"):
        for part in chunk.split(","):
            part = part.strip()
            if not part:
                continue
            if "=" in part and ":" not in part and out and ":" in out[-1]:
                out[-1] += "," + part
            else:
                out.append(part)
    if not out:
        raise InputError("--metrics is empty (e.g. --metrics bleu,chrf)")
    return out
