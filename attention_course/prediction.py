"""The course's one way to run a trained model on many examples: direct calls in chunks.

For the small models of the course this is faster than `model.predict`, which traces a graph first
(and warns about retracing when it is called with many batch sizes).
"""
import numpy as np


def predict_in_chunks(model, inputs, batch_size=500):
    """model(inputs) for any number of examples, `batch_size` at a time, as NumPy.

    inputs: one array, or a list of arrays with the same first axis (a model with several inputs).
    Returns one array, or a list of arrays when the model has several outputs.
    """
    several_inputs = isinstance(inputs, (list, tuple))
    arrays = list(inputs) if several_inputs else [inputs]
    chunks = []
    for start in range(0, len(arrays[0]), batch_size):
        part = [np.asarray(a[start:start + batch_size]) for a in arrays]
        out = model(part if several_inputs else part[0], training=False)
        chunks.append([np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else np.asarray(out))
    if chunks and isinstance(chunks[0], list):
        return [np.concatenate(parts, axis=0) for parts in zip(*chunks)]
    return np.concatenate(chunks, axis=0)
