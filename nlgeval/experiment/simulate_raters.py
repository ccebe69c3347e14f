"""The simulated evaluators of ``nlgeval experiment simulate``: how each kind answers a trial.

Three behaviours, for a dry run of a study's design, quality control and analysis before
anyone is paid:

- ``diligent``: every output has a latent quality per system (in [0, 1]); an answer is that
  quality plus an item effect (shared by every rater), the rater's own bias and noise, placed
  on the criterion's scale (a verbal descriptor scale takes its nearest point). A relative
  trial places the difference of the two systems' qualities on the preference scale; a
  triangle trial finds the odd text with a probability that grows with the difference of the
  two sources' qualities. A repeated output gets the same answer (the same error spans), a
  degraded copy the bottom of the scale (error spans: more, all major), a known-answer
  triangle its odd text: diligent raters pass every attention check, and the systems' ranking
  by quality is what an analysis should recover.
- ``spammer``: every answer uniformly at random over the scale (or the options), checks too.
- ``attention-fail``: main trials at random, and every attention check the wrong way (a
  repeat far from the first answer, a degraded copy rated at the top or marked without
  errors, a wrong odd text), so
  the study's quality flags (:mod:`nlgeval.experiment.quality`) should catch them.

Examples
--------
>>> import numpy as np
>>> from nlgeval.experiment.views import TrialView
>>> r = SimulatedRater("diligent", np.random.default_rng(1), {"A": 0.9, "B": 0.1}, {"i1": 0.0})
>>> r.fraction(TrialView(1, 1, False, "i1", "A", None, None, None), "q") > 0.7
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from nlgeval.errors import InputError
from nlgeval.experiment.views import TrialView

BEHAVIOURS = ("diligent", "spammer", "attention-fail")
NOISE_SD = 0.08  # a diligent rater's noise per answer, on a [0, 1] scale
ITEM_SD = 0.10  # the spread of item effects (some inputs are harder for every system)
BIAS_SD = 0.05  # the spread of diligent raters' own leniency


def behaviour_mix(spec: str | Mapping[str, int] | None, evaluators: int,
                  rng: np.random.Generator) -> tuple[str, ...]:
    """The behaviour of each of ``evaluators`` simulated evaluators, in a seeded random order.

    ``spec`` counts behaviours (``"diligent=4,spammer=1,attention-fail=1"`` or a mapping); those
    not counted are diligent, and a spec that counts ``diligent`` must add up to
    ``evaluators``. ``None`` makes everyone diligent.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(behaviour_mix("spammer=1,attention-fail=1", 4, np.random.default_rng(0)))
    ['attention-fail', 'diligent', 'diligent', 'spammer']
    """
    counts = _parse_mix(spec)
    given = sum(counts.values())
    if given > evaluators or ("diligent" in counts and given != evaluators):
        raise InputError(f"the behaviours count {given} evaluator(s) but {evaluators} are "
                         f"simulated", option="--behaviour")
    counts["diligent"] = counts.get("diligent", 0) + evaluators - given
    kinds = [b for b in BEHAVIOURS for _ in range(counts.get(b, 0))]
    return tuple(kinds[i] for i in rng.permutation(len(kinds)))


def _parse_mix(spec: str | Mapping[str, int] | None) -> dict[str, int]:
    if spec is None or spec == "":
        return {}
    if isinstance(spec, str):
        out: dict[str, int] = {}
        for part in spec.split(","):
            name, _eq, n = part.strip().partition("=")
            try:
                out[name.strip()] = int(n) if n.strip() else 1
            except ValueError:
                raise InputError(f"'{part.strip()}' is not BEHAVIOUR=COUNT",
                                 option="--behaviour") from None
        spec = out
    bad = sorted(set(spec) - set(BEHAVIOURS))
    if bad or any(int(v) < 0 for v in spec.values()):
        raise InputError(f"unknown behaviour or negative count in {dict(spec)} (behaviours: "
                         f"{', '.join(BEHAVIOURS)})", option="--behaviour")
    return {k: int(v) for k, v in spec.items()}


def default_qualities(systems: list[str]) -> dict[str, float]:
    """Latent qualities evenly spaced from 0.8 (the first system) down to 0.2 (the last).

    Examples
    --------
    >>> default_qualities(["human", "neural", "template"])
    {'human': 0.8, 'neural': 0.5, 'template': 0.2}
    """
    k = len(systems)
    return {s: round(0.8 - 0.6 * i / max(k - 1, 1), 6) for i, s in enumerate(systems)}


@dataclass
class SimulatedRater:
    """One simulated evaluator (see the module docstring): ``behaviour``, its random
    generator, the systems' latent ``quality`` and the shared ``item_effect``. It remembers
    its answers to main trials, so a repeat check can be answered the same (or, failing on
    purpose, the opposite) way.

    Examples
    --------
    >>> import numpy as np
    >>> r = SimulatedRater("spammer", np.random.default_rng(0), {"A": 0.5}, {})
    >>> 0.0 <= r.fraction(TrialView(1, 1, False, "i1", "A", None, None, None), "q") <= 1.0
    True
    """

    behaviour: str
    rng: np.random.Generator
    quality: Mapping[str, float]
    item_effect: Mapping[str, float]
    bias: float = 0.0
    memory: dict[tuple[str, str, str | None, str], float] = field(default_factory=dict)
    marked: dict[tuple[str, str], list[dict[str, object]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.behaviour == "diligent":
            self.bias = float(self.rng.normal(0.0, BIAS_SD))

    @property
    def careless(self) -> bool:
        """Answers main trials at random (spammers and attention-check failers)."""
        return self.behaviour != "diligent"

    def q(self, system: str) -> float:
        """The latent quality of ``system`` (0.5 for a system without one)."""
        return float(self.quality.get(system, 0.5))

    def fraction(self, t: TrialView, criterion: str) -> float:
        """Where on a rating scale the answer to ``criterion`` goes, from 0 (the scale's
        bottom) to 1 (its top); on a relative scale 1 means "B (right) much better"."""
        if self.behaviour == "spammer":
            return float(self.rng.uniform())
        d = t.details or {}
        if t.qc_kind == "degraded":
            if "degraded_slot" in d:  # relative: slot 1 is the degraded copy on the left
                good = 0.97 if int(d["degraded_slot"]) == 1 else 0.03
            else:
                good = 0.03
            return 1.0 - good if self.careless else good
        key = (t.item, t.system, t.system_b, criterion)
        if t.qc_kind == "repeat" and key in self.memory:
            first = self.memory[key]
            return (0.0 if first >= 0.5 else 1.0) if self.careless else first
        v = float(self.rng.uniform()) if self.careless else self._latent(t)
        if t.qc_kind is None:
            self.memory[key] = v
        return v

    def _latent(self, t: TrialView) -> float:
        noise = float(self.rng.normal(0.0, NOISE_SD))
        if t.system_b:
            v = 0.5 + (self.q(t.system_b) - self.q(t.system)) / 2 + noise
        else:
            v = self.q(t.system) + float(self.item_effect.get(t.item, 0.0)) + self.bias + noise
        return min(1.0, max(0.0, v))

    def odd_one_out(self, t: TrialView) -> int:
        """The text (1, 2 or 3) picked as the odd one out of a triangle trial."""
        d = t.details or {}
        odd = int(d.get("odd_position", 1))
        wrong = [k for k in (1, 2, 3) if k != odd]
        if self.behaviour == "spammer" or (self.careless and t.qc_kind is None):
            return int(self.rng.integers(1, 4))
        if self.careless:  # an attention-check failer on a known-answer triangle
            return int(self.rng.choice(wrong))
        sources = list(dict.fromkeys(d.get("sources", [])))
        gap = abs(self.q(sources[0]) - self.q(sources[-1])) if len(sources) > 1 else 1.0
        p = 1.0 if t.qc_kind else 1 / 3 + 2 / 3 * min(1.0, 2 * gap)
        return odd if self.rng.uniform() < p else int(self.rng.choice(wrong))

    def best_worst(self, t: TrialView) -> tuple[int, int]:
        """The texts (1, 2, ...) picked as the best and the worst of a best-worst tuple: a
        diligent rater by the outputs' latent qualities plus noise, the others at random."""
        d = t.details or {}
        shown = list(d.get("sources", []))
        if self.careless:
            best, worst = self.rng.choice(len(shown), size=2, replace=False)
            return int(best) + 1, int(worst) + 1
        u = np.array([self.q(s) for s in shown]) + self.rng.normal(0.0, NOISE_SD, len(shown))
        return int(np.argmax(u)) + 1, int(np.argmin(u)) + 1

    def error_spans(self, t: TrialView, text: str, categories: list[str],
                    severities: list[str]) -> list[dict[str, object]]:
        """Error spans for an MQM or ESA trial (``text``: the output shown), on whole words at
        random positions: a diligent rater marks about ``4 x (1 - quality)`` errors, major
        ones with probability ``1 - quality``; the others mark 0 to 3 errors of random
        severity. Attention checks: a diligent rater marks a repeated output's errors again
        and, on a degraded copy, two errors more than on the original, all major; an
        attention-check failer marks no error on a degraded copy and, on a repeat, none
        (the original had two or more) or three major errors more; a spammer, at random."""
        key = (t.item, t.system)
        if t.qc_kind in ("repeat", "degraded") and self.behaviour != "spammer":
            return self._check_spans(t, text, self.marked.get(key, []), categories,
                                     severities)
        spans = self._random_spans(t, text, categories, severities)
        if t.qc_kind is None:
            self.marked[key] = spans
        return spans

    def _check_spans(self, t: TrialView, text: str, first: list[dict[str, object]],
                     categories: list[str], severities: list[str]
                     ) -> list[dict[str, object]]:
        """The spans of a repeat or a degraded copy given those of the original."""
        if t.qc_kind == "repeat" and not self.careless:
            return [dict(s) for s in first]
        if t.qc_kind == "degraded" and self.careless:
            return []
        if t.qc_kind == "repeat" and len(first) >= 2:
            return []
        n = len(first) + (3 if t.qc_kind == "repeat" else 2)
        extra = [] if t.qc_kind == "degraded" else [dict(s) for s in first]
        sev = "major" if "major" in severities else severities[-1]
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        taken = {(s["start"], s["end"]) for s in extra}
        free = [w for w in words if w not in taken]
        k = min(n - len(extra), len(free))
        for w in sorted(self.rng.choice(len(free), size=k, replace=False)) if k else []:
            start, end = free[int(w)]
            extra.append({"start": start, "end": end, "quote": text[start:end],
                          "severity": sev, "category": self.pick(categories)})
        if len(extra) < n:  # more errors than words: one not located (missing content)
            extra.append({"start": None, "end": None, "severity": sev,
                          "category": self.pick(categories)})
        return extra

    def _random_spans(self, t: TrialView, text: str, categories: list[str],
                      severities: list[str]) -> list[dict[str, object]]:
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        if self.careless:
            n, p_major = int(self.rng.integers(0, 4)), 0.5
        else:
            q = self.q(t.system)
            n, p_major = int(self.rng.poisson(4 * (1 - q))), 1 - q
        n = min(n, len(words))
        spans: list[dict[str, object]] = []
        for w in sorted(self.rng.choice(len(words), size=n, replace=False)) if n else []:
            start, end = words[int(w)]
            major = "major" in severities and self.rng.uniform() < p_major
            spans.append({"start": start, "end": end, "quote": text[start:end],
                          "severity": "major" if major else severities[0],
                          "category": self.pick(categories)})
        return spans

    def pick(self, options: list[str]) -> str:
        """One of ``options`` uniformly (a question the model has no view on)."""
        return options[int(self.rng.integers(len(options)))]
