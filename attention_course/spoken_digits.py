"""Spoken digit strings for notebook 07's "listen, attend and spell" exercise (Chan et al. 2016).

Each utterance is 3 to 8 digits read out by a speech synthesiser ("four zero seven" -> "407"),
stored as its log-mel spectrogram (attention_course.audio: 8 kHz, 20 ms frames, N_MELS bands). The
listener (encoder) reads the frames; the speller (decoder) writes the digits one by one, then <end>.
The test and dev splits are spoken by synthetic speakers (voice variants) that never occur in
train, so test accuracy measures generalisation to new voices.

Stable API (notebook 07 relies on it):

- Constants: ``VOCAB`` (``"<pad>"``, ``"<start>"``, ``"<end>"``, then ``"0"`` .. ``"9"``; index =
  token id), ``CHAR_TO_ID``, ``PAD_ID``, ``START_ID``, ``END_ID``, ``VOCAB_SIZE = 13``,
  ``MIN_DIGITS = 3``, ``MAX_DIGITS = 8``, ``TRANSCRIPT_LENGTH = MAX_DIGITS + 1`` (room for <end>),
  ``SPLITS = ("train", "dev", "test")``, ``LOG_MIN`` / ``LOG_MAX`` (the stored log-mel range).
- ``load_split(split)`` -> ``SpokenDigits(features, n_frames, transcripts, voices, speeds,
  pitches, word_gaps, snr_db)``: features float32 (n, T_max, N_MELS) log-mel, padded frames set
  to LOG_MIN; n_frames int (n,) real frames per utterance; transcripts list of digit strings;
  voices list of espeak-ng voices such as "en-us+f3"; speeds (words per minute), pitches (0-99),
  word_gaps (10 ms units) int arrays; snr_db float array (the added white noise).
- ``load_examples()`` -> ``SpokenExamples(waveforms, transcripts, test_indices)``: 6 test
  utterances as float arrays in [-1, 1] at SAMPLE_RATE, to play and to check a log-mel function
  against ``load_split("test").features[test_indices]``.
- ``encode_transcripts(texts, length=TRANSCRIPT_LENGTH)`` -> int32 (n, length): digit ids, <end>,
  then <pad>. ``decoder_inputs(ids)`` -> <start> then ids[:, :-1] (teacher forcing).
  ``decode_ids(ids)`` -> the digits up to the first <end>.
- ``frame_mask(n_frames, T)`` -> bool (n, T), True on real frames.
- ``quantise_log_mel(log_mel)`` / ``dequantise_log_mel(codes)``: the uint8 storage format, a step
  of ``LOG_STEP`` over [LOG_MIN, LOG_MAX].

Data files are made by ``datasets/build_spoken_digits.py``.
"""
from typing import NamedTuple

import numpy as np

from attention_course.datafiles import verified_path
from attention_course.token_ids import end_padded, shift_right, tokens_until_end

DIGITS = "0123456789"
VOCAB = ["<pad>", "<start>", "<end>"] + list(DIGITS)
CHAR_TO_ID = {token: i for i, token in enumerate(VOCAB)}
PAD_ID, START_ID, END_ID = CHAR_TO_ID["<pad>"], CHAR_TO_ID["<start>"], CHAR_TO_ID["<end>"]
VOCAB_SIZE = len(VOCAB)
MIN_DIGITS, MAX_DIGITS = 3, 8
TRANSCRIPT_LENGTH = MAX_DIGITS + 1
SPLITS = ("train", "dev", "test")

# Stored log-mel range: LOG_MIN is just below log(LOG_FLOOR) = -13.8 (digital silence, and padding);
# LOG_MAX is above the loudest frame the builder produced. 255 steps of 0.094 (nats) are far finer
# than the differences between sounds.
LOG_MIN, LOG_MAX = -14.0, 10.0
LOG_STEP = (LOG_MAX - LOG_MIN) / 255


class SpokenDigits(NamedTuple):
    """One split: log-mel features (n, T_max, N_MELS), real frame counts and how each was spoken."""
    features: np.ndarray
    n_frames: np.ndarray
    transcripts: list
    voices: list
    speeds: np.ndarray
    pitches: np.ndarray
    word_gaps: np.ndarray
    snr_db: np.ndarray


class SpokenExamples(NamedTuple):
    """Test utterances to listen to: float waveforms in [-1, 1], transcripts, indices in the test split."""
    waveforms: list
    transcripts: list
    test_indices: np.ndarray


def quantise_log_mel(log_mel):
    """Log-mel values -> uint8 codes over [LOG_MIN, LOG_MAX] (values outside are clipped)."""
    codes = np.round((np.asarray(log_mel, dtype=np.float64) - LOG_MIN) / LOG_STEP)
    return np.clip(codes, 0, 255).astype(np.uint8)


def dequantise_log_mel(codes):
    """uint8 codes -> float32 log-mel values (the centre of each code's step)."""
    return (LOG_MIN + LOG_STEP * np.asarray(codes, dtype=np.float32)).astype(np.float32)


def load_split(split):
    """One committed split (checksum verified) as SpokenDigits, features de-quantised to float32."""
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    with np.load(verified_path("spoken_digits/spoken_digits.npz")) as data:
        return SpokenDigits(
            features=dequantise_log_mel(data[f"{split}_features"]),  # padding is code 0 = LOG_MIN
            n_frames=data[f"{split}_n_frames"].astype(int),
            transcripts=data[f"{split}_transcripts"].tolist(),
            voices=data[f"{split}_voices"].tolist(),
            speeds=data[f"{split}_speeds"].astype(int),
            pitches=data[f"{split}_pitches"].astype(int),
            word_gaps=data[f"{split}_word_gaps"].astype(int),
            snr_db=data[f"{split}_snr_db"].astype(np.float64),
        )


def load_examples():
    """The committed example utterances (noisy, as in the test split) as SpokenExamples."""
    with np.load(verified_path("spoken_digits/examples.npz")) as data:
        waveforms = [w[:n] / 32768.0 for w, n in zip(data["waveforms"], data["n_samples"])]
        return SpokenExamples(waveforms, data["transcripts"].tolist(), data["test_indices"].astype(int))


def encode_transcripts(texts, length=TRANSCRIPT_LENGTH):
    """Speller targets, int32 (n, length): the digits' ids, then <end>, then <pad> to the end."""
    for text in texts:
        bad = [ch for ch in text if ch not in DIGITS]
        if bad:
            raise ValueError(f"{text!r} contains {bad[0]!r}; transcripts are digits 0-9 only")
    return end_padded([[CHAR_TO_ID[ch] for ch in text] for text in texts], length, END_ID, PAD_ID,
                      texts, "digits")


def decoder_inputs(ids):
    """Teacher-forcing inputs: <start> followed by the targets shifted right by one step."""
    return shift_right(ids, START_ID)


def decode_ids(ids):
    """The digit string of one id sequence, read up to the first <end> (<pad> and <start> skipped)."""
    return "".join(tokens_until_end(ids, VOCAB, END_ID, skip=(PAD_ID, START_ID)))


def frame_mask(n_frames, T):
    """bool (n, T): True on each utterance's real frames, False on its padding."""
    return np.arange(T)[None, :] < np.asarray(n_frames)[:, None]
