"""Train notebook 06's Transformer and record the runs it is compared with (instructor only).

The notebook is the single source of the model: this script runs the code cells of
solutions/06_transformer/06_transformer.ipynb (setup, data, the solved exercises and the training
set-up; not the test cells, and nothing from the notebook's own short training run on) in one
namespace, then trains `make_transformer()` for longer with the notebook's `translate`.

    python -m course_build.train_transformer                 # dates: shipped weights + datasets/transformer/transformer_training.json
    python -m course_build.train_transformer --baseline      # notebook 03's model from scratch (course_build/train_date_translation.py,
                                                       # the settings of its shipped weights) -> date_attention_training.json
    python -m course_build.train_transformer --timing        # both date models' time to translate the test dates (best of 3)
    python -m course_build.train_transformer --digits        # digit reversal -> datasets/length_curves/transformer.csv
                                                       # and transformer_digits_training.json

Then refresh the checksums:  python -m attention_course.datafiles

Every record holds the wall time after each epoch (training plus the dev evaluation), the dev exact
match, the test exact match of the shipped weights and the time to translate the 2,000 test dates.
"""
import argparse
import json
import os
import time
from datetime import date

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

from attention_course.paths import REPO_ROOT
from course_build.notebook_code import run_notebook
from course_build.training import keep_best_epoch

OUT = REPO_ROOT / "datasets" / "transformer"
STOP_AT = "NOTEBOOK_EPOCHS"  # the notebook's own short training run starts in this cell


def notebook_namespace() -> dict:
    """The notebook's names after its setup, data, exercise and training set-up cells (tests skipped)."""
    return run_notebook("06_transformer", stop_at=STOP_AT)


def write_record(name, record):
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}_training.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"saved {path.relative_to(REPO_ROOT)}")


def train_dates(args):
    nb = notebook_namespace()
    model = nb["make_transformer"](seed=args.seed)
    X, Y, decoder_in = nb["X_train"], nb["Y_train"], nb["decoder_in_train"]
    run = keep_best_epoch(
        model, lambda epoch: model.fit((X, decoder_in), Y, epochs=1, batch_size=nb["BATCH_SIZE"], shuffle=True,
                                       verbose=0),
        lambda: nb["exact_match"](model, nb["X_dev"], nb["Y_dev"]), args.epochs)
    begin = time.perf_counter()
    predicted = nb["translate"](model, nb["X_test"], nb["START_ID"], nb["Ty"])
    translate_seconds = time.perf_counter() - begin
    test_exact = float((predicted == nb["Y_test"]).all(axis=1).mean())
    print(f"best dev epoch {run.best_epoch}, test exact match {test_exact:.4f}, "
          f"translate 2,000 test dates {translate_seconds:.2f} s")
    write_record("transformer", {
        "model": "notebook 06 Transformer " + ", ".join(f"{k} {v}" for k, v in nb["MODEL_SIZE"].items()),
        "parameters": int(model.count_params()), "history": run.history, "best_epoch": run.best_epoch,
        "test_exact_match": test_exact, "translate_seconds": round(translate_seconds, 2),
        "command": f"python -m course_build.train_transformer --epochs {args.epochs} --seed {args.seed}",
        "cores": os.cpu_count(), "date": date.today().isoformat(),
        "note": "Weights of the best dev epoch shipped; " + (args.note or "")})
    model.optimizer = None  # ship the model's weights only: the notebook loads them into an uncompiled model
    path = REPO_ROOT / "datasets" / "transformer" / "transformer_dates.weights.h5"
    model.save_weights(path)
    print(f"saved {path.relative_to(REPO_ROOT)} ({path.stat().st_size / 1024:.0f} KiB)")


def train_baseline(args):
    """Notebook 03's model trained from scratch with the settings of its shipped weights, recorded per epoch."""
    from attention_course.date_translation import predict_indices
    from attention_course.dates import load_dates
    from attention_course.shipped_weights import load_shipped_weights
    from course_build import train_date_translation as t03
    epochs = args.epochs or 45  # the shipped weights' settings: constant rate, then cosine decay
    _, _, history, wall = t03.train(epochs, 3, budget=None)
    data = load_dates()
    Xt, Yt = t03.encode_pairs(data.test, data.human_vocab, data.machine_vocab)
    shipped, _ = t03.build_model(human_vocab_size=len(data.human_vocab), machine_vocab_size=len(data.machine_vocab))
    load_shipped_weights(shipped, t03.WEIGHTS_FILE)
    begin = time.perf_counter()
    predicted = predict_indices(shipped, Xt)
    translate_seconds = time.perf_counter() - begin
    test_exact = float((predicted == Yt.argmax(-1)).all(axis=1).mean())
    write_record("date_attention", {
        "model": "notebook 03 BiLSTM + attention (Tx 30, Ty 10, n_a 32, n_s 64)",
        "parameters": int(shipped.count_params()),
        "history": history,
        "test_exact_match": test_exact, "translate_seconds": round(translate_seconds, 2),
        "command": f"python -m course_build.train_transformer --baseline --epochs {epochs} (course_build/train_date_translation.py's "
                   "train(): batch 64, Adam 0.005, constant rate for half the epochs, then cosine decay)",
        "cores": os.cpu_count(), "date": date.today().isoformat(),
        "note": "History: a run from scratch; test exact match and translation time: the shipped weights "
                "(datasets/date_translation). " + (args.note or "")})


def train_digits(args):
    """The notebook's Transformer on notebook 01's digit reversal; accuracy by input length."""
    from attention_course import digit_strings as ds
    from attention_course.length_curves import accuracy_by_length, save_length_curve
    nb = notebook_namespace()
    keras = nb["keras"]
    start_id = ds.VOCAB_SIZE  # one more symbol than the digits and PAD
    splits = {name: ds.load_split(name) for name in ds.SPLITS}
    X = {name: ds.encode_sources([s for s, _ in pairs]) for name, pairs in splits.items()}
    Y = {name: ds.encode_targets([t for _, t in pairs]) for name, pairs in splits.items()}
    lengths = np.array([len(s) for s, _ in splits["test"]])
    shift = lambda y: np.concatenate([np.full((len(y), 1), start_id, "int32"), y[:, :-1]], axis=1)  # noqa: E731
    nb["set_seed"](args.seed)
    size = dict(nb["MODEL_SIZE"])
    model = nb["Transformer"](**size, source_vocab_size=ds.VOCAB_SIZE, target_vocab_size=ds.VOCAB_SIZE + 1,
                              max_len=ds.TX, source_pad_id=ds.PAD_ID)
    model((X["train"][:2], shift(Y["train"])[:2]))
    model.compile(optimizer=keras.optimizers.Adam(nb["WarmupInverseSqrt"](size["d_model"], nb["WARMUP_STEPS"]),
                                                  beta_1=0.9, beta_2=0.98, epsilon=1e-9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    translate = nb["translate"]
    run = keep_best_epoch(
        model, lambda epoch: model.fit((X["train"], shift(Y["train"])), Y["train"], epochs=1, batch_size=64,
                                       verbose=0),
        lambda: ds.exact_match(translate(model, X["dev"], start_id, ds.TY), Y["dev"]).mean(), args.epochs)
    begin = time.perf_counter()
    predicted = translate(model, X["test"], start_id, ds.TY)
    translate_seconds = time.perf_counter() - begin
    curve = accuracy_by_length("transformer", lengths, predicted, Y["test"])
    for length, acc in zip(curve.lengths, curve.exact_match):
        print(f"  length {length:2d}: exact match {acc:.2f}")
    print("saved", save_length_curve(curve))
    write_record("transformer_digits", {
        "model": "notebook 06 Transformer on digit reversal, " + ", ".join(f"{k} {v}" for k, v in size.items()),
        "parameters": int(model.count_params()), "history": run.history,
        "test_exact_match": float(curve.exact_match.mean()), "translate_seconds": round(translate_seconds, 2),
        "command": f"python -m course_build.train_transformer --digits --epochs {args.epochs} --seed {args.seed}",
        "cores": os.cpu_count(), "date": date.today().isoformat(),
        "note": "translate_seconds: the 3,600 test strings. " + (args.note or "")})


def best_of(function, repeats=3):
    """Shortest wall time of `repeats` calls, after one call that warms up (first-call overheads)."""
    function()
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        function()
        times.append(time.perf_counter() - begin)
    return min(times)


def time_translation(args):
    """Re-measure both shipped models' time to translate the 2,000 test dates (best of 3, after a warm-up)."""
    from attention_course.date_translation import predict_indices
    from attention_course.dates import load_dates
    from attention_course.shipped_weights import load_shipped_weights
    from attention_course.transformer import WEIGHTS_FILE
    from course_build import train_date_translation as t03
    nb = notebook_namespace()
    transformer = load_shipped_weights(nb["make_transformer"](compile_model=False), WEIGHTS_FILE)
    data = load_dates()
    Xt, _ = t03.encode_pairs(data.test, data.human_vocab, data.machine_vocab)
    lstm, _ = t03.build_model(human_vocab_size=len(data.human_vocab), machine_vocab_size=len(data.machine_vocab))
    load_shipped_weights(lstm, t03.WEIGHTS_FILE)
    seconds = {"transformer": best_of(lambda: nb["translate"](transformer, nb["X_test"], nb["START_ID"], nb["Ty"])),
               "date_attention": best_of(lambda: predict_indices(lstm, Xt))}
    for name, value in seconds.items():
        path = OUT / f"{name}_training.json"
        record = json.loads(path.read_text())
        record["translate_seconds"] = round(value, 2)
        record["translate_note"] = f"best of 3 after a warm-up call, python -m course_build.train_transformer --timing, {date.today()}"
        write_record(name, record)
        print(f"{name}: translate the 2,000 test dates in {value:.2f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", action="store_true", help="record notebook 03's model instead")
    parser.add_argument("--digits", action="store_true", help="the digit-reversal task of notebook 01")
    parser.add_argument("--timing", action="store_true", help="re-measure both date models' translation time")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--note", default="", help="a sentence for the record, e.g. the machine's load")
    args = parser.parse_args()
    if args.timing:
        time_translation(args)
    elif args.baseline:
        train_baseline(args)
    elif args.digits:
        args.epochs = args.epochs or 8
        train_digits(args)
    else:
        args.epochs = args.epochs or 40
        train_dates(args)


if __name__ == "__main__":
    main()
