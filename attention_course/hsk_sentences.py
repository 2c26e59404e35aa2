"""English-Chinese sentence pairs for notebook 08 (attention on real sentences).

The pairs are the HSK 3.0 graded sentences of the PyPI package `hsk-sentences-audio` 1.0.0
(https://github.com/no7z/hsk-sentences-audio; code MIT, the dataset CC-BY-SA-4.0): each record has a
Chinese sentence, its words (the package's segmentation) with an English dictionary gloss per word,
and an English translation. This module reads the package's JSON (its checksum pinned below, like
the course's own data), drops the records whose English is a placeholder, splits the rest into
train / dev / test so that no English or Chinese sentence is in two splits, tokenises both sides,
numbers the tokens (with a visible `<unk>`), and derives from the glosses (a) a reference word
alignment for the alignment error rate and (b) word-to-word training pairs.
Anything derived from the data (the split, the reference links) is under CC-BY-SA-4.0 as well.

Stable API (notebook 08 and course_build/train_real_translation.py rely on it):

- ``load_pairs()`` -> ``HskData(pairs, dropped)``: every usable record as a ``Pair`` (id, level,
  english, chinese, words, glosses, en_tokens), in the package's order; ``dropped``: the ids of the
  placeholder records left out.
- ``split_pairs(pairs, seed=SPLIT_SEED)`` -> {"train", "dev", "test"}: lists of Pair, about
  80 / 10 / 10 %, whole groups of records that share an English or a Chinese sentence at a time.
- ``english_tokens(text)`` (lower case; words, numbers, contractions, punctuation marks),
  ``chinese_characters(words)``.
- ``Vocabulary(tokens)``: ``<pad>`` 0, ``<start>`` 1, ``<end>`` 2, ``<unk>`` 3, ``<null>`` 4, then the tokens;
  ``encode(tokens)``, ``encode_batch(rows, length, end=...)``, ``decode(ids)``, ``unknown(tokens)``.
- ``gloss_links(pair)`` -> (sure, possible): sets of (chinese word index, english token index).
- ``gloss_words(gloss)``: the English content words of one gloss.
- ``gloss_training_pairs(pairs)`` -> list of (english tokens, chinese words): one per (word, sense).
- ``gloss_dictionary(pairs)`` -> {english word: chinese word} and ``word_by_word(tokens, dictionary)``:
  the word-by-word baseline translation built from the glosses.
- ``checked_links()``: a hand check of 60 sure reference links of the test split (which are right), from
  datasets/real_translation/checked_links.json (checksum verified).
"""
import hashlib
import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from importlib import metadata, resources

PACKAGE = "hsk-sentences-audio"
MODULE = "hsk_sentences_audio"
VERSION = "1.0.0"
DATA_FILE = "data/sentences.json"
SHA256 = "8f8ffd34eee29f395724ce060cad22511eeeabb7af731d5b5879dc0548e01660"
LICENSE = "CC-BY-SA-4.0"
CITATION = ("hsk-sentences-audio 1.0.0, 4,354 HSK 3.0 graded sentences with word glosses and English "
            "translations (https://github.com/no7z/hsk-sentences-audio), dataset licensed CC-BY-SA-4.0")
SPLIT_SEED = 8
SPLITS = ("train", "dev", "test")
PLACEHOLDER = re.compile(r"^placeholder(-[a-z]\d+)?$", re.I)

PAD, START, END, UNK, NULL = "<pad>", "<start>", "<end>", "<unk>", "<null>"
SPECIALS = (PAD, START, END, UNK, NULL)
PAD_ID, START_ID, END_ID, UNK_ID, NULL_ID = range(5)  # <null>: the empty word of IBM Model 1

_ENGLISH = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")
# Words that glosses use to describe rather than to translate ("to run", "sth", "used in ...");
# they would link every "to" and "a" of a sentence to every verb and noun.
GLOSS_STOPWORDS = frozenset(
    "a an the to of sth sb sb's sth's one one's oneself used in on at by for with and or as is be been being "
    "etc also esp e.g. i.e. lit fig abbr variant surname see cf old classifier particle from into "
    "some any kind type form bound".split())
_SUFFIXES = ("ing", "ies", "ied", "es", "ed", "s", "ly", "er", "est")


@dataclass(frozen=True)
class Pair:
    """One sentence pair: the English translation and the Chinese sentence with its words and glosses."""
    id: str
    level: int
    english: str
    chinese: str
    words: tuple  # the package's segmentation; joined, they give `chinese` without punctuation
    glosses: tuple  # one English dictionary gloss per word ("" for some function words)
    en_tokens: tuple  # english_tokens(english)

    @property
    def characters(self) -> tuple:
        return tuple(chinese_characters(self.words))


@dataclass(frozen=True)
class HskData:
    pairs: list
    dropped: list  # ids of the records whose English translation is a placeholder


def data_path():
    """The installed package's sentences.json, or a message that says how to install it."""
    try:
        installed = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        raise ModuleNotFoundError(
            f"Notebook 08 reads its sentence pairs from the Python package {PACKAGE} {VERSION}, which is not "
            f"installed in this environment. Install it with:  pip install {PACKAGE}=={VERSION}  "
            "(it is pinned in the course's requirements.txt, so `make install` does it too).") from None
    if installed != VERSION:
        raise ImportError(f"{PACKAGE} {installed} is installed; the course needs {VERSION} "
                          f"(pip install {PACKAGE}=={VERSION}).")
    return resources.files(MODULE).joinpath(DATA_FILE)


def read_records() -> list:
    """The package's 4,354 raw records, after checking the file against the pinned checksum."""
    raw = data_path().read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        raise ValueError(f"{PACKAGE}'s {DATA_FILE} has checksum {digest[:12]}..., expected {SHA256[:12]}...: "
                         f"reinstall it with pip install --force-reinstall {PACKAGE}=={VERSION}")
    return json.loads(raw.decode("utf-8"))


def english_tokens(text: str) -> list:
    """Lower-cased English tokens: words and numbers (with a contraction kept whole: "it's"), and each
    punctuation mark on its own. Curly quotes become straight ones."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'").lower()
    return _ENGLISH.findall(text)


def chinese_characters(words) -> list:
    """The characters of a sequence of Chinese words, in order."""
    return [character for word in words for character in word]


def _pair(record) -> Pair:
    words = tuple(token["word"] for token in record["tokens"])
    english = record["translation"]["en"].strip()
    return Pair(id=record["id"], level=int(record["hsk_level"]), english=english, chinese=record["chinese"],
                words=words, glosses=tuple(token.get("gloss_en") or "" for token in record["tokens"]),
                en_tokens=tuple(english_tokens(english)))


def load_pairs() -> HskData:
    """Every record whose English translation is real, as a Pair; and the ids of those left out."""
    pairs, dropped = [], []
    for record in read_records():
        if PLACEHOLDER.match(record["translation"]["en"].strip()):
            dropped.append(record["id"])
        else:
            pairs.append(_pair(record))
    return HskData(pairs, dropped)


def _bucket(key: str, seed: int) -> float:
    """A number in [0, 1) fixed by the key and the seed (the same on every machine and NumPy version)."""
    digest = hashlib.sha256(f"{seed}:{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def split_pairs(pairs, seed: int = SPLIT_SEED, fractions=(0.8, 0.1)) -> dict:
    """Train / dev / test lists of pairs. Records that share an English sentence (compared in lower case,
    without punctuation) or a Chinese sentence form one group, and a group goes whole into one split, so
    that no sentence of the test split was seen in training. Within a split, the package's order."""
    parent = list(range(len(pairs)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_seen = {}
    for i, pair in enumerate(pairs):
        keys = ("en:" + " ".join(t for t in pair.en_tokens if t[0].isalnum()), "zh:" + "".join(pair.words))
        for key in keys:
            if key in first_seen:
                parent[find(i)] = find(first_seen[key])
            else:
                first_seen[key] = i
    group_key = {}
    for i, pair in enumerate(pairs):
        root = find(i)
        group_key.setdefault(root, pair.id)  # a group is named after its first record
    splits = {name: [] for name in SPLITS}
    for i, pair in enumerate(pairs):
        u = _bucket(group_key[find(i)], seed)
        name = "train" if u < fractions[0] else "dev" if u < fractions[0] + fractions[1] else "test"
        splits[name].append(pair)
    return splits


class Vocabulary:
    """Token <-> id: <pad> 0, <start> 1, <end> 2, <unk> 3, <null> 4 (IBM Model 1's empty word), then `tokens`
    in the order given (duplicates and the special tokens themselves are skipped). A token not in the
    vocabulary gets the id of <unk>."""

    def __init__(self, tokens):
        self.tokens = list(SPECIALS)
        seen = set(SPECIALS)
        for token in tokens:
            if token not in seen:
                self.tokens.append(token)
                seen.add(token)
        self.index = {token: i for i, token in enumerate(self.tokens)}

    @classmethod
    def from_counts(cls, counts: Counter, min_count: int = 1):
        """The tokens seen at least `min_count` times, most frequent first (ties in sorted order)."""
        kept = sorted((t for t, n in counts.items() if n >= min_count), key=lambda t: (-counts[t], t))
        return cls(kept)

    def __len__(self):
        return len(self.tokens)

    def __contains__(self, token):
        return token in self.index

    def encode(self, tokens) -> list:
        return [self.index.get(token, UNK_ID) for token in tokens]

    def unknown(self, tokens) -> list:
        """The tokens that would become <unk>."""
        return [token for token in tokens if token not in self.index]

    def encode_batch(self, rows, length: int, end: bool = False):
        """int32 (n, length): each row's ids (then <end> when end=True), padded with <pad>; rows longer than
        that are cut (keeping <end> last)."""
        import numpy as np

        ids = np.full((len(rows), length), PAD_ID, np.int32)
        for i, row in enumerate(rows):
            encoded = self.encode(row)
            encoded = encoded[:length - 1] + [END_ID] if end else encoded[:length]
            ids[i, :len(encoded)] = encoded
        return ids

    def decode(self, ids, stop_at_end: bool = True) -> list:
        """Tokens of a row of ids, up to the first <end> (when stop_at_end), without <pad> and <start>."""
        tokens = []
        for i in [int(i) for i in ids]:
            if i == END_ID and stop_at_end:
                break
            if i not in (PAD_ID, START_ID, NULL_ID):
                tokens.append(self.tokens[i])
        return tokens


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def gloss_words(gloss: str) -> list:
    """The English content words of a dictionary gloss: remarks in brackets, Chinese cross-references
    and describing words (GLOSS_STOPWORDS: "to", "sth", "used", ...) left out; each word once, in order."""
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", gloss.lower())
    words = []
    for word in re.findall(r"[a-z]+(?:'[a-z]+)?", text):
        if word not in GLOSS_STOPWORDS and word not in words:
            words.append(word)
    return words


def gloss_links(pair: Pair) -> tuple:
    """Reference links between the Chinese words and the English tokens of one pair, from the glosses.

    sure: (i, j) when an English token j equals a content word of word i's gloss (gloss_words);
    possible: the sure links, plus (i, j) when they agree after cutting a common English suffix
    (-s, -es, -ed, -ing, -ly, -er, -est, -ies, -ied: "runs" and "run", "happily" and "happy" stay apart).
    English tokens in GLOSS_STOPWORDS and punctuation are never linked."""
    sure, possible = set(), set()
    for i, gloss in enumerate(pair.glosses):
        content = gloss_words(gloss)
        stems = {_stem(w) for w in content}
        for j, token in enumerate(pair.en_tokens):
            if not token[0].isalpha() or token in GLOSS_STOPWORDS:
                continue
            if token in content:
                sure.add((i, j))
                possible.add((i, j))
            elif _stem(token) in stems:
                possible.add((i, j))
    return sure, possible


def gloss_training_pairs(pairs) -> list:
    """Word-level training pairs from the glosses of `pairs`: (english tokens, (chinese word,)) for the first
    sense of each distinct (word, gloss), the sense as written before its first ';' with remarks in brackets
    removed ("to look forward to; to await" -> "to look forward to"). Words with an empty gloss are skipped."""
    seen, out = set(), []
    for pair in pairs:
        for word, gloss in zip(pair.words, pair.glosses):
            if (word, gloss) in seen:
                continue
            seen.add((word, gloss))
            sense = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", gloss.split(";")[0])
            tokens = [t for t in english_tokens(sense) if t[0].isalnum() and t.isascii()]
            if tokens:
                out.append((tuple(tokens), (word,)))
    return out


def gloss_dictionary(pairs) -> dict:
    """English word -> Chinese word, from the glosses of `pairs`: among the Chinese words whose gloss
    contains the English word (gloss_words), the one that occurs most often in `pairs` (ties: the one met
    first)."""
    frequency = Counter(word for pair in pairs for word in pair.words)
    candidates = {}
    for pair in pairs:
        for word, gloss in zip(pair.words, pair.glosses):
            for english in gloss_words(gloss):
                candidates.setdefault(english, [])
                if word not in candidates[english]:
                    candidates[english].append(word)
    return {english: max(words, key=lambda w: frequency[w]) for english, words in candidates.items()}


def word_by_word(tokens, dictionary) -> list:
    """The word-by-word translation of English tokens: each token the dictionary knows becomes its Chinese
    word, in the English order; the others (function words, punctuation, unknown words) are left out."""
    return [dictionary[token] for token in tokens if token in dictionary and token not in GLOSS_STOPWORDS]


CHECKED_LINKS = "real_translation/checked_links.json"


def checked_links() -> list:
    """The hand-checked sample of sure gloss links: dicts with id, chinese_word, english_token, link, right (bool)
    and, for a wrong link, a note."""
    from attention_course.datafiles import verified_path

    with open(verified_path(CHECKED_LINKS), encoding="utf-8") as handle:
        return json.load(handle)["links"]
