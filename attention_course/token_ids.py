"""Token-id sequences of the decoders that write `<end>` (notebook 07's speller and captioner)."""
import numpy as np


def end_padded(rows, length, end_id, pad_id, texts, unit) -> np.ndarray:
    """int32 (n, length): each row of ids, then `end_id`, then `pad_id` up to `length`; `texts` are the
    rows as written and `unit` names their tokens ("digits", "words"), for the message when one is too long."""
    ids = np.full((len(rows), length), pad_id, np.int32)
    for i, (row, text) in enumerate(zip(rows, texts)):
        if len(row) + 1 > length:
            raise ValueError(f"{text!r} has {len(row)} {unit}; with <end> it needs more than {length} ids")
        ids[i, :len(row) + 1] = list(row) + [end_id]
    return ids


def shift_right(ids, start_id) -> np.ndarray:
    """The decoder's input under teacher forcing: `start_id`, then the targets without their last id."""
    ids = np.asarray(ids, dtype=np.int32)
    start = np.full(ids.shape[:-1] + (1,), start_id, dtype=np.int32)
    return np.concatenate([start, ids[..., :-1]], axis=-1)


def tokens_until_end(ids, vocab, end_id, skip=()) -> list:
    """The tokens of one row of ids up to its first `end_id`, the ids in `skip` (padding, start) left out."""
    tokens = []
    for i in np.asarray(ids).ravel().tolist():
        if i == end_id:
            break
        if i not in skip:
            tokens.append(vocab[i])
    return tokens
