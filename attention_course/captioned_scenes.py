"""The captioned-scenes task of the "show, attend and tell" exercise (Xu et al. 2015).

Each 48x48 RGB image holds two shapes on a black background, in two cells of a 3x3 grid of
16-px cells that share a row or a column. One object is big (14 px) and one small (8 px); the
caption always names the BIG object first, then where it is relative to the small one:
"a red circle left of a blue square". So every image has exactly one correct caption, and a
decoder has to look at both objects (and at where they are) to write it.

Stable API (the notebook relies on it):

- Constants: ``IMAGE_SIZE = 48``, ``GRID = 3``, ``CELL = 16``, ``COLOURS`` (name -> RGB),
  ``SHAPES``, ``RELATIONS``, ``PAD, START, END``, ``VOCAB`` (index = token id, PAD is 0),
  ``WORD_TO_ID``, ``MAX_CAPTION_WORDS = 8``, ``CAPTION_LENGTH = 9`` (room for END),
  ``SPLITS = ("train", "dev", "test")``.
- ``load_scenes(split)`` -> ``Scenes`` (checksums verified): train 6000, dev 500, test 1000 images.
- ``caption_of(big, relation, small)`` -> the caption of one scene (used by the builder).
- ``encode_captions(captions, length=CAPTION_LENGTH)`` -> int32 (n, length): word ids, END, PAD...
- ``decoder_inputs(ids)`` -> START then ids[:, :-1], the teacher-forcing input of the decoder.
- ``decode_ids(ids)`` -> the caption of one row of ids, stopping at END.

The data file is made by ``datasets/build_scenes.py``.
"""
from typing import NamedTuple

import numpy as np

from attention_course.datafiles import verified_path
from attention_course.token_ids import end_padded, shift_right, tokens_until_end

IMAGE_SIZE = 48
GRID = 3
CELL = IMAGE_SIZE // GRID
# Channels stay within 20..235 so the builder's +-20 colour jitter never clips, and any two
# colours differ by more than 100 in some channel, so jittered colours never look alike.
COLOURS = {
    "red": (220, 40, 40),
    "green": (40, 190, 60),
    "blue": (50, 100, 230),
    "yellow": (235, 205, 35),
}
SHAPES = ("circle", "square", "triangle")
RELATIONS = ("left of", "right of", "above", "below")  # where the big object is, seen from the small one
PAD, START, END = "<pad>", "<start>", "<end>"
VOCAB = [PAD, START, END, "a", *COLOURS, *SHAPES, "left", "right", "of", "above", "below"]
WORD_TO_ID = {word: i for i, word in enumerate(VOCAB)}
PAD_ID, START_ID, END_ID = WORD_TO_ID[PAD], WORD_TO_ID[START], WORD_TO_ID[END]
MAX_CAPTION_WORDS = 8
CAPTION_LENGTH = MAX_CAPTION_WORDS + 1
SPLITS = ("train", "dev", "test")


class Scenes(NamedTuple):
    """One split. Index 0 of the second axis is the big (first-mentioned) object, 1 the small one."""
    images: np.ndarray     # uint8 (n, 48, 48, 3)
    captions: list         # n strings, e.g. "a red circle left of a blue square"
    boxes: np.ndarray      # int32 (n, 2, 4): x0, y0, x1, y1 in pixels, x1 and y1 exclusive
    colours: np.ndarray    # int32 (n, 2): index into list(COLOURS)
    shapes: np.ndarray     # int32 (n, 2): index into SHAPES
    relations: np.ndarray  # int32 (n,): index into RELATIONS


def caption_of(big, relation, small):
    """The caption of a scene; big and small are (colour index, shape index) pairs."""
    names = list(COLOURS)
    return (f"a {names[big[0]]} {SHAPES[big[1]]} {RELATIONS[relation]} "
            f"a {names[small[0]]} {SHAPES[small[1]]}")


def load_scenes(split):
    """One committed split of the captioned scenes, after checking the file's checksum."""
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    with np.load(verified_path("captioned_scenes/scenes.npz")) as data:
        return Scenes(
            images=data[f"{split}_images"],
            captions=[str(c) for c in data[f"{split}_captions"]],
            boxes=data[f"{split}_boxes"].astype(np.int32),
            colours=data[f"{split}_colours"].astype(np.int32),
            shapes=data[f"{split}_shapes"].astype(np.int32),
            relations=data[f"{split}_relations"].astype(np.int32),
        )


def encode_captions(captions, length=CAPTION_LENGTH):
    """int32 (n, length): each caption's word ids, then END, then PAD up to `length`."""
    for caption in captions:
        unknown = [w for w in caption.split() if w not in WORD_TO_ID]
        if unknown:
            raise ValueError(f"Unknown word {unknown[0]!r} in caption {caption!r}; it is not in VOCAB")
    return end_padded([[WORD_TO_ID[w] for w in caption.split()] for caption in captions], length, END_ID, PAD_ID,
                      captions, "words")


def decoder_inputs(ids):
    """The decoder's input under teacher forcing: START, then the target ids shifted right by one."""
    return shift_right(ids, START_ID)


def decode_ids(ids):
    """The caption written by one row of ids: words up to the first END, PAD and START skipped."""
    return " ".join(tokens_until_end(ids, VOCAB, END_ID, skip=(PAD_ID, START_ID)))


def object_centres(boxes) -> np.ndarray:
    """Centres (x, y) in pixels of the boxes (..., 4) given as x0, y0, x1, y1 (x1, y1 exclusive)."""
    boxes = np.asarray(boxes, dtype=float)
    return np.stack([(boxes[..., 0] + boxes[..., 2]) / 2, (boxes[..., 1] + boxes[..., 3]) / 2], axis=-1)


def region_of(centre, grid) -> tuple:
    """(row, column) of the region of a grid x grid division of the image that holds the point (x, y)."""
    size = IMAGE_SIZE / grid
    x, y = centre
    return int(min(y // size, grid - 1)), int(min(x // size, grid - 1))
