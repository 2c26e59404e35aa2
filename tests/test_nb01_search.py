"""Notebook 01's decoding part: BLEU equals sacrebleu's, the NumPy decoder step equals Keras, and what
the notebook's prose says about greedy decoding, beam search and error analysis holds for the shipped
digit decoder."""
import os
from collections import Counter

import numpy as np
import pytest

from attention_course import digit_strings as ds
from course_build.notebook_code import run_cells

ASSIGNMENT = "01_encoder_decoder"
ANSWERS = ("length_normalized_score", "beam_search", "modified_precision", "bleu", "sequence_log_probability",
           "error_analysis")


@pytest.fixture(scope="module")
def solution():
    """The source notebook's answer cells for the decoding part, run in a fresh namespace."""
    return run_cells(ASSIGNMENT, ANSWERS, {"np": np, "Counter": Counter}, setup=False)


def varied_corpora(seed=5, n=60):
    """Corpora of 1-6 sentences with 1-3 references each: near copies of a reference (so that
    n-grams match), cut short, grown, or unrelated; some candidates are empty or shorter than 4."""
    rng = np.random.default_rng(seed)
    words = "the a cat dog sat on mat is there here big small".split()
    for _ in range(n):
        n_refs = int(rng.integers(1, 4))
        candidates, references = [], []
        for _ in range(int(rng.integers(1, 7))):
            refs = [list(rng.choice(words, size=int(rng.integers(1, 15)))) for _ in range(n_refs)]
            kind = rng.integers(4)
            candidate = list(refs[int(rng.integers(n_refs))])
            if kind == 0:
                candidate = candidate[:int(rng.integers(0, len(candidate) + 1))]
            elif kind == 1:
                candidate = candidate + list(rng.choice(words, size=int(rng.integers(1, 6))))
            elif kind == 2:
                candidate = list(rng.choice(words, size=int(rng.integers(0, 12))))
            for _ in range(int(rng.integers(0, 3))):
                if candidate:
                    candidate[int(rng.integers(len(candidate)))] = str(rng.choice(words))
            candidates.append(candidate)
            references.append(refs)
        yield candidates, references


def sacrebleu_score(candidates, references):
    sacrebleu = pytest.importorskip("sacrebleu")
    streams = [[" ".join(refs[k]) for refs in references] for k in range(len(references[0]))]
    return sacrebleu.metrics.BLEU(smooth_method="none", tokenize="none", force=True).corpus_score(
        [" ".join(c) for c in candidates], streams)


def test_bleu_equals_sacrebleu_on_varied_corpora(solution):
    nonzero = 0
    for candidates, references in varied_corpora():
        theirs = sacrebleu_score(candidates, references)
        for n in range(1, 5):
            assert tuple(solution["modified_precision"](candidates, references, n)) == (
                theirs.counts[n - 1], theirs.totals[n - 1]), (n, candidates, references)
        ours = solution["bleu"](candidates, references)
        assert abs(ours - theirs.score / 100) <= 1e-6, (ours, theirs.score, candidates, references)
        nonzero += ours > 0
    assert nonzero >= 20, f"only {nonzero} of the corpora had a BLEU above 0: the comparison is too easy"


def test_bleu_textbook_cases(solution):
    cat = [["the", "cat", "is", "on", "the", "mat"], ["there", "is", "a", "cat", "on", "the", "mat"]]
    assert tuple(solution["modified_precision"]([["the"] * 7], [cat], 1)) == (2, 7)
    assert solution["bleu"]([["the"] * 7], [cat]) == 0.0
    assert solution["bleu"]([["the", "cat"]], [[cat[0]]], max_n=2) == pytest.approx(np.exp(1 - 6 / 2))
    assert sacrebleu_score([["the", "cat"]], [[cat[0]]]).bp == pytest.approx(np.exp(1 - 6 / 2), abs=1e-3)


@pytest.fixture(scope="module")
def stepper():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from attention_course import digit_decoder as dd
    from attention_course.datafiles import verified_path

    model, encoder = dd.build_digit_decoder()
    model.load_weights(verified_path(dd.WEIGHTS))
    return dd, model, dd.DigitStepper(model, encoder)


def test_numpy_step_equals_the_keras_decoder(stepper):
    dd, model, step = stepper
    arrays = ds.arrays_from_pairs(ds.make_pairs(6, seed=9))
    previous, _ = dd.teacher_forcing_arrays(arrays)  # (6, 41, 12)
    keras_probs = model.predict([arrays.X, previous], verbose=0)  # (6, 41, 11)
    states, ours = step.initial_states(arrays.X), []
    for t in range(dd.STEPS):
        log_probs, states = step.step(previous[:, t].argmax(axis=-1), states)
        ours.append(np.exp(log_probs))
    np.testing.assert_allclose(np.stack(ours, axis=1), keras_probs, atol=1e-5)


@pytest.mark.slow
def test_the_notebooks_claims_about_search_hold(solution, stepper):
    """Section 11 and 12's prose, on the same 50 test strings per length the notebook measures."""
    dd, _, step = stepper
    beam, bleu = solution["beam_search"], solution["bleu"]
    test = ds.load_arrays("test")
    picked = np.concatenate([np.flatnonzero(test.lengths == n)[:50] for n in range(ds.MIN_LEN, ds.MAX_LEN + 1)])
    targets = [test.targets[i] for i in picked]
    states = step.initial_states(test.X[picked])
    greedy = [dd.ids_to_digits(ids) for ids in dd.greedy_ids(step, test.X[picked])]
    outputs = {(width, alpha): [beam(step.step, s, dd.START_ID, dd.END_ID, width, dd.STEPS, alpha=alpha)[0][0]
                                for s in states]
               for width in (1, 3, 10) for alpha in (0.0, 0.7)}
    digits = {key: [dd.ids_to_digits(ids) for ids in value] for key, value in outputs.items()}
    exact = {key: np.mean([d == t for d, t in zip(value, targets)]) for key, value in digits.items()}
    score = {key: bleu([list(d) for d in value], [[list(t)] for t in targets]) for key, value in digits.items()}
    mean_length = {key: np.mean([len(d) for d in value]) for key, value in digits.items()}
    greedy_exact = np.mean([g == t for g, t in zip(greedy, targets)])

    assert digits[(1, 0.0)] == greedy and digits[(1, 0.7)] == greedy, "B = 1 must give the greedy strings"
    assert exact[(3, 0.0)] > greedy_exact + 0.02, (exact, greedy_exact)
    gain_at_3, gain_at_10 = exact[(3, 0.0)] - greedy_exact, exact[(10, 0.0)] - greedy_exact
    assert gain_at_3 > 0.5 * gain_at_10, "most of the gain already at B = 3"
    by_length = {n: [i for i, t in enumerate(targets) if len(t) == n] for n in (5, 6, 7, 38, 39, 40)}
    for n, rows in by_length.items():  # the shortest all right and the longest all wrong, whatever the search
        same = {tuple(digits[key][i] == targets[i] for i in rows) for key in digits}
        assert len(same) == 1 and tuple(greedy[i] == targets[i] for i in rows) in same, n
    references_length = np.mean([len(t) for t in targets])
    assert mean_length[(10, 0.0)] < references_length - 1, (mean_length, references_length)
    assert score[(10, 0.0)] < score[(10, 0.7)] and abs(mean_length[(10, 0.7)] - references_length) < 0.5
    assert abs(exact[(10, 0.0)] - exact[(10, 0.7)]) < 0.01, "exact match hardly notices the short outputs"

    def search_faults(key):
        faults = wrong = 0
        for s, ids, target in zip(states, outputs[key], targets):
            reference = [ds.DIGITS.index(d) for d in target] + [dd.END_ID]
            if list(ids) != reference:
                wrong += 1
                faults += (solution["sequence_log_probability"](step.step, s, dd.START_ID, reference)
                           > solution["sequence_log_probability"](step.step, s, dd.START_ID, ids))
        return faults, wrong

    (greedy_faults, _), (faults_3, _), (faults_10, wrong_10) = (search_faults((w, 0.0)) for w in (1, 3, 10))
    assert greedy_faults > faults_3 > faults_10, (greedy_faults, faults_3, faults_10)
    assert faults_10 <= 0.02 * wrong_10, "almost every error left at B = 10 is the model's"
    wrong_rows_10 = [i for i, (d, t) in enumerate(zip(digits[(10, 0.0)], targets)) if d != t]
    wrong_digits_10 = np.mean([len(digits[(10, 0.0)][i]) for i in wrong_rows_10])
    their_references = np.mean([len(targets[i]) for i in wrong_rows_10])
    assert wrong_digits_10 < their_references - 2, (
        "section 12: the wrong outputs of B = 10, alpha = 0 are several digits shorter than their references",
        wrong_digits_10, their_references)
