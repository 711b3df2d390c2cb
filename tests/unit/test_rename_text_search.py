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


def test_a_module_of_the_same_last_name_elsewhere_is_not_the_edited_one(tmp_path: Path) -> None:
    """`from one_letter.a import f` names another `a` than the edited `renames/a.py`: not a
    use (the false refusal of `test_renames_of_short_names_land_on_the_name`). A module the
    workspace does not hold (a package on sys.path) may be the edited one: still a doubt."""
    for name, text in {
        "renames/a.py": "def f() -> int:\n    return 1\n",
        "renames/new.py": "from renames.a import f\n",  # the edited module, by its full name
        "renames/rel.py": "from .a import f\n",  # and relatively
        "one_letter/a.py": "def f() -> int:\n    return 2\n",
        "one_letter/b.py": "from one_letter.a import G, f\n",
        "one_letter/rel.py": "from .a import f\n",
        "elsewhere.py": "from site_pkg.a import f\n",
        "web/a.ts": "export function f() {}\n",
        "web/b.ts": "import { f } from '../renames/a'\n",  # no such script: a doubt
        "web/c.ts": "import { f } from './a'\n",  # web/a.ts, not edited
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    session = cast(Session, SimpleNamespace(workspace=Workspace.of(tmp_path),
                                            gateway=SimpleNamespace(max_file_size=None)))
    found = named_elsewhere(session, [tmp_path / "renames/a.py"], "f", set())
    assert sorted(f.path for f in found) == ["elsewhere.py", "renames/new.py", "renames/rel.py"]
    typed = named_elsewhere(session, [tmp_path / "renames/a.py", tmp_path / "renames/a.ts"], "f", set())
    assert sorted(f.path for f in typed if f.path.startswith("web/")) == ["web/b.ts"]


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
