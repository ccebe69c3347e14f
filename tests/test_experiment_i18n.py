"""The interface language: every catalogue complete, a right-to-left interface (Arabic), and
texts being judged shown in their own direction whatever the interface's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from experiment_helpers import csrf_of, write_experiment

from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.i18n import CATALOGUES, RTL, missing, text_direction

ROOT = Path(__file__).resolve().parents[1] / "nlgeval" / "experiment"
PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def message_ids() -> set[str]:
    """Every message id the templates and the evaluator-facing views use."""
    ids: set[str] = set()
    for f in (ROOT / "templates").rglob("*.html"):
        text = f.read_text(encoding="utf-8")
        ids |= set(re.findall(r'\b_\("([^"]*)"', text))
        ids |= {s for pair in re.findall(r'ngettext\("([^"]*)", "([^"]*)"', text) for s in pair}
    for f in ("evaluator.py", "app.py", "loaded.py"):  # x._("..." "...") in Python: read with ast
        tree = ast.parse((ROOT / f).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr",
                                                       getattr(node.func, "id", "")) == "_"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                ids.add(node.args[0].value)
    return ids


@pytest.mark.parametrize("language", sorted(set(CATALOGUES) - {"en"}))
def test_every_catalogue_translates_every_message_with_its_placeholders(language: str) -> None:
    ids = message_ids()
    assert len(ids) > 30
    assert missing(language, sorted(ids)) == []
    cat = CATALOGUES[language]
    for msgid in ids:
        assert sorted(PLACEHOLDER.findall(cat[msgid])) == sorted(PLACEHOLDER.findall(msgid)), \
            (language, msgid)
        if not msgid.startswith("Text"):  # German keeps "Text", "Text A"; the rest differ
            assert cat[msgid] != msgid, (language, msgid)


def test_a_right_to_left_catalogue_is_shipped() -> None:
    assert {"en", "de", "ar"} <= set(CATALOGUES)
    assert any(lang in RTL for lang in CATALOGUES)
    assert text_direction("ar") == "rtl" and text_direction("ar-EG") == "rtl"
    assert text_direction("de") == "ltr" and text_direction("en") == "ltr"


def test_arabic_interface_is_right_to_left_and_english_outputs_left_to_right(
        tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "ar", practice=1, extra='language = "ar"')
    made = create_experiment(d)
    c = create_app(d).test_client()
    tok = made.evaluators["token"].iloc[0]
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert '<html lang="ar" dir="rtl">' in page
    assert ">ابدأ<" in page  # the Start button
    assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)}).status_code == 303
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert '<html lang="ar" dir="rtl">' in page
    assert "المهمة التدريبية 1 من 1" in page and ">التالي<" in page
    # an English output inside the Arabic interface is laid out by its own (LTR) direction
    outputs = re.findall(r'<div class="text" dir="auto">([^<]*)</div>', page)
    assert outputs and all(t.startswith("Output of S") for t in outputs[1:])
    # the slider and its end labels follow the page (mirrored in RTL): no direction forced
    assert re.search(r'<div class="ends" aria-hidden="true"><span class="left" '
                     r'dir="auto">not fluent</span>', page)
    assert re.search(r'<input type="range"[^>]*>', page)
    assert not re.search(r'<input type="range"[^>]*dir=', page)
    # messages from Python (an incomplete form) and error pages are Arabic too
    action = re.search(r'<form method="post" action="([^"]+)"', page).group(1)  # type: ignore
    r = c.post(action, data={"csrf": csrf_of(page)})
    # the criterion is named in the interface language (a catalogue name for "quality")
    assert r.status_code == 422 and "يرجى اختيار تقييم لـ «الجودة»." in r.get_data(as_text=True)
    assert "غير موجود" in c.get("/nope").get_data(as_text=True)
    # the researcher's pages are English, so left to right
    rpage = c.get(f"/r/{made.researcher_token}").get_data(as_text=True)
    assert '<html lang="en" dir="ltr">' in rpage and "Researcher view" in rpage


def test_right_to_left_outputs_in_a_left_to_right_interface(tmp_path: Path) -> None:
    hebrew = "מזג האוויר מעונן בצפון"
    d = write_experiment(tmp_path / "he", practice=1,
                         text_of={(s, "p1"): hebrew for s in ("S1", "S2", "S3")})
    made = create_experiment(d)
    c = create_app(d).test_client()
    tok = made.evaluators["token"].iloc[0]
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert '<html lang="en" dir="ltr">' in page
    c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)})
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert f'<div class="text" dir="auto">{hebrew}</div>' in page
