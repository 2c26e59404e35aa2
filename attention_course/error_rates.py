"""Edit distance and the character error rate of a speech recogniser (notebook 07)."""


def edit_distance(reference, hypothesis) -> int:
    """Levenshtein distance: the fewest substitutions, insertions and deletions turning hypothesis into reference."""
    previous = list(range(len(hypothesis) + 1))  # distances from the empty reference prefix
    for i, ref_symbol in enumerate(reference, start=1):
        current = [i]
        for j, hyp_symbol in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1,  # reference symbol deleted
                               current[j - 1] + 1,  # hypothesis symbol inserted
                               previous[j - 1] + (ref_symbol != hyp_symbol)))  # kept or substituted
        previous = current
    return previous[-1]


def character_error_rate(references, hypotheses) -> float:
    """Corpus character error rate: total edit distance over the total number of reference characters."""
    references, hypotheses = list(references), list(hypotheses)
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses: give one transcript each")
    characters = sum(len(reference) for reference in references)
    if characters == 0:
        raise ValueError("the references are empty: the character error rate is undefined")
    return sum(edit_distance(r, h) for r, h in zip(references, hypotheses)) / characters
