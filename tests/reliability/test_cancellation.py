"""Agents killed mid-request, over and over, on a real Neovim with basedpyright: the bridge
cancels what they left pending, and basedpyright still answers `references` correctly.

basedpyright (1.40) breaks for good when `$/cancelRequest` reaches a `references` it has
not started yet: every later `references` fails with "this._token.cancel is not a
function". The first test provokes that race on purpose (several agents' requests queued
at the server, their clients gone at once); the second shows the server itself."""

from __future__ import annotations

import json
import random
import socket
import time
from typing import Any

import pytest

from lsap_bridge.server import SocketServer
from tests.integration.harness import Bridge

pytestmark = pytest.mark.integration

REFERENCES = [
    {"mode": "references", "locate": "shop/models.py:Product@class <|>Product"},
    {"mode": "references", "locate": "shop/models.py:Order@class <|>Order"},
    {"mode": "references", "locate": "shop/models.py:Order.add@def <|>add"},
]


def counts(bridge: Bridge) -> list[str]:
    """The count line of each references report ("18 references in 4 files · basedpyright")."""
    out = []
    for payload in REFERENCES:
        response = bridge.request(payload)
        assert response.ok, response.text
        out.append(next(line for line in response.text.splitlines() if " references in " in line))
    return out


def send(path: str, payload: dict[str, Any]) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    message = {"jsonrpc": "2.0", "id": 1, "method": "request", "params": {"request": payload}}
    conn.sendall(json.dumps(message).encode() + b"\n")
    return conn


def test_agents_killed_mid_request_leave_references_working(
    bridge: Bridge, socket_server: SocketServer
) -> None:
    before = counts(bridge)
    rng = random.Random(11)
    path = str(socket_server.path)
    for round_ in range(20):
        # a few agents ask at once, so that some requests wait at the server, then all vanish
        agents = [send(path, REFERENCES[(round_ + n) % len(REFERENCES)]) for n in range(8)]
        time.sleep(rng.choice([0.0, 0.002, 0.005, 0.01, 0.02, 0.05]))
        for agent in agents:
            agent.close()
    time.sleep(0.5)  # what the servers still had runs out
    assert counts(bridge) == before


def test_the_bridge_never_cancels_references_at_basedpyright(bridge: Bridge) -> None:
    """The same race at the transport itself: a `references` cancelled the moment it was
    sent, then a normal one."""
    models = bridge.root / "shop" / "models.py"
    bridge.request({"mode": "hover", "locate": REFERENCES[0]["locate"]})  # the buffer is open
    cancelled = bridge.lua(
        "local path = ...; local bufnr = vim.fn.bufnr(path)"
        " local client = vim.lsp.get_clients({bufnr = bufnr, name = 'basedpyright'})[1]"
        " local transport = require('lsap.transport.requests')"
        " transport.request(-1, {{client_id = client.id, method = 'textDocument/references',"
        "   bufnr = bufnr, params = {textDocument = {uri = vim.uri_from_fname(path)},"
        "   position = {line = 6, character = 6}, context = {includeDeclaration = true}}}})"
        " transport.cancel(-1)"
        " return client.id",
        str(models),
    )
    assert cancelled
    response = bridge.request(REFERENCES[0])
    assert response.ok, response.text
