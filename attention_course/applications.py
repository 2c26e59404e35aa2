"""Training records of notebook 07's two models (its shipped weights are in datasets/applications/).

grader/train_applications.py writes one record per model after training it from the notebook's own
code; the notebook prints from it how long the shipped weights trained and what they scored on dev.
"""
import json

from attention_course.datafiles import verified_path

RECORDS = ("listen_attend_spell", "show_attend_tell")


def load_training_record(name: str) -> dict:
    """A training run recorded by grader/train_applications.py (checksum verified).

    Keys: `model`, `parameters`, `epochs`, `seconds`, `history` (one dict per epoch: `epoch`, `seconds`
    since the start, `loss`, and `dev_cer` or `dev_exact_match`), the final `dev_cer` or
    `dev_exact_match`, `command`, `cores`, `date`.
    """
    if name not in RECORDS:
        raise ValueError(f"Unknown training record {name!r}; choose one of {', '.join(RECORDS)}")
    with open(verified_path(f"applications/{name}_training.json"), encoding="utf-8") as handle:
        return json.load(handle)
