"""Every number in the prose of chapters 11-14 comes from a cell, or is marked as a quoted fact.

A number typed into the text drifts away from the output it describes: a re-run, another
Python (a slightly different corpus) or a changed training loop moves the output and leaves
the text behind (issue 24 found 24 such places). myst-nb's glue puts a value computed by a
cell into the Markdown, ``{glue:text}`held_loss:.2f```, so text and output are one number,
and nbval checks that number like any other output.

The rule, applied to every Markdown cell: after taking out the parts where digits are not
claims about a result, no digit may remain, except in the few places listed below.

Taken out first (their digits are not checked):
  * glue roles, ``{glue:text}`name:.2f``` and ``{glue}`name```: the value comes from a cell;
  * math, ``$...$`` and ``$$...$$``: formulas, and the settings of an experiment written as
    formulas (``$\\tau = 0.7$``), but for a MEASURED VALUE IN MATH: a number of two or more
    significant digits right after ``\\approx`` (or ``\\simeq``, ``≈``), ``$\\text{loss} \\approx 3.42$``,
    is a result typed by hand and is flagged; write ``$\\text{loss} \\approx$ {glue:text}`loss:.2f```.
    (``$e^{-2.25} \\approx 0.1$``, one significant digit, is arithmetic a reader can check; a
    setting after ``=``, ``$p = 0.9$``, is not a measurement);
  * inline code and fenced code: code and identifiers (``num_kv_heads=2``, token ids);
  * link targets (file names, anchors, URLs), and HTML comments;
  * a QUOTED EXTERNAL FACT, the marker: the number stands inside the text of a Markdown link
    to its source, ``[124M parameters](https://huggingface.co/openai-community/gpt2)``.
Allowed where they stand:
  * a heading's section number (``## 3. Training``) and a numbered list's ``1.``;
  * a reference to a chapter, section, part or exercise: ``chapter 7``, ``Chapters 11-14``;
  * a year, 1900-2099, also as a decade (``2020s``): citations such as (Olsson et al., 2022);
  * digits that are part of a name: ``GPT-2``, ``float16``, ``UTF-8`` (joined to a letter),
    and the published model names ``Llama 2``, ``Llama 3.2``, ``Llama 2 7B``.
Numbers written as words ("three seeds") are not checked: keep them for counts that are part
of the design of the page, never for measurements.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ["11_language_model", "12_generation", "13_positions", "14_modern_block", "16_attention_2025"]

GLUE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")
REMOVE = [
    re.compile(r"<!--.*?-->", re.S),                       # HTML comments
    re.compile(r"```.*?```", re.S),                        # fenced code
    re.compile(r"\$\$.*?\$\$", re.S),                      # display math
    re.compile(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.S),  # amsmath environments
    GLUE,
    re.compile(r"\$[^$]+\$"),                              # inline math (may wrap a line)
    re.compile(r"`[^`\n]*`"),                              # inline code
    re.compile(r"\[[^\]]*\]\(https?://[^)]*\)"),           # quoted fact: link text to its source
]
MATH = REMOVE[2:4] + REMOVE[5:6]                            # display, amsmath and inline math
APPROXIMATED = re.compile(r"(?:\\approx|\\simeq|≈)(?:\s|\\[,;:! ]|~)*([-+−]?\d+(?:\.\d+)?)")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")                # other links: keep the text only
HEADING = re.compile(r"^(\s*#+\s+)\d+(\.\d+)*\.?(?=\s)", re.M)
ENUMERATOR = re.compile(r"^(\s*)\d+\.(?=\s)", re.M)
REFERENCE = re.compile(
    r"\b(?:chapters?|sections?|parts?|exercises?)\s+\d+(?:\s*(?:-|–|,|and|or|to)\s*\d+)*", re.I)
MODEL_NAME = re.compile(r"\bLlama \d+(?:\.\d+)?(?: \d+B)?\b")
YEAR = re.compile(r"(?<![\w.,])(?:19|20)\d\d(?:s)?(?![\w.,]\d)")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def bare_numbers(markdown: str) -> list[tuple[str, str]]:
    """The numbers of ``markdown`` that are neither glued, nor marked, nor allowed, as
    ``(number, a little of its context)``."""
    text = markdown
    found = []
    for pattern in REMOVE:
        if pattern in MATH:
            found += measured_in_math([m.group() for m in pattern.finditer(text)])
        text = pattern.sub(" ", text)
    text = LINK.sub(r"\1", text)
    for pattern in (HEADING, ENUMERATOR):
        text = pattern.sub(r"\1", text)
    for pattern in (REFERENCE, MODEL_NAME, YEAR):
        text = pattern.sub(" ", text)
    for match in NUMBER.finditer(text):
        before = text[:match.start()]
        if before[-1:].isalnum() or before[-1:] == "_":
            continue                      # float16, d2l, x_1: part of a name
        if before[-1:] == "-" and before[-2:-1].isalpha():
            continue                      # GPT-2, UTF-8, distinct-2
        found.append((match.group(), text[max(0, match.start() - 25):match.end() + 15].replace("\n", " ")))
    return found


def significant_digits(number: str) -> int:
    """3.42 -> 3, 0.1 -> 1, 0.25 -> 2, 64 -> 2, 1000 -> 1."""
    digits = number.lstrip("+-−")
    digits = digits.replace(".", "").lstrip("0") if "." in digits else digits.strip("0")
    return len(digits)


def measured_in_math(formulas: list[str]) -> list[tuple[str, str]]:
    """The numbers of two or more significant digits that the formulas give as the value of an
    approximation (``\\approx 3.42``): a measured result, which must be glued."""
    return [(match.group(1), formula[max(0, match.start() - 25):match.end() + 15].replace("\n", " "))
            for formula in formulas for match in APPROXIMATED.finditer(formula)
            if significant_digits(match.group(1)) >= 2]


def markdown_cells(page: str):
    nb = json.loads((ROOT / "chapters" / f"{page}.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            yield cell["id"], "".join(cell["source"])


@pytest.mark.parametrize("page", CHAPTERS)
def test_every_number_in_the_prose_is_glued_or_marked(page):
    offenders = {cid: found for cid, text in markdown_cells(page) if (found := bare_numbers(text))}
    assert not offenders, (
        f"{page}: numbers typed into the prose (glue them from a cell, or mark a quoted fact "
        f"with a link to its source; see this test's docstring): {offenders}")


@pytest.mark.parametrize("page", CHAPTERS)
def test_the_chinese_page_glues_the_same_values(page):
    """A translation keeps every glue role of its English cell (same names, same format)."""
    zh = ROOT / "zh" / "chapters" / f"{page}.ipynb"
    cells = {c["id"]: "".join(c["source"]) for c in json.loads(zh.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "markdown"}
    for cid, english in markdown_cells(page):
        assert sorted(GLUE.findall(cells[cid])) == sorted(GLUE.findall(english)), (page, cid)


def test_the_rule_on_examples():
    """Worked examples of the rule: what is flagged, what is not."""
    flagged = {
        "The held-out loss fell to 3.44.": ["3.44"],
        "in about 278 s": ["278"],
        "a 2.6x gain, 124M parameters": ["2.6", "124"],
        "offset -49 of [the table](#table)": ["49"],
        "$$\\mathrm{PPL} \\approx \\, 30.6$$ and the loss, $\\text{loss} \\approx 3.42$": ["30.6", "3.42"],
        "$d_k \\approx 64$ and $L = 6$, $\\tau = 0.7$": ["64"],
    }
    for text, numbers in flagged.items():
        assert [number for number, _ in bare_numbers(text)] == numbers, text
    allowed = [
        "The held-out loss fell to {glue:text}`held_loss:.2f` nats.",
        "## 3. Training\n\n1. tokens\n2. text",
        "as in chapter 7 and Chapters 11-14, section 6 (Olsson et al., 2022), a 2020s model card",
        "GPT-2 in float16, UTF-8 bytes, distinct-2, Llama 2 7B, Llama 3.2",
        "with $\\tau = 0.7$ and `num_kv_heads=2`, see [chapter](13_positions.ipynb)",
        "$\\sqrt{d_k}$, $10000^{2i/d}$, $-\\infty$, $\\mathcal N(0, 0.02^2)$, $e^{-2.25} \\approx 0.1$",
        "$\\ln V \\approx$ {glue:text}`ln_V:.2f` nats, a factor $\\approx 10^{-4}$",
        "OpenAI's GPT-2 ([124M parameters](https://huggingface.co/openai-community/gpt2))",
    ]
    for text in allowed:
        assert bare_numbers(text) == [], text
