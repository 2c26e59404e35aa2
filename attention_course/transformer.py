"""Helpers for notebook 06 (the Transformer on the dates): positions, the shipped weights' file and
the recorded training runs (its schematic is attention_course.diagrams.draw_transformer).

`positional_encoding` is the sinusoidal encoding of notebook 04 (Vaswani et al. 2017), given here so
that notebook 06 can use it without asking for it again. Nothing here builds a layer of the model:
the graded classes live only in the notebook.
"""
import json

import numpy as np

from attention_course.datafiles import verified_path

WEIGHTS_FILE = "transformer/transformer_dates.weights.h5"
RECORDS = ("transformer", "date_attention", "transformer_digits")


def positional_encoding(max_len, d_model):
    """Sinusoidal positions, float32 (max_len, d_model): sin on even dimensions, cos on odd ones."""
    positions = np.arange(max_len)[:, None]  # (max_len, 1)
    pair = np.arange(d_model)[None, :] // 2  # (1, d_model): dimensions 2i and 2i+1 share a frequency
    angles = positions / np.power(10000.0, 2 * pair / d_model)  # (max_len, d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles)).astype("float32")


def load_training_record(name: str) -> dict:
    """A training run recorded by grader/train_transformer.py (checksum verified).

    Keys: `model`, `parameters`, `history` (one dict per epoch: `epoch`, `seconds` since the start of
    training, `dev_exact_match`), `test_exact_match`, `translate_seconds` (the 2,000 test dates),
    `command`, `cores`, `date`, `note`.
    """
    if name not in RECORDS:
        raise ValueError(f"Unknown training record {name!r}; choose one of {', '.join(RECORDS)}")
    with open(verified_path(f"transformer/{name}_training.json"), encoding="utf-8") as handle:
        return json.load(handle)


def seconds_to_reach(record: dict, threshold: float):
    """(epoch, seconds) of the first epoch whose dev exact match reached `threshold`, or (None, None)."""
    for row in record["history"]:
        if row["dev_exact_match"] >= threshold:
            return row["epoch"], row["seconds"]
    return None, None
