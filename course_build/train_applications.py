"""Train notebook 07's two models from the notebook's own code and ship their weights (instructor only).

The notebook is the single source of both models: this script runs the code cells of
solutions/07_attention_applications/07_attention_applications.ipynb (setup, data, the solved
exercises and the model definitions; not the test cells) up to the notebook's own short training run
of the model it trains, then trains `make_listener()` or `make_captioner()` for longer and keeps the
weights of the best dev epoch.

    python -m course_build.train_applications speech     # datasets/applications/listen_attend_spell.weights.h5
    python -m course_build.train_applications scenes     # datasets/applications/show_attend_tell.weights.h5

Train speech first: the notebook loads the shipped speech weights before its captioning part.
Then refresh the checksums:  python -m attention_course.datafiles
"""
import json
import os
from datetime import date

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

from attention_course.paths import REPO_ROOT
from course_build.notebook_code import run_notebook, training_arguments
from course_build.training import keep_best_epoch

ASSIGNMENT = "07_attention_applications"
OUT = REPO_ROOT / "datasets" / "applications"
# part -> (the text that starts the notebook's short run of it, record name, default epochs)
PARTS = {"speech": ("SPEECH_EPOCHS = ", "listen_attend_spell", 40),
         "scenes": ("CAPTION_EPOCHS = ", "show_attend_tell", 25)}


def dev_score(nb, part, model):
    """Dev character error rate (speech, lower is better) or dev caption exact match (scenes)."""
    if part == "speech":
        features, mask = nb["speech_dev"][:2]
        ids, _ = nb["transcribe"](model.listen, model.spell_step, features, mask)
        return nb["character_error_rate"](nb["speech"]["dev"].transcripts, [nb["spoken_digits"].decode_ids(r) for r in ids])
    ids, _ = nb["caption_images"](model.see, model.tell_step, nb["caption_dev"][0])
    decode = nb["captioned_scenes"].decode_ids
    return float(np.mean([decode(r) == want for r, want in zip(ids, nb["scenes"]["dev"].captions)]))


def train(part, args):
    marker, name, _ = PARTS[part]
    nb = run_notebook(ASSIGNMENT, stop_at=marker)
    make = nb["make_listener"] if part == "speech" else nb["make_captioner"]
    arrays = nb["speech_train"] if part == "speech" else nb["caption_train"]
    inputs, targets = arrays[:-1], arrays[-1]
    model = make(seed=args.seed)
    model.optimizer.learning_rate.assign(args.lr)
    lower_is_better = part == "speech"
    metric = "dev_cer" if lower_is_better else "dev_exact_match"

    def lower_rate_at_the_end(epoch):
        if epoch > args.epochs * 2 // 3:  # a lower rate for the last third settles the weights
            model.optimizer.learning_rate.assign(args.lr / 4)
        return ""

    run = keep_best_epoch(
        model, lambda epoch: model.fit(inputs, targets, epochs=1, batch_size=args.batch_size, shuffle=True, verbose=0),
        lambda: dev_score(nb, part, model), args.epochs, metric=metric, lower_is_better=lower_is_better,
        later_wins_ties=False, before_epoch=lower_rate_at_the_end)
    record = {"model": f"notebook 07 {name}", "parameters": int(model.count_params()), "epochs": args.epochs,
              "seconds": round(run.seconds, 1), "history": run.history, "best_epoch": run.best_epoch,
              metric: run.best_score,
              "command": f"python -m course_build.train_applications {part} --epochs {args.epochs} --lr {args.lr} "
                         f"--batch-size {args.batch_size} --seed {args.seed}",
              "cores": os.cpu_count(), "date": date.today().isoformat()}
    print(f"best dev epoch {run.best_epoch}: {metric} {run.best_score:.4f}")
    if args.dry_run:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    model.optimizer = None  # the weights only: the notebook loads them into an uncompiled model
    path = OUT / f"{name}.weights.h5"
    model.save_weights(path)
    (OUT / f"{name}_training.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"saved {path.relative_to(REPO_ROOT)} ({path.stat().st_size / 1024:.0f} KiB) and {name}_training.json")


def main(argv=None):
    parser = training_arguments(__doc__.splitlines()[0], epochs=0)
    parser.add_argument("part", choices=sorted(PARTS), help="which model to train")
    parser.set_defaults(batch_size=64, lr=2e-3)
    args = parser.parse_args(argv)
    args.epochs = args.epochs or PARTS[args.part][2]
    train(args.part, args)


if __name__ == "__main__":
    main()
