-- The edit take-over: the requests a server sends back while the bridge runs its command.
local M = {}

local channel = require('lsap.transport.channel')
local borrowed = require('lsap.transport.borrowed')
local compat = require('lsap.compat')

-- While the bridge runs a server's command (`workspace/executeCommand` for a code action),
-- the requests that server sends back about it — the edit it wants applied
-- (`workspace/applyEdit`), tsserver's "rename what was extracted" — are the bridge's, not
-- the human's: a handler of that client alone, in place only while such a command is
-- pending, hands them to the service (`lsap_server_request`) and answers the server with
-- what the service says (`server_answered`), so the edit goes through the bridge's edit
-- engine instead of being applied behind it. Neovim runs a server's request handler in a
-- coroutine: this one yields until the service answers, and the main loop stays free.
-- Other clients, and this one once the command is done, keep their handlers (the human's
-- own code actions are Neovim's, as always).
local taking = borrowed.new({ 'workspace/applyEdit', '_typescript.rename' })
local parked = {} ---@type table<integer, {co: thread, token: integer, method: string}>
local parked_count = 0

local function refusal(method)
  if method == 'workspace/applyEdit' then
    return { applied = false, failureReason = 'the request that ran this command was withdrawn' }
  end
  return vim.NIL
end

--- The requests `client` sends back while a command of `token` runs are the bridge's.
function M.take_over(client, token)
  borrowed.borrow(taking, client, token, function(slot, method)
    return function(err, params, ctx, config)
      local owner = next(slot.tokens)
      local co, main = coroutine.running()
      if owner == nil or main or not channel.chan or compat.exiting() then
        local fallback = slot.previous[method] or vim.lsp.handlers[method]
        if fallback then return fallback(err, params, ctx, config) end
        return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
      end
      parked_count = parked_count + 1
      parked[parked_count] = { co = co, token = owner, method = method }
      channel.notify('lsap_server_request', owner, parked_count, method, params or vim.NIL)
      return coroutine.yield()
    end
  end)
end

--- The service is done with a token's commands (their grace window is over): their servers'
--- requests are Neovim's again.
function M.release_taken(token) borrowed.give_back_all(taking, token) end

--- The service's answer to a server request handed over by `take_over`.
function M.server_answered(id, result)
  local waiting = parked[id]
  parked[id] = nil
  if waiting then
    if result == nil then result = vim.NIL end
    coroutine.resume(waiting.co, result)
  end
end

--- Answer the requests parked for a token nobody waits for any more.
function M.unpark(token)
  for id, waiting in pairs(parked) do
    if waiting.token == token then M.server_answered(id, refusal(waiting.method)) end
  end
end

return M
