"""04_self_attention: one wrong answer for every answer cell, the "all wrong" student (tests/test_all_wrong.py).

Each keeps the exercise's names, signature and output shapes but computes nothing right; a notebook of them
must score 0. ALL_WRONG = {grade_id: code}; each code replaces the whole answer cell."""

ALL_WRONG = {
    "project_qkv": '''
def project_qkv(X, W_Q, W_K, W_V):
    rows = np.shape(X)[:-1]
    return np.zeros(rows + (np.shape(W_Q)[-1],)), np.zeros(rows + (np.shape(W_K)[-1],)), np.zeros(rows + (np.shape(W_V)[-1],))
''',
    "scaled_dot_product_attention": '''
def scaled_dot_product_attention(Q, K, V, mask=None):
    weights = np.zeros(np.shape(Q)[:-1] + (np.shape(K)[-2],))
    return np.zeros(np.shape(Q)[:-1] + (np.shape(V)[-1],)), weights
''',
    "self_attention": '''
def self_attention(X, W_Q, W_K, W_V, mask=None):
    T = np.shape(X)[-2]
    return np.zeros(np.shape(X)[:-1] + (np.shape(W_V)[-1],)), np.zeros(np.shape(X)[:-1] + (T,))
''',
    "multi_head_attention": '''
def multi_head_attention(X, W_Q, W_K, W_V, W_O):
    H, T = np.shape(W_Q)[0], np.shape(X)[-2]
    return np.zeros(np.shape(X)[:-1] + (np.shape(W_O)[-1],)), np.zeros(np.shape(X)[:-2] + (H, T, T))
''',
    "positional_encoding": '''
def positional_encoding(max_len, d_model):
    return np.zeros((max_len, d_model))
''',
    "padding_mask": '''
def padding_mask(token_ids, pad_id=0):
    return np.zeros(np.shape(token_ids)[:-1] + (1, np.shape(token_ids)[-1]), dtype=bool)
''',
    "look_ahead_mask": '''
def look_ahead_mask(T):
    return np.zeros((T, T), dtype=bool)
''',
    
}
