"""Markdown: the project's own README and guides translate with the same element tree (text
aside) and byte-identical code; inline markup is carried across."""

from pathlib import Path

import pytest

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.skeleton import code_blocks, markdown_skeleton

ROOT = Path(__file__).resolve().parents[2]
QUIET = DocumentOptions(progress=False)
SAMPLE = """---
title: a *page*
---
# The **light** of God

And God said, *let there be* [light](http://x.org/a_b "t") and `code` here.
> And the earth was without form,
> and void.

- The first day.
- The **second** day.

| a | b \\| c |
|---|---|
| The sea | The land |

```python
x = 1  # God
```

    indented code

![The light](img.png)

<div>
html block
</div>
"""


def test_a_sample_keeps_its_structure_and_code(scripted):
    out, _ = translate_document(scripted, SAMPLE, "markdown", DecodeConfig(), QUIET)
    assert markdown_skeleton(out) == markdown_skeleton(SAMPLE)
    assert code_blocks(out) == code_blocks(SAMPLE)
    assert out.startswith("---\ntitle: a *page*\n---\n")  # front matter untouched
    assert "# GOD OF **LIGHT** THE\n" in out
    assert "![LIGHT THE](img.png)" in out
    # the link keeps its place after the emphasis (siblings never swap), its URL as it was
    assert '*BE THERE LET* [SAID,](http://x.org/a_b "t")' in out and " `code` " in out
    assert "| SEA THE | LAND THE |" in out


@pytest.mark.parametrize("name", ["README.md", "docs/translation.md", "docs/training.md"])
def test_the_projects_own_files(scripted, name):
    source = (ROOT / name).read_text(encoding="utf-8")
    out, n = translate_document(scripted, source, "markdown", DecodeConfig(), QUIET)
    assert n > 10
    assert markdown_skeleton(out) == markdown_skeleton(source)
    assert code_blocks(out) == code_blocks(source)
