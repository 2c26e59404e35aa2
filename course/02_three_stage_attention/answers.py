"""Wrong and differently written answers for notebook 02_three_stage_attention.

Each wrong answer is a mistake a student makes (no scaling, softmax over the wrong axis, an unstable
softmax, an inverted mask, NaN on a blocked row, cosine without norms, a window off by one, ...):
it must lose points. Each correct variant (einsum instead of matmul, another stable formula) must keep
them all.
"""
ASSIGNMENT = "02_three_stage_attention"

WRONG = {
    "dot_score": {
        "keys_times_queries": '''
def dot_score(Q, K):
    return K @ np.swapaxes(Q, -1, -2)
''',
        "transpose_reverses_all_axes": '''
def dot_score(Q, K):
    return Q @ K.T
''',
        "np_dot_on_batches": '''
def dot_score(Q, K):
    return np.dot(Q, np.swapaxes(K, -1, -2))
''',
        "elementwise_product": '''
def dot_score(Q, K):
    return (Q * K).sum(axis=-1)
''',
        "swapaxes_of_the_first_two_axes": '''
def dot_score(Q, K):
    return Q @ np.swapaxes(K, 0, 1)
''',
        "einsum_for_2d_only": '''
def dot_score(Q, K):
    return np.einsum("qd,kd->qk", Q, K)
''',
    },
    "scaled_dot_score": {
        "no_scaling": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K)
''',
        "divide_by_d_k_not_its_root": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K) / Q.shape[-1]
''',
        "d_k_from_axis_1": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K) / np.sqrt(Q.shape[1])
''',
        "root_of_number_of_keys": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K) / np.sqrt(K.shape[-2])
''',
        "d_k_from_len_of_first_item": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K) / np.sqrt(len(Q[0]))
''',
        "d_k_from_K_axis_1": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K) / np.sqrt(K.shape[1])
''',
        "divides_in_place_fails_on_integers": '''
def scaled_dot_score(Q, K):
    scores = dot_score(Q, K)
    scores /= np.sqrt(Q.shape[-1])
    return scores
''',
    },
    "cosine_score": {
        "no_norms": '''
def cosine_score(Q, K):
    return dot_score(Q, K)
''',
        "query_norm_only": '''
def cosine_score(Q, K):
    return dot_score(Q / np.maximum(np.linalg.norm(Q, axis=-1, keepdims=True), 1e-12), K)
''',
        "norms_over_wrong_axis": '''
def cosine_score(Q, K):
    Q_unit = Q / np.maximum(np.linalg.norm(Q, axis=-2, keepdims=True), 1e-12)
    K_unit = K / np.maximum(np.linalg.norm(K, axis=-2, keepdims=True), 1e-12)
    return dot_score(Q_unit, K_unit)
''',
        "nan_for_zero_vectors": '''
def cosine_score(Q, K):
    Q_unit = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    K_unit = K / np.linalg.norm(K, axis=-1, keepdims=True)
    return dot_score(Q_unit, K_unit)
''',
        "norms_over_axis_1": '''
def cosine_score(Q, K):
    Q_unit = Q / np.maximum(np.linalg.norm(Q, axis=1, keepdims=True), 1e-12)
    K_unit = K / np.maximum(np.linalg.norm(K, axis=1, keepdims=True), 1e-12)
    return dot_score(Q_unit, K_unit)
''',
        "own_product_with_K_T": '''
def cosine_score(Q, K):
    Q_unit = Q / np.maximum(np.linalg.norm(Q, axis=-1, keepdims=True), 1e-12)
    K_unit = K / np.maximum(np.linalg.norm(K, axis=-1, keepdims=True), 1e-12)
    return Q_unit @ K_unit.T
''',
    },
    "additive_score": {
        "no_tanh": '''
def additive_score(Q, K, W_q, W_k, v):
    return ((Q @ W_q)[..., :, None, :] + (K @ W_k)[..., None, :, :]) @ v
''',
        "relu_instead_of_tanh": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.maximum((Q @ W_q)[..., :, None, :] + (K @ W_k)[..., None, :, :], 0.0) @ v
''',
        "sum_instead_of_v": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.tanh((Q @ W_q)[..., :, None, :] + (K @ W_k)[..., None, :, :]).sum(axis=-1)
''',
        "pairs_transposed": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.tanh((Q @ W_q)[..., None, :, :] + (K @ W_k)[..., :, None, :]) @ v
''',
        "weights_swapped": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.tanh((Q @ W_k)[..., :, None, :] + (K @ W_q)[..., None, :, :]) @ v
''',
        "new_axes_counted_from_the_front": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.tanh((Q @ W_q)[:, None, :] + (K @ W_k)[None, :, :]) @ v
''',
        "tanh_after_v": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.tanh(((Q @ W_q)[..., :, None, :] + (K @ W_k)[..., None, :, :]) @ v)
''',
    },
    "softmax": {
        "unstable_overflows": '''
def softmax(x, axis=-1):
    exps = np.exp(x)
    return exps / np.sum(exps, axis=axis, keepdims=True)
''',
        "axis_ignored": '''
def softmax(x, axis=-1):
    exps = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exps / np.sum(exps, axis=-1, keepdims=True)
''',
        "global_max_underflows": '''
def softmax(x, axis=-1):
    exps = np.exp(x - np.max(x))
    return exps / np.sum(exps, axis=axis, keepdims=True)
''',
        "modifies_input_in_place": '''
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    exps = np.exp(x)
    return exps / np.sum(exps, axis=axis, keepdims=True)
''',
        "no_keepdims": '''
def softmax(x, axis=-1):
    exps = np.exp(x - np.max(x, axis=axis))
    return exps / np.sum(exps, axis=axis)
''',
        "sum_without_keepdims": '''
def softmax(x, axis=-1):
    exps = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exps / np.sum(exps, axis=axis)
''',
    },
    "masked_softmax": {
        "mask_inverted": '''
def masked_softmax(scores, mask):
    blocked = np.broadcast_to(np.asarray(mask).astype(bool), scores.shape)
    masked = np.where(blocked, -np.inf, scores)
    row_max = np.max(masked, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exps = np.exp(masked - row_max)
    totals = np.sum(exps, axis=-1, keepdims=True)
    return np.divide(exps, totals, out=np.zeros_like(exps), where=totals > 0)
''',
        "nan_on_blocked_row": '''
def masked_softmax(scores, mask):
    return softmax(np.where(np.asarray(mask).astype(bool), scores, -np.inf), axis=-1)
''',
        "keras_minus_1e9_uniform_on_blocked_row": '''
def masked_softmax(scores, mask):
    return softmax(scores + (1.0 - np.asarray(mask, dtype=float)) * -1e9, axis=-1)
''',
        "softmax_then_mask_no_renormalising": '''
def masked_softmax(scores, mask):
    return softmax(scores, axis=-1) * np.asarray(mask, dtype=float)
''',
        "max_over_blocked_keys_too": '''
def masked_softmax(scores, mask):
    allowed = np.broadcast_to(np.asarray(mask, dtype=float), scores.shape)
    exps = np.exp(scores - np.max(scores, axis=-1, keepdims=True)) * allowed
    totals = np.sum(exps, axis=-1, keepdims=True)
    return np.divide(exps, totals, out=np.zeros_like(exps), where=totals > 0)
''',
        "boolean_index_does_not_broadcast": '''
def masked_softmax(scores, mask):
    masked = np.array(scores, dtype=float)
    masked[~np.asarray(mask, dtype=bool)] = -np.inf
    row_max = np.max(masked, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exps = np.exp(masked - row_max)
    totals = np.sum(exps, axis=-1, keepdims=True)
    return np.divide(exps, totals, out=np.zeros_like(exps), where=totals > 0)
''',
        "scores_times_mask": '''
def masked_softmax(scores, mask):
    return softmax(scores * np.asarray(mask, dtype=float), axis=-1)
''',
        "blocked_scores_written_into_a_copy_of_int_scores": '''
def masked_softmax(scores, mask):
    allowed = np.broadcast_to(np.asarray(mask).astype(bool), np.shape(scores))
    masked = np.array(scores)
    masked[~allowed] = -np.inf
    row_max = np.max(masked, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exps = np.exp(masked - row_max)
    totals = np.sum(exps, axis=-1, keepdims=True)
    return np.divide(exps, totals, out=np.zeros_like(exps), where=totals > 0)
''',
    },
    "attention": {
        "returns_weights_first": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    scores = score_fn(Q, K)
    weights = softmax(scores, axis=-1) if mask is None else masked_softmax(scores, mask)
    return weights, weights @ V
''',
        "softmax_over_queries": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    scores = score_fn(Q, K)
    weights = softmax(scores, axis=-2)
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights
''',
        "score_fn_ignored": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    scores = scaled_dot_score(Q, K)
    weights = softmax(scores, axis=-1) if mask is None else masked_softmax(scores, mask)
    return weights @ V, weights
''',
        "mask_ignored": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    weights = softmax(score_fn(Q, K), axis=-1)
    return weights @ V, weights
''',
        "mixes_keys_not_values": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    scores = score_fn(Q, K)
    weights = softmax(scores, axis=-1) if mask is None else masked_softmax(scores, mask)
    return weights @ K, weights
''',
        "np_dot_on_batches": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    scores = score_fn(Q, K)
    weights = softmax(scores, axis=-1) if mask is None else masked_softmax(scores, mask)
    return np.dot(weights, V), weights
''',
        "unscaled_default_score": '''
def attention(Q, K, V, score_fn=dot_score, mask=None):
    scores = score_fn(Q, K)
    weights = softmax(scores, axis=-1) if mask is None else masked_softmax(scores, mask)
    return weights @ V, weights
''',
    },
    "hard_attention": {
        "argmin": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    scores = score_fn(Q, K)
    weights = (np.arange(scores.shape[-1]) == np.argmin(scores, axis=-1)[..., None]).astype(float)
    return weights @ V, weights
''',
        "soft_weights": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    return attention(Q, K, V, score_fn=score_fn)
''',
        "every_tied_key_gets_1": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    scores = score_fn(Q, K)
    weights = (scores == np.max(scores, axis=-1, keepdims=True)).astype(float)
    return weights @ V, weights
''',
        "argmax_over_queries": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    scores = score_fn(Q, K)
    best = np.argmax(scores, axis=-2)
    weights = (np.arange(scores.shape[-2]) == best[..., :, None]).astype(float)
    weights = np.swapaxes(weights, -1, -2)
    return weights @ V, weights
''',
        "score_fn_ignored": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    scores = scaled_dot_score(Q, K)
    weights = (np.arange(scores.shape[-1]) == np.argmax(scores, axis=-1)[..., None]).astype(float)
    return weights @ V, weights
''',
        "values_indexed_by_argmax": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    scores = score_fn(Q, K)
    best = np.argmax(scores, axis=-1)
    weights = (np.arange(scores.shape[-1]) == best[..., None]).astype(float)
    return V[best], weights
''',
    },
    "local_attention": {
        "window_off_by_one": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(K.shape[-2]) - np.asarray(centers)[..., None]
    return attention(Q, K, V, mask=np.abs(offsets) < window)
''',
        "window_starts_at_centre": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(K.shape[-2]) - np.asarray(centers)[..., None]
    return attention(Q, K, V, mask=(offsets >= 0) & (offsets <= 2 * window))
''',
        "centres_ignored": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(K.shape[-2]) - np.arange(Q.shape[-2])[:, None]
    return attention(Q, K, V, mask=np.abs(offsets) <= window)
''',
        "mask_inverted": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(K.shape[-2]) - np.asarray(centers)[..., None]
    return attention(Q, K, V, mask=np.abs(offsets) > window)
''',
        "first_example_centres_for_whole_batch": '''
def local_attention(Q, K, V, centers, window):
    centers = np.asarray(centers).reshape(-1, Q.shape[-2])[0]
    offsets = np.arange(K.shape[-2]) - centers[:, None]
    return attention(Q, K, V, mask=np.abs(offsets) <= window)
''',
        "positions_from_len_K": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(len(K)) - np.asarray(centers)[..., None]
    return attention(Q, K, V, mask=np.abs(offsets) <= window)
''',
        "centres_indexed_from_the_front": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(K.shape[-2]) - np.asarray(centers)[:, None]
    return attention(Q, K, V, mask=np.abs(offsets) <= window)
''',
        "unscaled_scores": '''
def local_attention(Q, K, V, centers, window):
    offsets = np.arange(K.shape[-2]) - np.asarray(centers)[..., None]
    return attention(Q, K, V, score_fn=dot_score, mask=np.abs(offsets) <= window)
''',
        "centres_reshaped_to_the_query_shape": '''
def local_attention(Q, K, V, centers, window):
    centers = np.asarray(centers).reshape(Q.shape[:-1])
    offsets = np.arange(K.shape[-2]) - centers[..., None]
    return attention(Q, K, V, mask=np.abs(offsets) <= window)
''',
        "centres_clipped_into_range": '''
def local_attention(Q, K, V, centers, window):
    centers = np.clip(np.asarray(centers), 0, K.shape[-2] - 1)
    offsets = np.arange(K.shape[-2]) - centers[..., None]
    return attention(Q, K, V, mask=np.abs(offsets) <= window)
''',
    },
}

CORRECT = {
    "dot_score": {
        "einsum": '''
def dot_score(Q, K):
    return np.einsum("...qd,...kd->...qk", Q, K)
''',
        "matmul_moveaxis": '''
def dot_score(Q, K):
    return np.matmul(Q, np.moveaxis(K, -1, -2))
''',
    },
    "scaled_dot_score": {
        "einsum_scale_queries_first": '''
def scaled_dot_score(Q, K):
    return np.einsum("...qd,...kd->...qk", Q / np.sqrt(Q.shape[-1]), K)
''',
        "key_size": '''
def scaled_dot_score(Q, K):
    return dot_score(Q, K) * K.shape[-1] ** -0.5
''',
    },
    "cosine_score": {
        "einsum_divide_by_norm_product": '''
def cosine_score(Q, K):
    dots = np.einsum("...qd,...kd->...qk", Q, K)
    norms = np.linalg.norm(Q, axis=-1)[..., :, None] * np.linalg.norm(K, axis=-1)[..., None, :]
    return np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
''',
        "norm_plus_eps": '''
def cosine_score(Q, K):
    Q_unit = Q / (np.sqrt(np.sum(Q ** 2, axis=-1, keepdims=True)) + 1e-12)
    K_unit = K / (np.sqrt(np.sum(K ** 2, axis=-1, keepdims=True)) + 1e-12)
    return Q_unit @ np.swapaxes(K_unit, -1, -2)
''',
    },
    "additive_score": {
        "einsum": '''
def additive_score(Q, K, W_q, W_k, v):
    query_part = np.einsum("...qd,dh->...qh", Q, W_q)
    key_part = np.einsum("...kd,dh->...kh", K, W_k)
    hidden = np.tanh(query_part[..., :, None, :] + key_part[..., None, :, :])
    return np.einsum("...qkh,h->...qk", hidden, v)
''',
        "expand_dims_and_sum": '''
def additive_score(Q, K, W_q, W_k, v):
    hidden = np.tanh(np.expand_dims(Q @ W_q, -2) + np.expand_dims(K @ W_k, -3))
    return np.sum(hidden * v, axis=-1)
''',
    },
    "softmax": {
        "logsumexp": '''
def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    log_total = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - log_total)
''',
        "moveaxis_to_last": '''
def softmax(x, axis=-1):
    moved = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    exps = np.exp(moved - moved.max(axis=-1, keepdims=True))
    return np.moveaxis(exps / exps.sum(axis=-1, keepdims=True), -1, axis)
''',
    },
    "masked_softmax": {
        "minus_1e9_then_zero_blocked_rows": '''
def masked_softmax(scores, mask):
    allowed = np.broadcast_to(np.asarray(mask) != 0, scores.shape)
    weights = softmax(np.where(allowed, scores, -1e9), axis=-1)
    return np.where(allowed.any(axis=-1, keepdims=True), weights, 0.0) * allowed
''',
        "nan_to_zero": '''
def masked_softmax(scores, mask):
    allowed = np.broadcast_to(np.asarray(mask, dtype=bool), scores.shape)
    with np.errstate(invalid="ignore"):
        weights = softmax(np.where(allowed, scores, -np.inf), axis=-1)
    return np.nan_to_num(weights, nan=0.0)
''',
    },
    "attention": {
        "einsum_and_all_ones_mask": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    scores = score_fn(Q, K)
    if mask is None:
        mask = np.ones(scores.shape)
    weights = masked_softmax(scores, mask)
    return np.einsum("...qk,...kv->...qv", weights, V), weights
''',
    },
    "hard_attention": {
        "eye_rows_and_take_along_axis": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    scores = score_fn(Q, K)
    best = np.argmax(scores, axis=-1)
    weights = np.eye(scores.shape[-1])[best]
    context = np.take_along_axis(np.asarray(V), best[..., None], axis=-2)
    return context, weights
''',
        "argmax_of_softmax": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    soft = softmax(score_fn(Q, K), axis=-1)
    weights = np.zeros_like(soft)
    np.put_along_axis(weights, np.argmax(soft, axis=-1)[..., None], 1.0, axis=-1)
    return np.einsum("...qk,...kv->...qv", weights, V), weights
''',
    },
    "local_attention": {
        "clipped_bounds": '''
def local_attention(Q, K, V, centers, window):
    centers = np.asarray(centers)[..., None]
    positions = np.arange(K.shape[-2])
    low, high = np.clip(centers - window, 0, None), centers + window
    return attention(Q, K, V, score_fn=scaled_dot_score, mask=(positions >= low) & (positions <= high))
''',
        "own_masked_computation": '''
def local_attention(Q, K, V, centers, window):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    inside = np.abs(np.arange(K.shape[-2]) - np.asarray(centers)[..., None]) <= window
    weights = masked_softmax(scores, inside)
    return weights @ V, weights
''',
    },
}

# Wrong answers that the exercise's VISIBLE test must catch (with a hint), not only the hidden tests:
# tests/test_visible_tests_02_04.py checks that the visible test cell fails for each of them.
CAUGHT_BY_VISIBLE = {
    "dot_score": ["transpose_reverses_all_axes", "np_dot_on_batches", "swapaxes_of_the_first_two_axes",
                  "einsum_for_2d_only"],
    "scaled_dot_score": ["d_k_from_axis_1", "d_k_from_len_of_first_item", "d_k_from_K_axis_1"],
    "cosine_score": ["nan_for_zero_vectors", "norms_over_axis_1", "own_product_with_K_T"],
    "additive_score": ["new_axes_counted_from_the_front", "tanh_after_v"],
    "softmax": ["global_max_underflows", "modifies_input_in_place", "no_keepdims", "sum_without_keepdims"],
    "masked_softmax": ["max_over_blocked_keys_too", "boolean_index_does_not_broadcast", "scores_times_mask"],
    "attention": ["score_fn_ignored", "np_dot_on_batches", "unscaled_default_score"],
    "hard_attention": ["score_fn_ignored", "values_indexed_by_argmax"],
    "local_attention": ["first_example_centres_for_whole_batch", "positions_from_len_K",
                        "centres_indexed_from_the_front", "unscaled_scores"],
}
