-- What a server says while it answers the bridge. A server may tell the human why it
-- refuses a request with `window/showMessage` or `window/showMessageRequest` instead of an
-- error (basedpyright's "Cannot rename to "__debug__": it's a Python keyword"); Neovim's
-- own handlers then echo it, or ask with `inputlist()`, which leaves the human at a
-- hit-enter prompt, their keys taken. While the bridge has a request in flight to a server,
-- that client's handlers of these two are the bridge's: the message goes to `:Lsap log`
-- and the log file, is carried back with the request's answer (`said`), and a message
-- request is answered with no action chosen. Other clients, and this one when nothing of
-- the bridge's is in flight, keep their handlers.
local M = {}

local borrowed = require('lsap.transport.borrowed')

local LEVELS = { 'error', 'warn', 'info', 'debug' } -- LSP MessageType 1..4

local listening = borrowed.new({ 'window/showMessage', 'window/showMessageRequest' })
local said_to = {} ---@type table<integer, string[]> by token: what its servers said

local function heard(client, slot, params)
  local text = type(params) == 'table' and tostring(params.message or '') or ''
  local level = LEVELS[type(params) == 'table' and params.type or 3] or 'info'
  for token in pairs(slot.tokens) do
    local said = said_to[token]
    said[#said + 1] = text
  end
  require('lsap.log').append({ { client = client.name, phase = 'message', what = 'said: ' .. text } })
  require('lsap.logfile').write(level, ('%s said, answering lsap: %s'):format(client.name, text))
end

--- `client`'s messages are the bridge's while a request of `token` is in flight to it.
function M.listen(client, token)
  borrowed.borrow(listening, client, token, function(slot)
    return function(_, params)
      heard(client, slot, params)
      return vim.NIL
    end
  end)
  said_to[token] = said_to[token] or {}
end

--- What the servers said so far to `token`'s requests (nil: nothing).
function M.said(token)
  local said = said_to[token]
  return said and #said > 0 and said or nil
end

--- `token` is answered (or cancelled): its servers' messages are Neovim's again once no
--- token of the bridge's is in flight to them.
function M.stop(token)
  said_to[token] = nil
  borrowed.give_back_all(listening, token)
end

return M
