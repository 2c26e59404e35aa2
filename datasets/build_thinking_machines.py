"""Build the "Thinking Machines" data of notebook 04: two word embeddings and attention weights.

The Illustrated Transformer's worked example has x1 ("Thinking"), x2 ("Machines") of size 512,
W_Q, W_K, W_V of shape (512, 64), and the scores q1.k1 = 112, q1.k2 = 96 (divided by 8: 14, 12;
softmax: 0.88, 0.12). This builder makes seeded random data for which those numbers come out
exactly, plus q2.k1 = 80, q2.k2 = 104 (10 and 13 after scaling) for the second word, and eight
heads (head 0 is the single head above) with an output projection W_O of shape (512, 512).

Exactness: every value lies on a coarse binary grid (multiples of 2**-k), so all the products and
sums of the worked example are exact in float64, in any summation order. The last corrections use
2x2 blocks with determinant +-1 or a power of two, whose inverses keep values on such a grid.
The arrays are stored as float32, which holds every one of these values exactly.

Run from the repo root:  python datasets/build_thinking_machines.py   (then python -m attention_course.datafiles)
"""
from fractions import Fraction
from itertools import product
from pathlib import Path

import numpy as np

SEED = 2017  # the year of "Attention Is All You Need"
D_MODEL, D_K, N_HEADS = 512, 64, 8
TOKENS = ("Thinking", "Machines")
TARGET_SCORES = np.array([[112.0, 96.0], [80.0, 104.0]])  # q_a . k_b for a, b in (Thinking, Machines)
X_STEP, W_STEP, QK_STEP = 2.0**-3, 2.0**-8, 2.0**-4  # grids of the embeddings, weights, q and k
ROWS = (0, 1)  # embedding dimensions whose 2x2 block of X is unimodular; they carry exact fixes
OUT = Path(__file__).resolve().parent / "thinking_machines" / "thinking_machines.npz"


def on_grid(values, step):
    return np.round(np.asarray(values) / step) * step + 0.0  # + 0.0 turns -0.0 into 0.0


def fix_rows(X, W, target):
    """Change rows ROWS of W so that X @ W == target exactly (X[:, ROWS] has determinant +-1)."""
    block = X[:, ROWS]
    inverse = np.round(np.linalg.inv(block))  # integer, because det(block) = +-1
    assert np.array_equal(inverse @ block, np.eye(2)), "X[:, ROWS] must be unimodular"
    W = W.copy()
    W[list(ROWS)] += inverse @ (target - X @ W)  # (2, 2) @ (2, 64): exact on the grid
    return W


def nice_block(block, step=0.25, search=3):
    """The matrix nearest to `block` on a grid of `step` whose determinant is +-(a power of two)."""
    base = on_grid(block, step)
    best, best_distance = None, np.inf
    for deltas in product(range(-search, search + 1), repeat=4):
        candidate = base + step * np.reshape(deltas, (2, 2))
        det = Fraction(candidate[0, 0]) * Fraction(candidate[1, 1]) - Fraction(candidate[0, 1]) * Fraction(candidate[1, 0])
        if det == 0:
            continue
        det = abs(det)
        if det.numerator & (det.numerator - 1) or det.denominator & (det.denominator - 1):
            continue  # not a power of two
        if not 0.5 <= float(det) <= 8:
            continue
        distance = np.abs(candidate - block).sum()
        if distance < best_distance:
            best, best_distance = candidate, distance
    return best


def exact_inverse(block):
    """Inverse of a 2x2 block by its adjugate: exact when the determinant is a power of two."""
    (a, b), (c, d) = block
    return np.array([[d, -b], [-c, a]]) / (a * d - b * c)


def exact_scores(Q, K):
    return [[sum(Fraction(a) * Fraction(b) for a, b in zip(q, k)) for k in K] for q in Q]


def build(seed=SEED):
    rng = np.random.default_rng(seed)
    # Embeddings: N(0, 1) on the grid; the two words share a common part, as related words do.
    common = rng.normal(size=D_MODEL)
    X = on_grid(0.6 * common + 0.8 * rng.normal(size=(2, D_MODEL)), X_STEP)
    X[:, ROWS] = [[2.0, 1.0], [1.0, 1.0]]  # determinant 1

    scale = 1.3 / np.sqrt(D_MODEL)  # q and k entries of size about 1.3
    W_Q = on_grid(rng.normal(scale=scale, size=(D_MODEL, D_K)), W_STEP)
    W_K = on_grid(rng.normal(scale=scale, size=(D_MODEL, D_K)), W_STEP)
    W_V = on_grid(rng.normal(scale=1 / np.sqrt(D_MODEL), size=(D_MODEL, D_K)), W_STEP)

    # Queries: the natural projection, rounded to the q grid, with two columns whose 2x2 block
    # has a power-of-two determinant (used below to solve for k exactly).
    Q = on_grid(X @ W_Q, QK_STEP)
    columns = list(np.argsort(-np.abs(Q).min(axis=0))[:2])
    Q[:, columns] = nice_block(Q[:, columns])
    W_Q = fix_rows(X, W_Q, Q)

    # Keys: the smallest change to the natural keys that gives the target scores, on the grid...
    K = X @ W_K
    K = K + (np.linalg.pinv(Q) @ (TARGET_SCORES - Q @ K.T)).T
    K = on_grid(K, QK_STEP)
    # ...then an exact fix of the rounding error in the two chosen columns.
    residual = TARGET_SCORES - Q @ K.T  # (2 queries, 2 keys), on a fine grid
    K[:, columns] += (exact_inverse(Q[:, columns]) @ residual).T
    assert exact_scores(Q, K) == [[Fraction(int(v)) for v in row] for row in TARGET_SCORES]
    W_K = on_grid(W_K + np.linalg.pinv(X) @ (K - X @ W_K), W_STEP)  # spread the change
    W_K = fix_rows(X, W_K, K)

    # Eight heads: head 0 is the worked example, heads 1..7 are fresh random projections.
    heads = {}
    for name, first in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        rest = on_grid(rng.normal(scale=1 / np.sqrt(D_MODEL), size=(N_HEADS - 1, D_MODEL, D_K)), W_STEP)
        heads[f"heads_{name}"] = np.concatenate([first[None], rest])
    W_O = on_grid(rng.normal(scale=1 / np.sqrt(N_HEADS * D_K), size=(N_HEADS * D_K, D_MODEL)), W_STEP)
    return dict(tokens=np.array(TOKENS), X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, **heads)


def check(data):
    """The worked numbers are exact in float64 (and stored exactly in float32)."""
    for name, value in data.items():
        if value.dtype.kind == "f":
            assert np.array_equal(value.astype(np.float32).astype(np.float64), value), f"{name} is not exact in float32"
    X = data["X"]
    Q, K = X @ data["W_Q"], X @ data["W_K"]
    assert np.array_equal(Q @ K.T, TARGET_SCORES), Q @ K.T
    assert np.array_equal(np.einsum("ad,bd->ab", Q, K), TARGET_SCORES)
    Q32 = X.astype(np.float32) @ data["W_Q"].astype(np.float32)
    K32 = X.astype(np.float32) @ data["W_K"].astype(np.float32)
    assert np.abs(Q32 @ K32.T - TARGET_SCORES).max() < 1e-4


def main():
    data = build()
    check(data)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    stored = {k: (v.astype(np.float32) if v.dtype.kind == "f" else v) for k, v in data.items()}
    np.savez_compressed(OUT, **stored)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB)")
    X = data["X"]
    print("scores:\n", (X @ data["W_Q"]) @ (X @ data["W_K"]).T)


if __name__ == "__main__":
    main()
