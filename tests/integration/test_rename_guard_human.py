"""A rename that misses uses, in the human's Neovim (the remote plugin, the socket, real
basedpyright). After an agent's rename and its undo, once the human deletes the buffers
(`:%bd!`), basedpyright renames `Product` in its declaring file only, while its
`references` still finds all 18 uses in 4 files. Such a rename was written with a warning
("renames 5 of the 18 uses"), breaking the other files. It is refused now, by `rename`
and by the text format's `RENAME_TO` alike, nothing written, the error naming the files it
misses and the way on; under `edit_policy = 'ask'` the human is asked with the uses shown,
and their yes writes it."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import Connection

from .human import HumanNvim, register_remote_plugin
from .nvim_home import wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MISSED = ("shop/catalog.py", "shop/checkout.py", "shop/promotions.py")


@pytest.fixture
def human(tmp_path: Path) -> Iterator[HumanNvim]:
    (tmp_path / "rplugin").mkdir()
    env = register_remote_plugin(tmp_path / "rplugin")
    project = tmp_path / "shop"
    shutil.copytree(ROOT / "examples" / "shop", project)
    editor = HumanNvim(project, env, ["basedpyright"])
    yield editor
    editor.close()


def call(human: HumanNvim, method: str, params: dict[str, Any]) -> dict[str, Any]:
    with Connection(human.session.socket, name="claude") as conn:
        answer: dict[str, Any] = conn.call(method, params)
    return answer


def disk(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


RENAME = {"mode": "rename", "locate": "shop/models.py@class <|>Product"}


def test_a_rename_that_misses_uses_is_not_written(human: HumanNvim) -> None:
    root = human.root
    first = call(human, "request", {"request": {**RENAME, "new_name": "Item", "format": "json"}})
    assert first["ok"], first["text"]
    assert json.loads(first["text"])["uncovered_total"] == 0
    assert call(human, "request", {"request": {"mode": "undo"}})["ok"]
    human.nvim.command("%bd!")
    before = disk(root)
    assert "class Product:" in before["shop/models.py"]

    refused = call(human, "request", {"request": {**RENAME, "new_name": "Goods"}})
    assert not refused["ok"], refused["text"]
    error = refused["error"]
    assert error["code"] == "denied", error
    # The precondition, as basedpyright answers it here: its edits in models.py alone.
    assert "basedpyright's edits miss 13 of the 18 uses its `references` finds, in " in error["message"], error
    assert all(path in error["message"] for path in MISSED), error
    assert error["hint"].startswith("nothing was changed; basedpyright's index of those files may be stale")
    assert '"allow_uncovered":true' in error["hint"], error
    assert disk(root) == before

    # The text format's RENAME_TO is the same rename: refused the same way.
    block = ("*** Begin Language Server Request\n*** File: shop/models.py\n@@ class Product:\n"
             "! Product RENAME_TO Goods\n*** End Language Server Request")
    text = call(human, "text", {"text": block})["text"]
    tag = re.search(r"/\*<error:denied>\n(.*?)\n</error:denied>\*/", text, re.DOTALL)
    assert tag is not None, text
    assert all(path in tag.group(1) for path in MISSED) and "Next: nothing was changed" in tag.group(1), text
    assert disk(root) == before

    # Under `ask` the human is asked, the uses it misses shown; their yes writes it.
    human.lua("require('lsap.config').options.edit_policy = 'ask'")
    answer: dict[str, Any] = {}
    agent = threading.Thread(target=lambda: answer.update(call(
        human, "request", {"request": {**RENAME, "new_name": "Goods", "format": "json"}})), daemon=True)
    agent.start()
    wait_for(lambda: len(human.lua("return require('lsap.approval').waiting()")) == 1, 60, "the question")
    log = "\n".join(human.lua("return require('lsap.log').lines()"))
    assert ("# basedpyright's edits rename 5 of the 18 uses of `Product` that `references` finds; "
            "13 would keep the old name:") in log, log
    assert "#   shop/catalog.py:3:21 `from .models import Product`" in log, log
    assert disk(root) == before  # nothing before the human's answer
    human.lua("require('lsap.approval').focus()")
    shown = human.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert shown[0].startswith("claude wants to rename Product → Goods"), shown
    assert "#   shop/checkout.py:4:28 `from .models import Order, Product`" in shown, shown
    human.nvim.input("a")
    agent.join(60)
    assert answer.get("ok"), answer
    report = json.loads(answer["text"])
    assert report["uncovered_total"] == 13 and [c["path"] for c in report["changed"]] == ["shop/models.py"]
    assert "class Goods:" in (root / "shop" / "models.py").read_text()
