"""``mode = "absolute"``: one output per trial, rated on each criterion's scale (verbal
descriptor or visual analogue scale, Kow & Belz 2012, LG-Eval); a Latin square over the
systems.

Examples
--------
>>> Absolute().name, Absolute().pairwise
('absolute', False)
"""

from __future__ import annotations

from nlgeval.experiment.modes.base import Mode


class Absolute(Mode):
    """The absolute mode: everything is the :class:`Mode` default.

    Examples
    --------
    >>> Absolute().template
    'modes/absolute.html'
    """

    name = "absolute"


MODE = Absolute()
