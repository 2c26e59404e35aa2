"""The digit-string reversal task of notebooks 01 and 03: "90417" -> "71409", lengths 5..40.

One task with a knob that matters for attention: the input length. A model that squeezes the whole
input into one fixed context vector C (notebook 01) gets short strings right and long ones wrong;
a model with attention (notebook 03) should not care much.

Stable API (notebook 03 relies on it):

- Constants: ``DIGITS = "0123456789"``, ``PAD = "<pad>"``, ``VOCAB`` (the 10 digits then
  ``PAD``; index = token id), ``PAD_ID = 10``, ``VOCAB_SIZE = 11``, ``MIN_LEN = 5``,
  ``MAX_LEN = 40``, ``TX = TY = 40`` (padded input and output lengths), ``TASK = "reverse"``.
- ``make_pairs(n, seed, min_len=MIN_LEN, max_len=MAX_LEN, per_length=False)`` -> list of
  (source, target) string pairs, seeded; lengths uniform in [min_len, max_len]
  (``per_length=True``: exactly n pairs for every length instead).
- ``target_of(source)`` -> the reversed string.
- ``load_split(split)`` -> list of (source, target) pairs from ``datasets/digit_strings/<split>.tsv``
  (``split`` in ``SPLITS = ("train", "dev", "test")``; checksums verified). train: 20,000 pairs of
  random length; dev: 50 pairs per length; test: 100 pairs per length (3,600 pairs).
- ``encode_sources(sources, length=TX)`` -> int32 ids (n, length), LEFT-padded with PAD_ID so the
  last digit read by an encoder RNN is the last digit of the string.
- ``encode_targets(targets, length=TY)`` -> int32 ids (n, length), RIGHT-padded with PAD_ID: the
  model must output the digits, then PAD for every remaining step.
- ``one_hot(ids, depth=VOCAB_SIZE)`` -> float32 (..., depth).
- ``decode_ids(ids)`` -> the digit string (padding dropped).
- ``load_arrays(split)`` -> ``DigitArrays(sources, targets, lengths, X, Y)``, with X one-hot
  (n, TX, VOCAB_SIZE) float32, Y target ids (n, TY) int32, lengths (n,) int.
- ``exact_match(predicted_ids, target_ids)`` -> bool (n,): every one of the TY output steps right.

Data files are made by ``datasets/build_digit_strings.py`` with ``make_pairs``.
"""
import csv
from dataclasses import dataclass

import numpy as np

from attention_course.datafiles import verified_path

DIGITS = "0123456789"
PAD = "<pad>"
VOCAB = list(DIGITS) + [PAD]
PAD_ID = VOCAB.index(PAD)
VOCAB_SIZE = len(VOCAB)
MIN_LEN, MAX_LEN = 5, 40
TX = TY = MAX_LEN
TASK = "reverse"
SPLITS = ("train", "dev", "test")


def target_of(source: str) -> str:
    """The answer the model must produce: the digits in reverse order."""
    return source[::-1]


def make_pairs(n, seed, min_len=MIN_LEN, max_len=MAX_LEN, per_length=False):
    """n seeded (source, target) pairs; per_length=True gives n pairs for every length instead."""
    rng = np.random.default_rng(seed)
    if per_length:
        lengths = np.repeat(np.arange(min_len, max_len + 1), n)
    else:
        lengths = rng.integers(min_len, max_len + 1, size=n)
    pairs = []
    for length in lengths:
        source = "".join(DIGITS[d] for d in rng.integers(0, 10, size=int(length)))
        pairs.append((source, target_of(source)))
    return pairs


def load_split(split):
    """(source, target) pairs of one committed split, after checking its checksum."""
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    with open(verified_path(f"digit_strings/{split}.tsv"), encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [(row["source"], row["target"]) for row in rows]


def _ids(text, length, left):
    if len(text) > length:
        raise ValueError(f"{text!r} has {len(text)} digits; the model takes at most {length}")
    digits = [DIGITS.index(ch) for ch in text]
    padding = [PAD_ID] * (length - len(digits))
    return padding + digits if left else digits + padding


def encode_sources(sources, length=TX):
    """Token ids (n, length), left-padded: the encoder reads the padding first, the digits last."""
    return np.array([_ids(s, length, left=True) for s in sources], dtype=np.int32).reshape(-1, length)


def encode_targets(targets, length=TY):
    """Token ids (n, length), right-padded: digits first, then PAD until the end."""
    return np.array([_ids(t, length, left=False) for t in targets], dtype=np.int32).reshape(-1, length)


def one_hot(ids, depth=VOCAB_SIZE):
    """One-hot float32 vectors along a new last axis: (...,) -> (..., depth)."""
    return np.eye(depth, dtype=np.float32)[np.asarray(ids)]


def decode_ids(ids):
    """The digits of one id sequence, padding dropped (a PAD in the middle is dropped too)."""
    return "".join(VOCAB[int(i)] for i in ids if int(i) != PAD_ID)


@dataclass(frozen=True)
class DigitArrays:
    """One split ready for Keras: X one-hot (n, TX, VOCAB_SIZE), Y ids (n, TY), lengths (n,)."""
    sources: list
    targets: list
    lengths: np.ndarray
    X: np.ndarray
    Y: np.ndarray


def arrays_from_pairs(pairs):
    sources = [s for s, _ in pairs]
    targets = [t for _, t in pairs]
    return DigitArrays(sources, targets, np.array([len(s) for s in sources]),
                       one_hot(encode_sources(sources)), encode_targets(targets))


def load_arrays(split):
    """load_split(split) encoded: one-hot inputs, target ids, lengths."""
    return arrays_from_pairs(load_split(split))


def exact_match(predicted_ids, target_ids):
    """True where all output steps (digits and the padding after them) are right: (n, TY) -> (n,)."""
    return np.all(np.asarray(predicted_ids) == np.asarray(target_ids), axis=-1)
