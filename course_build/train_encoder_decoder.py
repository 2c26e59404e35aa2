"""Instructor only: train notebook 01's encoder-decoder (no attention) and ship its weights and curve.

Trains the fixed-context model of the notebook's own `build_seq2seq` (its cell, run by course_build/notebook_code.py) on the digit-reversal task (attention_course.digit_strings),
then writes
- datasets/encoder_decoder/seq2seq_weights.npz: the weights in `model.get_weights()` order, which the
  notebook loads into the student's own model (same architecture, so the same order and shapes);
- datasets/length_curves/encoder_decoder.csv: exact-match and digit accuracy per input length on the test split.
Then refresh the checksums: python -m attention_course.datafiles

Run from the repo root:  python -m course_build.train_encoder_decoder   (the shipped files: the defaults, 50 epochs,
about 13 minutes on 2 shared CPU cores; exact match about 0.93 at length 5, 0 from length 22 on)
Students never receive this file: it contains the reference model.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras
import numpy as np

from attention_course import digit_strings as ds
from attention_course.length_curves import accuracy_by_length, save_length_curve
from attention_course.paths import datasets_dir
from attention_course.seeding import set_seed
from course_build.notebook_code import run_cells, training_arguments

N_A, N_S = 64, 64
WEIGHTS = "encoder_decoder/seq2seq_weights.npz"


def build_seq2seq(*sizes):
    """Notebook 01's own `build_seq2seq`, run from the solution notebook."""
    return run_cells("01_encoder_decoder", ["build_seq2seq"])["build_seq2seq"](*sizes)


def main():
    args = training_arguments(__doc__.splitlines()[0], epochs=50).parse_args()

    set_seed(args.seed)
    train, dev, test = (ds.load_arrays(split) for split in ("train", "dev", "test"))
    model = build_seq2seq(ds.TX, ds.TY, N_A, N_S, ds.VOCAB_SIZE, ds.VOCAB_SIZE)
    model.compile(optimizer=keras.optimizers.Adam(args.lr, clipnorm=1.0),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    start = time.perf_counter()
    model.fit(train.X, train.Y, epochs=args.epochs, batch_size=args.batch_size,
              validation_data=(dev.X, dev.Y), verbose=2)
    print(f"training: {time.perf_counter() - start:.0f} s")

    predicted = model.predict(test.X, batch_size=500, verbose=0).argmax(axis=-1)  # (n, Ty)
    curve = accuracy_by_length("encoder_decoder", test.lengths, predicted, test.Y)
    for length, em, da in zip(curve.lengths, curve.exact_match, curve.digit_accuracy):
        print(f"length {length:2d}: exact match {em:.2f}, digit accuracy {da:.2f}")
    if args.dry_run:
        return
    np.savez(datasets_dir() / WEIGHTS, *model.get_weights())
    print("wrote", datasets_dir() / WEIGHTS, "and", save_length_curve(curve))


if __name__ == "__main__":
    main()
