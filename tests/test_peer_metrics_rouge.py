"""nlgeval's ROUGE adapters on rouge-score's OWN test cases, and against rouge-score itself on
adversarial random texts.

Provenance of the expected values: rouge-score's test suite (Google Research; ROUGE after Lin,
2004), repository google-research/google-research, file ``rouge/rouge_scorer_test.py`` at
commit 066e6a1 (the released ``rouge-score`` 0.1.2 package): ``testRouge1``, ``testRouge2``,
``testRougeEmpty``, ``testRougeLConsecutive``, ``testRougeLNonConsecutive``, ``testRougeLsum``,
``testSummaryLevelLcs`` and the ``...AgainstRouge155`` cases, whose "ground truth" the file
says comes from manual runs of the Perl ROUGE-1.5.5 (5 decimals). Their inputs are the first
two lines of ``rouge/testdata/target.txt`` / ``prediction.txt`` and
``rouge/testdata/pyrouge_files/{target,prediction}_multi.0.txt``, copied below (random letters:
nobody here wrote them). Note rouge-score's argument order: ``score(target, prediction)``.

The randomized part compares precision, recall and F of nlgeval (its bit-parallel LCS, the
single-sentence ROUGE-Lsum shortcut, the shared reference preparation) with
``RougeScorer.score_multi`` called directly, exactly: tiny vocabularies (repeated tokens, ties
between references), empty texts and empty lines, punctuation-only sentences, several sentences
per text, references shared by several outputs, texts of thousands of tokens, with and without
the Porter stemmer.
"""

from __future__ import annotations

import numpy as np
import pytest
from rouge_score import rouge_scorer

from nlgeval.metrics import get_metric
from nlgeval.metrics.rouge import Rouge1, Rouge2, RougeL, RougeLsum

_PRED = [
    "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi\n",
    "n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed "
    "HqqLFXe,XPY,J XsurkMeo ,ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD\n",
]
_TARGET = [
    "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM "
    "EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L\n",
    "KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing sbKao Q "
    "m qiing LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing tQ.saefZwJtKrTlixYpMMsJing "
    "UCAPwNHeYVjDing c T BUySKtion gMPfJpwGw p'NvxAoping eu pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN\n",
]
_PRED_MULTI = "".join(_PRED) + (
    "xfs VkJE QhgKiLHE -HidivzoM.dO anhing jbLQiSGDTCsuhREebUaKM dv J\n"
    "VjWH'BdyWjnfGU-OjTNaEMdFICyLWfQMing wEMfdOKijg AwkeKbO 'DxqNO\n")
_TARGET_MULTI = "".join(_TARGET) + (
    "NhETebUbBk'er WOvoHMTjSRizKgH'vHiing Xu,hWxfs VkNE QhgKiLHE -HidivzoM.dO anhtion "
    "jbLQiSGDTCsuhREebUaKM dv J dVN tmbOT\n"
    "vMR HDm,xOAetion D,tion HJtodT.mHl UIv-p VjWH'BdyWjnfGU-OjT aEMdFICyLWfQMtion wEMfdOKing "
    "AwkeKbO 'DxqNOHBH qKtVvm OYJl mM\n")

# (metric class, stemmer, line, (recall, precision, F) from ROUGE-1.5.5)
AGAINST_ROUGE155 = [
    (Rouge1, False, 0, (0.40741, 0.68750, 0.51163)),
    (Rouge1, False, 1, (0.40476, 0.65385, 0.50000)),
    (Rouge1, True, 0, (0.40741, 0.68750, 0.51163)),
    (Rouge1, True, 1, (0.42857, 0.69231, 0.52941)),
    (Rouge2, False, 0, (0.30769, 0.53333, 0.39024)),
    (Rouge2, False, 1, (0.29268, 0.48000, 0.36364)),
    (Rouge2, True, 0, (0.30769, 0.53333, 0.39024)),
    (Rouge2, True, 1, (0.29268, 0.48000, 0.36364)),
    (RougeL, False, 0, (0.40741, 0.68750, 0.51163)),
    (RougeL, False, 1, (0.40476, 0.65385, 0.50000)),
]


def _rpf(metric, hyp, ref):
    p, r, f = metric.segment_prf([hyp], [[ref]]).iloc[0]
    return r, p, f


@pytest.mark.parametrize(("cls", "stem", "line", "expected"), AGAINST_ROUGE155)
def test_against_rouge155(cls, stem, line, expected):
    got = _rpf(cls(use_stemmer=stem), _PRED[line], _TARGET[line])
    np.testing.assert_allclose(got, expected, atol=5e-6)  # assertAlmostEqual(places=5)


def test_rouge_lsum_against_rouge155_with_stemming():  # testRougeLSumAgainstRouge155WithStemming
    got = _rpf(RougeLsum(use_stemmer=True), _PRED_MULTI, _TARGET_MULTI)
    np.testing.assert_allclose(got, (0.36538, 0.66667, 0.47205), atol=5e-6)


@pytest.mark.parametrize(("cls", "hyp", "ref", "expected"), [
    (Rouge1, "testing", "testing one two", (1 / 3, 1, 1 / 2)),  # testRouge1
    (Rouge2, "testing one", "testing one two", (1 / 2, 1, 2 / 3)),  # testRouge2
    (RougeL, "testing one", "testing one two", (2 / 3, 1, 4 / 5)),  # testRougeLConsecutive
    (RougeL, "testing two", "testing one two", (2 / 3, 1, 4 / 5)),  # ...NonConsecutive
    (RougeLsum, "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", "w1 w2 w3 w4 w5", (0.8, 0.4, 0.5333)),
    (Rouge1, "", "testing one two", (0, 0, 0)),  # testRougeEmpty
    (Rouge2, "", "testing one two", (0, 0, 0)),
    (RougeL, "", "testing one two", (0, 0, 0)),
    (RougeLsum, "", "w1 w2 w3 w4 w5", (0, 0, 0)),  # testRougeLsum, empty cases
    (RougeLsum, "w1", "", (0, 0, 0)),
    (RougeLsum, "/", "w1 w2 w3 w4 w5", (0, 0, 0)),  # summary of non-word characters only
])
def test_rouge_score_unit_cases(cls, hyp, ref, expected):
    np.testing.assert_allclose(_rpf(cls(), hyp, ref), expected, atol=5e-4)  # places=3 or more


# ---------------------------------------------------------------- randomized, vs rouge-score
_TOKENS = ["the", "The", "cat", "cats", "running", "runs", "ran", "a", "a", "mat", ".", ",",
           "/", "--", "42", "4.2", "é", "naïve", "日本"]


def _text(rng, long=False):
    u = rng.random()
    if u < 0.06:
        return ""
    if u < 0.09:
        return "\n\n"
    n = int(rng.integers(150, 700)) if long else int(rng.integers(1, 30))
    seps = rng.choice([" ", " ", " ", "\n", "\n\n", "  "], size=n)
    words = rng.choice(_TOKENS, size=n)
    return "".join(f"{w}{s}" for w, s in zip(words, seps, strict=True)).strip(" ")


def _corpus(seed, n_items=40, long=False):
    rng = np.random.default_rng(seed)
    hyps, refs = [], []
    for _ in range(n_items):
        r = [_text(rng, long) for _ in range(int(rng.integers(1, 5)))]
        for _ in range(int(rng.integers(1, 4))):
            hyps.append(r[int(rng.integers(len(r)))] if rng.random() < 0.1 else _text(rng, long))
            refs.append(r)
    return hyps, refs


@pytest.mark.parametrize("variant", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
@pytest.mark.parametrize("stem", [False, True])
def test_rouge_equals_rouge_score_on_random_texts(variant, stem):
    scorer = rouge_scorer.RougeScorer([variant], use_stemmer=stem)
    m = get_metric(f"{variant}:use_stemmer={str(stem).lower()}")
    for hyps, refs in (_corpus(11), _corpus(12, n_items=3, long=True)):
        want = [tuple(scorer.score_multi(r, h)[variant]) for h, r in zip(hyps, refs, strict=True)]
        got = m.segment_prf(hyps, refs)
        assert [tuple(row) for row in got.itertuples(index=False)] == want
        recall = get_metric(f"{variant}:use_stemmer={str(stem).lower()},score=recall,scale=1")
        assert recall.segment_scores(hyps, refs).tolist() == [w[1] for w in want]


# ---------------------------------------------------------------- split_summaries (NLTK punkt)
def _punkt_missing(text):
    # what nltk.sent_tokenize raises without its data (first lines of NLTK 3.9's message)
    raise LookupError("\n" + "*" * 70 + "\n  Resource 'punkt_tab' not found.\n  Please use the "
                      "NLTK Downloader to obtain the resource:\n\n  >>> import nltk\n")


def test_split_summaries_equals_rouge_score(monkeypatch):
    # both call nltk.sent_tokenize; a plain splitter stands in for punkt's data (not shipped)
    import nltk

    monkeypatch.setattr(nltk, "sent_tokenize", lambda t: [s for s in t.split(". ") if s])
    hyps, refs = _corpus(21)
    hyps = [h.replace("\n", ". ") for h in hyps]
    refs = [[r.replace("\n", ". ") for r in rs] for rs in refs]
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=True)
    want = [tuple(scorer.score_multi(r, h)["rougeLsum"]) for h, r in zip(hyps, refs, strict=True)]
    got = get_metric("rougeLsum:split_summaries=true").segment_prf(hyps, refs)
    assert [tuple(row) for row in got.itertuples(index=False)] == want


def test_split_summaries_without_punkt_is_one_line(monkeypatch, tmp_path, capsys):
    # rouge-score (and nlgeval before) let NLTK's page-long LookupError through (a traceback
    # from the command line); now one line naming the resource, exit status 2
    import nltk
    from _cli import run_cli

    from nlgeval.errors import DataNotFoundError

    monkeypatch.setattr(nltk, "sent_tokenize", _punkt_missing)
    with pytest.raises(DataNotFoundError, match="'punkt_tab' is not installed"):
        get_metric("rougeLsum:split_summaries=true").segment_scores(["a b. c"], [["a b"]])
    (tmp_path / "outputs.csv").write_text("system,item,text\ns1,i1,The cat sat. It slept.\n")
    (tmp_path / "references.csv").write_text("item,ref_id,text\ni1,r1,A cat sat. It slept.\n")
    code, _, err = run_cli(["score", str(tmp_path), "--metrics",
                            "rougeLsum:split_summaries=true", "--no-cache"], capsys)
    assert code == 2
    assert err.strip().count("\n") == 0 and "nltk.downloader punkt_tab" in err
