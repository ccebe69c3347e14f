"""Translations of what the scale presets and criterion defaults show: the labels and
descriptions of ``meteo5``, ``text5``, ``relative5`` and ``relative7``
(:mod:`nlgeval.experiment.scales`), the default criterion question, and the names of common
criteria (shown when a criterion has no ``label``). Message ids are the English texts, as in
:mod:`nlgeval.experiment.i18n`, which merges these into its catalogues.

The ``meteo5`` descriptions translate those given to evaluators in González-Corbelle et al.
(2023, Table 1); ``text5`` is the same scale worded for a textual input.

Examples
--------
>>> SCALES_DE["Very good"], SCALES_AR["No difference"]
('Sehr gut', 'لا فرق')
"""

from __future__ import annotations

#: the default question of a criterion without one (``%(name)s``: its shown name)
DEFAULT_QUESTION = "How would you rate the %(name)s of the text?"

SCALES_DE: dict[str, str] = {
    "Very bad": "Sehr schlecht",
    "Bad": "Schlecht",
    "Fair": "Mittelmäßig",
    "Good": "Gut",
    "Very good": "Sehr gut",
    "A is much better": "A ist viel besser",
    "A is better": "A ist besser",
    "A is slightly better": "A ist etwas besser",
    "No difference": "Kein Unterschied",
    "B is slightly better": "B ist etwas besser",
    "B is better": "B ist besser",
    "B is much better": "B ist viel besser",
    # no article: the name's gender is unknown ("die Qualität", "der Lesefluss")
    DEFAULT_QUESTION: "Wie bewerten Sie den Text in Bezug auf %(name)s?",
    "quality": "Qualität",
    "fluency": "Flüssigkeit",
    "adequacy": "Angemessenheit",
    "naturalness": "Natürlichkeit",
    "informativeness": "Informationsgehalt",
    "grammaticality": "Grammatikalität",
    "coherence": "Kohärenz",
    "faithfulness": "Treue zur Eingabe",
    "readability": "Lesbarkeit",
    "overall": "Gesamteindruck",
    # text5
    "The text is not readable and does not match the input; it states things the input "
    "does not support.": "Der Text ist nicht lesbar und passt nicht zur Eingabe; er behauptet "
    "Dinge, die die Eingabe nicht stützt.",
    "The text is not easy to read, even though what it says is correct, and it leaves out "
    "important information.": "Der Text ist nicht leicht zu lesen, auch wenn das Gesagte "
    "stimmt, und er lässt wichtige Informationen aus.",
    "The text is readable, but not very natural. What it says is in the input, but it is "
    "not complete enough.": "Der Text ist lesbar, aber nicht sehr natürlich. Was er sagt, "
    "steht in der Eingabe, aber er ist nicht vollständig genug.",
    "The text is well constructed, readable and natural, but it could have mentioned some "
    "other relevant information from the input.": "Der Text ist gut aufgebaut, lesbar und "
    "natürlich, hätte aber weitere relevante Informationen aus der Eingabe nennen können.",
    "The text is so readable, natural, complete and faithful to the input that it could "
    "have been written by a person.": "Der Text ist so lesbar, natürlich, vollständig und "
    "treu zur Eingabe, dass ihn ein Mensch geschrieben haben könnte.",
    # meteo5 (González-Corbelle et al. 2023, Table 1)
    "The description is not readable and does not match the data shown in the images, "
    "hallucinations are perceived in the generated text.": "Die Beschreibung ist nicht "
    "lesbar und passt nicht zu den in den Bildern gezeigten Daten; im erzeugten Text sind "
    "Halluzinationen zu erkennen.",
    "The description is not easy to read even though the content of the text is correct, "
    "but it ignores important information.": "Die Beschreibung ist nicht leicht zu lesen, "
    "obwohl der Inhalt des Textes stimmt, aber sie lässt wichtige Informationen aus.",
    "The description is readable, but not excessively natural. What is mentioned in the "
    "text is present in the data, but it is not complete enough.": "Die Beschreibung ist "
    "lesbar, aber nicht besonders natürlich. Was im Text erwähnt wird, ist in den Daten "
    "vorhanden, aber er ist nicht vollständig genug.",
    "The description is well constructed, readable, and natural, but perhaps it could have "
    "mentioned some other relevant data present in the images.": "Die Beschreibung ist gut "
    "aufgebaut, lesbar und natürlich, hätte aber vielleicht weitere relevante Daten aus den "
    "Bildern nennen können.",
    "The description is so readable, natural, complete, and consistent with the data shown "
    "that could be considered a human text.": "Die Beschreibung ist so lesbar, natürlich, "
    "vollständig und stimmig mit den gezeigten Daten, dass sie als von einem Menschen "
    "geschrieben gelten könnte.",
}

SCALES_AR: dict[str, str] = {
    "Very bad": "سيئ جدًا",
    "Bad": "سيئ",
    "Fair": "مقبول",
    "Good": "جيد",
    "Very good": "جيد جدًا",
    "A is much better": "النص A أفضل بكثير",
    "A is better": "النص A أفضل",
    "A is slightly better": "النص A أفضل قليلًا",
    "No difference": "لا فرق",
    "B is slightly better": "النص B أفضل قليلًا",
    "B is better": "النص B أفضل",
    "B is much better": "النص B أفضل بكثير",
    DEFAULT_QUESTION: "كيف تقيّم %(name)s في هذا النص؟",
    "quality": "الجودة",
    "fluency": "الطلاقة",
    "adequacy": "الملاءمة",
    "naturalness": "الطبيعية",
    "informativeness": "الإفادة",
    "grammaticality": "السلامة النحوية",
    "coherence": "الترابط",
    "faithfulness": "الأمانة للمدخلات",
    "readability": "سهولة القراءة",
    "overall": "التقييم العام",
    # text5
    "The text is not readable and does not match the input; it states things the input "
    "does not support.": "النص غير مقروء ولا يطابق المدخلات؛ ويذكر أشياء لا تدعمها المدخلات.",
    "The text is not easy to read, even though what it says is correct, and it leaves out "
    "important information.": "النص ليس سهل القراءة، مع أن ما يقوله صحيح، ويُغفل معلومات "
    "مهمة.",
    "The text is readable, but not very natural. What it says is in the input, but it is "
    "not complete enough.": "النص مقروء لكنه ليس طبيعيًا جدًا. ما يقوله موجود في المدخلات، "
    "لكنه ليس كاملًا بما يكفي.",
    "The text is well constructed, readable and natural, but it could have mentioned some "
    "other relevant information from the input.": "النص جيد البناء ومقروء وطبيعي، لكنه كان "
    "يمكن أن يذكر معلومات أخرى ذات صلة من المدخلات.",
    "The text is so readable, natural, complete and faithful to the input that it could "
    "have been written by a person.": "النص مقروء وطبيعي وكامل وأمين للمدخلات إلى حد أنه "
    "كان يمكن أن يكتبه إنسان.",
    # meteo5 (González-Corbelle et al. 2023, Table 1)
    "The description is not readable and does not match the data shown in the images, "
    "hallucinations are perceived in the generated text.": "الوصف غير مقروء ولا يطابق "
    "البيانات المعروضة في الصور، وتظهر في النص المولَّد معلومات مختلَقة.",
    "The description is not easy to read even though the content of the text is correct, "
    "but it ignores important information.": "الوصف ليس سهل القراءة مع أن محتوى النص صحيح، "
    "لكنه يتجاهل معلومات مهمة.",
    "The description is readable, but not excessively natural. What is mentioned in the "
    "text is present in the data, but it is not complete enough.": "الوصف مقروء لكنه ليس "
    "طبيعيًا بما يكفي. ما يذكره النص موجود في البيانات، لكنه ليس كاملًا بما يكفي.",
    "The description is well constructed, readable, and natural, but perhaps it could have "
    "mentioned some other relevant data present in the images.": "الوصف جيد البناء ومقروء "
    "وطبيعي، لكن ربما كان يمكن أن يذكر بيانات أخرى ذات صلة موجودة في الصور.",
    "The description is so readable, natural, complete, and consistent with the data shown "
    "that could be considered a human text.": "الوصف مقروء وطبيعي وكامل ومتسق مع البيانات "
    "المعروضة إلى حد أنه يمكن عدّه نصًا كتبه إنسان.",
}
