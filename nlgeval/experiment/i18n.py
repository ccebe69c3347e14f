"""The interface language catalogue: every evaluator-facing string, translatable.

gettext-style: the English text is the message id and a catalogue maps it to the translation
(missing entries fall back to English), used through Jinja's ``i18n`` extension
(``{{ _("...") }}``, ``ngettext``) and :func:`gettext_for` in Python. Placeholders are
``%(name)s``. A language is chosen with ``language = "de"`` in ``experiment.toml``; right-to-left
languages set ``dir="rtl"`` on the page, and every text being judged carries ``dir="auto"`` so
Arabic or Hebrew outputs read right-to-left in any interface language.

Shipped: English, German (``de``) and Arabic (``ar``, right to left; in
:mod:`nlgeval.experiment.i18n_ar`). Adding a language: copy the German catalogue below,
translate the values and add it to :data:`CATALOGUES` (and its code to :data:`RTL` if written
right to left); :func:`missing` lists the message ids a catalogue lacks (the test suite checks
every catalogue against the ids used in the templates and views).

Examples
--------
>>> translate("de", "Practice trial %(i)s of %(n)s", i=1, n=3)
'Übungsaufgabe 1 von 3'
>>> text_direction("ar"), text_direction("de")
('rtl', 'ltr')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nlgeval.experiment.i18n_ar import AR
from nlgeval.experiment.i18n_modes import MODES_AR, MODES_DE
from nlgeval.experiment.i18n_scales import DEFAULT_QUESTION, SCALES_AR, SCALES_DE

if TYPE_CHECKING:
    from nlgeval.experiment.config_types import CriterionConfig

RTL = frozenset({"ar", "he", "fa", "ur"})

DE: dict[str, str] = {
    "This is an online evaluation. Please open the personal link you were sent.":
        "Dies ist eine Online-Bewertung. Bitte öffnen Sie den persönlichen Link, den Sie "
        "erhalten haben.",
    "What you will judge": "Was Sie bewerten",
    "You will see %(practice)s, then %(trials)s.": "Sie sehen %(practice)s, dann %(trials)s.",
    "You will see %(trials)s.": "Sie sehen %(trials)s.",
    "%(num)s trial": "%(num)s Aufgabe",
    "%(num)s trials": "%(num)s Aufgaben",
    "%(num)s practice trial": "%(num)s Übungsaufgabe",
    "%(num)s practice trials": "%(num)s Übungsaufgaben",
    "You can stop at any time and come back to this link to continue where you left off.":
        "Sie können jederzeit unterbrechen und über diesen Link dort weitermachen, wo Sie "
        "aufgehört haben.",
    "Consent": "Einwilligung",
    "I have read the above and agree to take part.":
        "Ich habe das Obige gelesen und bin mit der Teilnahme einverstanden.",
    "Please tick the box to agree before you start.":
        "Bitte setzen Sie vor dem Start das Häkchen, um zuzustimmen.",
    "Start": "Starten",
    "Next": "Weiter",
    "Finish": "Abschließen",
    "Practice trial %(i)s of %(n)s": "Übungsaufgabe %(i)s von %(n)s",
    "%(num)s item remaining": "Noch %(num)s Aufgabe",
    "%(num)s items remaining": "Noch %(num)s Aufgaben",
    "This is a practice trial: it helps you get used to the task and is not part of the "
    "results.": "Dies ist eine Übungsaufgabe: Sie dient zum Eingewöhnen und zählt nicht zu den "
    "Ergebnissen.",
    "Please complete the parts marked below. Your other answers have been kept.":
        "Bitte ergänzen Sie die unten markierten Teile. Ihre übrigen Antworten wurden "
        "beibehalten.",
    "Instructions": "Anleitung",
    "Input": "Eingabe",
    "Text": "Text",
    "Text A": "Text A",
    "Text B": "Text B",
    "Text %(k)s": "Text %(k)s",
    "Move the slider or tick here to confirm your rating":
        "Schieberegler bewegen oder hier ankreuzen, um die Bewertung zu bestätigen",
    "Comment (optional)": "Kommentar (optional)",
    "Please choose a rating for “%(name)s”.": "Bitte wählen Sie eine Bewertung für „%(name)s“.",
    "Please move the slider for “%(name)s”, or tick the box to confirm your rating where it "
    "is.": "Bitte bewegen Sie den Schieberegler für „%(name)s“ oder setzen Sie das Häkchen, "
    "um die aktuelle Stellung zu bestätigen.",
    "Please pick the text you think is the odd one out.":
        "Bitte wählen Sie den Text, der Ihrer Meinung nach anders ist.",
    "Please keep the comment under %(n)s characters.":
        "Bitte halten Sie den Kommentar unter %(n)s Zeichen.",
    "Last step: a few questions": "Letzter Schritt: ein paar Fragen",
    "About you": "Über Sie",
    "Some answers are missing; they are marked below.":
        "Einige Antworten fehlen; sie sind unten markiert.",
    "(required)": "(Pflichtangabe)",
    "Please answer this question.": "Bitte beantworten Sie diese Frage.",
    "Please give a number.": "Bitte geben Sie eine Zahl an.",
    "Thank you": "Vielen Dank",
    "Your completion code": "Ihr Abschlusscode",
    "Continue": "Weiter",
    "I do not agree": "Ich stimme nicht zu",
    "You chose not to take part. Thank you for your time.":
        "Sie haben sich gegen die Teilnahme entschieden. Danke für Ihre Zeit.",
    "Thank you for your answers. This study is looking for other participants, so it ends "
    "here for you.": "Danke für Ihre Antworten. Diese Studie sucht andere Teilnehmende, "
    "daher endet sie hier für Sie.",
    "Your code": "Ihr Code",
    "Not found": "Nicht gefunden",
    "Not now": "Nicht jetzt",
    "Request refused": "Anfrage abgelehnt",
    "Too large": "Zu groß",
    "Something went wrong": "Etwas ist schiefgelaufen",
    "There is nothing here. Please check that you used your personal link exactly.":
        "Hier ist nichts. Bitte prüfen Sie, ob Sie Ihren persönlichen Link genau verwendet "
        "haben.",
    "That is not your current trial. Please continue from your personal link.":
        "Das ist nicht Ihre aktuelle Aufgabe. Bitte machen Sie über Ihren persönlichen Link "
        "weiter.",
    "This form has expired or did not come from this site (CSRF check failed). Go back to "
    "your personal link and try again.": "Dieses Formular ist abgelaufen oder stammt nicht von "
    "dieser Seite (CSRF-Prüfung fehlgeschlagen). Öffnen Sie Ihren persönlichen Link und "
    "versuchen Sie es erneut.",
    "Refused: %(why)s. Nothing was saved.": "Abgelehnt: %(why)s. Nichts wurde gespeichert.",
    "What you sent is too large. Please shorten your comment and try again.":
        "Das Gesendete ist zu groß. Bitte kürzen Sie Ihren Kommentar und versuchen Sie es "
        "erneut.",
    "The server could not handle this request. Your earlier answers are saved; please try "
    "again from your personal link.": "Der Server konnte diese Anfrage nicht bearbeiten. Ihre "
    "bisherigen Antworten sind gespeichert; bitte versuchen Sie es über Ihren persönlichen "
    "Link erneut.",
    "The questionnaire comes after the trials.": "Der Fragebogen kommt nach den Aufgaben.",
    "Take part": "Teilnehmen",
    "Press the button to get your tasks.": "Drücken Sie die Schaltfläche, um Ihre Aufgaben "
    "zu erhalten.",
    "This study is full: every trial set has been handed out. Thank you for your interest.":
        "Diese Studie ist voll: alle Aufgabensätze sind vergeben. Danke für Ihr Interesse.",
    "Skip to the form": "Zum Formular springen",
    # participant identity and capacity (issue 25)
    "The link you followed does not carry a valid participant id (%(names)s), so your "
    "answers could not be kept apart from other people's. Please open the study again from "
    "the platform's study page.": "Der Link, dem Sie gefolgt sind, enthält keine gültige "
    "Teilnehmerkennung (%(names)s), daher könnten Ihre Antworten nicht von denen anderer "
    "unterschieden werden. Bitte öffnen Sie die Studie erneut über die Studienseite der "
    "Plattform.",
    "This participant id has already taken part from another browser. Please continue in the "
    "browser where you started; if you cannot, contact the researcher.":
        "Mit dieser Teilnehmerkennung wurde bereits in einem anderen Browser teilgenommen. "
        "Bitte machen Sie in dem Browser weiter, in dem Sie begonnen haben; falls das nicht "
        "geht, wenden Sie sich an die Studienleitung.",
    "Too many people have signed up from your network in a short time. Please try again in "
    "a few minutes.": "Aus Ihrem Netzwerk haben sich in kurzer Zeit zu viele Personen "
    "angemeldet. Bitte versuchen Sie es in einigen Minuten erneut.",
    "Your answers came in faster than the texts can be read, so no completion code is shown. "
    "The researcher will review your submission.": "Ihre Antworten kamen schneller, als man "
    "die Texte lesen kann, daher wird kein Abschlusscode angezeigt. Die Studienleitung wird "
    "Ihre Teilnahme prüfen.",
    "This participant id has already ended its participation in this study.":
        "Mit dieser Teilnehmerkennung wurde die Teilnahme an dieser Studie bereits beendet.",
    "This study is full": "Diese Studie ist voll",
    "Every trial set has been handed out. Thank you for your interest.":
        "Alle Aufgabensätze sind vergeben. Vielen Dank für Ihr Interesse.",
    "Please return the study with this code": "Bitte geben Sie die Studie mit diesem Code zurück",
}

#: the interface catalogues, with the scale presets' wording (:mod:`.i18n_scales`) merged in
CATALOGUES: dict[str, dict[str, str]] = {"en": {}, "de": {**SCALES_DE, **MODES_DE, **DE},
                                         "ar": {**SCALES_AR, **MODES_AR, **AR}}
LANGUAGES = tuple(CATALOGUES)


def gettext_for(language: str) -> tuple[Callable[[str], str], Callable[[str, str, int], str]]:
    """``(gettext, ngettext)`` for a language: look-ups only; the caller fills ``%(name)s``
    placeholders (Jinja's new-style gettext does, and :func:`translate` below).

    Examples
    --------
    >>> gettext, ngettext = gettext_for("de")
    >>> gettext("Next"), ngettext("%(num)s trial", "%(num)s trials", 2)
    ('Weiter', '%(num)s Aufgaben')
    """
    cat = CATALOGUES.get(language, {})

    def gettext(msg: str) -> str:
        return cat.get(msg, msg)

    def ngettext(singular: str, plural: str, n: int) -> str:
        msg = singular if n == 1 else plural
        return cat.get(msg, msg)

    return gettext, ngettext


def translate(language: str, msg: str, **kw: object) -> str:
    """``msg`` in ``language`` with its ``%(name)s`` placeholders filled (English when the
    catalogue lacks it).

    Examples
    --------
    >>> translate("ar", "Start"), translate("en", "Text %(k)s", k=2)
    ('ابدأ', 'Text 2')
    """
    out = CATALOGUES.get(language, {}).get(msg, msg)
    return out % kw if kw else out


def text_direction(language: str) -> str:
    """``"rtl"`` for a right-to-left language (the page's ``dir``), else ``"ltr"``.

    Examples
    --------
    >>> text_direction("he"), text_direction("en")
    ('rtl', 'ltr')
    """
    return "rtl" if language.split("-")[0] in RTL else "ltr"


def missing(language: str, msgids: list[str]) -> list[str]:
    """Message ids a catalogue lacks (English needs none).

    Examples
    --------
    >>> missing("ar", ["Next", "a message nobody translated"])
    ['a message nobody translated']
    """
    if language == "en":
        return []
    cat = CATALOGUES.get(language, {})
    return [m for m in msgids if m not in cat]


@dataclass(frozen=True)
class CriterionWording:
    """What an evaluator reads of one criterion, in the interface language.

    Examples
    --------
    >>> CriterionWording("Qualität", "Wie gut?", "", [], "", "").name
    'Qualität'
    """

    name: str
    question: str
    definition: str
    options: list[tuple[str, str, str]]
    left_label: str
    right_label: str


def criterion_wording(language: str, c: CriterionConfig) -> CriterionWording:
    """The criterion's shown name (its ``label``, else its name, translated when the
    catalogue knows it), question (the default one translated), definition, scale options
    and slider end labels in ``language``: the scale presets' labels and descriptions come
    translated; texts the researcher wrote are shown as written (a percent sign is never
    taken for a placeholder).

    Examples
    --------
    >>> from nlgeval.experiment.config_types import CriterionConfig
    >>> c = CriterionConfig("quality", "How would you rate the quality of the text?", "",
    ...                     "vds", labels=("Bad", "Good"), values=(1.0, 2.0))
    >>> w = criterion_wording("de", c)
    >>> w.name, w.question, [label for _v, label, _d in w.options]
    ('Qualität', 'Wie bewerten Sie den Text in Bezug auf Qualität?', ['Schlecht', 'Gut'])
    """
    cat = CATALOGUES.get(language, {})

    def tr(text: str) -> str:
        return cat.get(text, text) if text else text

    name = getattr(c, "label", "") or tr(c.name)
    question = c.question
    if question == DEFAULT_QUESTION % {"name": c.name}:
        question = tr(DEFAULT_QUESTION) % {"name": name}
    return CriterionWording(
        name=name, question=tr(question), definition=tr(c.definition),
        options=[(v, tr(label), tr(d)) for v, label, d in c.options()],
        left_label=tr(c.left_label), right_label=tr(c.right_label))
