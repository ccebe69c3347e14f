"""The Arabic interface catalogue (Modern Standard Arabic), a right-to-left language.

Message ids are the English texts (see :mod:`nlgeval.experiment.i18n`). Arabic has six plural
forms; the two-form ``ngettext`` used here picks the singular for 1 and the plural otherwise,
so counts are written as "number + noun" phrases that read correctly for any number
("عدد المهام المتبقية: %(num)s").

Examples
--------
>>> AR["Start"]
'ابدأ'
"""

from __future__ import annotations

AR: dict[str, str] = {
    "This is an online evaluation. Please open the personal link you were sent.":
        "هذا تقييم عبر الإنترنت. يرجى فتح الرابط الشخصي الذي أُرسل إليك.",
    "What you will judge": "ما ستقيّمه",
    "You will see %(practice)s, then %(trials)s.": "سترى %(practice)s، ثم %(trials)s.",
    "You will see %(trials)s.": "سترى %(trials)s.",
    "%(num)s trial": "مهمة واحدة (%(num)s)",
    "%(num)s trials": "مهام عددها %(num)s",
    "%(num)s practice trial": "مهمة تدريبية واحدة (%(num)s)",
    "%(num)s practice trials": "مهام تدريبية عددها %(num)s",
    "You can stop at any time and come back to this link to continue where you left off.":
        "يمكنك التوقف في أي وقت والعودة إلى هذا الرابط لمتابعة ما بدأته من حيث توقفت.",
    "Consent": "الموافقة",
    "I have read the above and agree to take part.": "قرأتُ ما سبق وأوافق على المشاركة.",
    "Please tick the box to agree before you start.":
        "يرجى تحديد المربع للموافقة قبل أن تبدأ.",
    "Start": "ابدأ",
    "Next": "التالي",
    "Finish": "إنهاء",
    "Practice trial %(i)s of %(n)s": "المهمة التدريبية %(i)s من %(n)s",
    "%(num)s item remaining": "عدد المهام المتبقية: %(num)s",
    "%(num)s items remaining": "عدد المهام المتبقية: %(num)s",
    "This is a practice trial: it helps you get used to the task and is not part of the "
    "results.": "هذه مهمة تدريبية: تساعدك على التعوّد على المهمة ولا تدخل في النتائج.",
    "Please complete the parts marked below. Your other answers have been kept.":
        "يرجى إكمال الأجزاء المحددة أدناه. تم الاحتفاظ بإجاباتك الأخرى.",
    "Instructions": "التعليمات",
    "Input": "المُدخل",
    "Text": "النص",
    "Text A": "النص أ",
    "Text B": "النص ب",
    "Text %(k)s": "النص %(k)s",
    "Move the slider or tick here to confirm your rating":
        "حرّك المؤشر أو حدّد هذا المربع لتأكيد تقييمك",
    "Comment (optional)": "تعليق (اختياري)",
    "Please choose a rating for “%(name)s”.": "يرجى اختيار تقييم لـ «%(name)s».",
    "Please move the slider for “%(name)s”, or tick the box to confirm your rating where it "
    "is.": "يرجى تحريك مؤشر «%(name)s»، أو تحديد المربع لتأكيد تقييمك في موضعه الحالي.",
    "Please pick the text you think is the odd one out.":
        "يرجى اختيار النص الذي تراه مختلفًا عن غيره.",
    "Please keep the comment under %(n)s characters.":
        "يرجى ألا يتجاوز التعليق %(n)s حرفًا.",
    "Last step: a few questions": "الخطوة الأخيرة: بضعة أسئلة",
    "About you": "عنك",
    "Some answers are missing; they are marked below.":
        "بعض الإجابات ناقصة؛ وهي محددة أدناه.",
    "(required)": "(مطلوب)",
    "Please answer this question.": "يرجى الإجابة عن هذا السؤال.",
    "Please give a number.": "يرجى إدخال رقم.",
    "Thank you": "شكرًا لك",
    "Your completion code": "رمز الإكمال الخاص بك",
    "Continue": "متابعة",
    "I do not agree": "لا أوافق",
    "You chose not to take part. Thank you for your time.":
        "اخترتَ عدم المشاركة. شكرًا لك على وقتك.",
    "Thank you for your answers. This study is looking for other participants, so it ends "
    "here for you.": "شكرًا لك على إجاباتك. تبحث هذه الدراسة عن مشاركين آخرين، لذا تنتهي "
    "مشاركتك هنا.",
    "Your code": "رمزك",
    "Not found": "غير موجود",
    "Not now": "ليس الآن",
    "Request refused": "تم رفض الطلب",
    "Too large": "كبير جدًا",
    "Something went wrong": "حدث خطأ ما",
    "There is nothing here. Please check that you used your personal link exactly.":
        "لا يوجد شيء هنا. يرجى التأكد من أنك استخدمت رابطك الشخصي كما هو تمامًا.",
    "That is not your current trial. Please continue from your personal link.":
        "هذه ليست مهمتك الحالية. يرجى المتابعة من رابطك الشخصي.",
    "This form has expired or did not come from this site (CSRF check failed). Go back to "
    "your personal link and try again.": "انتهت صلاحية هذا النموذج أو أنه لم يصدر عن هذا "
    "الموقع (فشل التحقق من CSRF). عُد إلى رابطك الشخصي وحاول مرة أخرى.",
    "Refused: %(why)s. Nothing was saved.": "مرفوض: %(why)s. لم يُحفظ أي شيء.",
    "What you sent is too large. Please shorten your comment and try again.":
        "ما أرسلته كبير جدًا. يرجى اختصار تعليقك والمحاولة مرة أخرى.",
    "The server could not handle this request. Your earlier answers are saved; please try "
    "again from your personal link.": "تعذّر على الخادم معالجة هذا الطلب. إجاباتك السابقة "
    "محفوظة؛ يرجى المحاولة مرة أخرى من رابطك الشخصي.",
    "The questionnaire comes after the trials.": "يأتي الاستبيان بعد المهام.",
    "Take part": "شارك",
    "Press the button to get your tasks.": "اضغط على الزر للحصول على مهامك.",
    "This study is full: every trial set has been handed out. Thank you for your interest.":
        "اكتمل عدد المشاركين في هذه الدراسة: تم توزيع جميع مجموعات المهام. شكرًا لاهتمامك.",
    "Skip to the form": "انتقل إلى النموذج",
    # participant identity and capacity (issue 25)
    "The link you followed does not carry a valid participant id (%(names)s), so your "
    "answers could not be kept apart from other people's. Please open the study again from "
    "the platform's study page.": "الرابط الذي اتبعته لا يحمل معرّف مشارك صالحًا "
    "(%(names)s)، لذا لا يمكن تمييز إجاباتك عن إجابات الآخرين. يرجى فتح الدراسة مرة أخرى "
    "من صفحة الدراسة على المنصة.",
    "This participant id has already taken part from another browser. Please continue in the "
    "browser where you started; if you cannot, contact the researcher.":
        "شارك معرّف المشارك هذا بالفعل من متصفح آخر. يرجى المتابعة في المتصفح الذي بدأت "
        "فيه؛ وإن تعذّر ذلك فتواصل مع الباحث.",
    "Too many people have signed up from your network in a short time. Please try again in "
    "a few minutes.": "سجّل عدد كبير جدًا من الأشخاص من شبكتك في وقت قصير. يرجى المحاولة "
    "مرة أخرى بعد بضع دقائق.",
    "Your answers came in faster than the texts can be read, so no completion code is shown. "
    "The researcher will review your submission.": "وصلت إجاباتك أسرع مما تسمح به قراءة "
    "النصوص، لذا لا يُعرض رمز الإكمال. سيراجع الباحث مشاركتك.",
    "This participant id has already ended its participation in this study.":
        "أنهى معرّف المشارك هذا مشاركته في هذه الدراسة بالفعل.",
    "This study is full": "اكتمل عدد المشاركين في هذه الدراسة",
    "Every trial set has been handed out. Thank you for your interest.":
        "تم توزيع جميع مجموعات المهام. شكرًا لاهتمامك.",
    "Please return the study with this code": "يرجى إرجاع الدراسة بهذا الرمز",
}
