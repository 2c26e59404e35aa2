"""Instructor-side: notebook 03's attention architecture on notebook 01's digit-reversal task.

Trains a Bidirectional-LSTM encoder + the shared additive attention layers + a post-attention LSTM
(the date model of notebook 03, sized for 40 input and 40 output steps) on the committed
digit-string data (attention_course.digit_strings), measures exact match per input length on the
test split (100 strings per length, the same strings as notebook 01's curve) and saves the curve as
datasets/length_curves/attention.csv.

    python -m course_build.train_digit_attention && python -m attention_course.datafiles

Measured on 2 shared CPU cores: 16 epochs in about 12 minutes; test exact match 92.2% overall,
100% for every length up to 35 digits, 98%, 92%, 28%, 2%, 0% for 36 to 40 digits (digit accuracy
above 90% at every length).
"""
import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np

from attention_course import digit_strings as ds
from attention_course.length_curves import accuracy_by_length, save_length_curve
from attention_course.seeding import set_seed
from course_build.train_date_translation import build_model as build_date_model
from course_build.training import keep_best_epoch


def build_model(Tx=ds.TX, Ty=ds.TY, vocab_size=ds.VOCAB_SIZE):
    """Notebook 03's own model sized for the digit task, its Ty outputs stacked into one (m, Ty, vocab) tensor;
    returns (model, n_s)."""
    model, n_s = build_date_model(Tx, Ty, human_vocab_size=vocab_size, machine_vocab_size=vocab_size,
                                  stack_outputs=True)
    model.compile(optimizer=keras.optimizers.Adam(0.005), loss="sparse_categorical_crossentropy")
    return model, n_s


def predict_ids(model, X, n_s):
    zeros = np.zeros((len(X), n_s), dtype="float32")
    return model.predict([X, zeros, zeros], batch_size=500, verbose=0).argmax(-1)  # (m, Ty)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    set_seed(args.seed)
    train, dev, test = (ds.load_arrays(split) for split in ds.SPLITS)
    model, n_s = build_model()
    zeros = np.zeros((len(train.X), n_s), dtype="float32")
    start = time.perf_counter()

    def set_rate(epoch):
        half = args.epochs // 2
        rate = 0.005 if epoch <= half else 0.005 * 0.5 ** ((epoch - half) / 2)
        model.optimizer.learning_rate.assign(rate)
        return f"lr {rate:.5f}"

    keep_best_epoch(model, lambda epoch: model.fit([train.X, zeros, zeros], train.Y, batch_size=100, epochs=1,
                                                   verbose=0),
                    lambda: ds.exact_match(predict_ids(model, dev.X, n_s), dev.Y).mean(), args.epochs,
                    before_epoch=set_rate)
    curve = accuracy_by_length("attention", test.lengths, predict_ids(model, test.X, n_s), test.Y)
    for length, acc in zip(curve.lengths, curve.exact_match):
        print(f"  length {length:2d}: exact match {acc:.2f}")
    print(f"test exact match {curve.exact_match.mean():.4f}, wall time {time.perf_counter() - start:.0f} s")
    if not args.no_save:
        print("saved", save_length_curve(curve))


if __name__ == "__main__":
    main()
