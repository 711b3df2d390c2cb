"""`rename.named_elsewhere` (issue 44, item 3): the rename's coverage check of files its
server did not index (created a moment ago) reads the files the edit leaves alone for lines
that still name the symbol through a module the edit changes; such a rename is refused."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

from lsap_bridge.capabilities.rename.coverage import _doubt, named_elsewhere
from lsap_bridge.capabilities.rename.models import PendingRename, RenameRequest, Uncovered
from lsap_bridge.editor import Client
from lsap_bridge.errors import ErrorCode
from lsap_bridge.models import Locate
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace


def test_files_naming_the_symbol_through_its_module_are_found(tmp_path: Path) -> None:
    shop = tmp_path / "shop"
    (shop / "deals").mkdir(parents=True)
    files = {
        "models.py": "class Product:\n    pass\n",
        "checkout.py": "from .models import Product\n",  # in the edit
        "extra.py": "from shop.models import Order, Product\n\nx = Product()\n",
        "deals/extra.py": "import shop.models as models\n\ny = models.Product()\n",
        "other.py": "from shop.catalog import find\n\nProduct = 1  # its own name\n",
        "notes.ts": "import { Product } from './models'\n",  # another language
        "comment.py": "from shop.models import Order  # by price\n",
    }
    for name, text in files.items():
        (shop / name).write_text(text)
    session = cast(Session, SimpleNamespace(workspace=Workspace.of(tmp_path),
                                            gateway=SimpleNamespace(max_file_size=None)))
    edited = [shop / "models.py", shop / "checkout.py"]
    found = named_elsewhere(session, edited, "Product", set())
    assert [(f.path, f.line) for f in found] == [("shop/extra.py", 1), ("shop/deals/extra.py", 3)]
    assert found[0].text == "from shop.models import Order, Product" and found[0].column == 32
    assert named_elsewhere(session, edited, "Product", {shop / "extra.py"})[0].path == "shop/deals/extra.py"
    # A name no edited module defines at its top level (a method, a local) is not searched.
    assert named_elsewhere(session, edited, "price", set()) == []


def test_a_rename_leaving_such_a_file_is_refused_naming_it() -> None:
    """What the edit engine is handed (`session.Doubt`): without `allow_uncovered` the rename
    is refused (`denied`, nothing written), the file named; with it, nothing to doubt."""
    named = [Uncovered(path="shop/extra.py", line=1, column=25, text="from shop.models import Product")]
    pending = PendingRename({}, cast(Client, SimpleNamespace(name="basedpyright")), "Product", "Item", {},
                            uses=[], named=named)
    request = RenameRequest(locate=Locate(file_path="shop/models.py", find="Product"), new_name="Item")
    doubt = _doubt(pending, request)
    assert doubt is not None and doubt.refusal.code == ErrorCode.DENIED
    assert "shop/extra.py" in doubt.refusal.message and "shop/extra.py:1:25" in doubt.note
    assert _doubt(pending, request.model_copy(update={"allow_uncovered": True})) is None
