"""HTML: block text and alt/title translated; script, style, pre, code, translate="no" and
class="notranslate" untouched; the element tree (tags, attributes, order) kept; broken markup
repaired and named."""

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.skeleton import html_skeleton

QUIET = DocumentOptions(progress=False)
PAGE = """<!DOCTYPE html>
<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>The light</title><style>p > b { color: red }</style></head>
<body>
<h1>The <b>light</b> of God</h1>
<p>And God said, <i>let there be</i> <a href="x.html" title="The light">light</a>: and
there was light. And God saw the light.</p>
<pre>And God <b>said</b></pre>
<p translate="no">And God said</p>
<p class="x notranslate">And God said</p>
<p>Use <code>x = 1</code> here. <img src="a.png" alt="The earth"><br>And the earth.</p>
<ul><li>The first day.</li><li>The second <b>day</b>.</li></ul>
<div>Outside <p>inside a block</p> after it</div>
<p><a href="über uns.html#a b">The page</a> is here.</p>
<script>var x = "<b>a</b>";</script>
<!-- a comment -->
</body></html>
"""


def translate(scripted, page: str) -> str:
    return translate_document(scripted, page, "html", DecodeConfig(), QUIET)[0]


def test_structure_and_untouched_content_are_kept(scripted):
    out = translate(scripted, PAGE)
    assert html_skeleton(out) == html_skeleton(PAGE)
    for kept in (
        '<p translate="no">And God said</p>',
        "<pre>And God <b>said</b></pre>",
        '<script>var x = "<b>a</b>";</script>',
        "<code>x = 1</code>",
        "<style>p > b { color: red }</style>",
        "<!-- a comment -->",
    ):
        assert kept in out
    assert "<h1>GOD OF <b>LIGHT</b> THE</h1>" in out
    assert 'alt="EARTH THE"' in out and 'title="LIGHT THE"' in out
    assert "<title>LIGHT THE</title>" in out
    assert "OUTSIDE" in out and "BLOCK A INSIDE" in out and "IT AFTER" in out


def test_a_fragment_stays_a_fragment(scripted):
    out = translate(scripted, "<p>A <b>big</b> dog.</p>\n<p>Two.</p>")
    assert out == "<p>DOG. <b>BIG</b> A</p>\n<p>TWO.</p>"


def test_broken_nesting_is_repaired_and_named(scripted, capsys):
    out = translate(scripted, "<p>Broken <b>nesting <i>is</b> here</i>.</p>")
    assert "malformed HTML" in capsys.readouterr().err
    assert html_skeleton(out) == html_skeleton(out)  # parses; and every tag kept once
    for tag in ("<b>", "</b>", "<i>", "</i>"):
        assert out.count(tag) == 1
