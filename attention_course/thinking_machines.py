"""Loader for the "Thinking Machines" data of notebook 04 (built by datasets/build_thinking_machines.py).

Two 512-d word embeddings and the projections of the Illustrated Transformer's worked example,
made so that q1.k1 = 112 and q1.k2 = 96 exactly (and q2.k1 = 80, q2.k2 = 104), plus eight heads
(head 0 is the single head) and the output projection W_O.
"""
from dataclasses import dataclass

import numpy as np

from attention_course.datafiles import verified_path

FILE = "thinking_machines/thinking_machines.npz"


@dataclass(frozen=True)
class ThinkingMachines:
    """tokens: ("Thinking", "Machines").
    X: (2, 512) embeddings, row i is x_{i+1}.
    W_Q, W_K, W_V: (512, 64) projections of the single head.
    heads_W_Q, heads_W_K, heads_W_V: (8, 512, 64), one projection per head (head 0 = the single head).
    W_O: (512, 512) output projection applied to the eight concatenated heads.
    """
    tokens: tuple
    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    heads_W_Q: np.ndarray
    heads_W_K: np.ndarray
    heads_W_V: np.ndarray
    W_O: np.ndarray


def load_thinking_machines(dtype=np.float64) -> ThinkingMachines:
    """Read the arrays (checksum verified). float64 by default: the worked numbers are then exact."""
    with np.load(verified_path(FILE), allow_pickle=False) as data:
        arrays = {name: data[name].astype(dtype) for name in data.files if name != "tokens"}
        tokens = tuple(str(t) for t in data["tokens"])
    return ThinkingMachines(tokens=tokens, **arrays)
