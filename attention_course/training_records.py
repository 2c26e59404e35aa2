"""The recorded training runs of the shipped models, as the training scripts in grader/ wrote them.

Each record is a JSON file under datasets/ (checksum verified): `model`, `parameters`, `history` (one
dict per epoch: `epoch`, `seconds` since the start of training, `loss` where recorded, and the dev
metric), `command`, `cores`, `date`, and what the run measured at the end.

- notebook 06 (course_build/train_transformer.py): `transformer`, `date_attention`, `transformer_digits`;
  dev metric `dev_exact_match`, plus `test_exact_match`, `translate_seconds`, `note`;
- notebook 07 (course_build/train_applications.py): `listen_attend_spell` (dev metric `dev_cer`) and
  `show_attend_tell` (`dev_exact_match`), plus `epochs`, `seconds` and `best_epoch`;
- notebook 08 (course_build/train_real_translation.py): `recurrent_translator` and `transformer_translator`
  (dev metric `dev_bleu`, also `dev_chrf`), plus `epochs`, `seconds`, `best_epoch` and `test` (BLEU and chrF of
  the whole test split, greedy and with beam search).
"""
import json

from attention_course.datafiles import verified_path

RECORDS = {
    "transformer": "transformer/transformer_training.json",
    "date_attention": "transformer/date_attention_training.json",
    "transformer_digits": "transformer/transformer_digits_training.json",
    "listen_attend_spell": "applications/listen_attend_spell_training.json",
    "show_attend_tell": "applications/show_attend_tell_training.json",
    "recurrent_translator": "real_translation/recurrent_translator_training.json",
    "transformer_translator": "real_translation/transformer_translator_training.json",
}


def load_training_record(name: str) -> dict:
    """The training run recorded under `name` (one of RECORDS)."""
    if name not in RECORDS:
        raise ValueError(f"Unknown training record {name!r}; choose one of {', '.join(RECORDS)}")
    with open(verified_path(RECORDS[name]), encoding="utf-8") as handle:
        return json.load(handle)
