"""Instructor-side training for notebook 03 (date translation with attention). Students never get this file.

Builds the notebook's own model (its cells, run by course_build/notebook_code.py: Coursera's NMT-with-attention
model, 52,960 parameters), trains
it on the committed, seeded date dataset and saves the weights by layer role, so they load into any
correct student `modelf` whatever its layer names or creation order.

    python -m course_build.train_date_translation              # shipped weights -> datasets/date_translation/
    python -m course_build.train_date_translation --benchmark  # from scratch, 5-minute budget: epochs, time, accuracy

Then refresh the checksums:  python -m attention_course.datafiles

Measured on 2 CPU cores shared with other jobs (see datasets/date_translation/README.md):
shipped weights, 45 epochs in 516 s, test exact match 99.95%; benchmark, 20 epochs in 152 s,
test exact match 99.90%.
"""
import argparse
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
from keras import layers

from attention_course.date_translation import WEIGHTS_FILE, exact_match, predict_indices, save_role_weights
from attention_course.dates import load_dates, normalise
from attention_course.seeding import set_seed
from attention_course.paths import REPO_ROOT
from course_build.notebook_code import run_cells
from course_build.training import keep_best_epoch

TX, TY = 30, 10
LEARNING_RATE, BATCH_SIZE = 0.005, 64  # the notebook's compile_model rate; Coursera used batches of 100


def encode_pairs(pairs, human_vocab, machine_vocab, Tx=TX):
    """One-hot inputs (m, Tx, len(human_vocab)) and targets (m, Ty, len(machine_vocab))."""
    unk, pad = human_vocab["<unk>"], human_vocab["<pad>"]
    ids = np.full((len(pairs), Tx), pad, dtype="int64")
    for row, (human, _) in enumerate(pairs):
        text = normalise(human)[:Tx]
        ids[row, :len(text)] = [human_vocab.get(ch, unk) for ch in text]
    targets = np.array([[machine_vocab[ch] for ch in iso] for _, iso in pairs])
    eye_h, eye_m = np.eye(len(human_vocab), dtype="float32"), np.eye(len(machine_vocab), dtype="float32")
    return eye_h[ids], eye_m[targets]


def build_model(Tx=TX, Ty=TY, human_vocab_size=37, machine_vocab_size=11, stack_outputs=False):
    """Notebook 03's own model: its shared layers, `one_step_attention` and `modelf`, run from the solution
    notebook, then compiled with its `compile_model`. Returns (model, n_s).

    stack_outputs: one (m, Ty, machine_vocab_size) output instead of a list of Ty, which trains
    faster on long outputs (course_build/train_digit_attention.py).
    """
    # The shared-layers cell reads Tx and machine_vocab from the notebook's data cell.
    cells = run_cells("03_date_translation", ["shared_layers", "one_step_attention", "modelf", "compile_model"],
                      {"Tx": Tx, "machine_vocab": range(machine_vocab_size)})
    model = cells["modelf"](Tx, Ty, cells["n_a"], cells["n_s"], human_vocab_size, machine_vocab_size)
    if stack_outputs:
        as_step = layers.Reshape((1, machine_vocab_size))
        stacked = layers.Concatenate(axis=1)([as_step(y) for y in model.outputs])  # (m, Ty, machine_vocab_size)
        model = keras.Model(model.inputs, stacked)
    return cells["compile_model"](model), cells["n_s"]


def learning_rate_at(epoch, epochs, base=LEARNING_RATE, constant_fraction=0.5):
    """Constant rate, then cosine decay to 2% of it: fast progress first, no late collapses."""
    constant = int(epochs * constant_fraction)
    if epoch < constant:
        return base
    progress = (epoch - constant) / max(epochs - constant - 1, 1)
    return base * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * progress)))


def train(epochs, seed, budget=None, batch_size=BATCH_SIZE, constant_fraction=0.5):
    set_seed(seed)
    data = load_dates()
    hv, mv = data.human_vocab, data.machine_vocab
    X, Y = encode_pairs(data.train, hv, mv)
    Xd, Yd = encode_pairs(data.dev, hv, mv)
    Xt, Yt = encode_pairs(data.test, hv, mv)
    model, n_s = build_model(human_vocab_size=len(hv), machine_vocab_size=len(mv))
    zeros = np.zeros((len(X), n_s), dtype="float32")

    def set_rate(epoch):
        rate = learning_rate_at(epoch - 1, epochs, constant_fraction=constant_fraction)
        model.optimizer.learning_rate.assign(rate)
        return f"lr {rate:.5f}"

    run = keep_best_epoch(
        model, lambda epoch: model.fit([X, zeros, zeros], list(Y.swapaxes(0, 1)), epochs=1, batch_size=batch_size,
                                       shuffle=True, verbose=0),
        lambda: exact_match(model, Xd, Yd), epochs, before_epoch=set_rate, budget_seconds=budget)
    return model, (Xt, Yt), run.history, run.seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", action="store_true", help="train from scratch within --budget seconds")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--constant-fraction", type=float, default=0.5, help="share of epochs at the full rate")
    parser.add_argument("--out", default=None, help="weights file (default: the shipped one)")
    parser.add_argument("--show-errors", type=int, default=0, help="print this many test errors")
    args = parser.parse_args()
    epochs = args.epochs or (20 if args.benchmark else 45)
    model, (Xt, Yt), history, wall = train(epochs, args.seed, args.budget if args.benchmark else None,
                                              batch_size=args.batch_size, constant_fraction=args.constant_fraction)
    test_acc = exact_match(model, Xt, Yt)
    print(f"epochs run {len(history)}, wall time {wall:.0f} s (training + dev evaluation), "
          f"test exact match {test_acc:.4f} on {len(Xt)} dates, cores {os.cpu_count()}")
    if args.show_errors:
        data = load_dates()
        got = predict_indices(model, Xt)
        wrong = np.flatnonzero((got != Yt.argmax(-1)).any(axis=1))
        inverse = data.inv_machine_vocab
        for i in wrong[:args.show_errors]:
            print(f"  {data.test[i][0]!r:34} -> {''.join(inverse[int(k)] for k in got[i])}  (want {data.test[i][1]})")
    if args.out or not args.benchmark:
        path = save_role_weights(model, Path(args.out) if args.out else REPO_ROOT / "datasets" / WEIGHTS_FILE)
        print(f"saved {path}")


if __name__ == "__main__":
    main()
