"""Train notebook 05's models and ship their weights (instructor only; students never receive this).

The notebook itself is the single source of the models: this script runs every code cell of
solutions/05_attention_in_models/05_attention_in_models.ipynb in one namespace with training on
(NBGRADER_EXECUTION unset), then saves each model that `fit_or_load` registered in `trained` to
datasets/attention_in_models/weights/<name>.weights.h5. Autograding and Validate load those files
instead of training. Run from the repo root, then refresh the checksums:

    python -m course_build.train_attention_in_models && python -m attention_course.datafiles
"""
import argparse
import os
import time

from attention_course.paths import REPO_ROOT
from course_build.notebook_code import run_notebook

OUT = REPO_ROOT / "datasets" / "attention_in_models" / "weights"


def main():
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    start = time.perf_counter()
    namespace = run_notebook("05_attention_in_models")
    print(f"notebook ran in {time.perf_counter() - start:.1f} s")
    OUT.mkdir(parents=True, exist_ok=True)
    for name, model in namespace["trained"].items():
        path = OUT / f"{name}.weights.h5"
        model.optimizer = None  # ship the model's weights only: the notebook loads them into an uncompiled model
        model.save_weights(path)
        print(f"saved {path.relative_to(REPO_ROOT)} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
