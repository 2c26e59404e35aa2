"""Wrong and differently written answers for notebook 04_self_attention (see tests/test_mutants.py)."""

ASSIGNMENT = "04_self_attention"

# ---------------------------------------------------------------------------------------------
PROJECT_HEAD = 'def project_qkv(X, W_Q, W_K, W_V):\n'
SDPA_HEAD = 'def scaled_dot_product_attention(Q, K, V, mask=None):\n'
SELF_HEAD = 'def self_attention(X, W_Q, W_K, W_V, mask=None):\n'
MHA_HEAD = 'def multi_head_attention(X, W_Q, W_K, W_V, W_O):\n'
PE_HEAD = 'def positional_encoding(max_len, d_model):\n'
PAD_HEAD = 'def padding_mask(token_ids, pad_id=0):\n'
AHEAD_HEAD = 'def look_ahead_mask(T):\n'

# A correct softmax-with-mask body, reused by the SDPA mutants that change one thing only.
_SDPA_TAIL = '''
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    return weights @ V, weights
'''

WRONG = {
    "project_qkv": {
        "same_matrix_for_all": PROJECT_HEAD + "    return X @ W_Q, X @ W_Q, X @ W_Q\n",
        "values_and_keys_swapped": PROJECT_HEAD + "    return X @ W_Q, X @ W_V, X @ W_K\n",
        "transpose_trick_breaks_batches": PROJECT_HEAD + "    return (W_Q.T @ X.T).T, (W_K.T @ X.T).T, (W_V.T @ X.T).T\n",
        "only_first_example": PROJECT_HEAD + (
            "    X = np.asarray(X).reshape(-1, X.shape[-2], X.shape[-1])[0]\n"
            "    return X @ W_Q, X @ W_K, X @ W_V\n"),
        "einsum_for_2d_only": PROJECT_HEAD + (
            '    return tuple(np.einsum("td,de->te", X, W) for W in (W_Q, W_K, W_V))\n'),
    },
    "scaled_dot_product_attention": {
        "no_scaling": SDPA_HEAD + "    scores = Q @ np.swapaxes(K, -1, -2)\n" + _SDPA_TAIL,
        "scaled_by_d_k": SDPA_HEAD + "    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]\n" + _SDPA_TAIL,
        "d_k_from_wrong_axis": SDPA_HEAD + "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[1])\n" + _SDPA_TAIL,
        "softmax_over_queries": SDPA_HEAD + '''
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    e = np.exp(scores - np.max(scores, axis=-2, keepdims=True))
    weights = e / e.sum(axis=-2, keepdims=True)
    return weights @ V, weights
''',
        "mask_inverted": SDPA_HEAD + '''
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        mask = ~np.asarray(mask, dtype=bool)
''' + _SDPA_TAIL,
        "minus_1e9_gives_uniform_blocked_rows": SDPA_HEAD + '''
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores + (1.0 - np.asarray(mask, dtype=float)) * -1e9
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
''',
        "softmax_without_max_shift": SDPA_HEAD + '''
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores)
    if mask is not None:
        e = e * np.asarray(mask, dtype=float)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    return weights @ V, weights
''',
        "K_dot_T_reverses_batch_axes": SDPA_HEAD + "    scores = Q @ K.T / np.sqrt(Q.shape[-1])\n" + _SDPA_TAIL,
        "scaled_by_sqrt_d_v": SDPA_HEAD + "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1])\n" + _SDPA_TAIL,
        "d_k_from_Q_axis_1": SDPA_HEAD + "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[1])\n" + _SDPA_TAIL,
        "boolean_index_does_not_broadcast": SDPA_HEAD + '''
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores[~np.asarray(mask, dtype=bool)] = -np.inf
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    return weights @ V, weights
''',
    },
    "self_attention": {
        "mask_dropped": SELF_HEAD + '''
    Q, K, V = project_qkv(X, W_Q, W_K, W_V)
    return scaled_dot_product_attention(Q, K, V)
''',
        "keys_from_query_weights": SELF_HEAD + '''
    Q, K, V = project_qkv(X, W_Q, W_Q, W_V)
    return scaled_dot_product_attention(Q, K, V, mask)
''',
        "embeddings_as_values": SELF_HEAD + '''
    Q, K, V = project_qkv(X, W_Q, W_K, W_V)
    return scaled_dot_product_attention(Q, K, X, mask)
''',
        "queries_and_keys_swapped": SELF_HEAD + '''
    Q, K, V = project_qkv(X, W_Q, W_K, W_V)
    return scaled_dot_product_attention(K, Q, V, mask)
''',
        "own_scores_scaled_by_sqrt_d_v": SELF_HEAD + '''
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_V.shape[-1])
''' + _SDPA_TAIL,
        "own_scores_with_K_T": SELF_HEAD + '''
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(W_Q.shape[-1])
''' + _SDPA_TAIL,
        "own_scores_scaled_by_sqrt_d_model": SELF_HEAD + '''
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
''' + _SDPA_TAIL,
    },
    "multi_head_attention": {
        "no_output_projection": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    heads = np.moveaxis(heads, -3, -2)
    return heads.reshape(heads.shape[:-2] + (-1,)), weights
''',
        "heads_reshaped_without_moving_axis": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    concat = heads.reshape(heads.shape[:-3] + (heads.shape[-2], -1))
    return concat @ W_O, weights
''',
        "heads_in_reverse_order": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    concat = np.concatenate([heads[..., h, :, :] for h in reversed(range(heads.shape[-3]))], axis=-1)
    return concat @ W_O, weights
''',
        "features_interleaved_d_v_then_heads": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    interleaved = np.moveaxis(heads, -3, -1)
    concat = interleaved.reshape(interleaved.shape[:-2] + (-1,))
    return concat @ W_O, weights
''',
        "scaled_by_sqrt_d_model": MHA_HEAD + '''
    X = np.asarray(X)
    outputs, all_weights = [], []
    for h in range(W_Q.shape[0]):
        q, k, v = X @ W_Q[h], X @ W_K[h], X @ W_V[h]
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(X.shape[-1])
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        outputs.append(w @ v)
        all_weights.append(w)
    return np.concatenate(outputs, axis=-1) @ W_O, np.stack(all_weights, axis=-3)
''',
        "heads_summed_not_concatenated": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    d_v = heads.shape[-1]
    summed = heads.sum(axis=-3)
    return summed @ W_O[:d_v], weights
''',
        "d_k_from_d_model_over_heads": MHA_HEAD + '''
    X = np.asarray(X)
    H = W_Q.shape[0]
    depth = X.shape[-1] // H  # the TensorFlow tutorial's depth: equal to d_k only when d_k = d_model / H
    outputs, all_weights = [], []
    for h in range(H):
        q, k, v = X @ W_Q[h], X @ W_K[h], X @ W_V[h]
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(depth)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        outputs.append(w @ v)
        all_weights.append(w)
    return np.concatenate(outputs, axis=-1) @ W_O, np.stack(all_weights, axis=-3)
''',
        "W_O_split_by_d_k": MHA_HEAD + '''
    Q = np.einsum("...td,hdk->...htk", X, W_Q)
    K = np.einsum("...td,hdk->...htk", X, W_K)
    V = np.einsum("...td,hdv->...htv", X, W_V)
    heads, weights = scaled_dot_product_attention(Q, K, V)
    H, d_k = W_Q.shape[0], W_Q.shape[-1]
    W_O_heads = W_O.reshape(H, d_k, -1)
    return np.einsum("...htv,hvm->...tm", heads, W_O_heads), weights
''',
        "weights_stacked_heads_first": MHA_HEAD + '''
    outputs, all_weights = [], []
    for h in range(W_Q.shape[0]):
        z, w = self_attention(X, W_Q[h], W_K[h], W_V[h])
        outputs.append(z)
        all_weights.append(w)
    return np.concatenate(outputs, axis=-1) @ W_O, np.stack(all_weights)
''',
        "transpose_with_fixed_axes": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    heads = np.transpose(heads, (1, 0, 2))
    return heads.reshape(heads.shape[0], -1) @ W_O, weights
''',
        "weights_squeezed": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    heads = np.moveaxis(heads, -3, -2)
    return heads.reshape(heads.shape[:-2] + (-1,)) @ W_O, np.squeeze(weights)
''',
        "concat_width_from_d_k": MHA_HEAD + '''
    heads, weights = self_attention(np.asarray(X)[..., None, :, :], W_Q, W_K, W_V)
    heads = np.moveaxis(heads, -3, -2)
    concat = heads.reshape(heads.shape[:-2] + (W_Q.shape[0] * W_Q.shape[-1],))
    return concat @ W_O, weights
''',
    },
    "positional_encoding": {
        "sin_cos_swapped": PE_HEAD + '''
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.cos(angles), np.sin(angles))
''',
        "exponent_uses_dimension_not_pair": PE_HEAD + '''
    pos = np.arange(max_len)[:, None]
    dims = np.arange(d_model)[None, :]
    angles = pos / 10000 ** (2 * dims / d_model)
    return np.where(dims % 2 == 0, np.sin(angles), np.cos(angles))
''',
        "halves_not_interleaved": PE_HEAD + '''
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)[None, :]
    angles = pos / 10000 ** (2 * i / d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)
''',
        "transposed": PE_HEAD + '''
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles)).T
''',
        "positions_start_at_one": PE_HEAD + '''
    pos = np.arange(1, max_len + 1)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
''',
        "integer_division_in_exponent": PE_HEAD + '''
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / 10000 ** (2 * i // d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
''',
    },
    "padding_mask": {
        "inverted": PAD_HEAD + "    return (np.asarray(token_ids) == pad_id)[:, None, :]\n",
        "no_query_axis": PAD_HEAD + "    return np.asarray(token_ids) != pad_id\n",
        "query_axis_last": PAD_HEAD + "    return (np.asarray(token_ids) != pad_id)[:, :, None]\n",
        "pad_id_ignored": PAD_HEAD + "    return (np.asarray(token_ids) != 0)[:, None, :]\n",
        "nonzero_ids_as_tokens": PAD_HEAD + "    return (np.asarray(token_ids) > pad_id)[:, None, :]\n",
        "query_axis_from_the_front": PAD_HEAD + "    return (np.asarray(token_ids) != pad_id)[:, None, :]\n",
    },
    "look_ahead_mask": {
        "transposed": AHEAD_HEAD + "    return np.triu(np.ones((T, T)))\n",
        "diagonal_blocked": AHEAD_HEAD + "    return np.tril(np.ones((T, T)), k=-1)\n",
        "inverted": AHEAD_HEAD + "    return 1 - np.tril(np.ones((T, T)))\n",
        "one_too_many": AHEAD_HEAD + "    return np.tril(np.ones((T + 1, T + 1)))\n",
    },
}

CORRECT = {
    "project_qkv": {
        "einsum": PROJECT_HEAD + '''
    return tuple(np.einsum("...td,de->...te", X, W) for W in (W_Q, W_K, W_V))
''',
        "tensorflow": PROJECT_HEAD + '''
    import tensorflow as tf
    return tuple(tf.linalg.matmul(tf.constant(X), tf.constant(W)) for W in (W_Q, W_K, W_V))
''',
        "tensordot": PROJECT_HEAD + '''
    return (np.tensordot(X, W_Q, axes=1), np.tensordot(X, W_K, axes=1), np.tensordot(X, W_V, axes=1))
''',
    },
    "scaled_dot_product_attention": {
        "einsum_and_renormalised_mask": SDPA_HEAD + '''
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(K.shape[-1])
    allowed = np.ones(scores.shape) if mask is None else np.broadcast_to(np.asarray(mask, dtype=float), scores.shape)
    shift = np.max(np.where(allowed > 0, scores, -np.inf), axis=-1, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    e = np.exp(np.minimum(scores - shift, 0.0)) * allowed
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return np.einsum("...qk,...kv->...qv", weights, V), weights
''',
        "tensorflow": SDPA_HEAD + '''
    import tensorflow as tf
    Q, K, V = (tf.convert_to_tensor(a, dtype=tf.float64) for a in (Q, K, V))
    scores = tf.matmul(Q, K, transpose_b=True) / tf.math.sqrt(tf.cast(tf.shape(K)[-1], tf.float64))
    if mask is None:
        allowed = tf.ones_like(scores, dtype=tf.bool)
    else:
        allowed = tf.broadcast_to(tf.cast(mask, tf.bool), tf.shape(scores))
    scores = tf.where(allowed, scores, tf.constant(-np.inf, tf.float64))
    weights = tf.nn.softmax(scores, axis=-1)
    weights = tf.where(tf.reduce_any(allowed, axis=-1, keepdims=True), weights, tf.zeros_like(weights))
    return tf.matmul(weights, V), weights
''',
        "tensorflow_float32": SDPA_HEAD + '''
    import tensorflow as tf
    Q, K, V = (tf.cast(a, tf.float32) for a in (Q, K, V))
    scores = tf.einsum("...qd,...kd->...qk", Q, K) / tf.sqrt(tf.cast(K.shape[-1], tf.float32))
    if mask is not None:
        scores = tf.where(tf.cast(mask, tf.bool), scores, tf.float32.min)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = weights * tf.cast(mask, tf.float32)  # a fully blocked row: all zeros
    return tf.einsum("...qk,...kv->...qv", weights, V), weights
''',
        "keras_ops": SDPA_HEAD + '''
    from keras import ops
    d_k = ops.shape(Q)[-1]
    scores = ops.matmul(ops.convert_to_tensor(Q), ops.swapaxes(ops.convert_to_tensor(K), -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = ops.where(ops.cast(mask, "bool"), scores, -np.inf)
    top = ops.max(scores, axis=-1, keepdims=True)
    top = ops.where(ops.isfinite(top), top, 0.0)
    e = ops.exp(scores - top)
    total = ops.sum(e, axis=-1, keepdims=True)
    weights = e / ops.where(total > 0, total, 1.0)
    return np.asarray(ops.matmul(weights, ops.convert_to_tensor(V))), np.asarray(weights)
''',
    },
    "self_attention": {
        "inline_einsum": SELF_HEAD + '''
    Q = np.einsum("...td,dk->...tk", X, W_Q)
    K = np.einsum("...td,dk->...tk", X, W_K)
    V = np.einsum("...td,dv->...tv", X, W_V)
    return scaled_dot_product_attention(Q, K, V, mask=mask)
''',
    },
    "multi_head_attention": {
        "loop_over_heads": MHA_HEAD + '''
    outputs, all_weights = [], []
    for h in range(W_Q.shape[0]):
        z, w = self_attention(X, W_Q[h], W_K[h], W_V[h])
        outputs.append(z)
        all_weights.append(w)
    return np.concatenate(outputs, axis=-1) @ W_O, np.stack(all_weights, axis=-3)
''',
        "einsum_sum_over_heads": MHA_HEAD + '''
    Q = np.einsum("...td,hdk->...htk", X, W_Q)
    K = np.einsum("...td,hdk->...htk", X, W_K)
    V = np.einsum("...td,hdv->...htv", X, W_V)
    heads, weights = scaled_dot_product_attention(Q, K, V)
    H, d_v = W_V.shape[0], W_V.shape[-1]
    W_O_heads = W_O.reshape(H, d_v, -1)  # rows h*d_v .. belong to head h
    return np.einsum("...htv,hvm->...tm", heads, W_O_heads), weights
''',
        "tensorflow": MHA_HEAD + '''
    import tensorflow as tf
    X = tf.convert_to_tensor(X, tf.float64)
    heads, weights = [], []
    for h in range(W_Q.shape[0]):
        q, k, v = (tf.matmul(X, tf.constant(W[h])) for W in (W_Q, W_K, W_V))
        w = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / np.sqrt(W_Q.shape[-1]), axis=-1)
        heads.append(tf.matmul(w, v))
        weights.append(w)
    return tf.matmul(tf.concat(heads, axis=-1), tf.constant(W_O)), tf.stack(weights, axis=-3)
''',
    },
    "positional_encoding": {
        "pytorch_tutorial_style": PE_HEAD + '''
    pe = np.zeros((max_len, d_model))
    position = np.arange(max_len)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe
''',
        "coursera_get_angles": PE_HEAD + '''
    pos = np.arange(max_len)[:, np.newaxis]
    i = np.arange(d_model)[np.newaxis, :]
    angle_rads = pos / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads
''',
    },
    "padding_mask": {
        "float_tensorflow": PAD_HEAD + '''
    import tensorflow as tf
    mask = tf.cast(tf.math.not_equal(token_ids, pad_id), tf.float32)
    return tf.expand_dims(mask, axis=-2)
''',
        "expand_dims_int": PAD_HEAD + "    return np.expand_dims((np.asarray(token_ids) != pad_id).astype(int), axis=-2)\n",
        "keras_ops": PAD_HEAD + '''
    from keras import ops
    return ops.expand_dims(ops.not_equal(ops.convert_to_tensor(token_ids), pad_id), -2)
''',
    },
    "look_ahead_mask": {
        "comparison": AHEAD_HEAD + "    return np.arange(T)[None, :] <= np.arange(T)[:, None]\n",
        "tensorflow_band_part": AHEAD_HEAD + '''
    import tensorflow as tf
    return tf.linalg.band_part(tf.ones((T, T)), -1, 0)
''',
    },
}

# Wrong answers that the exercise's VISIBLE test must catch (with a hint), not only the hidden tests:
# tests/test_visible_tests_02_04.py checks that the visible test cell fails for each of them.
CAUGHT_BY_VISIBLE = {
    "project_qkv": ["transpose_trick_breaks_batches", "only_first_example", "einsum_for_2d_only"],
    "scaled_dot_product_attention": ["K_dot_T_reverses_batch_axes", "d_k_from_wrong_axis", "d_k_from_Q_axis_1",
                                     "scaled_by_sqrt_d_v", "minus_1e9_gives_uniform_blocked_rows",
                                     "softmax_without_max_shift", "boolean_index_does_not_broadcast"],
    "self_attention": ["own_scores_scaled_by_sqrt_d_v", "own_scores_with_K_T", "own_scores_scaled_by_sqrt_d_model"],
    "multi_head_attention": ["d_k_from_d_model_over_heads", "W_O_split_by_d_k", "weights_stacked_heads_first",
                             "transpose_with_fixed_axes", "concat_width_from_d_k"],
    "padding_mask": ["pad_id_ignored", "nonzero_ids_as_tokens", "query_axis_from_the_front"],
}
