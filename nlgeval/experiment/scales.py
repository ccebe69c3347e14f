"""Preset rating scales (verbal descriptor scales) an experiment config can name.

``meteo5`` is the 5-point verbal descriptor scale with the descriptions evaluators were given in
González-Corbelle, Alonso-Moral, Crujeiras & Bugarín-Diz (2023), "An Empirical Study on the
Number of Items in Human Evaluation of Automatically Generated Texts", Table 1 ("Instructions
given to the evaluators to score the texts based on their fluidity, naturalness, and content").
``text5`` is the same scale worded for a textual input (no "images").
``relative5`` / ``relative7`` are strength-of-preference scales for relative judgements (Kow &
Belz 2012, section 2.2): lower values favour text A (shown on the left), higher values text B.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScalePreset:
    """Labels, descriptions and numeric values of a verbal descriptor scale.

    Examples
    --------
    >>> p = PRESETS["text5"]
    >>> len(p.labels), p.relative, any("image" in d for d in p.descriptions)
    (5, False, False)
    """

    labels: tuple[str, ...]
    values: tuple[float, ...]
    descriptions: tuple[str, ...] = ()
    relative: bool = False
    source: str = ""


PRESETS: dict[str, ScalePreset] = {
    "meteo5": ScalePreset(
        labels=("Very bad", "Bad", "Fair", "Good", "Very good"),
        values=(1, 2, 3, 4, 5),
        descriptions=(
            "The description is not readable and does not match the data shown in the images, "
            "hallucinations are perceived in the generated text.",
            "The description is not easy to read even though the content of the text is correct, "
            "but it ignores important information.",
            "The description is readable, but not excessively natural. What is mentioned in the "
            "text is present in the data, but it is not complete enough.",
            "The description is well constructed, readable, and natural, but perhaps it could "
            "have mentioned some other relevant data present in the images.",
            "The description is so readable, natural, complete, and consistent with the data "
            "shown that could be considered a human text.",
        ),
        source="González-Corbelle et al. (2023), Table 1",
    ),
    # meteo5's descriptions with "the data shown in the images" said of a textual input
    "text5": ScalePreset(
        labels=("Very bad", "Bad", "Fair", "Good", "Very good"),
        values=(1, 2, 3, 4, 5),
        descriptions=(
            "The text is not readable and does not match the input; it states things the "
            "input does not support.",
            "The text is not easy to read, even though what it says is correct, and it leaves "
            "out important information.",
            "The text is readable, but not very natural. What it says is in the input, but it "
            "is not complete enough.",
            "The text is well constructed, readable and natural, but it could have mentioned "
            "some other relevant information from the input.",
            "The text is so readable, natural, complete and faithful to the input that it "
            "could have been written by a person.",
        ),
        source="adapted from González-Corbelle et al. (2023), Table 1, for textual inputs",
    ),
    "relative5": ScalePreset(
        labels=(
            "A is much better",
            "A is slightly better",
            "No difference",
            "B is slightly better",
            "B is much better",
        ),
        values=(-2, -1, 0, 1, 2),
        relative=True,
    ),
    "relative7": ScalePreset(
        labels=(
            "A is much better",
            "A is better",
            "A is slightly better",
            "No difference",
            "B is slightly better",
            "B is better",
            "B is much better",
        ),
        values=(-3, -2, -1, 0, 1, 2, 3),
        relative=True,
    ),
}
