"""The captioned-scenes dataset: reproducible builder, captions true of the images, caption encoding."""
import importlib.util

import numpy as np
import pytest

from attention_course import captioned_scenes as cs
from attention_course.paths import REPO_ROOT

SIZES = {"train": 6000, "dev": 500, "test": 1000}
RGB = np.array(list(cs.COLOURS.values()), float)


def load_builder():
    spec = importlib.util.spec_from_file_location("build_scenes", REPO_ROOT / "datasets" / "build_scenes.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    return builder


def parse(caption):
    """(big colour, big shape, relation, small colour, small shape) of a caption, or an AssertionError."""
    words = caption.split()
    assert words[0] == "a" and words[-3] == "a", caption
    relation = " ".join(words[3:-3])
    assert relation in cs.RELATIONS, caption
    return words[1], words[2], relation, words[-2], words[-1]


def relation_of(big, small):
    """Where box `big` is relative to box `small` (x0, y0, x1, y1), if they share a row or a column."""
    if big[1] >= small[3] or big[3] <= small[1]:  # no vertical overlap: one is above the other
        assert big[0] < small[2] and small[0] < big[2], "the objects share neither a row nor a column"
        return "above" if big[3] <= small[1] else "below"
    assert big[0] >= small[2] or big[2] <= small[0], "the boxes overlap"
    return "left of" if big[2] <= small[0] else "right of"


@pytest.fixture(scope="module")
def splits():
    return {split: cs.load_scenes(split) for split in SIZES}


def test_builder_reproduces_the_committed_file(splits):
    builder = load_builder()
    for split, (n, seed) in builder.SPLITS.items():
        built, committed = builder.make_split(n, seed), splits[split]
        assert built["captions"].tolist() == committed.captions, f"{split} captions differ from the builder's"
        for name in ("images", "boxes", "colours", "shapes", "relations"):
            assert np.array_equal(built[name], getattr(committed, name)), f"{split} {name} differ from the builder's"


def test_splits_have_the_documented_sizes_and_types(splits):
    for split, n in SIZES.items():
        scenes = splits[split]
        assert scenes.images.shape == (n, cs.IMAGE_SIZE, cs.IMAGE_SIZE, 3) and scenes.images.dtype == np.uint8
        assert scenes.boxes.shape == (n, 2, 4) and len(scenes.captions) == n
    train = splits["train"]
    combos = set(zip(*train.colours.T, *train.shapes.T, train.relations))
    assert len(combos) == 12 * 11 * 4, "some (big object, relation, small object) combination is missing from train"


def test_every_caption_is_true_of_its_image(splits):
    names = list(cs.COLOURS)
    for scenes in splits.values():
        for image, caption, boxes in zip(scenes.images, scenes.captions, scenes.boxes):
            big_colour, big_shape, relation, small_colour, small_shape = parse(caption)
            assert len(caption.split()) <= cs.MAX_CAPTION_WORDS
            assert (big_colour, big_shape) != (small_colour, small_shape), caption
            assert relation_of(*boxes) == relation, caption
            widths = boxes[:, 2] - boxes[:, 0]
            assert widths[0] > widths[1], f"{caption}: the first object named is not the big one"
            for (x0, y0, x1, y1), colour, shape in zip(boxes, (big_colour, small_colour), (big_shape, small_shape)):
                patch = image[y0:y1, x0:x1].astype(float)
                lit = patch.max(axis=-1) > 0
                mean = patch[lit].mean(axis=0)
                assert names[np.argmin(((RGB - mean) ** 2).sum(axis=1))] == colour, caption
                # Filled fraction of the box: square 1, circle about pi/4, triangle about 1/2.
                fill = lit.mean()
                fill_fits = {"square": fill == 1, "circle": 0.7 < fill < 0.9, "triangle": 0.45 < fill < 0.65}
                assert fill_fits[shape], caption
            # Nothing is drawn outside the two boxes.
            outside = np.ones(image.shape[:2], bool)
            for x0, y0, x1, y1 in boxes:
                outside[y0:y1, x0:x1] = False
            assert not image[outside].any(), caption


def test_captions_encode_with_end_and_padding_and_decode_back(splits):
    captions = splits["dev"].captions
    ids = cs.encode_captions(captions)
    assert ids.shape == (len(captions), cs.CAPTION_LENGTH) and ids.dtype == np.int32
    assert [cs.decode_ids(row) for row in ids] == captions
    assert cs.VOCAB[0] == cs.PAD and cs.WORD_TO_ID[cs.END] == 2
    short = cs.encode_captions(["a red circle above a blue square"])[0]  # 7 words: END, then one PAD
    assert short[7] == cs.WORD_TO_ID[cs.END] and short[8] == cs.WORD_TO_ID[cs.PAD]
    inputs = cs.decoder_inputs(ids)
    assert inputs.shape == ids.shape and (inputs[:, 0] == cs.WORD_TO_ID[cs.START]).all()
    assert np.array_equal(inputs[:, 1:], ids[:, :-1])
    assert cs.decode_ids(inputs[0]) == captions[0], "decoding skips START"


def test_unknown_split_and_unknown_word_are_refused():
    with pytest.raises(ValueError, match="train, dev, test"):
        cs.load_scenes("validation")
    with pytest.raises(ValueError, match="'purple'"):
        cs.encode_captions(["a purple circle above a blue square"])
