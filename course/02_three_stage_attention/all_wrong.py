"""02_three_stage_attention: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

ALL_WRONG = {
    "dot_score": '''
def dot_score(Q, K):
    return np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
''',
    "scaled_dot_score": '''
def scaled_dot_score(Q, K):
    return np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
''',
    "cosine_score": '''
def cosine_score(Q, K):
    return np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
''',
    "additive_score": '''
def additive_score(Q, K, W_q, W_k, v):
    return np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
''',
    "softmax": '''
def softmax(x, axis=-1):
    return np.zeros(np.shape(x))
''',
    "masked_softmax": '''
def masked_softmax(scores, mask):
    return np.zeros(np.shape(scores))
''',
    "attention": '''
def attention(Q, K, V, score_fn=scaled_dot_score, mask=None):
    weights = np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
    return np.zeros(np.shape(Q)[:-1] + (np.shape(V)[-1],)), weights
''',
    "hard_attention": '''
def hard_attention(Q, K, V, score_fn=scaled_dot_score):
    weights = np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
    return np.zeros(np.shape(Q)[:-1] + (np.shape(V)[-1],)), weights
''',
    "local_attention": '''
def local_attention(Q, K, V, centers, window):
    weights = np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
    return np.zeros(np.shape(Q)[:-1] + (np.shape(V)[-1],)), weights
''',
    
}
