"""The paired bootstrap of notebook 08 (attention_course/paired_bootstrap.py): full-set scores are sacrebleu's and
Och and Ney's, the interval is that of the difference on the same resampled sentences, and the verdict says
"no difference" exactly when the interval holds 0."""
import numpy as np
import pytest
import sacrebleu

from attention_course import paired_bootstrap as pb

CHARACTERS = list("我们是一家人老师再见星期有七天好很猫追老鼠")


def _sentences(rng, n):
    return ["".join(rng.choice(CHARACTERS, size=rng.integers(4, 12))) for _ in range(n)]


def _noisy(rng, references, changes):
    out = []
    for reference in references:
        chars = list(reference)
        for _ in range(changes):
            chars[int(rng.integers(0, len(chars)))] = str(rng.choice(CHARACTERS))
        out.append("".join(chars))
    return out


def test_full_set_scores_are_sacrebleus():
    rng = np.random.default_rng(1)
    references = _sentences(rng, 60)
    a, b = _noisy(rng, references, 1), _noisy(rng, references, 3)
    bleu, chrf = pb.compare_translations("a", a, "b", b, references)
    assert bleu.score_a == pytest.approx(sacrebleu.corpus_bleu(a, [references], tokenize="zh").score, abs=1e-9)
    assert bleu.score_b == pytest.approx(sacrebleu.corpus_bleu(b, [references], tokenize="zh").score, abs=1e-9)
    assert chrf.score_a == pytest.approx(sacrebleu.corpus_chrf(a, [references]).score, abs=1e-9)
    assert bleu.items == chrf.items == 60
    assert bleu.low <= bleu.difference <= bleu.high


def test_a_system_better_on_every_sentence_is_better_and_identical_ones_are_not():
    rng = np.random.default_rng(2)
    references = _sentences(rng, 80)
    good, bad = _noisy(rng, references, 1), _noisy(rng, references, 5)
    for comparison in pb.compare_translations("good", good, "bad", bad, references):
        assert comparison.low > 0 and comparison.verdict == "good better", comparison
    for comparison in pb.compare_translations("bad", bad, "good", good, references):
        assert comparison.high < 0 and comparison.verdict == "good better", comparison
    same = pb.compare_translations("one", good, "other", list(good), references)[0]
    assert (same.low, same.high, same.verdict) == (0.0, 0.0, "no difference")


def test_a_small_gap_on_few_sentences_is_no_difference():
    """Two systems that differ on 2 of 12 sentences, one way each: a gap on the full set, none the data can show."""
    rng = np.random.default_rng(3)
    references = _sentences(rng, 12)
    a = list(references)
    b = list(references)
    a[0], b[1] = _noisy(rng, references[:1], 4)[0], _noisy(rng, references[1:2], 3)[0]
    comparison = pb.compare_translations("a", a, "b", b, references, measures=("chrF",))[0]
    assert comparison.difference != 0
    assert comparison.low < 0 < comparison.high and comparison.verdict == "no difference"
    assert "no difference" in str(comparison) and f"{comparison.difference:+.2f}" in str(comparison)


def test_the_interval_is_reproducible_and_moves_with_the_seed():
    rng = np.random.default_rng(4)
    references = _sentences(rng, 40)
    a, b = _noisy(rng, references, 2), _noisy(rng, references, 3)
    first = pb.compare_translations("a", a, "b", b, references, measures=("BLEU",))[0]
    again = pb.compare_translations("a", a, "b", b, references, measures=("BLEU",))[0]
    other = pb.compare_translations("a", a, "b", b, references, measures=("BLEU",), seed=7)[0]
    assert (first.low, first.high) == (again.low, again.high)
    assert (first.low, first.high) != (other.low, other.high)


def test_the_resample_is_paired():
    """A constant offset on every sentence: paired resamples see exactly that offset (unpaired ones would not)."""
    values = np.random.default_rng(5).normal(size=50)
    comparison = pb.compare_medians("median", "a", values + 1.0, "b", values)
    assert comparison.low == pytest.approx(1.0) and comparison.high == pytest.approx(1.0)
    assert comparison.verdict == "a better"


def test_alignment_counts_give_och_and_neys_rate_and_lower_is_better():
    rng = np.random.default_rng(6)
    cells = [(k, i, j) for k in range(4) for i in range(5) for j in range(5)]
    chosen = rng.permutation(len(cells))
    possible = [cells[c] for c in chosen[:40]]
    sure = possible[:25]
    good = sure[:20] + [cells[c] for c in chosen[60:63]] + sure[:3]  # three links listed twice: each counts once
    bad = [cells[c] for c in chosen[20:70]]

    def reference(links):
        a, s, p = set(links), set(sure), set(possible)
        return 1 - (len(a & s) + len(a & p)) / (len(a) + len(s))

    comparison = pb.compare_alignments("good", good, "bad", bad, sure, possible, sentences=4)
    assert comparison.score_a == pytest.approx(reference(good)) and comparison.score_b == pytest.approx(reference(bad))
    assert comparison.higher_is_better is False and comparison.verdict == "good better"
    assert pb.alignment_error_rate_of(np.zeros((3, 4))) == 0.0


def test_unpaired_input_is_refused():
    with pytest.raises(ValueError, match="3 and 2 translations of 3 sentences"):
        pb.compare_translations("a", ["我", "们", "是"], "b", ["我", "们"], ["我", "们", "是"])
    with pytest.raises(ValueError, match="same sentences"):
        pb.compare_medians("median", "a", [1.0, 2.0], "b", [1.0])
