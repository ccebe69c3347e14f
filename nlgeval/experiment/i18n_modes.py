"""German and Arabic messages of the forms of the newer modes (the error spans of MQM and ESA,
best-worst scaling), merged into :data:`nlgeval.experiment.i18n.CATALOGUES`.

Examples
--------
>>> MODES_DE["Mark error"], MODES_AR["Major"]
('Fehler markieren', 'جسيم')
"""

from __future__ import annotations

MODES_DE: dict[str, str] = {
    "Best text": "Bester Text",
    "Worst text": "Schlechtester Text",
    "Please pick the best text.": "Bitte wählen Sie den besten Text.",
    "Please pick the worst text.": "Bitte wählen Sie den schlechtesten Text.",
    "The best and the worst text must be different texts.":
        "Der beste und der schlechteste Text müssen verschiedene Texte sein.",
    "Delete": "Löschen",
    "not in the text": "nicht im Text",
    "No errors marked yet.": "Noch keine Fehler markiert.",
    "Select the erroneous part of the text first.":
        "Wählen Sie zuerst den fehlerhaften Teil des Textes aus.",
    "Mark the errors in the text": "Markieren Sie die Fehler im Text",
    "Marking errors needs JavaScript: please turn it on for this page.":
        "Zum Markieren von Fehlern wird JavaScript benötigt: Bitte schalten Sie es für diese "
        "Seite ein.",
    "Select an erroneous part with the mouse or your finger, or with the keyboard: focus the "
    "text, move with the arrow keys, hold Shift to select, and press Enter. Then choose the "
    "severity and press “Mark error”.":
        "Wählen Sie einen fehlerhaften Teil mit der Maus oder dem Finger aus, oder mit der "
        "Tastatur: Text fokussieren, mit den Pfeiltasten bewegen, mit gedrückter "
        "Umschalttaste auswählen und Enter drücken. Wählen Sie dann den Schweregrad und "
        "drücken Sie „Fehler markieren“.",
    "Error": "Fehler",
    "Category": "Kategorie",
    "Severity": "Schweregrad",
    "Minor": "Leicht",
    "Major": "Schwer",
    "Mark error": "Fehler markieren",
    "Add an error not in the text (e.g. something missing)":
        "Fehler hinzufügen, der nicht im Text steht (z. B. etwas fehlt)",
    "The text has no errors": "Der Text enthält keine Fehler",
    "Please mark the errors in the text, or tick the box if it has none.":
        "Bitte markieren Sie die Fehler im Text oder setzen Sie das Häkchen, wenn er keine "
        "enthält.",
    "Considering the errors you marked, how good is the text overall (0–100)?":
        "Wie gut ist der Text insgesamt, unter Berücksichtigung der markierten Fehler "
        "(0–100)?",
    "No meaning preserved": "Keine Bedeutung erhalten",
    "Perfect meaning and grammar": "Bedeutung und Grammatik perfekt",
}

MODES_AR: dict[str, str] = {
    "Best text": "أفضل نص",
    "Worst text": "أسوأ نص",
    "Please pick the best text.": "يُرجى اختيار أفضل نص.",
    "Please pick the worst text.": "يُرجى اختيار أسوأ نص.",
    "The best and the worst text must be different texts.":
        "يجب أن يكون أفضل نص وأسوأ نص نصّين مختلفين.",
    "Delete": "حذف",
    "not in the text": "ليس في النص",
    "No errors marked yet.": "لم تُحدَّد أي أخطاء بعد.",
    "Select the erroneous part of the text first.": "حدِّد الجزء الخاطئ من النص أولًا.",
    "Mark the errors in the text": "حدِّد الأخطاء في النص",
    "Marking errors needs JavaScript: please turn it on for this page.":
        "يتطلّب تحديد الأخطاء تفعيل JavaScript: يُرجى تفعيله لهذه الصفحة.",
    "Select an erroneous part with the mouse or your finger, or with the keyboard: focus the "
    "text, move with the arrow keys, hold Shift to select, and press Enter. Then choose the "
    "severity and press “Mark error”.":
        "حدِّد جزءًا خاطئًا بالفأرة أو بإصبعك، أو بلوحة المفاتيح: انتقل إلى النص، وتحرّك "
        "بمفاتيح الأسهم، واضغط Shift مع الأسهم للتحديد، ثم اضغط Enter. بعد ذلك اختر درجة "
        "الخطورة واضغط «تحديد الخطأ».",
    "Error": "خطأ",
    "Category": "الفئة",
    "Severity": "درجة الخطورة",
    "Minor": "طفيف",
    "Major": "جسيم",
    "Mark error": "تحديد الخطأ",
    "Add an error not in the text (e.g. something missing)":
        "إضافة خطأ غير موجود في النص (مثل شيء ناقص)",
    "The text has no errors": "لا يحتوي النص على أخطاء",
    "Please mark the errors in the text, or tick the box if it has none.":
        "يُرجى تحديد الأخطاء في النص، أو وضع علامة في المربع إن لم تكن فيه أخطاء.",
    "Considering the errors you marked, how good is the text overall (0–100)?":
        "مع مراعاة الأخطاء التي حدّدتها، ما مدى جودة النص إجمالًا (0–100)؟",
    "No meaning preserved": "لم يُحفَظ أي معنى",
    "Perfect meaning and grammar": "معنى وقواعد مثاليان",
}
