-- The link to the lsap_bridge service: its channel, the state of the service, and the
-- replies that travel back (`vim.rpcnotify(<service channel>, 'lsap_reply', token, payload)`).
-- The bottom of the transport: every other piece of it sends through here.
local M = {}

local compat = require('lsap.compat')

---@type integer? channel of the lsap_bridge service
M.chan = nil
-- 'stopped', 'starting' or 'running' (the service registered its channel).
M.state = 'stopped'
-- Files over this many bytes are not opened or reloaded for the servers (`max_file_size`,
-- as it was when the service started).
M.max_file_size = math.huge
-- The LSP requests in flight per token (lsap.transport.requests).
M.inflight = {} ---@type table<integer, {client_id: integer, request_id: integer}[]>
-- The bridge's requests in flight, per client and request id: what to do if another cancels
-- one. Neovim's own refreshes cancel every pending request of their method for a buffer
-- (pull diagnostics when a shown buffer changes: `vim.lsp.util._cancel_requests`), and its
-- RPC then drops the server's answer, so that request would wait for good.
M.ours = {} ---@type table<integer, table<integer, fun()>>

--- Send the service a notification; never raises, and sends nothing while Neovim quits:
--- its channel may be closed by then ("Invalid channel"), and an error raised in an exiting
--- Neovim opens a --More-- prompt that no UI draws any more, which holds the exit for good.
--- Returns whether it was sent.
function M.notify(method, ...)
  if not M.chan or compat.exiting() then return false end
  return (pcall(vim.rpcnotify, M.chan, method, ...))
end

--- Answer a token: the service's future waiting for it gets `payload`.
function M.reply(token, payload)
  M.inflight[token] = nil
  M.notify('lsap_reply', token, payload)
end

return M
