"""Notebook 08's data: the HSK sentence pairs of the hsk-sentences-audio package, their split, tokens and gloss links."""
import hashlib
from collections import Counter

import numpy as np
import pytest

from attention_course import hsk_sentences as H


@pytest.fixture(scope="module")
def data():
    return H.load_pairs()


@pytest.fixture(scope="module")
def splits(data):
    return H.split_pairs(data.pairs)


def test_the_installed_package_is_the_pinned_one():
    raw = H.data_path().read_bytes()
    assert hashlib.sha256(raw).hexdigest() == H.SHA256
    assert len(H.read_records()) == 4354


def test_placeholders_are_dropped_and_everything_else_kept(data):
    assert len(data.dropped) == 80 and len(data.pairs) == 4354 - 80
    assert not any("placeholder" in p.english.lower() for p in data.pairs)
    assert Counter(p.level for p in data.pairs) == {1: 281, 2: 538, 3: 727, 4: 786, 5: 935, 6: 1007}


def test_words_join_back_to_the_chinese_sentence_without_punctuation(data):
    for p in data.pairs:
        assert "".join(p.words) == "".join(ch for ch in p.chinese if ch in "".join(p.words)), p.id
        assert len(p.words) == len(p.glosses)
        assert p.characters == tuple("".join(p.words))


def test_the_split_is_seeded_disjoint_and_about_80_10_10(data, splits):
    assert sum(len(part) for part in splits.values()) == len(data.pairs)
    ids = {name: {p.id for p in part} for name, part in splits.items()}
    assert not (ids["train"] & ids["dev"] or ids["train"] & ids["test"] or ids["dev"] & ids["test"])
    for name, share in (("train", 0.8), ("dev", 0.1), ("test", 0.1)):
        assert abs(len(splits[name]) / len(data.pairs) - share) < 0.02, (name, len(splits[name]))
    for key in (lambda p: tuple(t for t in p.en_tokens if t[0].isalnum()), lambda p: p.words):
        seen = {key(p) for p in splits["train"]}
        assert not any(key(p) in seen for p in splits["dev"] + splits["test"]), "a sentence is in two splits"
    again = H.split_pairs(data.pairs)
    assert [p.id for p in again["test"]] == [p.id for p in splits["test"]], "the split must not change between calls"
    other = H.split_pairs(data.pairs, seed=H.SPLIT_SEED + 1)
    assert [p.id for p in other["test"]] != [p.id for p in splits["test"]], "the seed must choose the split"


def test_the_split_is_the_one_the_shipped_models_were_trained_on(splits):
    """The shipped weights and the recorded numbers belong to this split: a change must be deliberate."""
    digest = hashlib.sha256(" ".join(p.id for p in splits["test"]).encode()).hexdigest()
    assert (len(splits["train"]), len(splits["dev"]), len(splits["test"])) == (3398, 438, 438)
    assert digest[:16] == TEST_SPLIT_DIGEST, digest


TEST_SPLIT_DIGEST = "42f8223f5ae11b27"


def test_english_tokens():
    assert H.english_tokens("Don\u2019t move, Tom!") == ["don't", "move", ",", "tom", "!"]
    assert H.english_tokens("It costs 40 yuan.") == ["it", "costs", "40", "yuan", "."]


def test_vocabulary_numbers_tokens_and_shows_unknown_ones():
    vocab = H.Vocabulary.from_counts(Counter({"b": 3, "a": 3, "c": 1}), min_count=2)
    assert vocab.tokens == ["<pad>", "<start>", "<end>", "<unk>", "<null>", "a", "b"]
    assert (H.PAD_ID, H.START_ID, H.END_ID, H.UNK_ID, H.NULL_ID) == (0, 1, 2, 3, 4)
    assert vocab.encode(["a", "c", "b"]) == [5, H.UNK_ID, 6]
    assert vocab.unknown(["a", "c", "d"]) == ["c", "d"]
    ids = vocab.encode_batch([["a", "b"], ["b", "a", "a", "b"]], 4, end=True)
    assert ids.tolist() == [[5, 6, H.END_ID, H.PAD_ID], [6, 5, 5, H.END_ID]]
    assert ids.dtype == np.int32
    assert vocab.decode([5, 6, H.END_ID, 5]) == ["a", "b"]
    assert vocab.decode([H.START_ID, 5, H.PAD_ID, 6]) == ["a", "b"]


def test_gloss_words_drop_remarks_and_describing_words():
    assert H.gloss_words("to look forward to; to await") == ["look", "forward", "await"]
    assert H.gloss_words("used in 自個兒|自个儿[zi4 ge3 r5]") == []
    assert H.gloss_words("(of a sound) to come through; to be heard") == ["come", "through", "heard"]


def test_gloss_links_sure_and_possible():
    pair = H.Pair("x", 1, "There are seven days in a week.", "一个星期有七天。", ("一", "个", "星期", "有", "七", "天"),
                  ("one; single", "used in 自个儿", "week; day of the week", "to have; there is", "seven; 7", "day; sky"),
                  tuple(H.english_tokens("There are seven days in a week.")))
    sure, possible = H.gloss_links(pair)
    tokens = pair.en_tokens
    assert (2, tokens.index("week")) in sure and (4, tokens.index("seven")) in sure
    assert (5, tokens.index("days")) in possible - sure  # "days" and "day": a suffix apart
    assert all(tokens[j] not in H.GLOSS_STOPWORDS and tokens[j][0].isalpha() for _, j in possible)
    assert sure <= possible


def test_gloss_links_cover_a_part_of_the_test_words(splits):
    words = linked = 0
    for p in splits["test"]:
        sure, possible = H.gloss_links(p)
        assert sure <= possible
        words += len(p.words)
        linked += len({i for i, _ in sure})
    assert 0.3 < linked / words < 0.5


def test_gloss_training_pairs_and_dictionary(splits):
    pairs = H.gloss_training_pairs(splits["train"])
    assert (("teacher",), ("老师",)) in pairs
    assert all(english and len(chinese) == 1 for english, chinese in pairs)
    train_words = {w for p in splits["train"] for w in p.words}
    assert {chinese[0] for _, chinese in pairs} <= train_words, "gloss pairs come from the training sentences only"
    dictionary = H.gloss_dictionary(splits["train"])
    assert dictionary["teacher"] == "老师"
    assert H.word_by_word(["the", "teacher", "!", "zzzz"], dictionary) == ["老师"]


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    def missing(name):
        raise H.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(H.metadata, "version", missing)
    with pytest.raises(ModuleNotFoundError, match="pip install hsk-sentences-audio==1.0.0"):
        H.load_pairs()


def test_a_changed_file_is_refused(monkeypatch):
    class Changed:
        def read_bytes(self):
            return b"[]"

    monkeypatch.setattr(H, "data_path", lambda: Changed())
    with pytest.raises(ValueError, match="checksum"):
        H.read_records()


def test_the_hand_checked_links_are_the_seeded_sample_of_the_test_references(splits):
    test = splits["test"]
    links = [(k, i, j) for k, p in enumerate(test) for i, j in sorted(H.gloss_links(p)[0])]
    drawn = sorted(np.random.default_rng(8).choice(len(links), 60, replace=False))
    checked = H.checked_links()
    assert [(test[links[x][0]].id, links[x][1], links[x][2]) for x in drawn] == [
        (c["id"], c["chinese_word"], c["english_token"]) for c in checked]
    assert all(isinstance(c["right"], bool) and (c["right"] or c["note"]) for c in checked)


def test_the_counts_the_texts_state_are_the_data(data):
    """Notebook 08's overview and the README state the records, the placeholders left out and the pairs."""
    from tests.course_files import REPO, source_notebook
    stated = {"records": f"{len(H.read_records()):,} records", "dropped": f"the {len(data.dropped)}\nwhose English",
              "pairs": f"{len(data.pairs):,} sentence pairs"}
    overview = "\n".join(c.source for c in source_notebook("08_real_translation").cells[:3] if c.cell_type == "markdown")
    for what, text in stated.items():
        assert text in overview, f"notebook 08's overview should say {text!r} ({what})"
    readme = (REPO / "README.md").read_text()
    assert f"{len(data.pairs):,} real English → Chinese sentence pairs" in readme
    for wrong in (f"{len(H.read_records()):,} sentence pairs", f"{len(H.read_records()):,} HSK 3.0 sentence pairs"):
        assert wrong not in overview + readme, f"{wrong!r}: the records are not all pairs"
