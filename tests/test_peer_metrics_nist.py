"""nlgeval's NIST (Doddington, 2002; mteval-v13a's rules) against NLTK's ``nist_score`` on
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
