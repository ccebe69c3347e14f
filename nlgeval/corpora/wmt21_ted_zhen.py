"""Entry point of the published corpus ``wmt21-ted-zhen`` (see :mod:`nlgeval.corpora.wmt21_ted`).

``load`` is :func:`nlgeval.corpora.wmt21_ted.load_zhen` itself (not a wrapper defined here), so
the parsed-corpus cache keys on the source of :mod:`nlgeval.corpora.wmt21_ted` and of the
modules it lists in ``PARSED_WITH``, where the parsing code lives.
"""

from nlgeval.corpora.wmt21_ted import load_zhen as load

__all__ = ["load"]
