"""Office documents are zip packages (OOXML's .docx, ODF's .odt): a few XML members hold the
running text; they are read with lxml and written back, and every other member (images, styles,
settings, the manifest) is copied back byte for byte, in its place and with its compression."""

from __future__ import annotations

import copy
import io
import zipfile
from dataclasses import dataclass

MAX_UNPACKED = 256 * 2**20  # bytes a package may unpack to; a zip bomb is refused


@dataclass(frozen=True)
class Kind:
    """What a package should be, as messages name it."""

    name: str  # e.g. "a Word document (.docx)"
    fix: str  # what to do with a damaged one


class Package:
    """A zip package's members, read once; `rebuilt` writes it with some members replaced."""

    def __init__(self, data: bytes, kind: Kind) -> None:
        self.kind = kind
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, ValueError, OSError, EOFError):  # ValueError: a bad offset
            raise ValueError(
                f"not a zip file, which {kind.name} is: the file is damaged, or another format "
                f"(an old binary or a password-protected one); {kind.fix}"
            ) from None
        self.infos = archive.infolist()
        unpacked = sum(i.file_size for i in self.infos)
        if unpacked > MAX_UNPACKED:
            raise ValueError(
                f"unpacks to {unpacked} bytes, over the {MAX_UNPACKED} allowed: "
                "not an ordinary document; split it"
            )
        try:
            self.members = {i.filename: archive.read(i) for i in self.infos}
        except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as err:
            raise ValueError(f"a damaged zip file ({err}); {kind.fix}") from None

    def member(self, name: str, what: str) -> bytes:
        """A member that must be there; `what` says what it holds."""
        if name not in self.members:
            raise ValueError(
                f"no {name} ({what}) in the zip file: not {self.kind.name}, or damaged; "
                f"{self.kind.fix}"
            )
        return self.members[name]

    def xml(self, name: str, what: str):
        """A member parsed as XML (no entities expanded, nothing fetched); broken XML is an
        error naming the member, line and column."""
        from lxml import etree

        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
        try:
            return etree.fromstring(self.member(name, what), parser).getroottree()
        except etree.XMLSyntaxError as err:
            line, column = err.position
            raise ValueError(
                f"{name}, line {line}, column {column}: broken XML ({err.msg}); "
                f"the file is damaged: {self.kind.fix}"
            ) from None

    def rebuilt(self, trees: dict) -> bytes:
        """The package with the members named in `trees` (name -> lxml tree) written anew."""
        from lxml import etree

        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for info in self.infos:
                data = self.members[info.filename]
                tree = trees.get(info.filename)
                if tree is not None:
                    body = etree.tostring(tree, encoding="UTF-8", xml_declaration=False)
                    data = declaration(data) + body
                archive.writestr(copy.copy(info), data)
        return out.getvalue()


def declaration(data: bytes) -> bytes:
    """A member's XML declaration and the whitespace after it, as they were (lxml cannot tell
    standalone="no" from no standalone at all); written back in UTF-8, so a member declared in
    another encoding is declared UTF-8."""
    if not data.startswith(b"<?xml"):
        return b""
    end = data.index(b"?>") + 2
    head = data[:end]
    if b"encoding" in head and b"utf-8" not in head.lower():
        head = b'<?xml version="1.0" encoding="UTF-8"?>'
    return head + data[end : end + len(data[end:]) - len(data[end:].lstrip())]
