"""The compiled TER (nlgeval.metrics._ter_fast, ``ter:engine=fast``) equals sacrebleu's TER.

Reference (independent of the code under test): sacrebleu 2.x itself --
``sacrebleu.metrics.lib_ter.translation_edit_rate`` per (hypothesis, reference) pair,
``TER._compute_segment_statistics`` per segment (minimum edits over the references, average
reference length), ``sacrebleu.sentence_ter`` / ``corpus_ter`` for scores, and a replica of
``translation_edit_rate``'s driver loop built from sacrebleu's own ``_shift`` and
``BeamEditDistance`` to show which corner of the algorithm a case exercises (the 1,000-candidate
limit, a discarded last round, a binding beam). Exact Levenshtein distances for the beam check
come from ``nltk.edit_distance``.

Corpora: sacrebleu needs ~20-30 ms per (hypothesis, reference) pair on this class of machine,
so every distinct pair of WebNLG 2020 (~76,000) and E2E (~92,000) takes about 70 CPU minutes.
By default a seeded random sample of distinct pairs of each corpus is compared (about a minute
in all); set ``NLGEVAL_TER_FULL=1`` to compare every distinct pair of both corpora.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk import edit_distance
from sacrebleu.metrics import TER
from sacrebleu.metrics import lib_ter as L

from nlgeval.errors import InputError
from nlgeval.metrics import _ter_fast as F
from nlgeval.metrics import get_metric

FULL = os.environ.get("NLGEVAL_TER_FULL", "") not in ("", "0")
SAMPLE_PAIRS = 1000  # distinct pairs per corpus in the default run


def sacre_edits(hyps: list[list[str]], refs: list[list[str]]) -> np.ndarray:
    return np.array([L.translation_edit_rate(h, r)[0] for h, r in zip(hyps, refs, strict=True)])


def sacre_trace(h: list[str], r: list[str]) -> tuple[int, int, bool]:
    """translation_edit_rate's loop with sacrebleu's own pieces: (edits, candidates checked,
    whether the last round found a positive gain that the candidate limit discarded)."""
    ced = L.BeamEditDistance(r)
    words, shifts, checked, discarded = h, 0, 0, False
    if not r:
        return len(h), 0, False
    while True:
        delta, new, checked = L._shift(words, r, ced, checked)
        if checked >= L._MAX_SHIFT_CANDIDATES:
            discarded = delta > 0
            break
        if delta <= 0:
            break
        shifts += 1
        words = new
    edits = shifts + ced(words)[0]
    assert edits == L.translation_edit_rate(h, r)[0]  # the replica is sacrebleu's loop
    return edits, checked, discarded


# ---------------------------------------------------------------- hand-checkable cases
def test_constants_are_sacrebleus():
    assert F.MAX_SHIFT_SIZE == L._MAX_SHIFT_SIZE
    assert F.MAX_SHIFT_DIST == L._MAX_SHIFT_DIST
    assert F.BEAM_WIDTH == L._BEAM_WIDTH
    assert F.MAX_SHIFT_CANDIDATES == L._MAX_SHIFT_CANDIDATES
    assert F.INT_INFINITY == L._INT_INFINITY
    assert (L._COST_INS, L._COST_DEL, L._COST_SUB) == (1, 1, 1)


@pytest.mark.parametrize(
    ("hyp", "ref", "edits"),
    [
        ("", "", 0),
        ("a b c", "", 3),  # empty reference: every hypothesis word is an edit
        ("", "a b c d", 4),  # empty hypothesis: every reference word is inserted
        ("a b c", "a b c", 0),
        ("a x c", "a b c", 1),  # one substitution
        ("a b c d", "a b c", 1),  # one deletion
        ("sat the cat", "the cat sat", 1),  # one shift of "sat" instead of 2 edits
        ("c d a b", "a b c d", 1),  # one shift of the block "a b"
        ("d c b a", "a b c d", 3),  # shifts one word at a time: 3 shifts
    ],
)
def test_hand_checked(hyp, ref, edits):
    h, r = hyp.split(), ref.split()
    assert L.translation_edit_rate(h, r)[0] == edits  # the arithmetic above is sacrebleu's
    assert F.translation_edit_rate(h, r) == (edits, len(r))


# ---------------------------------------------------------------- random word strings
@st.composite
def word_pair(draw, max_vocab: int, max_len: int) -> tuple[list[str], list[str]]:
    """Hypothesis and reference over a vocabulary of 2..max_vocab words (lengths drawn first:
    Hypothesis' list strategy alone favours very short lists)."""
    v = draw(st.integers(2, max_vocab))
    n, m = draw(st.integers(0, max_len)), draw(st.integers(0, max_len))
    word = st.integers(0, v - 1).map(lambda k: f"w{k}")
    return (
        draw(st.lists(word, min_size=n, max_size=n)),
        draw(st.lists(word, min_size=m, max_size=m)),
    )


@settings(max_examples=400, deadline=None, derandomize=True)
@given(word_pair(6, 30))
def test_random_small_vocabulary(pair):
    h, r = pair
    assert F.pair_edits([h], [r])[0] == L.translation_edit_rate(h, r)[0]


@settings(max_examples=20, deadline=None, derandomize=True)
@given(word_pair(30, 80))
def test_random_long(pair):
    h, r = pair
    assert F.pair_edits([h], [r])[0] == L.translation_edit_rate(h, r)[0]


def test_candidate_limit_and_discarded_round():
    # small vocabularies and 35-60 words: many shift candidates; the cases must include some
    # where sacrebleu stops at 1,000 candidates and discards a round with a positive gain
    rng = np.random.default_rng(5)
    hyps, refs, expected, hit, discarded = [], [], [], 0, 0
    for _ in range(12):
        v, n, m = int(rng.integers(2, 6)), int(rng.integers(35, 60)), int(rng.integers(35, 60))
        h = [f"w{x}" for x in rng.integers(0, v, n)]
        r = [f"w{x}" for x in rng.integers(0, v, m)]
        edits, checked, disc = sacre_trace(h, r)
        hit += checked >= L._MAX_SHIFT_CANDIDATES
        discarded += disc
        hyps.append(h)
        refs.append(r)
        expected.append(edits)
    assert hit >= 4 and discarded >= 2
    np.testing.assert_array_equal(F.pair_edits(hyps, refs), expected)


def test_beam_limits():
    rng = np.random.default_rng(7)
    hyps, refs = [], []
    # very unequal lengths: sacrebleu widens the beam when len(ref) / len(hyp) / 2 > 25
    # (ratio exactly 50: not widened)
    for n, m in [(1, 60), (2, 130), (3, 200), (1, 51), (1, 50), (2, 100), (60, 1), (130, 2),
                 (7, 160)]:
        hyps.append([f"w{x}" for x in rng.integers(0, 8, n)])
        refs.append([f"w{x}" for x in rng.integers(0, 8, m)])
    # the beam binds: the best alignment leaves the pseudo-diagonal by more than 25 columns,
    # so sacrebleu's distance exceeds the exact Levenshtein distance
    base = [f"r{k}" for k in range(70)]
    binding = (["x"] * 30 + base[:40], base)
    assert L.BeamEditDistance(binding[1])(binding[0])[0] > edit_distance(*binding)
    hyps.append(binding[0])
    refs.append(binding[1])
    for shift in (26, 30, 45):  # a rotation: shifts, then a beam-limited distance
        hyps.append(base[shift:] + ["y"] * 5 + base[:shift])
        refs.append(base)
    np.testing.assert_array_equal(F.pair_edits(hyps, refs), sacre_edits(hyps, refs))


# ---------------------------------------------------------------- metric adapter, options
TEXTS = [
    ("The cat sat on the mat.", ["the mat had a cat on it .", "The cat sat on the mat."]),
    ("", ["a reference", "another one here"]),
    ("a hypothesis", [""]),
    ("a hypothesis", ["", "one reference word list"]),
    ("", [""]),
    ("Zürich's café — naïve façade, «quoted»!", ["Zürich café naïve façade: quoted", "ZÜRICH"]),
    ("東京は日本の首都です。", ["日本の首都は東京です。", "東京、日本"]),
    ("Ünïcödé & &amp; &lt;tags&gt; x\ny", ["ünïcödé &amp; <tags> x y", "UNICODE - 3.5 , 4"]),
    ("He said: \"It's 3.5, isn't it?\" (yes)", ["he said it is 3.5 ( yes )"]),
    ("   padded   text   ", ["padded text", "text padded"]),
]
OPTIONS = [
    {},
    {"case_sensitive": True},
    {"no_punct": True},
    {"normalized": True},
    {"normalized": True, "asian_support": True},
    {"no_punct": True, "asian_support": True, "case_sensitive": True},
]


@pytest.mark.parametrize("kw", OPTIONS)
def test_metric_equals_sacrebleu_options(kw):
    hyps = [h for h, _ in TEXTS]
    refs = [r for _, r in TEXTS]
    lib = TER(**kw)
    spec = "ter" + (":" + ",".join(f"{k}={str(v).lower()}" for k, v in kw.items()) if kw else "")
    fast, slow = get_metric(spec), get_metric(spec + ("," if kw else ":") + "engine=sacrebleu")
    expected_stats = np.array(
        [
            lib._compute_segment_statistics(
                lib._preprocess_segment(h), lib._extract_reference_info(r)
            )
            for h, r in TEXTS
        ],
        dtype=np.float64,
    )
    np.testing.assert_array_equal(fast.segment_stats(hyps, refs, n_jobs=1), expected_stats)
    np.testing.assert_array_equal(slow.segment_stats(hyps, refs, n_jobs=1), expected_stats)
    expected = [sacrebleu.sentence_ter(h, r, **kw).score for h, r in TEXTS]
    np.testing.assert_array_equal(fast.segment_scores(hyps, refs, n_jobs=1), expected)
    streams = [[r[j] if j < len(r) else None for r in refs] for j in range(2)]
    expected_corpus = sacrebleu.corpus_ter(hyps, streams, **kw).score
    assert fast.corpus_score(hyps, refs, n_jobs=1) == expected_corpus
    # the per-hypothesis Metric API (used outside batches) agrees too
    info = fast._prepare_refs(TEXTS[0][1])
    assert list(fast._segment_stats(TEXTS[0][0], info)) == list(expected_stats[0])


def test_engine_option_and_signature():
    fast, slow = get_metric("ter"), get_metric("ter:engine=sacrebleu")
    assert fast.opts["engine"] == "fast"
    assert slow.spec == "ter:engine=sacrebleu" and fast.spec == "ter"
    # identical numbers, so identical signatures and cache keys (sacrebleu's TER signature)
    assert fast.config_signature == slow.config_signature
    lib = TER()
    lib.corpus_score(["a b"], [["a c"]])
    for m in (fast, slow):
        m.corpus_score(["a b"], [["a c"]])
        assert m.signature == str(lib.get_signature())  # nrefs:1|case:lc|tok:tercom|...
    with pytest.raises(InputError, match="engine"):
        get_metric("ter:engine=tercom")


def test_group_min_edits_layout():
    # three groups, one without hypotheses; against sacrebleu pair by pair (min over refs)
    groups = [
        ([["a", "b", "c"], ["c", "b", "a"], []], [["b", "a", "c"], [], ["a", "b", "c", "d"]]),
        ([["x"]], []),
        ([["p", "q"], ["q", "p", "q"]], [["q", "q", "p"]]),
    ]
    got = F.group_min_edits(groups)
    assert [len(g) for g in got] == [3, 0, 1]
    for (refs, hyps), edits in zip(groups, got, strict=True):
        for h, e in zip(hyps, edits, strict=True):
            assert e == min(L.translation_edit_rate(h, r)[0] for r in refs)
    np.testing.assert_array_equal(
        F.min_edits([["a"], ["b", "c"]], [[["a"], ["b"]], [["c", "b"]]]), [0, 1]
    )
    with pytest.raises(ValueError, match="at least one reference"):
        F.group_min_edits([([], [["a"]])])


# ---------------------------------------------------------------- real corpora
def _distinct_pairs(corpus) -> list[tuple[str, str]]:
    out = corpus.outputs
    refs = corpus.reference_lists(out["item"].tolist())
    return sorted({(h, r) for h, rs in zip(out["text"], refs, strict=True) for r in rs})


@pytest.mark.parametrize("name", ["webnlg2020", "e2e"])
def test_corpus_pairs_equal_sacrebleu(data_dir, name):
    """Every distinct (hypothesis, reference) pair (NLGEVAL_TER_FULL=1) or a seeded sample."""
    from nlgeval.corpora import load_corpus

    pairs = _distinct_pairs(load_corpus(name, data_dir, download=False))
    if not FULL:
        rng = np.random.default_rng(2024)
        pairs = [pairs[k] for k in rng.choice(len(pairs), SAMPLE_PAIRS, replace=False)]
    pre = TER()._preprocess_segment
    hyps = [pre(h).split() for h, _ in pairs]
    refs = [pre(r).split() for _, r in pairs]
    got = F.pair_edits(hyps, refs)
    expected = sacre_edits(hyps, refs)
    bad = np.flatnonzero(got != expected)
    assert len(bad) == 0, [(pairs[k], got[k], expected[k]) for k in bad[:5]]


@pytest.mark.parametrize("name", ["webnlg2020", "e2e"])
def test_corpus_segments_equal_sacrebleu(data_dir, name):
    """Multi-reference segment statistics (min edits, average reference length) and scores on
    sampled outputs, against sacrebleu's TER._compute_segment_statistics."""
    from nlgeval.corpora import load_corpus

    corpus = load_corpus(name, data_dir, download=False)
    out = corpus.outputs
    rng = np.random.default_rng(11)
    sub = out.iloc[np.sort(rng.choice(len(out), 60 if name == "webnlg2020" else 6, replace=False))]
    hyps = sub["text"].tolist()
    refs = corpus.reference_lists(sub["item"].tolist())
    lib = TER()
    expected = np.array(
        [
            lib._compute_segment_statistics(
                lib._preprocess_segment(h), lib._extract_reference_info(r)
            )
            for h, r in zip(hyps, refs, strict=True)
        ],
        dtype=np.float64,
    )
    m = get_metric("ter")
    np.testing.assert_array_equal(m.segment_stats(hyps, refs, n_jobs=1), expected)
    scores = [lib._compute_score_from_stats(row).score for row in expected.tolist()]
    np.testing.assert_array_equal(m.segment_from_stats(expected), scores)
