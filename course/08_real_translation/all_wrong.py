"""08_real_translation: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

from grader.authoring.assignment_answers import answer_editor

ALL_WRONG = {
    "alignment_posteriors": '''
def alignment_posteriors(t, source_ids, target_ids):
    return np.zeros((len(target_ids), len(source_ids)))
''',
    "em_step": '''
def em_step(t, corpus):
    return np.zeros(np.shape(t)), 0.0
''',
    "alignment_error_rate": '''
def alignment_error_rate(links, sure, possible):
    return -1.0
''',
    # The notebook's own class, whose attention outputs zeros: every layer in place, nothing attended.
    "RecurrentTranslator": answer_editor("08_real_translation")(
        "RecurrentTranslator", "        return attentional, weights", "        return 0.0 * attentional, 0.0 * weights"),
    # The notebook's own Transformer whose encoder output and logits are zeros: every layer in place and run.
    "TransformerTranslator": answer_editor("08_real_translation")(
        "TransformerTranslator", "return self.encoder_norm(x), source_mask", "return 0.0 * self.encoder_norm(x), source_mask",
        "return self.output_dense(self.decoder_norm(y)), cross_weights",
        "return 0.0 * self.output_dense(self.decoder_norm(y)), cross_weights"),
    "beam_search": '''
def beam_search(step_fn, initial_carry, start_id, end_id, beam_width, max_len, alpha=0.0, n_best=1):
    return [([end_id], 0.0)] * n_best
''',
    "attention_alignment": '''
def attention_alignment(weights, word_of_token):
    n_words = int(np.max(word_of_token)) + 1
    return np.full(np.shape(weights)[:-2] + (n_words,), -1)
''',
    "removal_effects": '''
def removal_effects(predict_fn, source_ids, target_in, replacement_id):
    return np.zeros((len(target_in), len(source_ids)))
''',
    
}
