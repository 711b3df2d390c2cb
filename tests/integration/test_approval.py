"""An agent's edit under `edit_policy = 'ask'` (issues 16, 25): it waits in a window of its
own with the diff, never takes a key the human types, is answered by its own keys, queues
behind others, times out into `approval_timeout` the agent is told about, within the
agent's own `timeout` when it gave one; an agent without one waits past the service's
default limit (shortened here to DEFAULT_LIMIT s with $LSAP_REQUEST_TIMEOUT) for as long as
the approval can. A real Neovim with the service started through the remote plugin,
basedpyright, and agents on the socket.

By hand, the default limit as shipped (120 s) and an answer after 3 minutes:
    LSAP_TEST_DEFAULT_LIMIT=120 LSAP_TEST_ANSWER_AFTER=180 pytest … -k after_the_default
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import ClientError, Connection

from .human import HumanNvim, register_remote_plugin
from .nvim_home import wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
RENAME = {"mode": "rename", "locate": "shop/checkout.py:receipt", "new_name": "print_receipt"}
DEFAULT_LIMIT = float(os.environ.get("LSAP_TEST_DEFAULT_LIMIT", "4"))  # the service's, for calls naming none
ANSWER_AFTER = float(os.environ.get("LSAP_TEST_ANSWER_AFTER", str(DEFAULT_LIMIT + 3)))


@pytest.fixture(scope="module")
def human(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HumanNvim]:
    env = {**register_remote_plugin(tmp_path_factory.mktemp("rplugin")), "LSAP_REQUEST_TIMEOUT": str(DEFAULT_LIMIT)}
    project = tmp_path_factory.mktemp("approval") / "shop"
    shutil.copytree(ROOT / "examples" / "shop", project)
    editor = HumanNvim(project, env, ["basedpyright"], {"edit_policy": "ask"})
    with Connection(editor.session.socket) as conn:  # basedpyright indexes once
        hover = {"mode": "hover", "locate": "shop/models.py:Order"}
        assert conn.call("request", {"request": hover, "timeout": 120})["ok"]
    yield editor
    editor.close()


class Agent(threading.Thread):
    """An agent asking for an edit on its own connection; `result` once answered."""

    def __init__(self, human: HumanNvim, name: str, request: dict[str, Any], timeout: float | None = None):
        super().__init__(daemon=True)
        self.socket, self.name, self.request, self.timeout = human.session.socket, name, request, timeout
        self.result: dict[str, Any] | None = None
        self.start()

    def run(self) -> None:
        params: dict[str, Any] = {"request": self.request}
        if self.timeout is not None:
            params["timeout"] = self.timeout
        with Connection(self.socket, name=self.name) as conn:
            try:
                self.result = conn.call("request", params)
            except ClientError as exc:  # the call's own error (its timeout)
                self.result = {"client_error": str(exc)}

    def answer(self) -> dict[str, Any]:
        self.join(30)
        assert self.result is not None, "the agent got no answer"
        return self.result


def waiting(human: HumanNvim, count: int) -> list[dict[str, str]]:
    """The edits waiting for the human, once there are `count`."""
    found: list[dict[str, str]] = []

    def counted() -> bool:
        found[:] = human.lua("return require('lsap.approval').waiting()")
        return len(found) == count

    wait_for(counted, 30, f"{count} waiting edits")
    return found


def floats(human: HumanNvim) -> list[int]:
    wins: list[int] = human.lua(
        "return vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative ~= '' end,"
        " vim.api.nvim_list_wins())")
    return wins


def float_lines(human: HumanNvim) -> list[str]:
    [win] = floats(human)
    lines: list[str] = human.lua("return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)", win)
    return lines


def test_the_edit_waits_while_the_human_types_shows_its_diff_and_is_answered_by_its_keys(human: HumanNvim) -> None:
    nvim = human.nvim
    nvim.command("only | enew!")
    typing_in = nvim.current.window
    nvim.input("ihello ")
    agent = Agent(human, "claude", RENAME)
    [asked] = waiting(human, 1)
    assert asked["client"] == "claude" and asked["summary"].startswith("rename")
    nvim.input("limit = 1<CR>world")  # what the human types while the agent waits
    assert floats(human) == [] and nvim.api.get_mode()["mode"] == "i"  # nothing opens mid-typing
    nvim.input("<Esc>")
    wait_for(lambda: floats(human), 10, "the approval window")
    lines = float_lines(human)
    assert lines[0].startswith("claude wants to rename")
    # The agent's name in its own colour (the one its presence marks and signs have).
    colour = human.lua("local b = vim.api.nvim_win_get_buf(...); local ns = vim.api.nvim_get_namespaces()"
                       "['lsap.approval']; for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, {0, 0}, {0, -1}, "
                       "{details = true})) do if m[4].end_col == #'claude' then return m[4].hl_group end end",
                       floats(human)[0])
    assert colour == human.lua("return require('lsap.presence').highlight('claude')") and colour.startswith("LsapAgent")
    assert lines[1].startswith("1 file · +") and "refused in" in lines[1]
    assert any(line.startswith("-def receipt(") for line in lines)  # the diff, before deciding
    assert any(line.startswith("+def print_receipt(") for line in lines)
    assert nvim.current.window == typing_in  # not taken
    assert nvim.current.buffer[:] == ["hello limit = 1", "world"]  # no key swallowed
    assert agent.result is None
    nvim.command("Lsap approval")
    assert nvim.current.window.handle == floats(human)[0]
    nvim.input("d")  # the whole diff, in a tab, with the same keys
    wait_for(lambda: nvim.current.buffer.name == "lsap://approval-diff", 5, "the diff tab")
    nvim.input("a")
    result = agent.answer()
    assert result["ok"], result["text"]
    assert floats(human) == [] and len(nvim.tabpages) == 1
    assert "def print_receipt(" in (human.root / "shop" / "checkout.py").read_text()
    assert nvim.current.window == typing_in and nvim.current.buffer[:] == ["hello limit = 1", "world"]


def test_edits_queue_and_one_left_unanswered_is_refused_with_the_agent_told(human: HumanNvim) -> None:
    nvim = human.nvim
    nvim.command("only | enew!")
    human.lua("require('lsap').config.approval.timeout = 3")
    try:
        first = Agent(human, "first", {"mode": "rename", "locate": "shop/promotions.py:summer_sale",
                                       "new_name": "sale_of_summer"})
        waiting(human, 1)
        second = Agent(human, "second", {"mode": "rename", "locate": "shop/promotions.py:Promotion.apply",
                                         "new_name": "apply_to"})
        waiting(human, 2)
        assert "1 of 2 waiting" in float_lines(human)[1]
        human.lua("require('lsap.approval').focus()")
        nvim.input("r")
        refused = first.answer()
        assert refused["error"]["code"] == "denied" and "the human refused the edit" in refused["text"]
        assert float_lines(human)[0].startswith("second wants to rename")  # the next one
        timed_out = second.answer()  # nobody answers it
        assert timed_out["error"]["code"] == "approval_timeout"
        assert "the human did not answer within 3 s" in timed_out["text"]
        assert floats(human) == [] and human.lua("return require('lsap.approval').waiting()") == []
        text = (human.root / "shop" / "promotions.py").read_text()
        assert "def summer_sale(" in text and "def apply(" in text  # nothing changed
    finally:
        human.lua("require('lsap').config.approval.timeout = 300")


def test_an_agents_own_timeout_bounds_the_question_and_it_is_told_approval_timeout(human: HumanNvim) -> None:
    agent = Agent(human, "impatient", {"mode": "rename", "locate": "shop/models.py:Order.validate",
                                        "new_name": "check"}, timeout=DEFAULT_LIMIT / 2)
    waiting(human, 1)
    result = agent.answer()
    assert result["error"]["code"] == "approval_timeout", result
    assert "the human did not answer within" in result["text"]
    waiting(human, 0)
    wait_for(lambda: floats(human) == [], 5, "the window closed")
    assert "def validate(" in (human.root / "shop" / "models.py").read_text()


def test_an_approval_answered_after_the_default_limit_reaches_the_waiting_agent(human: HumanNvim) -> None:
    """The call names no timeout: the service's default limit (where the old code answered
    `timeout` and took the question back) does not run while the human is asked."""
    nvim = human.nvim
    nvim.command("only | enew!")
    agent = Agent(human, "patient", {"mode": "rename", "locate": "shop/catalog.py:CROISSANT",
                                     "new_name": "BAGUETTE"})
    waiting(human, 1)
    asked = time.monotonic()
    time.sleep(ANSWER_AFTER)
    assert agent.result is None, agent.result  # still waiting, and so is the question
    waiting(human, 1)
    human.lua("require('lsap.approval').focus()")
    nvim.input("a")
    result = agent.answer()
    assert result["ok"], result
    print(f"answered {time.monotonic() - asked:.0f} s after the question (default limit {DEFAULT_LIMIT:g} s)")
    assert "BAGUETTE" in (human.root / "shop" / "catalog.py").read_text()


def test_a_resend_while_the_human_is_asked_joins_the_question(human: HumanNvim) -> None:
    """An agent that sends the same edit again while the first waits (its caller timed out,
    it retried) is asked once: both calls get the one answer."""
    nvim = human.nvim
    nvim.command("only | enew!")
    request = {"mode": "rename", "locate": "shop/catalog.py:everything", "new_name": "all_products"}
    first = Agent(human, "resender", request)
    waiting(human, 1)
    second = Agent(human, "resender", request)
    time.sleep(1.5)  # time enough for a second question to appear, were it asked
    assert len(human.lua("return require('lsap.approval').waiting()")) == 1
    assert first.result is None and second.result is None
    human.lua("require('lsap.approval').focus()")
    nvim.input("a")
    one, other = first.answer(), second.answer()
    assert one["ok"] and other == one, (one, other)
    text = (human.root / "shop" / "catalog.py").read_text()
    assert "def all_products(" in text and "def everything(" not in text


def test_the_cli_says_it_waits_for_the_humans_approval(human: HumanNvim) -> None:
    nvim = human.nvim
    nvim.command("only | enew!")
    command = [sys.executable, "-m", "lsap_bridge", "rename", "shop/checkout.py:checkout", "--set",
               'new_name="check_out"']
    with subprocess.Popen(command, cwd=human.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ}) as cli:
        waiting(human, 1)
        human.lua("require('lsap.approval').focus()")
        nvim.input("r")
        out, err = cli.communicate(timeout=60)
    assert "lsap: waiting for the human's approval of rename" in err, err
    assert cli.returncode == 1 and "the human refused the edit" in out, (cli.returncode, out)
