"""Build the six small synthetic tasks of notebook 05 (attention inside real models).

Each task is chosen so that one idea of the notebook shows in the accuracies:

- marker:   a stream of letters with one "*" at a random place; the label is the letter right
            after it (LSTM: last state vs mean vs attention pooling).
- majority: 40 words with 2..9 opinion words among neutral ones; the label says whether the
            positive words outnumber the negative ones (CNN: max pooling vs attention pooling).
- pairs:    two 8-word sentences; the label says whether they share a word (attention between
            two sequences before the convolution, the idea of ABCNN-1).
- reviews:  documents of up to 5 sentences of up to 8 words, each sentence with one opinion word;
            the label is the opinion of the sentence that contains "overall" (hierarchical attention).
- scenes:   eight "colour shape" items and a question naming a shape; the label is that shape's
            colour (general attention with an outside query vs self attention).
- images:   32x32 RGB pictures with a red, a green and a blue object (square, plus or ring) in a
            4x4 grid of cells; the label for a colour is the shape of the object of that colour
            (spatial attention, as in image captioning).

Token 0 is padding everywhere. Run from the repo root:

    python datasets/build_attention_in_models.py && python -m attention_course.datafiles
"""
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "attention_in_models"
SEED = 505
N_TRAIN, N_TEST = 2000, 1000


def marker_task(rng, n, length=60):
    vocab = ["<pad>", "A", "B", "C", "D", "*"]
    x = np.zeros((n, length), np.int8)
    y = rng.integers(0, 4, n)
    for i in range(n):
        size = rng.integers(length // 2, length + 1)  # right-padded to `length`
        x[i, :size] = rng.integers(1, 5, size)
        where = rng.integers(0, size - 1)
        x[i, where], x[i, where + 1] = 5, 1 + y[i]
    return vocab, x, y.astype(np.int8)


def majority_task(rng, n, length=40):
    neutral = ["the", "film", "was", "a", "and", "plot", "actor", "it", "scene", "very"]
    vocab = ["<pad>"] + neutral + ["good", "great", "bad", "awful"]
    x = rng.integers(1, 11, (n, length)).astype(np.int8)
    y = np.zeros(n, np.int8)
    for i in range(n):
        n_pos, n_neg = rng.choice(np.arange(1, 6), 2, replace=False)
        spots = rng.permutation(length)[: n_pos + n_neg]
        x[i, spots[:n_pos]] = rng.integers(11, 13, n_pos)
        x[i, spots[n_pos:]] = rng.integers(13, 15, n_neg)
        y[i] = n_pos > n_neg
    return vocab, x, y


def pairs_task(rng, n, length=8, n_words=30):
    vocab = ["<pad>"] + [f"w{k:02d}" for k in range(1, n_words + 1)]
    a = np.zeros((n, length), np.int8)
    b = np.zeros((n, length), np.int8)
    y = rng.integers(0, 2, n).astype(np.int8)
    for i in range(n):
        words = rng.permutation(np.arange(1, n_words + 1))
        a[i], b[i] = words[:length], words[length: 2 * length]
        if y[i]:
            b[i, rng.integers(length)] = a[i, rng.integers(length)]
    return vocab, a, b, y


def reviews_task(rng, n, n_sentences=5, n_words=8):
    filler = ["the", "food", "was", "staff", "room", "view", "price", "and", "very", "it"]
    vocab = ["<pad>"] + filler + ["good", "great", "bad", "awful", "overall"]
    positive, negative, overall = [11, 12], [13, 14], 15
    x = np.zeros((n, n_sentences, n_words), np.int8)
    y = np.zeros(n, np.int8)
    for i in range(n):
        count = rng.integers(3, n_sentences + 1)  # later sentences are padding
        key = rng.integers(count)
        for s in range(count):
            size = rng.integers(4, n_words + 1)
            words = rng.integers(1, 11, size)
            polarity = rng.integers(2)
            slots = rng.permutation(size)
            words[slots[0]] = rng.choice(positive if polarity else negative)
            if s == key:
                words[slots[1]] = overall
                y[i] = polarity
            x[i, s, :size] = words
    return vocab, x, y


def scenes_task(rng, n, n_items=8):
    shapes = ["cup", "hat", "box", "pen", "key", "car", "bag", "cat", "dog", "toy"]
    colours = ["red", "green", "blue", "gold"]
    vocab = ["<pad>"] + [f"{c} {s}" for s in shapes for c in colours]  # id = 1 + 4 * shape + colour
    x = np.zeros((n, n_items), np.int8)
    question = np.zeros(n, np.int8)
    y = np.zeros(n, np.int8)
    for i in range(n):
        chosen = rng.permutation(len(shapes))[:n_items]
        colour = rng.integers(0, len(colours), n_items)
        x[i] = 1 + 4 * chosen + colour
        pick = rng.integers(n_items)
        question[i], y[i] = chosen[pick], colour[pick]
    return vocab, shapes, colours, x, question, y


def draw(shape, cell=8):
    patch = np.zeros((cell, cell), bool)
    if shape == 0:  # square
        patch[1:7, 1:7] = True
    elif shape == 1:  # plus
        patch[3:5, 1:7] = patch[1:7, 3:5] = True
    else:  # ring
        patch[1:7, 1:7] = True
        patch[3:5, 3:5] = False
    return patch


def images_task(rng, n, grid=4, cell=8):
    colours = np.array([[230, 40, 40], [40, 200, 60], [50, 90, 240]], np.uint8)
    images = np.zeros((n, grid * cell, grid * cell, 3), np.uint8)
    shapes = rng.integers(0, 3, (n, 3)).astype(np.int8)  # shape of the red, green, blue object
    cells = np.zeros((n, 3), np.int8)
    for i in range(n):
        cells[i] = rng.permutation(grid * grid)[:3]
        for c in range(3):
            row, col = divmod(int(cells[i, c]), grid)
            patch = draw(shapes[i, c], cell)
            images[i, row * cell:(row + 1) * cell, col * cell:(col + 1) * cell][patch] = colours[c]
    return images, shapes, cells


def main():
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(SEED)
    splits = {"train": N_TRAIN, "test": N_TEST}

    def save(name, **arrays):
        np.savez_compressed(OUT / f"{name}.npz", **arrays)
        print(name, {k: v.shape for k, v in arrays.items()})

    data = {}
    for split, n in splits.items():
        vocab, x, y = marker_task(rng, n)
        data.update({f"x_{split}": x, f"y_{split}": y})
    save("marker", vocab=np.array(vocab), labels=np.array(["A", "B", "C", "D"]), **data)

    data = {}
    for split, n in splits.items():
        vocab, x, y = majority_task(rng, n)
        data.update({f"x_{split}": x, f"y_{split}": y})
    save("majority", vocab=np.array(vocab), labels=np.array(["more negative", "more positive"]), **data)

    data = {}
    for split, n in splits.items():
        vocab, a, b, y = pairs_task(rng, n)
        data.update({f"a_{split}": a, f"b_{split}": b, f"y_{split}": y})
    save("pairs", vocab=np.array(vocab), labels=np.array(["no shared word", "shared word"]), **data)

    data = {}
    for split, n in splits.items():
        vocab, x, y = reviews_task(rng, n)
        data.update({f"x_{split}": x, f"y_{split}": y})
    save("reviews", vocab=np.array(vocab), labels=np.array(["negative", "positive"]), **data)

    data = {}
    for split, n in splits.items():
        vocab, shapes, colours, x, q, y = scenes_task(rng, n)
        data.update({f"x_{split}": x, f"q_{split}": q, f"y_{split}": y})
    save("scenes", vocab=np.array(vocab), questions=np.array(shapes), labels=np.array(colours), **data)

    data = {}
    for split, n in splits.items():
        images, shapes, cells = images_task(rng, n)
        data.update({f"images_{split}": images, f"shapes_{split}": shapes, f"cells_{split}": cells})
    save("images", colours=np.array(["red", "green", "blue"]), labels=np.array(["square", "plus", "ring"]),
         **data)


if __name__ == "__main__":
    main()
