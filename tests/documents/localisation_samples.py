"""Small localisation files for the po, xliff and srt tests: placeholders, accelerators,
plural forms, inline elements, entries that must be left alone."""

PO = r"""# German translation of Demo.
# Copyright (C) 2024 Demo
msgid ""
msgstr ""
"Project-Id-Version: demo 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n==2 ? 1 : 2);\n"

#. TRANSLATORS: the File menu
#: src/menu.c:10
msgid "_File"
msgstr ""

#: src/menu.c:11
msgid "Save _As…"
msgstr ""

#: src/main.c:20
#, c-format
msgid "Deleted %d file in %s."
msgid_plural "Deleted %d files in %s."
msgstr[0] ""
msgstr[1] ""
msgstr[2] ""

#: src/main.py:30
#, python-format
msgid "Hello %(name)s, you have {count} new messages (%1$s)."
msgstr ""

msgctxt "menu"
msgid "E&xit the program"
msgstr ""

msgid "Open $[officename] with ~Save: <b>now</b>.\nSecond line here.\n"
msgstr ""

#: src/old.c:1
#, fuzzy
msgid "A fuzzy one"
msgstr "Ein unscharfer"

msgid "Already done"
msgstr "Schon fertig"

#~ msgid "Old one"
#~ msgstr ""
"""

PRESS = (
    '<source>Press <bpt id="3">&lt;b&gt;</bpt>Ctrl<ept id="3">&lt;/b&gt;</ept> and '
    '<ph id="4">%s</ph> now.</source>'
)
XLIFF_12 = f"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="help.html" source-language="en" target-language="de" datatype="html">
    <body>
      <trans-unit id="1">
        <source>Click <g id="1">Save</g> to keep <x id="2"/>your work.</source>
      </trans-unit>
      <trans-unit id="2">
        {PRESS}
        <target></target>
      </trans-unit>
      <trans-unit id="3" translate="no">
        <source>aiayn</source>
      </trans-unit>
      <trans-unit id="4">
        <source>Already done.</source>
        <target state="final">Schon fertig.</target>
      </trans-unit>
    </body>
  </file>
</xliff>
"""

XLIFF_20 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de">
  <file id="f1">
    <unit id="u1">
      <segment>
        <source>Open the <pc id="1">file menu</pc> and choose <ph id="2"/> Save.</source>
      </segment>
      <segment>
        <source>Then <sc id="3"/>close<ec startRef="3"/> it.</source>
      </segment>
    </unit>
    <unit id="u2" translate="no">
      <segment><source>aiayn</source></segment>
    </unit>
  </file>
</xliff>
"""

SRT = """1
00:00:01,000 --> 00:00:03,500
Hello there, my friend.
How are <i>you</i> today?

2
00:00:04,000 --> 00:00:06,000
- Fine, thanks.
- <b>Good</b> to hear!

3
00:00:07,000 --> 00:00:09,000
{\\an8}The dog <font color="red">runs fast</font> now.

"""
