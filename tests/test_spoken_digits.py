"""Notebook 07's spoken digits: mel filterbank, reproducible builder, speaker split, checked loader."""
import importlib.util
import shutil

import numpy as np
import pytest

from attention_course import spoken_digits as sd
from attention_course.audio import FRAME_LENGTH, HOP_LENGTH, LOG_FLOOR, N_MELS, hz_to_mel, mel_filterbank
from attention_course.datafiles import verified_path
from grader.course import REPO
from course_build.notebook_code import run_cells

SIZES = {"train": 2500, "dev": 300, "test": 500}


def load_builder():
    spec = importlib.util.spec_from_file_location("build_spoken_digits", REPO / "datasets" / "build_spoken_digits.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    return builder


def notebook_log_mel():
    namespace = run_cells("07_attention_applications", ["frame_signal", "log_mel_spectrogram"],
                          namespace={"np": np, "LOG_FLOOR": LOG_FLOOR}, setup=False)
    return namespace["log_mel_spectrogram"]


def test_mel_filters_are_triangles_that_cover_the_spectrum():
    bank = mel_filterbank()
    assert bank.shape == (N_MELS, 129) and bank.dtype == np.float32
    assert np.all((bank > 0).sum(axis=1) >= 1), "a mel filter has no non-zero FFT bin"
    assert bank.max() <= 1.0 and bank.max(axis=1).min() > 0.5  # peaks of 1, sampled on a 31.25 Hz grid
    peaks = bank.argmax(axis=1)
    assert np.all(np.diff(peaks) >= 0) and peaks[-1] > peaks[0]  # centres rise with the filter index
    assert np.all(bank[:, 1:-1].sum(axis=0) > 0), "some FFT bins fall between the filters"
    fine = mel_filterbank(n_mels=4, n_fft=4096)  # finely sampled: each filter peaks at 1, mel-equally spaced
    assert np.allclose(fine.max(axis=1), 1.0, atol=1e-2)
    assert np.allclose(np.diff(hz_to_mel(fine.argmax(axis=1) * 8000 / 4096)), hz_to_mel(4000) / 5, rtol=0.02)


def test_splits_have_the_documented_sizes_and_shapes():
    for split, n in SIZES.items():
        data = sd.load_split(split)
        assert data.features.shape == (n, data.n_frames.max(), N_MELS) and data.features.dtype == np.float32
        assert len(data.transcripts) == len(data.voices) == len(data.speeds) == len(data.snr_db) == n
        assert data.n_frames.min() > 20
        padding = ~sd.frame_mask(data.n_frames, data.features.shape[1])
        assert np.all(data.features[padding] == sd.LOG_MIN)
    with pytest.raises(ValueError, match="train, dev, test"):
        sd.load_split("validation")


def test_transcripts_and_settings_stay_in_their_ranges():
    for split in SIZES:
        data = sd.load_split(split)
        assert all(t.isdigit() and sd.MIN_DIGITS <= len(t) <= sd.MAX_DIGITS for t in data.transcripts)
        assert {len(t) for t in data.transcripts} == set(range(sd.MIN_DIGITS, sd.MAX_DIGITS + 1))
        assert data.speeds.min() >= 140 and data.speeds.max() <= 230
        assert data.pitches.min() >= 25 and data.pitches.max() <= 75
        assert data.snr_db.min() >= 15 and data.snr_db.max() <= 35


def test_dev_and_test_speakers_never_occur_in_train():
    variants = {split: {voice.split("+")[1] for voice in sd.load_split(split).voices} for split in SIZES}
    assert len(variants["train"]) >= 8 and len(variants["test"]) >= 2 and len(variants["dev"]) >= 2
    assert not variants["train"] & variants["test"], "a test voice variant also speaks in train"
    assert not variants["train"] & variants["dev"], "a dev voice variant also speaks in train"
    assert not variants["dev"] & variants["test"]


def test_stored_log_mel_range_matches_the_loader():
    with np.load(verified_path("spoken_digits/spoken_digits.npz")) as data:
        assert (float(data["log_min"]), float(data["log_max"])) == (sd.LOG_MIN, sd.LOG_MAX)
    assert np.allclose(sd.dequantise_log_mel(sd.quantise_log_mel([sd.LOG_MIN, 0.0, 99.0])),
                       [sd.LOG_MIN, 0.0, sd.LOG_MAX], atol=sd.LOG_STEP / 2)


def test_examples_give_their_stored_features_through_the_notebook_log_mel():
    examples = sd.load_examples()
    test = sd.load_split("test")
    log_mel_spectrogram = notebook_log_mel()
    assert len(examples.waveforms) == 6 and len({test.voices[i] for i in examples.test_indices}) == 6
    assert sorted(len(t) for t in examples.transcripts) == list(range(3, 9))
    for waveform, transcript, index in zip(*examples):
        assert np.abs(waveform).max() <= 1.0 and transcript == test.transcripts[index]
        log_mel = log_mel_spectrogram(waveform, mel_filterbank(), FRAME_LENGTH, HOP_LENGTH)
        assert log_mel.shape == (test.n_frames[index], N_MELS)
        stored = test.features[index, :test.n_frames[index]]
        assert np.abs(np.clip(log_mel, sd.LOG_MIN, sd.LOG_MAX) - stored).max() <= sd.LOG_STEP


def test_builder_reproduces_committed_utterances(tmp_path):
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed: apt-get install espeak-ng")
    builder = load_builder()
    with np.load(verified_path("spoken_digits/spoken_digits.npz")) as data:
        committed = {name: data[name] for name in data.files}
    if builder.espeak_version() != str(committed["espeak_version"]):
        pytest.skip(f"the data was built with espeak-ng {committed['espeak_version']}, "
                    f"this is {builder.espeak_version()}, which speaks differently")
    log_mel_spectrogram = notebook_log_mel()
    for split in SIZES:
        utterances = builder.utterance_settings(split)
        assert [u.transcript for u in utterances] == committed[f"{split}_transcripts"].tolist()
        assert [u.voice for u in utterances] == committed[f"{split}_voices"].tolist()
        assert np.allclose([u.snr_db for u in utterances], committed[f"{split}_snr_db"], atol=1e-4)
        for index in (0, len(utterances) - 1):  # rebuilding every utterance takes over a minute
            codes = sd.quantise_log_mel(builder.log_mel(builder.render(utterances[index], tmp_path), log_mel_spectrogram))
            n = committed[f"{split}_n_frames"][index]
            assert np.array_equal(codes, committed[f"{split}_features"][index, :n]), (
                f"datasets/build_spoken_digits.py no longer reproduces {split} utterance {index}")


def test_builder_resampler_keeps_the_speech_band_and_removes_aliases():
    builder = load_builder()
    t = np.arange(22050) / 22050
    inner = slice(500, -500)  # away from the zero padding at the ends
    for hz, gain in ((1000, 1.0), (3000, 1.0), (4100, 0.0), (6000, 0.0)):
        out = builder.resample(np.sin(2 * np.pi * hz * t))
        assert len(out) == 8000 and abs(np.abs(out[inner]).max() - gain) < 1e-3, hz


def test_transcripts_encode_and_decode():
    ids = sd.encode_transcripts(["407", "12345678"])
    assert ids.shape == (2, sd.TRANSCRIPT_LENGTH) and ids.dtype == np.int32
    digits = [sd.CHAR_TO_ID[ch] for ch in "407"]
    assert ids[0].tolist() == digits + [sd.END_ID] + [sd.PAD_ID] * 5
    assert ids[1, -1] == sd.END_ID
    assert [sd.decode_ids(row) for row in ids] == ["407", "12345678"]
    inputs = sd.decoder_inputs(ids)
    assert inputs[:, 0].tolist() == [sd.START_ID] * 2 and np.array_equal(inputs[:, 1:], ids[:, :-1])
    assert sd.decode_ids(inputs[0]) == "407"
    assert sd.decode_ids([sd.CHAR_TO_ID["5"], sd.END_ID, sd.CHAR_TO_ID["6"]]) == "5"
    assert sd.VOCAB[:3] == ["<pad>", "<start>", "<end>"] and sd.VOCAB_SIZE == 13
    with pytest.raises(ValueError, match="'x'"):
        sd.encode_transcripts(["40x7"])
    with pytest.raises(ValueError, match="digits"):
        sd.encode_transcripts(["123456789"])
    assert sd.frame_mask(np.array([2, 0]), 3).tolist() == [[True, True, False], [False, False, False]]

