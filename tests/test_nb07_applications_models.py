"""Notebook 07's shipped models meet the issue's numbers, and the notebook's claims about them hold.

The models are the notebook's own (course_build/train_applications.py runs its code cells); these tests
load the shipped weights into them the way the notebook does and measure on the test splits:
- listen, attend and spell: character error rate <= 5% on espeak-ng voice variants it never heard; the example the
  notebook draws ("4966") is transcribed right, its attention centres move forward, and the two 6s
  are read from different stretches of sound (what the prose after the map says);
- show, attend and tell: captions exactly right and BLEU on the test images;
- the training records the notebook prints match what the shipped weights score on dev.
"""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def notebook():
    """The notebook's names after Run All (training runs skipped, as when graded)."""
    from course_build.notebook_code import run_notebook
    # as when graded: no short training runs, the shipped weights only
    return run_notebook("07_attention_applications", grading=True)


def test_the_speller_meets_the_error_rate_on_unseen_speakers(notebook):
    nb = notebook
    assert nb["GRADING"], "the fixture runs the notebook as a graded run"
    assert len(nb["test_transcripts"]) == 500
    assert not set(nb["speech"]["train"].voices) & set(nb["speech"]["test"].voices)
    cer = nb["character_error_rate"](nb["speech"]["test"].transcripts, nb["test_transcripts"])
    assert cer == nb["test_cer"] and cer <= 0.05, f"test character error rate {cer:.4f} > 0.05"


def test_the_drawn_example_reads_each_digit_after_the_last(notebook):
    nb = notebook
    row = nb["examples"].test_indices[nb["example"]]
    assert nb["speech"]["test"].transcripts[row] == "4966" == nb["test_transcripts"][row]
    centres = nb["centres"]
    assert len(centres) == 4 and np.all(np.diff(centres) > 0), f"centres do not increase: {centres}"
    assert centres[3] - centres[2] > 0.1, f"the two 6s are read from the same place: {centres}"


def test_the_speller_attends_forward_on_most_test_utterances(notebook):
    """The summary's claim: location features make the alignment move forward."""
    nb = notebook
    steps = np.ceil(nb["speech"]["test"].n_frames / 4).astype(int)
    forward = []
    for row, transcript in enumerate(nb["test_transcripts"]):
        weights = nb["test_weights"][row, :len(transcript), :steps[row]]
        centres = (weights * np.arange(steps[row])).sum(-1)
        forward.append(bool(np.all(np.diff(centres) > 0)))
    assert np.mean(forward) >= 0.95, f"only {np.mean(forward):.1%} of test utterances attend forward"


def test_the_captioner_writes_the_test_captions(notebook):
    nb = notebook
    assert len(nb["test_captions"]) == 1000
    assert nb["caption_exact"] >= 0.95, f"exact match {nb['caption_exact']:.3f}"
    assert nb["caption_bleu"] >= 0.95, f"BLEU {nb['caption_bleu']:.3f}"
    assert len(nb["wrong"]) == round((1 - nb["caption_exact"]) * 1000)


def test_caption_maps_sum_to_one_on_the_grid(notebook):
    maps = notebook["caption_maps"]
    assert maps.shape == (1000, notebook["CAPTION_LENGTH"], 6, 6)
    np.testing.assert_allclose(maps.sum(axis=(-1, -2)), 1.0, atol=1e-5)


def test_training_records_match_the_shipped_weights(notebook):
    nb = notebook
    from course_build.train_applications import dev_score
    for part, name, model, metric in (("speech", "listen_attend_spell", nb["listener"], "dev_cer"),
                                      ("scenes", "show_attend_tell", nb["captioner"], "dev_exact_match")):
        record = nb["load_training_record"](name)
        assert record["epochs"] == len(record["history"]) and record["seconds"] > 0
        assert record["parameters"] == model.count_params()
        assert record[metric] == pytest.approx(dev_score(nb, part, model), abs=1e-4), f"{name}: {metric}"
        assert record[metric] == pytest.approx(record["history"][record["best_epoch"] - 1][metric], abs=1e-5)


def test_the_sizes_the_prose_states(notebook):
    """The numbers the markdown states without a print beside them: vocabularies, grids, downsampling."""
    nb = notebook
    assert nb["SAMPLE_RATE"] == 8000 and nb["FRAME_LENGTH"] == 256 and nb["HOP_LENGTH"] == 160
    assert nb["filterbank"].shape == (32, 129)
    assert len(nb["spoken_digits"].VOCAB) == 13 and len(nb["captioned_scenes"].VOCAB) == 16
    assert len(nb["speech"]["train"].transcripts) == 2500 and len(nb["scenes"]["train"].captions) == 6000
    assert nb["SPEECH_EPOCHS"] == 2 and nb["CAPTION_EPOCHS"] == 1
    features, mask = nb["speech_train"][0][:2], nb["speech_train"][1][:2]
    keys, key_mask = nb["listener"].listen(features, mask)
    assert keys.shape[1] == -(-features.shape[1] // 4) == key_mask.shape[1]  # 20 ms frames -> 80 ms steps
    assert tuple(nb["captioner"].see(nb["caption_test"][0][:1]).shape) == (1, 6, 6, 64)


def test_object_words_look_at_the_shape_they_name(notebook):
    """What the prose after the overlays says: in nearly every test image (here: at least 95%)."""
    rates = {role: float(np.mean(found)) for role, found in notebook["hits"].items()}
    assert len(rates) == 4 and all(len(found) == 1000 for found in notebook["hits"].values())
    assert min(rates.values()) >= 0.95, rates
