"""Train notebook 08's two translators from the notebook's own code and ship their weights (instructor only).

The notebook is the single source of both models: this script runs the code cells of
solutions/08_real_translation/08_real_translation.ipynb (setup, data, IBM Model 1, the solved exercises and
the model definitions; not the test cells) up to the notebook's own short training run, then trains
`make_recurrent()` or `make_transformer()` for longer with the notebook's `train_one_epoch`, measures the
dev BLEU (greedy, sacrebleu tokenize="zh") after every epoch and keeps the weights of the best epoch, shipped as float16; at the
end it translates the whole test split greedily and with the notebook's beam search.

    python -m course_build.train_real_translation recurrent     # datasets/real_translation/recurrent_translator.npz
    python -m course_build.train_real_translation transformer   # datasets/real_translation/transformer_translator.npz
    python -m course_build.train_real_translation measure       # datasets/real_translation/measurements.json

`measure` runs the whole notebook with the shipped weights (as Run All does) and records the numbers docs/benchmarks.md quotes: BLEU / chrF of every system, alignment error rates, the
influence correlations. Then refresh the checksums:  python -m attention_course.datafiles
"""
import json
import os
import time
from datetime import date
from types import SimpleNamespace

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

from attention_course.paths import REPO_ROOT as REPO
from course_build.notebook_code import run_notebook, training_arguments
from course_build.training import keep_best_epoch
from grader.course import SOLUTIONS

ASSIGNMENT = "08_real_translation"
OUT = REPO / "datasets" / "real_translation"
# part -> (record name, default epochs, learning rate, the notebook's make_* function, its batched step, its search)
PARTS = {"recurrent": ("recurrent_translator", 30, 2e-3, "make_recurrent", "recurrent_batch", "recurrent_search"),
         "transformer": ("transformer_translator", 30, 1e-3, "make_transformer", "transformer_batch", "transformer_search")}
# The Transformer's cells, in notebook order: its layers, the solved TransformerTranslator, make_transformer
TRANSFORMER_CELLS = ("class PreNormEncoderLayer(", "class TransformerTranslator(", "def make_transformer(")


def notebook_until_training():
    """The notebook's namespace just before its short training runs, with the Transformer's cells run too."""
    nb = run_notebook(ASSIGNMENT, stop_at="RECURRENT_BATCHES = ")
    import nbformat

    notebook = nbformat.read(SOLUTIONS / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for marker in TRANSFORMER_CELLS:
        cell = next(c for c in notebook.cells if c.cell_type == "code" and marker in c.source)
        exec(compile(cell.source, f"{ASSIGNMENT} Transformer cell", "exec"), nb)
    return nb


def scores(nb, hypotheses, pairs):
    bleu, chrf = nb["corpus_scores"](hypotheses, pairs)
    return {"BLEU": round(bleu, 2), "chrF": round(chrf, 2)}


def train(part, args):
    name, _, _, make, batch, search = PARTS[part]
    nb = notebook_until_training()
    dev_tokens = [p.en_tokens for p in nb["dev_pairs"]]
    model = nb[make](seed=args.seed, learning_rate=args.lr)
    if args.from_weights:  # ship weights trained before, with the history of their recorded run
        model.load_weights(args.from_weights)
        old = json.loads((OUT / f"{name}_training.json").read_text())
        run = SimpleNamespace(history=old["history"], best_epoch=old["best_epoch"], seconds=old["seconds"],
                              best_score=max(row["dev_bleu"] for row in old["history"]))
        args.epochs, args.lr, args.seed = old["epochs"], float(old["command"].split("--lr ")[1].split()[0]), args.seed
    else:
        run = fit(nb, model, batch, dev_tokens, args)
    # Shipped as float16 (half the size; the numbers below are measured with exactly these weights).
    shipped = [np.asarray(w).astype(np.float16) for w in model.get_weights()]
    model.set_weights([w.astype(np.float32) for w in shipped])
    dev = scores(nb, nb["greedy_translate"](nb[batch], model, dev_tokens), nb["dev_pairs"])
    test_pairs = nb["test_pairs"]
    test_tokens = [p.en_tokens for p in test_pairs]
    start = time.perf_counter()
    greedy = nb["greedy_translate"](nb[batch], model, test_tokens)
    beam = nb["beam_translate"](nb[search], model, test_tokens)
    record = {"model": f"notebook 08 {name}", "parameters": int(model.count_params()), "epochs": args.epochs,
              "seconds": round(run.seconds, 1), "history": run.history, "best_epoch": run.best_epoch,
              "dev_bleu_at_best_epoch": run.best_score, "dev_bleu": dev["BLEU"], "dev_chrf": dev["chrF"],
              "test": {"greedy": scores(nb, greedy, test_pairs), "beam": scores(nb, beam, test_pairs),
                       "beam_width": nb["BEAM_WIDTH"], "alpha": nb["ALPHA"], "sentences": len(test_pairs),
                       "translate_seconds": round(time.perf_counter() - start, 1)},
              "note": "weights shipped as float16; dev_bleu and test are measured with them",
              "command": f"python -m course_build.train_real_translation {part} --epochs {args.epochs} --lr {args.lr} "
                         f"--seed {args.seed}",
              "cores": os.cpu_count(), "date": date.today().isoformat()}
    print(f"best dev epoch {run.best_epoch}: dev BLEU {run.best_score:.2f} (shipped float16: {dev['BLEU']:.2f}); "
          f"test {record['test']}")
    if args.dry_run:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.npz"
    np.savez_compressed(path, **{f"arr_{k}": w for k, w in enumerate(shipped)})  # model.get_weights() order
    (OUT / f"{name}_training.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"saved {path.relative_to(REPO)} ({path.stat().st_size / 1024:.0f} KiB) and {name}_training.json")


def fit(nb, model, batch, dev_tokens, args):
    """Train args.epochs epochs (the last third at a quarter of the rate) and keep the best dev epoch's weights."""
    epoch_rng = np.random.default_rng(args.seed)
    dev_chrf = {}

    def lower_rate_at_the_end(epoch):
        if epoch > args.epochs * 2 // 3:  # a lower rate for the last third settles the weights
            model.optimizer.learning_rate.assign(args.lr / 4)
        return f"lr {float(model.optimizer.learning_rate.numpy()):.5f}"

    def dev_bleu():
        dev = scores(nb, nb["greedy_translate"](nb[batch], model, dev_tokens), nb["dev_pairs"])
        dev_chrf[len(dev_chrf) + 1] = dev["chrF"]
        return dev["BLEU"]

    run = keep_best_epoch(model, lambda epoch: SimpleNamespace(history={"loss": [nb["train_one_epoch"](model, epoch_rng)]}),
                          dev_bleu, args.epochs, metric="dev_bleu", later_wins_ties=False,
                          before_epoch=lower_rate_at_the_end)
    for row in run.history:
        row["dev_chrf"] = dev_chrf[row["epoch"]]
    return run


def measure(args):
    """Run the notebook as Run All does (its short training runs included, which do not touch the shipped weights)
    and record the numbers it prints about the shipped models."""
    start = time.perf_counter()
    nb = run_notebook(ASSIGNMENT)
    influence = {name: {"median_spearman": round(float(np.median(values[0])), 3),
                        "quartiles": [round(float(np.percentile(values[0], q)), 3) for q in (25, 75)],
                        "top_agreement": round(float(np.mean(values[1])), 3), "sentences": len(values[0])}
                 for name, values in nb["influence"].items()}
    record = {"systems": {system: {k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()}
                          for system, row in nb["results"].items()},
              "aer": {system: round(float(value), 3) for system, value in nb["aer"].items()},
              "transformer_head_aer": np.round(nb["head_aer"], 3).tolist(),
              "influence": influence,
              "comparisons": {key: {"score_a": round(c.score_a, 3), "score_b": round(c.score_b, 3),
                                    "difference": round(c.difference, 3), "interval": [round(c.low, 3), round(c.high, 3)],
                                    "sentences": c.items, "verdict": c.verdict}
                              for key, c in nb["comparisons"].items()},
              "run_seconds": round(time.perf_counter() - start, 1),
              "command": "python -m course_build.train_real_translation measure", "cores": os.cpu_count(),
              "date": date.today().isoformat()}
    print(json.dumps(record, indent=1, ensure_ascii=False))
    if not args.dry_run:
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "measurements.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print("saved datasets/real_translation/measurements.json")


def main(argv=None):
    parser = training_arguments(__doc__.splitlines()[0], epochs=0)
    parser.add_argument("part", choices=sorted(PARTS) + ["measure"], help="which model to train, or measure")
    parser.add_argument("--from-weights", help="ship these weights (a .weights.h5 of an earlier run) instead of training")
    parser.set_defaults(lr=0.0, seed=8)
    args = parser.parse_args(argv)
    if args.part == "measure":
        measure(args)
        return
    args.epochs = args.epochs or PARTS[args.part][1]
    args.lr = args.lr or PARTS[args.part][2]
    train(args.part, args)


if __name__ == "__main__":
    main()
