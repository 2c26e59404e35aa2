"""Wrong and differently written answers for notebook 08 (IBM Model 1, AER, attention, beam search, influence).

Each mutant is the notebook's own answer with one edit (`_edit`), so the mutants follow the notebook;
an edit that no longer applies fails loudly instead of silently testing the right answer.
"""
from grader.authoring.assignment_answers import answer_editor

ASSIGNMENT = "08_real_translation"
_edit = answer_editor(ASSIGNMENT)

_SCORES = "scores = np.asarray(t)[np.ix_(np.asarray(source_ids), np.asarray(target_ids))].T  # (n, m + 1)"
_ADD = "np.add.at(counts, (source_ids[None, :], target_ids[:, None]), posteriors)"
_DIVIDE = "new_t = np.divide(counts, totals, out=t.copy(), where=totals > 0)"
_AER = "return 1.0 - (len(A & S) + len(A & P)) / (len(A) + len(S))"
_MASK = "scores = ops.where(ops.expand_dims(source_mask, 1), scores, -1e9)"
_CARRY = "carry = tuple(np.asarray(array)[keep_rows] for array in new_carry)"
_MEAN = 'mean_rows = np.einsum("tw,...ts->...ws", membership, weights) / membership.sum(axis=0)[:, None]'
_EFFECTS = "effects[:, real] = 0.5 * np.abs(probabilities[1:] - probabilities[:1]).sum(axis=-1).T"
_SOURCE_MASK = "source_mask = ops.expand_dims(ops.not_equal(source_ids, PAD_ID), 1)"
_LOOK_AHEAD = 'look_ahead = ops.tril(ops.ones((length, length), dtype="bool"))'
_EMBED = "return self.dropout(scaled + self.positions[:length], training=training)"
_ENCODER_LAYER = "x = layer(x, source_mask, training=training)"
_DECODER_LAYER = "y, weights = layer(y, encoded, look_ahead, source_mask, training=training)"

WRONG = {
    "alignment_posteriors": {
        "normalised over the Chinese words": _edit("alignment_posteriors", "scores.sum(axis=1, keepdims=True)",
                                                   "scores.sum(axis=0, keepdims=True)"),
        "not transposed (m + 1, n)": _edit("alignment_posteriors", _SCORES,
                                           "scores = np.asarray(t)[np.ix_(np.asarray(source_ids), np.asarray(target_ids))]",
                                           "scores.sum(axis=1, keepdims=True)", "scores.sum(axis=0, keepdims=True)"),
        "not normalised": _edit("alignment_posteriors", "return scores / scores.sum(axis=1, keepdims=True)", "return scores"),
        "a repeated English word counted once": _edit("alignment_posteriors", "np.ix_(np.asarray(source_ids),",
                                                      "np.ix_(np.unique(source_ids),"),
        "rows of t indexed by the Chinese ids": _edit("alignment_posteriors", _SCORES,
                                                      "scores = np.asarray(t)[np.ix_(np.asarray(target_ids), np.asarray(source_ids))]"),
    },
    "em_step": {
        "repeated words add once (fancy +=)": _edit("em_step", _ADD,
                                                   "counts[source_ids[None, :], target_ids[:, None]] += posteriors"),
        "normalised per Chinese word (columns)": _edit("em_step", "totals = counts.sum(axis=1, keepdims=True)",
                                                       "totals = counts.sum(axis=0, keepdims=True)"),
        "unseen English words get a row of zeros": _edit("em_step", "out=t.copy()", "out=np.zeros(t.shape)"),
        "log-likelihood without the log": _edit("em_step", "log_likelihood += np.log(t[np.ix_(source_ids, target_ids)].sum(axis=0)).sum()",
                                                "log_likelihood += t[np.ix_(source_ids, target_ids)].sum(axis=0).sum()"),
        "log-likelihood of the new table": _edit("em_step", "    return new_t, float(log_likelihood)",
                                                 "    log_likelihood = sum(np.log(new_t[np.ix_(np.asarray(s), np.asarray(f))].sum(axis=0)).sum()"
                                                 " for s, f in corpus)\n    return new_t, float(log_likelihood)"),
        "counts of the most probable link only (hard EM)": _edit(
            "em_step", _ADD, "hard = np.eye(posteriors.shape[1])[posteriors.argmax(axis=1)]\n"
                             "        np.add.at(counts, (source_ids[None, :], target_ids[:, None]), hard)"),
    },
    "alignment_error_rate": {
        "lists, not sets (a repeated link counts twice)": _edit("alignment_error_rate", "A, S, P = set(links), set(sure), set(possible)",
                                                                "A, S, P = list(links), list(sure), list(possible)",
                                                                _AER, "return 1.0 - (sum(a in S for a in A) + sum(a in P for a in A)) / (len(A) + len(S))"),
        "|P| in the denominator": _edit("alignment_error_rate", "/ (len(A) + len(S))", "/ (len(A) + len(P))"),
        "sure links only (1 - F1 against S)": _edit("alignment_error_rate", "len(A & P)", "len(A & S)"),
        "1 - AER": _edit("alignment_error_rate", _AER, "return (len(A & S) + len(A & P)) / (len(A) + len(S))"),
        "precision only": _edit("alignment_error_rate", _AER, "return 1.0 - len(A & P) / max(len(A), 1)"),
    },
    "RecurrentTranslator": {
        "padding not masked": _edit("RecurrentTranslator", _MASK, "scores = scores"),
        "mask inverted": _edit("RecurrentTranslator", _MASK,
                               "scores = ops.where(ops.logical_not(ops.expand_dims(source_mask, 1)), scores, -1e9)"),
        "softmax over the queries": _edit("RecurrentTranslator", "weights = ops.softmax(scores, axis=-1)",
                                          "weights = ops.softmax(scores, axis=1)"),
        "[query; context] instead of [context; query]": _edit("RecurrentTranslator", "ops.concatenate([context, queries], axis=-1)",
                                                               "ops.concatenate([queries, context], axis=-1)"),
        "plain dot score (no W_a)": _edit("RecurrentTranslator", "keys = self.attention_dense(encoded)", "keys = encoded"),
        "W_a on the queries": _edit("RecurrentTranslator", "keys = self.attention_dense(encoded)  #",
                                    "keys = encoded  #", 'ops.einsum("bqd,btd->bqt", queries, keys)',
                                    'ops.einsum("bqd,btd->bqt", self.attention_dense(queries), keys)'),
        "context is the mean encoder vector": _edit("RecurrentTranslator", 'context = ops.einsum("bqt,btd->bqd", weights, encoded)',
                                                    "context = ops.repeat(ops.mean(encoded, axis=1, keepdims=True), "
                                                    "ops.shape(queries)[1], axis=1)"),
        "context from the mapped keys": _edit("RecurrentTranslator", 'ops.einsum("bqt,btd->bqd", weights, encoded)',
                                              'ops.einsum("bqt,btd->bqd", weights, keys)'),
    },
    "beam_search": {
        "carry not reordered (the first rows kept)": _edit("beam_search", _CARRY,
                                                           "carry = tuple(np.asarray(array)[:len(keep_rows)] for array in new_carry)"),
        "carry never reordered (new_carry as it comes)": _edit("beam_search", _CARRY,
                                                               "carry = tuple(np.asarray(array) for array in new_carry)"),
        "only the first array of the carry follows its hypotheses": _edit(
            "beam_search", _CARRY, "carry = (np.asarray(new_carry[0])[keep_rows],) + tuple(np.asarray(a)[:len(keep_rows)] "
                                   "for a in new_carry[1:])"),
        "beam_width candidates per hypothesis": _edit(
            "beam_search", 'best = np.argsort(-totals, axis=None, kind="stable")[:beam_width]',
            'best = np.concatenate([r * totals.shape[1] + np.argsort(-totals[r], kind="stable")[:beam_width] '
            'for r in range(len(totals))])\n        best = best[np.argsort(-totals.ravel()[best], kind="stable")]'),
        "length penalty len * alpha": _edit("beam_search", "total / len(ids) ** alpha", "total / (len(ids) * alpha if alpha else 1)"),
        "finished hypotheses ranked by their totals": _edit("beam_search", "key=lambda pair: -pair[1])",
                                                             "key=lambda pair: -dict((tuple(i), s) for i, s in finished)[tuple(pair[0])])"),
        "finished hypotheses stay in the beam": _edit("beam_search", "            if token == end_id:\n                finished.append(candidate)\n            else:\n",
                                                      "            if token == end_id:\n                finished.append(candidate)\n            if True:\n"),
        "end id taken as the last id": _edit("beam_search", "            if token == end_id:",
                                             "            if token == totals.shape[1] - 1:"),
        "start from token 0": _edit("beam_search", "ids[-1] if ids else start_id for", "ids[-1] if ids else 0 for"),
        "the other convention: finished hypotheses free their slots": _edit(
            "beam_search", 'best = np.argsort(-totals, axis=None, kind="stable")[:beam_width]',
            'best = np.argsort(-totals, axis=None, kind="stable")',
            "        for row, token in zip(rows, tokens):\n",
            "        for row, token in zip(rows, tokens):\n            if len(next_live) == beam_width:\n                break\n"),
    },
    "TransformerTranslator": {
        "look-ahead mask inverted (upper triangle)": _edit("TransformerTranslator", _LOOK_AHEAD,
                                                           'look_ahead = ops.triu(ops.ones((length, length), dtype="bool"))'),
        "no look-ahead mask": _edit("TransformerTranslator", _DECODER_LAYER,
                                    "y, weights = layer(y, encoded, None, source_mask, training=training)"),
        "padding mask inverted": _edit("TransformerTranslator", _SOURCE_MASK,
                                       "source_mask = ops.expand_dims(ops.equal(source_ids, PAD_ID), 1)"),
        "padding not masked in the encoder": _edit("TransformerTranslator", _ENCODER_LAYER,
                                                   "x = layer(x, None, training=training)"),
        "source_mask ignored by decode (no padding mask in the cross-attention)": _edit(
            "TransformerTranslator", _DECODER_LAYER, "y, weights = layer(y, encoded, look_ahead, None, training=training)"),
        "no positional encoding": _edit("TransformerTranslator", _EMBED, "return self.dropout(scaled, training=training)"),
        "dropout applied twice to the source": _edit(
            "TransformerTranslator", "x = self.embed(self.source_embedding, source_ids, training)",
            "x = self.dropout(self.embed(self.source_embedding, source_ids, training), training=training)"),
        "dropout's scale undone": _edit("TransformerTranslator", _EMBED,
                                        "return self.dropout(scaled + self.positions[:length], training=training) * "
                                        "(1 - self.dropout.rate if training else 1)"),
        "embeddings not scaled by sqrt(d_model)": _edit("TransformerTranslator", "scaled = embedding(ids) * math.sqrt(self.d_model)",
                                                        "scaled = embedding(ids)"),
        "positions scaled too": _edit("TransformerTranslator", _EMBED,
                                      "return self.dropout((embedding(ids) + self.positions[:length]) * math.sqrt(self.d_model), "
                                      "training=training)"),
        "positions of the wrong rows (from 1)": _edit("TransformerTranslator", "self.positions[:length]",
                                                      "self.positions[1:length + 1]"),
        "dropout on the embeddings always off": _edit("TransformerTranslator", _EMBED,
                                                      "return self.dropout(scaled + self.positions[:length], training=False)"),
        "training not passed to the encoder layers": _edit("TransformerTranslator", _ENCODER_LAYER, "x = layer(x, source_mask)"),
        "training not passed to the decoder layers": _edit("TransformerTranslator", _DECODER_LAYER,
                                                           "y, weights = layer(y, encoded, look_ahead, source_mask)"),
        "dropout while not training": _edit("TransformerTranslator", _EMBED,
                                            "return self.dropout(scaled + self.positions[:length], training=True)"),
        "no final LayerNorm after the encoder": _edit("TransformerTranslator", "return self.encoder_norm(x), source_mask",
                                                      "return x, source_mask"),
        "no final LayerNorm after the decoder": _edit("TransformerTranslator", "return self.output_dense(self.decoder_norm(y)), cross_weights",
                                                      "return self.output_dense(y), cross_weights"),
        "softmax on the logits": _edit("TransformerTranslator", "return self.output_dense(self.decoder_norm(y)), cross_weights",
                                       "return ops.softmax(self.output_dense(self.decoder_norm(y)), axis=-1), cross_weights"),
        "every decoder layer reads the embeddings (layers not chained)": _edit(
            "TransformerTranslator", _DECODER_LAYER,
            "out, weights = layer(y, encoded, look_ahead, source_mask, training=training)",
            "        return self.output_dense(self.decoder_norm(y)), cross_weights",
            "        return self.output_dense(self.decoder_norm(out)), cross_weights"),
        "the encoder layers in reverse order": _edit("TransformerTranslator", "for layer in self.encoder_layers:",
                                                     "for layer in self.encoder_layers[::-1]:"),
        "the cross-attention weights of the last layer only, repeated": _edit(
            "TransformerTranslator", "return self.output_dense(self.decoder_norm(y)), cross_weights",
            "return self.output_dense(self.decoder_norm(y)), [weights] * len(cross_weights)"),
        "the source embedding for the target": _edit("TransformerTranslator", "y = self.embed(self.target_embedding, target_in, training)",
                                                     "y = self.embed(self.source_embedding, target_in, training)"),
    },
    "attention_alignment": {
        "the largest weight instead of the mean": _edit("attention_alignment", _MEAN,
                                                        "mean_rows = np.stack([np.where(membership[:, w, None] > 0, weights, -1).max(axis=-2) "
                                                        "for w in range(n_words)], axis=-2)"),
        "the first character of each word only": _edit("attention_alignment", _MEAN,
                                                       "mean_rows = weights[..., np.searchsorted(word_of_token, np.arange(n_words)), :]"),
        "argmax over the target axis": _edit("attention_alignment", "return mean_rows.argmax(axis=-1)",
                                             "return mean_rows.argmax(axis=-2)[..., :n_words]"),
        "the most frequent per-character argmax": _edit(
            "attention_alignment", "return mean_rows.argmax(axis=-1)",
            "votes = np.einsum('tw,...ts->...ws', membership, np.eye(weights.shape[-1])[weights.argmax(axis=-1)])\n"
            "    return votes.argmax(axis=-1)"),
        "one map only (no leading axes)": _edit("attention_alignment", _MEAN,
                                                "mean_rows = np.stack([weights.reshape(-1, weights.shape[-1])[word_of_token == w].mean(axis=0) "
                                                "for w in range(n_words)])"),
    },
    "removal_effects": {
        "no factor 1/2": _edit("removal_effects", "effects[:, real] = 0.5 * np.abs(", "effects[:, real] = np.abs("),
        "padding replaced too": _edit("removal_effects", "real = np.flatnonzero(source_ids != PAD_ID)",
                                      "real = np.arange(len(source_ids))"),
        "effects transposed (T_source, T_target)": _edit("removal_effects", "effects = np.zeros((len(target_in), len(source_ids)))",
                                                         "effects = np.zeros((len(source_ids), len(target_in)))",
                                                         _EFFECTS, "effects[real] = 0.5 * np.abs(probabilities[1:] - probabilities[:1]).sum(axis=-1)"),
        "the token removed (the sentence shifts) instead of replaced": _edit(
            "removal_effects", "variants[np.arange(1, len(real) + 1), real] = replacement_id",
            "for k, i in enumerate(real, start=1):\n"
            "        variants[k] = np.concatenate([np.delete(source_ids, i), [PAD_ID]])"),
        "always <unk>, whatever replacement_id is": _edit("removal_effects", "real] = replacement_id", "real] = UNK_ID"),
        "the change of the most probable output only": _edit(
            "removal_effects", _EFFECTS,
            "top = probabilities[0].argmax(axis=-1)\n"
            "    effects[:, real] = np.abs(probabilities[1:, np.arange(len(target_in)), top] - probabilities[0, np.arange(len(target_in)), top]).T"),
    },
}

CORRECT = {
    "alignment_posteriors": {
        "a loop over the Chinese words": '''def alignment_posteriors(t, source_ids, target_ids):
    rows = []
    for f in target_ids:
        column = np.array([t[e, f] for e in source_ids], dtype=float)
        rows.append(column / column.sum())
    return np.array(rows)
''',
        "rows and columns picked in two steps": _edit("alignment_posteriors", _SCORES,
                                                      "scores = np.asarray(t)[np.asarray(source_ids)][:, np.asarray(target_ids)].T"),
    },
    "em_step": {
        "loops and a dict of counts": '''def em_step(t, corpus):
    t = np.asarray(t)
    counts, log_likelihood = {}, 0.0
    for source_ids, target_ids in corpus:
        posteriors = np.asarray(alignment_posteriors(t, source_ids, target_ids))
        for j, f in enumerate(target_ids):
            log_likelihood += np.log(sum(t[e, f] for e in source_ids))
            for i, e in enumerate(source_ids):
                counts[int(e), int(f)] = counts.get((int(e), int(f)), 0.0) + posteriors[j, i]
    new_t = t.astype(float).copy()
    totals = {}
    for (e, f), c in counts.items():
        totals[e] = totals.get(e, 0.0) + c
    for e in totals:
        new_t[e] = 0.0
    for (e, f), c in counts.items():
        new_t[e, f] = c / totals[e]
    return new_t, log_likelihood
''',
        "float64 counts and a mask of seen rows": _edit("em_step", "counts = np.zeros(t.shape, dtype=t.dtype)", "counts = np.zeros(t.shape)",
                                                        _DIVIDE, "seen = totals[:, 0] > 0\n    new_t = t.astype(float).copy()\n"
                                                                 "    new_t[seen] = counts[seen] / totals[seen]"),
    },
    "alignment_error_rate": {
        "counts by comprehension": '''def alignment_error_rate(links, sure, possible):
    links, sure, possible = set(map(tuple, links)), set(map(tuple, sure)), set(map(tuple, possible))
    if len(links) + len(sure) == 0:
        return 0.0
    hits = sum(1 for a in links if a in sure) + sum(1 for a in links if a in possible)
    return 1 - hits / (len(links) + len(sure))
''',
    },
    "RecurrentTranslator": {
        "matmul and an additive mask": _edit("RecurrentTranslator", 'scores = ops.einsum("bqd,btd->bqt", queries, keys)',
                                             "scores = ops.matmul(queries, ops.transpose(keys, (0, 2, 1)))",
                                             _MASK, 'scores = scores + (1.0 - ops.cast(ops.expand_dims(source_mask, 1), "float32")) * -1e9',
                                             'context = ops.einsum("bqt,btd->bqd", weights, encoded)', "context = ops.matmul(weights, encoded)"),
    },
    "beam_search": {
        "candidates sorted as tuples": '''def beam_search(step_fn, initial_carry, start_id, end_id, beam_width, max_len, alpha=0.0, n_best=1):
    hypotheses = [([], 0.0, 0)]
    carry = [np.asarray(a) for a in initial_carry]
    done = []
    for _ in range(max_len):
        tokens = np.array([h[0][-1] if h[0] else start_id for h in hypotheses])
        log_probs, new_carry = step_fn(tokens, tuple(carry))
        log_probs = np.asarray(log_probs)
        candidates = [(total + log_probs[r, v], r, v) for r, (_, total, _) in enumerate(hypotheses)
                      for v in range(log_probs.shape[1])]
        candidates.sort(key=lambda c: -c[0])  # stable: ties keep row-major order, as np.argsort(kind="stable")
        survivors = []
        for total, r, v in candidates[:beam_width]:
            ids = hypotheses[r][0] + [int(v)]
            if v == end_id:
                done.append((ids, float(total)))
            else:
                survivors.append((ids, float(total), r))
        if not survivors:
            hypotheses = []
            break
        rows = [r for _, _, r in survivors]
        carry = [np.asarray(a)[rows] for a in new_carry]
        hypotheses = survivors
    done += [(ids, total) for ids, total, _ in hypotheses]
    scored = sorted(((ids, total / len(ids) ** alpha) for ids, total in done), key=lambda p: -p[1])
    return scored[:n_best]
''',
    },
    "TransformerTranslator": {
        "another look-ahead mask, a 0/1 mask and the scale from ops": _edit(
            "TransformerTranslator", _LOOK_AHEAD,
            "look_ahead = ops.expand_dims(ops.arange(length), 1) >= ops.expand_dims(ops.arange(length), 0)",
            _SOURCE_MASK, 'source_mask = ops.cast(ops.not_equal(source_ids, PAD_ID)[:, None, :], "int32")',
            "scaled = embedding(ids) * math.sqrt(self.d_model)",
            'scaled = embedding(ids) * ops.sqrt(ops.cast(self.d_model, "float32"))'),
        "keyword padding_mask, a copy of the layer list, ops.add and ops.slice": _edit(
            "TransformerTranslator", "        for layer in self.encoder_layers:\n            " + _ENCODER_LAYER,
            "        for layer in list(self.encoder_layers):\n            x = layer(x, padding_mask=source_mask, training=training)",
            "scaled + self.positions[:length]", "ops.add(scaled, ops.slice(self.positions, (0, 0), (length, self.d_model)))"),
    },
    "attention_alignment": {
        "sums instead of means (the same argmax)": _edit("attention_alignment", " / membership.sum(axis=0)[:, None]", ""),
        "a loop over the words": _edit("attention_alignment", _MEAN,
                                       "mean_rows = np.stack([weights[..., word_of_token == w, :].mean(axis=-2) "
                                       "for w in range(n_words)], axis=-2)"),
    },
    "removal_effects": {
        "one call per copy": '''def removal_effects(predict_fn, source_ids, target_in, replacement_id):
    source_ids, target_in = np.asarray(source_ids), np.asarray(target_in)
    base = np.asarray(predict_fn(source_ids[None], target_in[None]))[0]
    effects = np.zeros((len(target_in), len(source_ids)))
    for i in range(len(source_ids)):
        if source_ids[i] == PAD_ID:
            continue
        changed = source_ids.copy()
        changed[i] = replacement_id
        probs = np.asarray(predict_fn(changed[None], target_in[None]))[0]
        effects[:, i] = np.abs(probs - base).sum(axis=-1) / 2
    return effects
''',
    },
}
