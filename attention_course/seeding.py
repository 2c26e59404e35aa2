"""The one seeding helper of the course."""
import os
import random
import sys

import numpy as np


def set_seed(seed: int = 0) -> np.random.Generator:
    """Seed Python, NumPy and (when it is imported) Keras/TensorFlow; return a NumPy Generator.

    Keras is seeded only if the notebook imported it already, so NumPy-only notebooks
    do not pay TensorFlow's start-up time.
    """
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    if "keras" in sys.modules:
        sys.modules["keras"].utils.set_random_seed(seed)
    return np.random.default_rng(seed)
