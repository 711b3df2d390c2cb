"""The requests whose reports are golden files made by the real capabilities over recorded
server answers (`tests/record.py` records them, `tests/unit/test_replayed.py` replays them).

A case may take methods away from the server (`lacking`), answer some methods itself
(`answers`, by method: a server with nothing to say), have the server still indexing
(`indexing`), or give the human's editor state (`editor`, paths under `$ROOT`), to show a
mode's report in each situation from the same recording. A case whose request fails has
the error report as its golden file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    name: str  # the golden files, tests/golden/replayed/<name>.md and <name>.json
    request: dict[str, Any]
    lacking: frozenset[str] = field(default_factory=frozenset)
    answers: dict[str, Any] = field(default_factory=dict)
    indexing: bool = False
    editor: dict[str, Any] = field(default_factory=dict)


SELECTION = {"active": False, "type": "linewise", "start_line": 26, "start_col": 0, "end_line": 27,
             "end_col": 19, "text": ["    def total(self) -> float:", "        result = 0.0"]}


CASES = {case.name: case for case in (
    Case("references", {"mode": "references", "locate": "shop/models.py:Product"}),
    Case("references_paged", {"mode": "references", "locate": "shop/models.py:Product", "max_items": 3,
                              "context_lines": 1}),
    Case("definition", {"mode": "definition", "locate": "shop/checkout.py:checkout@order = <|>Order()"}),
    Case("definition_truncated", {"mode": "definition", "locate": "shop/checkout.py:checkout@order = <|>Order()",
                                  "max_code_lines": 5}),
    Case("type_definition", {"mode": "type_definition", "locate": "shop/checkout.py:checkout@<|>order = Order()"}),
    Case("hover", {"mode": "hover", "locate": "shop/catalog.py:find"}),
    Case("locate", {"mode": "locate", "locate": "shop/models.py:Order.total@return <|>result"}),
    Case("locate_approximate", {"mode": "locate", "locate": "shop/models.py:Order.total@retrun <|>result"}),
    Case("outline_file", {"mode": "outline", "file_path": "shop/models.py"}),
    Case("outline_directory_paged", {"mode": "outline", "file_path": "shop", "max_items": 4}),
    Case("search", {"mode": "search", "query": "Product", "kinds": ["class", "method"]}),
    Case("calls", {"mode": "calls", "locate": "shop/catalog.py:find", "depth": 2}),
    Case("types_derived", {"mode": "types", "locate": "shop/models.py:Product"}),
    Case("inspect", {"mode": "inspect", "locate": "shop/catalog.py:find"}),
    Case("inspect_lacking", {"mode": "inspect", "locate": "shop/catalog.py:find"},
         lacking=frozenset({"textDocument/prepareCallHierarchy", "textDocument/references"})),
    Case("completion_paged", {"mode": "completion", "locate": "shop/checkout.py:checkout@order.<|>add(product)",
                              "max_items": 3}),
    Case("signature_help", {"mode": "signature_help",
                            "locate": "shop/checkout.py:checkout@find(name, <|>everything())"}),
    Case("inlay_hints", {"mode": "inlay_hints", "locate": "shop/checkout.py:checkout"}),
    Case("locate_case", {"mode": "locate", "locate": "shop/models.py@class <|>PRODUCT:"}),
    Case("locate_pasted_moved", {"mode": "locate", "locate": "shop/models.py@5| class <|>Product:"}),
    Case("error_ambiguous", {"mode": "locate", "locate": "shop/models.py@return result"}),
    Case("references_approximate_partial", {"mode": "references", "locate": "shop/models.py@clas <|>Product"},
         indexing=True),
    Case("batch", {"mode": "batch", "requests": [{"mode": "hover", "locate": "shop/catalog.py:find"},
                                                 {"mode": "hover", "locate": "shop/catalog.py:find",
                                                  "colour": "red"}]}),
    Case("rename_preview", {"mode": "rename_preview", "locate": "shop/models.py:Product", "new_name": "Item",
                            "max_items": 2}),
    Case("schema_editor", {"mode": "schema", "modes": ["editor"]}),
    Case("diagnostics_clean", {"mode": "diagnostics", "file_path": "shop/models.py"}),
    Case("editor_selection", {"mode": "editor", "max_items": 2}, editor={
        "path": "$ROOT/shop/models.py", "line": 27, "col": 8, "text": "        result = 0.0", "top": 0,
        "bottom": 39, "modified": True, "buftype": "", "selection": SELECTION}),
    Case("editor_outside", {"mode": "editor"}, editor={
        "path": "/tmp/notes.txt", "line": 0, "col": 0, "text": "hello", "top": 0, "bottom": 0,
        "modified": False, "buftype": ""}),
    Case("editor_no_file", {"mode": "editor"}, editor={"path": "lsap://report", "buftype": "nofile"}),
    # What a server with nothing to say makes of each report.
    Case("hover_empty", {"mode": "hover", "locate": "shop/catalog.py:find"},
         answers={"textDocument/hover": None}),
    Case("definition_none", {"mode": "definition", "locate": "shop/checkout.py:checkout@order = <|>Order()"},
         answers={"textDocument/definition": []}),
    Case("calls_none", {"mode": "calls", "locate": "shop/catalog.py:find", "direction": "outgoing"},
         answers={"callHierarchy/outgoingCalls": []}),
    Case("search_empty", {"mode": "search", "query": "Basket"}, answers={"workspace/symbol": []}),
    Case("signature_help_none", {"mode": "signature_help",
                                 "locate": "shop/checkout.py:checkout@find(name, <|>everything())"},
         answers={"textDocument/signatureHelp": None}),
)}
