"""Loader for the date-translation dataset (datasets/dates, built by datasets/build_dates.py)."""
import csv
from dataclasses import dataclass

from attention_course.datafiles import verified_path

SPLITS = ("train", "dev", "test")
# The eight dates the Coursera notebook translates (three of them wrongly); notebooks 03 and 06 must get all right.
EXAMPLE_DATES = {"3 May 1979": "1979-05-03", "5 April 09": "2009-04-05", "21th of August 2016": "2016-08-21",
                 "Tue 10 Jul 2007": "2007-07-10", "Saturday May 9 2018": "2018-05-09", "March 3 2001": "2001-03-03",
                 "March 3rd 2001": "2001-03-03", "1 March 2001": "2001-03-01"}
UNK, PAD = "<unk>", "<pad>"


def normalise(text: str) -> str:
    """The preprocessing the model sees: lower case, commas dropped."""
    return text.lower().replace(",", "")


@dataclass(frozen=True)
class DateDataset:
    """Pairs (human, iso) per split, and the two vocabularies.

    human_vocab: character -> index, the characters of the normalised training inputs
        in sorted order, then "<unk>" and "<pad>".
    machine_vocab: character -> index for "-" and the ten digits (11 symbols).
    inv_machine_vocab: index -> character.
    """
    train: list
    dev: list
    test: list
    human_vocab: dict
    machine_vocab: dict
    inv_machine_vocab: dict


def read_split(split: str) -> list:
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    with open(verified_path(f"dates/{split}.tsv"), encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [(row["human"], row["machine"]) for row in rows]


def load_dates() -> DateDataset:
    """Read all splits (checksums verified) and build the vocabularies from the training set."""
    splits = {name: read_split(name) for name in SPLITS}
    human_chars = sorted({ch for human, _ in splits["train"] for ch in normalise(human)})
    human_vocab = {ch: i for i, ch in enumerate(human_chars + [UNK, PAD])}
    machine_chars = sorted({ch for _, iso in splits["train"] for ch in iso})
    machine_vocab = {ch: i for i, ch in enumerate(machine_chars)}
    inv_machine_vocab = {i: ch for ch, i in machine_vocab.items()}
    return DateDataset(**splits, human_vocab=human_vocab, machine_vocab=machine_vocab,
                       inv_machine_vocab=inv_machine_vocab)
