"""nlgeval's NIST (Doddington, 2002; mteval-v13a's rules) against values printed by mteval-v13a.pl
itself (several references, E2E TGen; provenance below), and against NLTK's ``nist_score`` on
random texts with ONE reference per segment, where the two definitions coincide.

NLTK's own test (``nltk/test/unit/translate/test_nist.py``, nltk 3.x) compares its corpus NIST
with the output of mteval-v13a on WMT15 data within 0.05; that data is not shipped with nltk,
so here NLTK's implementation (the installed release) is called directly on generated texts: tiny
vocabularies (repeated n-grams, so information weights of every size), lower and mixed case,
empty references, hypotheses of 1-13 words. Agreement is to 1e-12 relative.

Documented differences (docs/metrics.md): with several references NLTK scores each segment
against its single best reference and sums that reference's length, mteval (and nlgeval) clip
by the maximum count over all references and average the reference length; and NLTK divides by
the number of hypothesis n-grams of each order without mteval's ``max(count, 1)``, so NLTK fails
(ZeroDivisionError) on a segment -- or a corpus -- with fewer than n words, where mteval and
nlgeval count that order as 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from nltk.translate.nist_score import corpus_nist, sentence_nist

from nlgeval.metrics.nist import NISTMetric

_VOCAB = ["the", "The", "cat", "sat", "on", "a", "mat", "dog", "ran", ".", "é"]


def _texts(rng, n, low):
    return [" ".join(rng.choice(_VOCAB, size=int(rng.integers(low, 14)))) for _ in range(n)]


@pytest.mark.parametrize("lowercase", [True, False])
def test_nist_equals_nltk_with_one_reference(lowercase):
    rng = np.random.default_rng(5)
    m = NISTMetric(lowercase=lowercase)
    tok = m.tokenize
    for _ in range(20):
        hyps = _texts(rng, 30, 1)
        refs = [[r] for r in _texts(rng, 30, 0)]  # some references empty
        want = corpus_nist([[tok(r[0])] for r in refs], [tok(h) for h in hyps], n=5)
        assert m.corpus_score(hyps, refs) == pytest.approx(want, rel=1e-12)
        seg = m.segment_scores(hyps, refs)
        for h, r, s in zip(hyps, refs, seg, strict=True):
            if len(tok(h)) >= 5 and tok(r[0]):  # NLTK divides by zero below 5 words
                assert s == pytest.approx(sentence_nist([tok(r[0])], tok(h), n=5), rel=1e-12)


def test_short_hypothesis_nltk_fails_mteval_counts_zero():
    # a 2-word hypothesis: no 3-, 4- or 5-grams. mteval's nist_score adds
    # info / max(count, 1) = 0 for those orders; NLTK divides by zero
    m = NISTMetric()
    hyp, ref = "the cat", "the cat sat"
    with pytest.raises(ZeroDivisionError):
        sentence_nist([ref.split()], hyp.split(), n=5)
    # unigrams: the 3 reference words are distinct -> info log2(3/1) each; bigram "the cat":
    # log2(count(the)/count(the cat)) = 0; length penalty at ratio 2/3 is 0.5 (Doddington 2002)
    expected = (2 * np.log2(3) / 2 + 0.0) * 0.5
    assert m.segment_scores([hyp], [[ref]])[0] == pytest.approx(expected, rel=1e-15)


# mteval-v13a.pl's NormalizeText (its language-independent and "Western" parts, default
# lowercasing, i.e. without -c), run with perl 5.36 on these lines (UTF-8 in and out); the
# outputs are recorded here. Its lowercasing is ``tr/[A-Z]/[a-z]/``: ASCII letters only, after
# the SGML entities are replaced.
MTEVAL_NORMALIZE = [
    ("Éric Österreich ÄÖÜ İstanbul ΑΘΗΝΑ Москва", "Éric Österreich ÄÖÜ İstanbul ΑΘΗΝΑ Москва"),
    ("The &QUOT;Cat&quot; sat.", 'the & quot ; cat " sat .'),
    ("MÜNCHEN is in Germany, 3.5 km.", "mÜnchen is in germany , 3.5 km ."),
]


@pytest.mark.parametrize(("text", "normalised"), MTEVAL_NORMALIZE)
def test_nist_text_normalisation_is_mtevals(text, normalised):
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    assert NISTMetric().tokenize(text) == normalised.split()
    # mteval -c: no lowercasing at all, sacrebleu's 13a as it is
    assert NISTMetric(lowercase=False).tokenize(text) == Tokenizer13a()(text).split()


def test_nist_non_ascii_capitals_do_not_match_lowercase():
    # mteval keeps "É" (its tr/[A-Z]/[a-z]/ leaves it), so "Éric" and "éric" are different
    # words; nlgeval used to lowercase every letter (Python's str.lower) and match them
    m = NISTMetric()
    assert m.segment_stats(["Éric sat"], [["éric sat"]])[0, 0] == 1.0  # only "sat" matches
    assert m.segment_stats(["ERIC sat"], [["eric sat"]])[0, 0] == 2.0  # ASCII: both match
    assert "version:nlgeval-nist-2" in m.signature  # a new cache key for the new rule


# ---------------------------------------------------------------- mteval-v13a itself
# Values printed by mteval-v13a.pl (the Moses copy, scripts/generic/mteval-v13a.pl at commit
# 3445289 of moses-smt/mosesdecoder), run with perl 5.36 with options -n --metricsMATR-output
# (the full-precision system score of NIST-sys.scr) and, for `case=True`, -c. One SGML document,
# segments in order, every reference set padded with an empty segment where a hypothesis has
# fewer references (as e2e-metrics does).
_HYPS = ["The cat sat on the mat.", "É sat on a mat , the cat 's mat", "",
         'a cat & the "mat"', "the the the cat", "Éric sat; éric sat 3.5 km."]
_REFS = [["the cat sat on the mat .", "A cat was on the mat."], ["the cat sat on a mat"],
         ["nothing here", "", "the mat"], ["a cat and the mat", "THE CAT & MAT"],
         ["the cat", "the the cat cat", "cat the"], ["éric sat 3.5 km .", "Éric sat"]]
MTEVAL = [(False, 3.65120493791512), (True, 3.41584471595296)]


@pytest.mark.parametrize(("case", "expected"), MTEVAL)
def test_nist_equals_mteval_v13a(case, expected):
    # several references (1-3, one empty), non-ASCII capitals, entities, -c
    got = NISTMetric(lowercase=not case).corpus_score(_HYPS, _REFS)
    assert got == pytest.approx(expected, rel=1e-13)  # mteval prints 15 significant digits


def test_e2e_tgen_nist_equals_mteval_v13a(data_dir):
    # the same mteval-v13a.pl on E2E's TGen outputs and all references of each MR (raw texts,
    # as nlgeval reads them): 8.60950573390884. The published 8.6094 comes through
    # e2e-metrics, whose own file handling changes the texts slightly
    from nlgeval.corpora import load_corpus

    e2e = load_corpus("e2e", data_dir, download=False)
    tgen = e2e.outputs[e2e.outputs["system"] == "tgen"]
    refs = e2e.reference_lists(tgen["item"].tolist())
    got = NISTMetric().corpus_score(tgen["text"].tolist(), refs)
    assert got == pytest.approx(8.60950573390884, rel=1e-13)


def test_mteval_perl_zero_token_quirk_is_not_copied():
    # mteval-v13a's compute_ngram_info tests the (n-1)-gram with Perl truthiness
    # (`$mgram ? ... : .../$tot_wrds`), so an n-gram after the single token "0" is weighted by
    # the total word count: mteval gives 2.54421737080662 here. nlgeval keeps Doddington's
    # (2002) formula, which does not depend on how a token is spelled: the same texts with
    # "zero" for "0" give 2.17318567089732 in mteval, and that is nlgeval's value for both
    hyps = ["0 stars for the cat", "the cat"]
    refs = [["0 stars for a cat"], ["the 0 cat"]]
    renamed = ([h.replace("0", "zero") for h in hyps],
               [[r.replace("0", "zero") for r in rs] for rs in refs])
    m = NISTMetric()
    assert m.corpus_score(hyps, refs) == pytest.approx(2.17318567089732, rel=1e-13)
    assert NISTMetric().corpus_score(*renamed) == pytest.approx(2.17318567089732, rel=1e-13)
    assert abs(m.corpus_score(hyps, refs) - 2.54421737080662) > 0.3
