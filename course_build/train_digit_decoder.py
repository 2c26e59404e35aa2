"""Instructor only: train notebook 01's digit decoder (previous token fed back) and ship its weights.

The model is `attention_course.digit_decoder.build_digit_decoder`, the same code the notebook builds,
trained with teacher forcing on the digit-reversal task. Writes
- datasets/encoder_decoder/digit_decoder.weights.h5: the weights the notebook loads;
- datasets/encoder_decoder/digit_decoder_history.json: per epoch, the loss, the greedy exact match on
  the dev split and the wall time so far.
Then refresh the checksums: python -m attention_course.datafiles

Run from the repo root:  python -m course_build.train_digit_decoder
"""
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras
import numpy as np

from attention_course import digit_decoder as dd
from attention_course import digit_strings as ds
from attention_course.paths import datasets_dir
from attention_course.seeding import set_seed
from course_build.notebook_code import training_arguments


def greedy_exact_match(stepper, arrays):
    """Share of strings the argmax chain writes exactly: its digits up to its first end token."""
    written = dd.greedy_ids(stepper, arrays.X)  # (n, STEPS)
    return float(np.mean([dd.ids_to_digits(ids) == target for ids, target in zip(written, arrays.targets)]))


def main():
    args = training_arguments(__doc__.splitlines()[0], epochs=30).parse_args()

    set_seed(args.seed)
    train, dev = ds.load_arrays("train"), ds.load_arrays("dev")
    previous, targets = dd.teacher_forcing_arrays(train)
    model, encoder = dd.build_digit_decoder()
    model.compile(optimizer=keras.optimizers.Adam(args.lr, clipnorm=1.0), loss="sparse_categorical_crossentropy")
    history, start = [], time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        fit = model.fit([train.X, previous], targets, epochs=1, batch_size=args.batch_size, verbose=0)
        dev_exact = greedy_exact_match(dd.DigitStepper(model, encoder), dev)
        history.append({"epoch": epoch, "loss": round(float(fit.history["loss"][-1]), 5),
                        "dev_greedy_exact_match": round(dev_exact, 4),
                        "seconds": round(time.perf_counter() - start, 1)})
        print(history[-1], flush=True)
    if args.dry_run:
        return
    weights = datasets_dir() / dd.WEIGHTS
    model.save_weights(weights)
    (datasets_dir() / dd.HISTORY).write_text(json.dumps(history, indent=1) + "\n")
    print("wrote", weights, "and", datasets_dir() / dd.HISTORY)


if __name__ == "__main__":
    main()
