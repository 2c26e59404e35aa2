"""Build the small CJK font the figures use for Chinese tokens (汤姆 追逐 杰瑞, notebook 08's sentences).

Most course machines have no Chinese font, and Matplotlib then draws empty boxes. This script
cuts the characters the notebooks show out of Noto Sans CJK SC (SIL Open Font License 1.1): notebook
02's three words and every character of notebook 08's sentence pairs (so any sentence or translation
of it can be drawn), renames the result so it cannot be confused with the full font, and writes it
with the license.

Needs the full font once, on the instructor's machine (Debian: apt-get install fonts-noto-cjk).
Run from the repo root:  python datasets/build_cjk_font.py   (then python -m attention_course.datafiles)
"""
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
SOURCE_FACE = "Noto Sans CJK SC"
EXAMPLE = "汤姆追逐杰瑞"  # notebook 02's example


def characters() -> str:
    """Every Chinese character a notebook figure can show: the example and notebook 08's sentences."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from attention_course.hsk_sentences import load_pairs

    found = {c for pair in load_pairs().pairs for word in pair.words for c in word} | set(EXAMPLE)
    return "".join(sorted(found))
FAMILY = "Attention Course CJK"  # renamed: a Modified Version under the OFL
OUT_DIR = Path(__file__).resolve().parent / "fonts"
FONT_FILE = OUT_DIR / "attention-course-cjk.otf"
LICENSE_FILE = OUT_DIR / "OFL.txt"


def source_face(collection: TTCollection):
    for font in collection.fonts:
        if font["name"].getDebugName(1) == SOURCE_FACE:
            return font
    raise LookupError(f"{SOURCE_FACE} not found in {SOURCE}")


def rename(font) -> None:
    names = font["name"]
    copyright_notice = names.getDebugName(0)
    for record in list(names.names):
        if record.nameID in (1, 3, 4, 6, 16, 17):
            names.removeNames(nameID=record.nameID)
    names.setName(FAMILY, 1, 3, 1, 0x409)
    names.setName("Regular", 2, 3, 1, 0x409)
    names.setName(f"{FAMILY} Regular; subset of {SOURCE_FACE} 2.004", 3, 3, 1, 0x409)
    names.setName(FAMILY, 4, 3, 1, 0x409)
    names.setName(FAMILY.replace(" ", "") + "-Regular", 6, 3, 1, 0x409)
    names.setName(copyright_notice, 0, 3, 1, 0x409)
    font["CFF "].cff.fontNames = [FAMILY.replace(" ", "") + "-Regular"]


def main() -> int:
    if not SOURCE.is_file():
        print(f"{SOURCE} is missing: install fonts-noto-cjk first.", file=sys.stderr)
        return 1
    font = source_face(TTCollection(str(SOURCE)))
    font.recalcTimestamp = False  # same bytes on every rebuild
    options = subset.Options()
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]
    options.layout_features = []
    options.hinting = False
    subsetter = subset.Subsetter(options)
    text = characters()
    subsetter.populate(text=text)
    subsetter.subset(font)
    rename(font)
    OUT_DIR.mkdir(exist_ok=True)
    font.save(str(FONT_FILE))
    LICENSE_FILE.write_text(
        f"{FONT_FILE.name} is a subset ({len(text)} characters: {EXAMPLE} and those of the HSK sentences of "
        f"notebook 08) of {SOURCE_FACE}, renamed {FAMILY!r}.\n"
        "Copyright 2014-2021 Adobe (http://www.adobe.com/), with Reserved Font Name 'Source'.\n"
        "Noto is a trademark of Google Inc.\n\n" + OFL_TEXT, encoding="utf-8")
    print(f"wrote {FONT_FILE} ({FONT_FILE.stat().st_size} bytes) and {LICENSE_FILE}")
    return 0


OFL_TEXT = """\
This Font Software is licensed under the SIL Open Font License, Version 1.1.
This license is copied below, and is also available with a FAQ at: https://openfontlicense.org

-----------------------------------------------------------
SIL OPEN FONT LICENSE Version 1.1 - 26 February 2007
-----------------------------------------------------------

PREAMBLE
The goals of the Open Font License (OFL) are to stimulate worldwide development of collaborative
font projects, to support the font creation efforts of academic and linguistic communities, and to
provide a free and open framework in which fonts may be shared and improved in partnership with
others.

The OFL allows the licensed fonts to be used, studied, modified and redistributed freely as long
as they are not sold by themselves. The fonts, including any derivative works, can be bundled,
embedded, redistributed and/or sold with any software provided that any reserved names are not
used by derivative works. The fonts and derivatives, however, cannot be released under any other
type of license. The requirement for fonts to remain under this license does not apply to any
document created using the fonts or their derivatives.

DEFINITIONS
"Font Software" refers to the set of files released by the Copyright Holder(s) under this license
and clearly marked as such. This may include source files, build scripts and documentation.

"Reserved Font Name" refers to any names specified as such after the copyright statement(s).

"Original Version" refers to the collection of Font Software components as distributed by the
Copyright Holder(s).

"Modified Version" refers to any derivative made by adding to, deleting, or substituting -- in
part or in whole -- any of the components of the Original Version, by changing formats or by
porting the Font Software to a new environment.

"Author" refers to any designer, engineer, programmer, technical writer or other person who
contributed to the Font Software.

PERMISSION & CONDITIONS
Permission is hereby granted, free of charge, to any person obtaining a copy of the Font Software,
to use, study, copy, merge, embed, modify, redistribute, and sell modified and unmodified copies of
the Font Software, subject to the following conditions:

1) Neither the Font Software nor any of its individual components, in Original or Modified
Versions, may be sold by itself.

2) Original or Modified Versions of the Font Software may be bundled, redistributed and/or sold
with any software, provided that each copy contains the above copyright notice and this license.
These can be included either as stand-alone text files, human-readable headers or in the
appropriate machine-readable metadata fields within text or binary files as long as those fields
can be easily viewed by the user.

3) No Modified Version of the Font Software may use the Reserved Font Name(s) unless explicit
written permission is granted by the corresponding Copyright Holder. This restriction only applies
to the primary font name as presented to the users.

4) The name(s) of the Copyright Holder(s) or the Author(s) of the Font Software shall not be used
to promote, endorse or advertise any Modified Version, except to acknowledge the contribution(s) of
the Copyright Holder(s) and the Author(s) or with their explicit written permission.

5) The Font Software, modified or unmodified, in part or in whole, must be distributed entirely
under this license, and must not be distributed under any other license. The requirement for fonts
to remain under this license does not apply to any document created using the Font Software.

TERMINATION
This license becomes null and void if any of the above conditions are not met.

DISCLAIMER
THE FONT SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
BUT NOT LIMITED TO ANY WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT OF COPYRIGHT, PATENT, TRADEMARK, OR OTHER RIGHT. IN NO EVENT SHALL THE COPYRIGHT
HOLDER BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, INCLUDING ANY GENERAL, SPECIAL,
INDIRECT, INCIDENTAL, OR CONSEQUENTIAL DAMAGES, WHETHER IN AN ACTION OF CONTRACT, TORT OR
OTHERWISE, ARISING FROM, OUT OF THE USE OR INABILITY TO USE THE FONT SOFTWARE OR FROM OTHER
DEALINGS IN THE FONT SOFTWARE.
"""

if __name__ == "__main__":
    sys.exit(main())
