"""A small ready-to-run experiment directory (``nlgeval experiment init DIR``) to copy from.

LG-Eval's documentation is a walk-through with example experiments rather than a list of options
(Kow & Belz 2012, section 3.2); ``init`` does the same: it writes a working ``experiment.toml``
with every option commented, plus toy outputs, for absolute, relative or triangle judgements,
MQM or ESA error spans (Freitag et al. 2021; Kocmi et al. 2024) or best-worst scaling
(Louviere et al. 2015). The error-span and best-worst examples are crowd studies for six
evaluators with an open sign-up link and a consent form, ready for ``nlgeval experiment
simulate`` (a dry run before anyone is paid).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd

from nlgeval.errors import InputError

_WEATHER = [
    ("Cloudy in the north, sunny in the south.", "Clouds in the north and sun in the south.",
     "North cloudy south sun sun."),
    ("Rain spreading from the west in the afternoon.", "In the afternoon rain spreads from the "
     "west.", "Rain west afternoon spreading the."),
    ("Clear skies everywhere at night.", "The night sky will be clear across the region.",
     "Clear clear skies night everywhere."),
    ("Fog in the valleys in the morning.", "Morning fog is expected in valleys.",
     "Valleys fog morning the in."),
    ("Showers on the coast, dry inland.", "Showers along the coast while inland stays dry.",
     "Coast showers dry inland inland."),
    ("Snow above 800 metres.", "Snow is expected above 800 m.", "Snow 800 above metres the."),
    ("Sunny spells with a few clouds.", "Mostly sunny, a few clouds.", "Sunny clouds few spells."),
]
_INPUTS = [
    "north: cloudy; south: sunny", "west: rain (afternoon)", "all: clear (night)",
    "valleys: fog (morning)", "coast: showers; inland: dry", "mountains: snow > 800 m",
    "all: sunny spells, some clouds",
]
_SYSTEMS = ("human", "neural", "template")
MODES = ("absolute", "relative", "triangle", "mqm", "esa", "bws")
ExampleMode = Literal["absolute", "relative", "triangle", "mqm", "esa", "bws"]
_TITLES = {"absolute": "Weather forecast quality", "relative": "Which forecast is better?",
           "triangle": "Spot the odd forecast", "mqm": "Mark the errors in weather forecasts",
           "esa": "Error spans and a score for weather forecasts",
           "bws": "Best and worst weather forecasts"}
_WHAT = {"absolute": "one text to judge", "relative": "two texts, A and B, to compare",
         "triangle": "three texts: pick the one by a different author",
         "mqm": "one text: mark each error in it, with its category and severity",
         "esa": "one text: mark its errors, then give it a score from 0 to 100",
         "bws": "four texts: pick the best and the worst"}

_HEADER = '''# nlgeval experiment: {title}
# Serve it with:  nlgeval experiment create DIR  &&  nlgeval serve DIR
title = "{title}"
mode = "{mode}"            # absolute | relative | triangle | mqm | esa | bws
outputs = "outputs.csv"    # system, item, text (nlgeval's canonical outputs table)
context = "context.csv"    # item, text: the input shown above the outputs (optional)
seed = 7                   # seeds the Latin square and every evaluator's trial order
comments = true            # optional free-text comment per trial
thank_you = "Thank you! Your judgements have been saved. You can close this page."
introduction = """
Thank you for helping us evaluate **weather forecasts** written by people and by computer
programs. Each page shows the weather data (the *input*) and {what}.

There are no right or wrong answers: we want your own judgement. It takes about 5 minutes.
"""
instructions = """
Read the input, then the text{s}, and answer each question. Use the whole scale.
"""
'''

_ABSOLUTE = '''evaluators = 3              # a multiple of the number of systems (Latin square)
practice = 1                # practice trials first (stored, flagged, never in the results)
practice_items = ["p1"]     # items kept for practice only

[[criteria]]
name = "quality"
question = "How good is this weather forecast?"
definition = "How readable, natural, complete and faithful to the input the text is."
tool = "vds"                # verbal descriptor scale
scale = "text5"             # preset: the 5-point scale of González-Corbelle et al. (2023,
                            # Table 1) worded for a textual input ("meteo5": the original)

[[criteria]]
name = "fluency"
question = "How fluent is the text?"
definition = "How well the text reads, regardless of its content."
tool = "vas"                # visual analogue scale (slider); must be moved or confirmed
min = 0
max = 100
left_label = "not fluent at all"
right_label = "perfectly fluent"
polarity = "monopolar"
'''

_RELATIVE = '''evaluators = 3              # a multiple of the number of system pairs
practice = 1
practice_items = ["p1"]

[[criteria]]
name = "fluency"
question = "Which text reads better, and by how much?"
definition = "How well the text reads, regardless of its content."
tool = "vas"                # bipolar slider from "A much better" to "B much better"
left_label = "A reads much better"
right_label = "B reads much better"

[[criteria]]
name = "adequacy"
question = "Which text describes the input better?"
tool = "vds"
scale = "relative5"         # A much better ... B much better
'''

_TRIANGLE = '''[triangle]
questionnaire = "questionnaire.csv"   # from `nlgeval triangle design` (judge, position, item, ...)
question = "Two of these forecasts were written by the same author. Which one is different?"
'''

_CROWD = '''evaluators = 6              # trial sets; the open sign-up link hands them out in turn

[crowd]                     # a crowd study (Prolific, MTurk): open sign-up link, consent
consent = "Your answers are stored without your name and used for research only."
completion_code = "WEATHER1"
min_trial_ms = 0            # never withhold the code for fast answers (raise it for real)
'''

_MQM = '''
[mqm]                       # error spans, MQM (Freitag et al. 2021); weights: theirs
categories = ["Accuracy/Addition", "Accuracy/Omission", "Accuracy/Mistranslation",
              "Fluency/Grammar", "Fluency/Punctuation", "Fluency/Spelling", "Style/Awkward",
              "Other", "Non-translation"]
severities = ["minor", "major"]
'''

_ESA = '''
[esa]                       # error spans, then a 0-100 score (Kocmi et al. 2024)
left_label = "No meaning preserved"
right_label = "Perfect meaning and grammar"
'''

_BWS = '''
[bws]                       # best-worst scaling (Louviere et al. 2015)
tuple_size = 4              # outputs per tuple; each output in the same number of tuples
raters = 2                  # evaluators per tuple
criterion = "quality"       # the name of the counting scores in the export
question = "Which forecast is the best, and which is the worst?"
'''

_QUESTIONNAIRE = '''
[[questionnaire]]
name = "native_speaker"
question = "Is English your first language?"
type = "choice"
options = ["yes", "no"]
required = true

[[questionnaire]]
name = "remarks"
question = "Anything else you would like to tell us?"
type = "text"
'''


def _outputs(mode: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The toy outputs (``system, item, text``) and inputs (``item, text``); best-worst
    scaling gets two more systems (a copy of the input, a forecast cut short), since a tuple
    holds four outputs of one input."""
    n = 6
    rows = []
    for i, texts in enumerate(_WEATHER[:n + 1], 1):
        item = f"w{i}" if i <= n else "p1"
        for s, t in zip(_SYSTEMS, texts, strict=True):
            rows.append({"system": s, "item": item, "text": t})
        if mode == "bws":
            rows.append({"system": "copy", "item": item, "text": _INPUTS[i - 1]})
            words = texts[0].split()
            rows.append({"system": "cut", "item": item,
                         "text": " ".join(words[:max(2, len(words) // 2)]) + " ..."})
    outputs = pd.DataFrame(rows)
    if mode in ("mqm", "esa", "bws"):
        outputs = outputs[outputs["item"] != "p1"]  # no practice trials in these examples
    ctx = pd.DataFrame({"item": [f"w{i}" for i in range(1, n + 1)] + ["p1"],
                        "text": _INPUTS[:n] + [_INPUTS[n]]})
    return outputs, ctx


def _mode_part(mode: str, directory: Path, outputs: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The mode's part of ``experiment.toml`` (and, for triangle, its questionnaire file)."""
    if mode == "absolute":
        return _ABSOLUTE, outputs
    if mode == "relative":
        return _RELATIVE, outputs
    if mode == "triangle":
        from nlgeval.triangle.design import triangle_design

        outputs = outputs[outputs["system"].isin(["human", "neural"])]
        q = triangle_design(6, seed=7, pool=outputs[outputs["item"] != "p1"],
                            source_a="human", source_b="neural")
        q = q[[c for c in q.columns if not c.startswith("text_")]]
        q.to_csv(directory / "questionnaire.csv", index=False)
        return _TRIANGLE, outputs
    return _CROWD + {"mqm": _MQM, "esa": _ESA, "bws": _BWS}[mode], outputs


def write_example(
    directory: str | Path,
    mode: ExampleMode = "absolute",
    *,
    overwrite: bool = False,
) -> Path:
    """Write an example experiment directory and return its path.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.experiment.config import load_config
    >>> tmp = tempfile.TemporaryDirectory()
    >>> d = write_example(tmp.name + "/study", "relative")
    >>> sorted(p.name for p in d.iterdir())
    ['context.csv', 'experiment.toml', 'outputs.csv']
    >>> load_config(d).mode
    'relative'
    >>> cfg = load_config(write_example(tmp.name + "/bws", "bws"))
    >>> cfg.mode, cfg.evaluators, cfg.crowd.open_link
    ('bws', 6, True)
    >>> tmp.cleanup()
    """
    directory = Path(directory)
    if (directory / "experiment.toml").exists() and not overwrite:
        raise InputError("already holds an experiment.toml (use --force to overwrite)",
                         file=directory)
    if mode not in MODES:
        raise InputError(f"unknown mode '{mode}' ({', '.join(MODES)})")
    directory.mkdir(parents=True, exist_ok=True)
    outputs, ctx = _outputs(mode)
    text = _HEADER.format(title=_TITLES[mode], mode=mode, what=_WHAT[mode],
                          s="" if mode in ("absolute", "mqm", "esa") else "s")
    part, outputs = _mode_part(mode, directory, outputs)
    text += part + _QUESTIONNAIRE
    (directory / "experiment.toml").write_text(text, encoding="utf-8")
    outputs.to_csv(directory / "outputs.csv", index=False)
    ctx.to_csv(directory / "context.csv", index=False)
    return directory
