"""Metric name -> adapter class registry, open to plugins.

Built-in adapters are listed in :data:`BUILTIN`. Third-party packages add metrics through the
``nlgeval.metrics`` entry-point group (``importlib.metadata.entry_points``)::

    [project.entry-points."nlgeval.metrics"]
    mymetric = "my_package.module:MyMetric"   # a subclass of nlgeval.metrics.Metric

``get_metric("bleu:lowercase=true")`` parses the spec and returns a configured instance.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from nlgeval.errors import InputError
from nlgeval.metrics.base import Metric, parse_spec
from nlgeval.metrics.bleu import BLEUMetric
from nlgeval.metrics.chrf import CHRFMetric, CHRFPlusPlusMetric
from nlgeval.metrics.neural import NEURAL_METRICS, missing_extra_error, neural_available
from nlgeval.metrics.nist import NISTMetric
from nlgeval.metrics.rouge import Rouge1, Rouge2, RougeL, RougeLsum
from nlgeval.metrics.simple import EditDistanceMetric, LengthMetric
from nlgeval.metrics.ter import TERMetric

ENTRY_POINT_GROUP = "nlgeval.metrics"

BUILTIN: dict[str, type[Metric]] = {
    cls.name: cls
    for cls in (
        BLEUMetric,
        CHRFMetric,
        CHRFPlusPlusMetric,
        TERMetric,
        Rouge1,
        Rouge2,
        RougeL,
        RougeLsum,
        NISTMetric,
        EditDistanceMetric,
        LengthMetric,
    )
}
# model-based metrics (optional extra ``neural``): built in when their packages are installed,
# otherwise unlisted, and asking for one names the extra to install
BUILTIN.update({n: cls for n, cls in NEURAL_METRICS.items() if neural_available(n)})

_registered: dict[str, type[Metric]] = {}


def register_metric(cls: type[Metric], name: str | None = None) -> type[Metric]:
    """Register an adapter class at run time (usable as a class decorator).

    Parameters
    ----------
    cls : type[Metric]
        The adapter class.
    name : str, optional
        The name to register it under (default: ``cls.name``).

    Returns
    -------
    type[Metric]
        ``cls``, registered.

    Examples
    --------
    >>> from nlgeval.metrics.simple import LengthMetric
    >>> class Words(LengthMetric):
    ...     name = "words"
    >>> register_metric(Words).name
    'words'
    >>> "words" in available_metrics()
    True
    >>> del _registered["words"]  # leave the registry as it was
    """
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise TypeError(f"{cls!r} is not a subclass of nlgeval.metrics.Metric")
    _registered[name or cls.name] = cls
    return cls


def _plugins() -> dict[str, EntryPoint]:
    """Entry points of the ``nlgeval.metrics`` group (not loaded yet), by name."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load_plugin(name: str, ep: EntryPoint) -> type[Metric]:
    try:
        cls = ep.load()
    except Exception as exc:  # a broken plugin must not look like a missing metric
        raise InputError(
            f"metric plugin '{name}' ({ep.value}) could not be loaded: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise InputError(
            f"metric plugin '{name}' ({ep.value}) is not a subclass of "
            "nlgeval.metrics.Metric"
        )
    return cls


def available_metrics() -> list[str]:
    """Names of every metric: built-in, registered at run time, and installed plugins.

    Returns
    -------
    list of str
        The metric names.

    Examples
    --------
    >>> available_metrics()[:4]
    ['bleu', 'chrf', 'chrf++', 'ter']
    """
    names = list(BUILTIN)
    for n in list(_registered) + sorted(_plugins()):
        if n not in names:
            names.append(n)
    return names


def metric_class(name: str) -> type[Metric]:
    """The adapter class for a metric name (raises :class:`InputError` naming close matches).

    Parameters
    ----------
    name : str
        The metric name.

    Returns
    -------
    type[Metric]
        The adapter class.

    Examples
    --------
    >>> metric_class("chrf++").__name__
    'CHRFPlusPlusMetric'
    """
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        return BUILTIN[name]
    plugins = _plugins()
    if name in plugins:
        return _load_plugin(name, plugins[name])
    if name in NEURAL_METRICS:
        raise missing_extra_error(name)
    known = available_metrics()
    lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if name.lower() in lower:
        close = [lower[name.lower()]]
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise InputError(f"unknown metric '{name}' (available: {', '.join(known)}){hint}")


def get_metric(spec: str | Metric, **options: Any) -> Metric:
    """A configured metric from ``"name"`` or ``"name:key=value[,key=value]"``, with options
    also as keywords (``get_metric("bleu", lowercase=True)``).

    An option may be given in the spec or as a keyword, not both; keyword values are checked
    like spec values (``lowercase="yes"`` is True, ``max_ngram_order="x"`` an error).

    Parameters
    ----------
    spec : str or Metric
        ``"name"`` or ``"name:key=value[,key=value]"``; a metric instance is returned as is.
    **options
        Further options as keywords, checked like spec values (none with an instance).

    Returns
    -------
    Metric
        The configured metric.

    Examples
    --------
    >>> get_metric("bleu:lowercase=true").signature.split("|")[:4]
    ['case:lc', 'eff:no', 'tok:13a', 'smooth:exp']
    >>> get_metric("bleu", lowercase=True).spec
    'bleu:lowercase=true'
    >>> get_metric("rouge2", score="recall", use_stemmer=True).spec
    'rouge2:use_stemmer=true,score=recall'
    """
    if isinstance(spec, Metric):
        if options:
            raise InputError(f"metric '{spec.spec}' is already configured; give options with "
                             "its name instead (get_metric(name, **options))")
        return spec
    name, opts = parse_spec(spec)
    twice = sorted(set(opts) & set(options))
    if twice:
        raise InputError(f"metric '{spec}': option {', '.join(repr(k) for k in twice)} given "
                         "both in the spec and as a keyword")
    return metric_class(name)(**opts, **options)


def metric_label(metric: Metric, spelling: str | None = None) -> str:
    """The label of a metric in tables and reports: ``spelling`` (the user's own spec, as
    given) or else the canonical :attr:`~nlgeval.metrics.Metric.spec`, with a local model
    folder shown by its public name instead of its path.

    A spec may name a folder of this machine (``bertscore:model=/home/me/models/minilm``); a
    label is what users publish, so it shows the folder's name and the first 12 hex digits of
    the weights' SHA-256 instead (``model=local:minilm@53aa51172d14``; see
    :attr:`nlgeval.metrics.neural.ModelIdentity.public_name`). The full spec stays in the
    run's provenance (run.json records the specs as given). A metric class hides paths by
    defining ``public_spelling(spelling) -> str``; other labels are returned as they are.

    Examples:
        >>> metric_label(get_metric("bleu:lowercase=true"))
        'bleu:lowercase=true'
        >>> metric_label(get_metric("chrf"), "chrf:char_order=6")
        'chrf:char_order=6'
    """
    text = metric.spec if spelling is None else spelling
    public = getattr(metric, "public_spelling", None)
    return public(text) if callable(public) else text


def metric_labels(metrics: Sequence[Metric], spellings: Sequence[str] | None = None) -> list[str]:
    """Labels of the metrics of one run: the name where it is unambiguous (or, with
    ``spellings``, the user's spelling), the canonical spec where two metrics share a name --
    each through :func:`metric_label`, so that no label holds a local model path.

    Examples:
        >>> ms = [get_metric("bleu"), get_metric("chrf"), get_metric("chrf:char_order=4")]
        >>> metric_labels(ms)
        ['bleu', 'chrf', 'chrf:char_order=4']
        >>> metric_labels(ms[:1], ["BLEU "])
        ['BLEU ']
    """
    names = [m.name for m in metrics]
    if spellings is not None and len(spellings) != len(metrics):
        raise ValueError(f"{len(spellings)} spellings for {len(metrics)} metrics")
    out = []
    for k, m in enumerate(metrics):
        if names.count(m.name) > 1:
            out.append(metric_label(m))
        else:
            out.append(m.name if spellings is None else metric_label(m, spellings[k]))
    return out


def describe_metrics() -> list[dict[str, Any]]:
    """Name, direction, description and options of every available metric.

    Returns
    -------
    list of dict
        One dict per metric: ``name``, ``higher_is_better``, ``description`` and ``options``
        (each option's ``type``, ``default``, ``help``); ``name`` and ``error`` if it fails to load.

    Examples
    --------
    >>> bleu = describe_metrics()[0]
    >>> bleu["name"], bleu["options"]["tokenize"]["default"]
    ('bleu', '13a')
    """
    out: list[dict[str, Any]] = []
    for n in available_metrics():
        try:
            cls = metric_class(n)
        except InputError as exc:
            out.append({"name": n, "error": str(exc)})
            continue
        out.append(
            {
                "name": n,
                "higher_is_better": cls.higher_is_better,
                "description": cls.description,
                "options": {
                    k: {"type": o.type.__name__, "default": o.default, "help": o.help}
                    for k, o in cls.options.items()
                },
            }
        )
    return out
