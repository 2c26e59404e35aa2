"""Helpers for notebook 06 (the Transformer on the dates): the shipped weights' file and the recorded
training runs (its schematic is attention_course.diagrams.draw_transformer).

Nothing here solves an exercise: notebook 04's positional encoding, which notebook 06 uses, is given
in notebook 06's own setup cell (so the package never holds notebook 04's answer), and the graded
classes live only in the notebook.
"""
import json

from attention_course.datafiles import verified_path

WEIGHTS_FILE = "transformer/transformer_dates.weights.h5"
RECORDS = ("transformer", "date_attention", "transformer_digits")


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
