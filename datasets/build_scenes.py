"""Build the captioned-scenes dataset of the "show, attend and tell" exercise (Xu et al. 2015).

Each 48x48 image shows two objects on black, in two cells of a 3x3 grid of 16-px cells that share
a row or a column: a big one (14 px across) and a small one (8 px), each a circle, square or
triangle in one of four colours, and the two differ in colour, shape or both. The caption names
the big object first and says where it is relative to the small one:
"a red circle left of a blue square". Objects move by up to two pixels inside their cell and
their colour by up to +-20 per channel; there is no pixel noise, so the file compresses well.
Vocabulary, colours and the caption format come from attention_course.captioned_scenes.

Writes datasets/captioned_scenes/scenes.npz (train 6000, dev 500, test 1000 images, each split
with its own seed). Run from the repo root:

    python datasets/build_scenes.py && python -m attention_course.datafiles
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from attention_course.captioned_scenes import CELL, COLOURS, IMAGE_SIZE, RELATIONS, SHAPES, caption_of  # noqa: E402

OUT = Path(__file__).resolve().parent / "captioned_scenes"
SPLITS = {"train": (6000, 2015), "dev": (500, 2016), "test": (1000, 2017)}  # split -> (n, seed)
BIG, SMALL = 14, 8
# Top-left offset range of an object in its cell: the big one anywhere it fits (0..2 px), the
# small one within two pixels of the cell's centre.
OFFSETS = {BIG: (0, CELL - BIG), SMALL: ((CELL - SMALL) // 2 - 2, (CELL - SMALL) // 2 + 2)}
JITTER = 20  # per-channel colour jitter of each object
RGB = np.array(list(COLOURS.values()), np.int16)
N_OBJECTS = len(COLOURS) * len(SHAPES)  # object k has colour k // len(SHAPES), shape k % len(SHAPES)


def shape_mask(shape, size):
    """A (size, size) bool mask of a circle, square or (upward) triangle touching all four edges."""
    y, x = np.mgrid[:size, :size]
    centre = (size - 1) / 2
    name = SHAPES[shape]
    if name == "circle":
        return (x - centre) ** 2 + (y - centre) ** 2 <= (size / 2) ** 2
    if name == "square":
        return np.ones((size, size), bool)
    return np.abs(x - centre) <= (y + 1) / 2  # two pixels wide at the top, full width at the bottom


def cells_for(relation, rng):
    """(row, column) of the big and of the small object's cells for a relation index."""
    line = int(rng.integers(3))
    first, second = sorted(int(i) for i in rng.choice(3, 2, replace=False))
    # "left of" / "above": the big object has the smaller column / row; else the larger one.
    near, far = (first, second) if RELATIONS[relation] in ("left of", "above") else (second, first)
    if RELATIONS[relation] in ("left of", "right of"):
        return (line, near), (line, far)
    return (near, line), (far, line)


def make_split(n, seed):
    """n seeded scenes: images, captions, boxes, colours, shapes, relations (big object first)."""
    rng = np.random.default_rng(seed)
    images = np.zeros((n, IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8)
    boxes = np.zeros((n, 2, 4), np.int16)
    colours = np.zeros((n, 2), np.int8)
    shapes = np.zeros((n, 2), np.int8)
    relations = rng.integers(len(RELATIONS), size=n).astype(np.int8)
    captions = []
    for i in range(n):
        big = int(rng.integers(N_OBJECTS))
        small = (big + int(rng.integers(1, N_OBJECTS))) % N_OBJECTS  # any object but the big one
        cells = cells_for(relations[i], rng)
        for j, (obj, size, (row, col)) in enumerate(zip((big, small), (BIG, SMALL), cells)):
            colours[i, j], shapes[i, j] = divmod(obj, len(SHAPES))
            low, high = OFFSETS[size]
            x0, y0 = col * CELL + int(rng.integers(low, high + 1)), row * CELL + int(rng.integers(low, high + 1))
            colour = RGB[colours[i, j]] + rng.integers(-JITTER, JITTER + 1, 3)
            images[i, y0:y0 + size, x0:x0 + size][shape_mask(shapes[i, j], size)] = colour
            boxes[i, j] = x0, y0, x0 + size, y0 + size
        captions.append(caption_of(divmod(big, len(SHAPES)), relations[i], divmod(small, len(SHAPES))))
    return {"images": images, "captions": np.array(captions), "boxes": boxes,
            "colours": colours, "shapes": shapes, "relations": relations}


def build():
    """Every split's arrays, keyed "<split>_<name>" as in the committed file."""
    arrays = {}
    for split, (n, seed) in SPLITS.items():
        arrays.update({f"{split}_{name}": value for name, value in make_split(n, seed).items()})
    return arrays


def main():
    arrays = build()
    # Every (big object, relation, small object) combination should be seen in training.
    combos = set(zip(*(arrays["train_colours"].T), *(arrays["train_shapes"].T), arrays["train_relations"]))
    assert len(combos) == N_OBJECTS * (N_OBJECTS - 1) * len(RELATIONS), f"train has only {len(combos)} combinations"
    OUT.mkdir(exist_ok=True)
    np.savez_compressed(OUT / "scenes.npz", **arrays)
    size = (OUT / "scenes.npz").stat().st_size
    print(f"{OUT / 'scenes.npz'}: {size / 1e6:.2f} MB, {len(combos)} combinations in train, "
          + ", ".join(f"{split} {n}" for split, (n, _) in SPLITS.items()))


if __name__ == "__main__":
    main()
