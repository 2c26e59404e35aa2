"""Build the digit-string reversal dataset of notebooks 01 and 03: "90417" -> "71409".

Seeded with attention_course.digit_strings.make_pairs and committed as TSV, so the data never
changes with the NumPy version. Run from the repo root:

    python datasets/build_digit_strings.py && python -m attention_course.datafiles
"""
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from attention_course.digit_strings import make_pairs  # noqa: E402

OUT = Path(__file__).resolve().parent / "digit_strings"
SPLITS = {  # split -> (n, seed, per_length)
    "train": (20_000, 101, False),
    "dev": (50, 102, True),
    "test": (100, 103, True),
}


def main():
    OUT.mkdir(exist_ok=True)
    seen = set()
    for split, (n, seed, per_length) in SPLITS.items():
        pairs = make_pairs(n, seed, per_length=per_length)
        overlap = sum(source in seen for source, _ in pairs)
        seen.update(source for source, _ in pairs)
        with open(OUT / f"{split}.tsv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE)
            writer.writerow(["source", "target"])
            writer.writerows(pairs)
        print(f"{split}: {len(pairs)} pairs, {overlap} sources also in an earlier split")


if __name__ == "__main__":
    main()
