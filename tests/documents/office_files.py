"""Small office documents for the tests, made with the field's own writers (python-docx, odfpy)
so that the readers meet files they did not write: formatted runs (one of them split in two, as
Word splits runs at every edit), a hyperlink, a tab, fields, a table, a header and a footer."""

from __future__ import annotations

import functools
import io

WORD_TEXTS = [
    "The light of God.",
    "And God said, let there be light.\tDone.",
    "See here for more.",
    "2024",
    "A cell of the table.",
]


@functools.cache  # made once: a zip stamps its members with the time they were written
def word_file() -> bytes:
    """A .docx: body paragraphs with bold, italic and a link, a complex field, a table, a
    header and a footer with a PAGE field."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    d = docx.Document()
    p = d.add_paragraph()
    p.add_run("Th")
    p.add_run("e ")  # the same formatting as the run before it: merged on reading
    p.add_run("light").bold = True
    p.add_run(" of God.")
    p = d.add_paragraph()
    p.add_run("And God said").italic = True
    p.add_run(", ")
    link = OxmlElement("w:hyperlink")
    link.set(
        qn("r:id"), d.part.relate_to("https://example.org/", RELATIONSHIP_TYPE.HYPERLINK, True)
    )
    link.append(p.add_run("let there be light")._r)
    p._p.append(link)
    p.add_run(".")
    p.add_run().add_tab()
    p.add_run("Done.")
    p = d.add_paragraph()
    p.add_run("See ")
    field(p, "REF chapter \\h", "here")
    p.add_run(" for more.")
    d.add_paragraph("2024")
    d.add_table(rows=1, cols=2).cell(0, 0).text = "A cell of the table."
    d.sections[0].header.paragraphs[0].text = "The header of the book."
    footer = d.sections[0].footer.paragraphs[0]
    footer.add_run("Page ")
    simple = OxmlElement("w:fldSimple")
    simple.set(qn("w:instr"), "PAGE")
    shown, number = OxmlElement("w:r"), OxmlElement("w:t")
    number.text = "1"
    shown.append(number)
    simple.append(shown)
    footer._p.append(simple)
    footer.add_run(" of the book.")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def field(p, instruction: str, result: str) -> None:
    """A complex field: begin, instruction, separate, its result's run, end."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    for kind in ("begin", "instr", "separate", "result", "end"):
        run = p.add_run(result if kind == "result" else None)
        if kind == "instr":
            instr = OxmlElement("w:instrText")
            instr.text = instruction
            run._r.append(instr)
        elif kind != "result":
            mark = OxmlElement("w:fldChar")
            mark.set(qn("w:fldCharType"), kind)
            run._r.append(mark)


@functools.cache
def odt_file() -> bytes:
    """An .odt: a heading, paragraphs with bold and italic spans (one holding a space), a link,
    a line break, a list, a table and a footer."""
    from odf.opendocument import OpenDocumentText
    from odf.style import (
        Footer,
        MasterPage,
        PageLayout,
        PageLayoutProperties,
        Style,
        TextProperties,
    )
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import A, H, LineBreak, List, ListItem, P, S, Span

    doc = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    italic = Style(name="Italic", family="text")
    italic.addElement(TextProperties(fontstyle="italic"))
    for style in (bold, italic):
        doc.automaticstyles.addElement(style)
    layout = PageLayout(name="Page")
    layout.addElement(PageLayoutProperties(pagewidth="21cm", pageheight="29.7cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    footer = Footer()
    footer.addElement(P(text="The footer of the book."))
    master.addElement(footer)
    doc.masterstyles.addElement(master)

    doc.text.addElement(H(outlinelevel=1, text="The light"))
    p = P(text="The ")
    p.addElement(Span(stylename=bold, text="light"))
    p.addText(" of God.")
    doc.text.addElement(p)
    p = P()
    p.addElement(Span(stylename=italic, text="And God said"))
    p.addText(", ")
    p.addElement(A(href="https://example.org/", text="let there be light"))
    p.addText(".")
    p.addElement(LineBreak())
    p.addText("Done.")
    p.addElement(S(c=2))
    p.addElement(Span(stylename=bold))  # a span around nothing: a void tag
    doc.text.addElement(p)
    items = List()
    for line in ("The first day.", "The second day."):
        item = ListItem()
        item.addElement(P(text=line))
        items.addElement(item)
    doc.text.addElement(items)
    table = Table(name="T")
    table.addElement(TableColumn())
    row = TableRow()
    cell = TableCell()
    cell.addElement(P(text="A cell of the table."))
    row.addElement(cell)
    table.addElement(row)
    doc.text.addElement(table)
    doc.text.addElement(P(text="2024"))
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
