"""One position codec and one WorkspaceEdit walker (issue 31): a copy beside them is found."""

from __future__ import annotations

import re
from pathlib import Path

import lsap_bridge

PACKAGE = Path(lsap_bridge.__file__).parent
SOURCES = {p.relative_to(PACKAGE).as_posix(): p.read_text() for p in PACKAGE.rglob("*.py")}

# `lines[i] if i < len(lines) else ""`, in any spelling of the index and the list.
LINE_COPY = re.compile(r"\[[^\]]+\]\s+if\s+[^:\n]*<\s*len\([^)]*\)\s+else\s+\"\"")
# A byte column turned into code points by decoding the prefix (`byte_column` does it).
BYTE_COPY = re.compile(r"\.encode\([^)]*\)\s*\[[^\]]*\]\s*\.decode\(")
# A loop over a WorkspaceEdit's parts (`decode.walk` is the one; edits.workspace_edit._malformed checks them).
WALK_COPY = re.compile(r"for\s+[^\n]+\s+in\s+[^\n]*(documentChanges|\"changes\")")


def found(pattern: re.Pattern[str], allowed: set[str]) -> list[str]:
    return [f"{name}:{text[:m.start()].count(chr(10)) + 1}" for name, text in SOURCES.items()
            if name not in allowed for m in pattern.finditer(text)]


def test_lines_are_read_through_the_codec() -> None:
    assert found(LINE_COPY, {"position.py"}) == []


def test_byte_columns_are_converted_by_the_codec() -> None:
    assert found(BYTE_COPY, {"position.py"}) == []


def test_workspace_edits_are_walked_by_one_walker() -> None:
    assert found(WALK_COPY, {"decode.py", "edits/workspace_edit.py"}) == []


def test_the_patterns_find_the_copies_they_name() -> None:
    """Each pattern matches the copy it forbids (else the tests above could not fail)."""
    assert LINE_COPY.search('text = lines[line] if line < len(lines) else ""')
    assert LINE_COPY.search('lines[d.line] if 0 <= d.line < len(lines) else ""')
    assert BYTE_COPY.search('len(raw.encode("utf-8")[:col].decode("utf-8", errors="ignore"))')
    assert WALK_COPY.search('for change in edit.get("documentChanges") or []:')
    assert WALK_COPY.search('for uri, items in (edit.get("changes") or {}).items():')
