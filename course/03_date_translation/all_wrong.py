"""03_date_translation: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

from grader.authoring.assignment_answers import answer_editor

ALL_WRONG = {
    "string_to_int": '''
def string_to_int(string, length, vocab):
    return [0] * length
''',
    "one_step_attention": '''
def one_step_attention(a, s_prev):
    return a[:, :1, :] * 0.0  # (m, 1, 2*n_a) of zeros
''',
    # The notebook's own model, with the dates never reaching it.
    "modelf": answer_editor("03_date_translation")(
        "modelf", "a = Bidirectional(LSTM(n_a, return_sequences=True))(X)",
        "a = Bidirectional(LSTM(n_a, return_sequences=True))(X * 0.0)"),
    "compile_model": '''
def compile_model(model):
    model.compile(optimizer="sgd", loss="mse")
    return model
''',
    
}
