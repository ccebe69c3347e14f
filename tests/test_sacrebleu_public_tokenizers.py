"""The metrics reach sacrebleu's tokenizers through its public API only (``BLEU.TOKENIZERS``,
``BLEU(tokenize=...).tokenizer``); the private parts still used are the ones listed in
``nlgeval.metrics._sacrebleu.PRIVATE_API`` (checked by ``check_private_api``). An import of any
other private sacrebleu name -- as ``_get_tokenizer``/``_TOKENIZERS`` were -- fails here, and so
does a sacrebleu release whose public tokenizer API no longer gives the tokenizers the metrics
were checked with."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import nlgeval

PACKAGE = Path(nlgeval.__file__).resolve().parent


def private_sacrebleu_imports(package: Path) -> list[str]:
    """``file:line name`` of every import of a private sacrebleu name or module under
    ``package`` (``from sacrebleu.x import _y``, ``import sacrebleu._x``, ``from
    sacrebleu._x import y``), in functions and under ``TYPE_CHECKING`` too."""
    found = []
    for file in sorted(package.rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "sacrebleu" and any(
                        p.startswith("_") and not p.endswith("__") for p in parts):
                    found.append(f"{file.relative_to(package.parent)}:{node.lineno} {name}")
    return found


def test_no_private_sacrebleu_name_is_imported():
    found = private_sacrebleu_imports(PACKAGE)
    assert not found, ("private sacrebleu names imported (use its public API, or list the "
                       "part in nlgeval.metrics._sacrebleu.PRIVATE_API):\n  " + "\n  ".join(found))


def test_the_scan_finds_each_form(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "from sacrebleu.metrics.bleu import _TOKENIZERS, _get_tokenizer\n"
        "import sacrebleu.metrics._x\n"
        "def f():\n    from sacrebleu._y import z\n"
        "from sacrebleu.metrics import BLEU\nimport sacrebleu\nfrom sacrebleu import __version__\n"
        "from other.pkg import _private\nfrom ._local import _step\n", encoding="utf-8")
    assert private_sacrebleu_imports(pkg) == [
        "pkg/a.py:1 sacrebleu.metrics.bleu._TOKENIZERS",
        "pkg/a.py:1 sacrebleu.metrics.bleu._get_tokenizer",
        "pkg/a.py:2 sacrebleu.metrics._x",
        "pkg/a.py:4 sacrebleu._y.z",
    ]


#: tokenizer name -> the sacrebleu class the metrics were checked with (sacrebleu 2.4-2.6)
EXPECTED_CLASSES = {
    "none": "NoneTokenizer", "zh": "TokenizerZh", "13a": "Tokenizer13a",
    "intl": "TokenizerV14International", "char": "TokenizerChar",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_CLASSES))
def test_public_tokenizer_is_the_one_checked(name):
    """``BLEU(tokenize=name).tokenizer`` -- what the adapters call -- is the class the NIST,
    length and edit-distance numbers were checked with, and tokenises as it does."""
    from nlgeval.metrics._sacrebleu import TOKENIZERS, sacrebleu_tokenizer

    assert name in TOKENIZERS, f"sacrebleu no longer lists tokenizer '{name}' in BLEU.TOKENIZERS"
    tok = sacrebleu_tokenizer("length", name)
    assert type(tok).__name__ == EXPECTED_CLASSES[name], (
        f"sacrebleu's BLEU(tokenize='{name}').tokenizer is {type(tok).__name__}, "
        f"checked with {EXPECTED_CLASSES[name]}")
    text = "Hello, world! It's 3.5 km\u2014\u4e2d\u6587 &quot;x&quot;."
    want = {"none": text, "13a": "Hello , world ! It's 3.5 km\u2014\u4e2d\u6587 \" x \" .",
            "char": " ".join(text)}
    if name in want:
        assert tok(text) == want[name]


def test_tokenizer_names_in_sacrebleus_order():
    """The metrics' ``tokenize`` choices are sacrebleu's list, in its order."""
    from sacrebleu.metrics import BLEU

    from nlgeval.metrics._sacrebleu import TOKENIZERS
    from nlgeval.metrics.nist import NISTMetric
    from nlgeval.metrics.simple import LengthMetric

    assert TOKENIZERS == tuple(BLEU.TOKENIZERS)
    assert TOKENIZERS[:5] == ("none", "zh", "13a", "intl", "char")
    assert LengthMetric.options["tokenize"].choices == ("none", *TOKENIZERS)
    with pytest.raises(ValueError, match="option 'tokenize': expected one of none, zh, 13a"):
        NISTMetric(tokenize="v13a")


_PIECES = ["The", "cat", " ", "  ", ",", ".", "3.5", "1,000", "e.g.", "&quot;", "&amp;", "-",
           "\u00c9ric", "M\u00dcNCHEN", "\u4e2d\u6587", "\u2014", "'s", "(x)", "\t", "$", "%",
           "\U0001F600", "0", "1e200", "1e-200", "n't", "\u0627\u0644"]


@pytest.mark.parametrize("name", sorted(EXPECTED_CLASSES))
def test_random_texts_tokenise_as_the_old_private_path(name):
    """The public path gives the tokens the old one (``_get_tokenizer(name)()``, kept here as
    the reference while sacrebleu has it) gave, on random texts; so do NIST and length."""
    bleu = pytest.importorskip("sacrebleu.metrics.bleu")
    old_factory = getattr(bleu, "_get_tokenizer", None)
    if old_factory is None:
        pytest.skip("this sacrebleu has no _get_tokenizer: nothing to compare with")
    from nlgeval.metrics._sacrebleu import sacrebleu_tokenizer
    from nlgeval.metrics.nist import NISTMetric
    from nlgeval.metrics.simple import LengthMetric

    old, new = old_factory(name)(), sacrebleu_tokenizer("length", name)
    rng = np.random.default_rng(11)
    texts = ["".join(rng.choice(_PIECES, size=int(rng.integers(0, 25)))) for _ in range(300)]
    texts[0] = ""
    assert [new(t) for t in texts] == [old(t) for t in texts]
    nist = NISTMetric(tokenize=name)
    assert [nist.tokenize(t) for t in texts] == [
        old(t.rstrip()).translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                                "abcdefghijklmnopqrstuvwxyz")).split()
        for t in texts]
    hyps, refs = texts[1:150], [[t] for t in texts[150:299]]
    want = [len(t.split()) if name == "none" else len(old(t.rstrip()).split()) for t in hyps]
    got = LengthMetric(tokenize=name).segment_scores(hyps, refs)
    assert got.tolist() == [float(w) for w in want]
