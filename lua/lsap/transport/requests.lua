-- LSP requests sent for the service, answered with one `lsap_reply` each, and cancelled
-- when the service gives up on them.
local M = {}

local channel = require('lsap.transport.channel')
local compat = require('lsap.compat')
local disk = require('lsap.transport.disk')
local heard = require('lsap.transport.heard')
local packing = require('lsap.transport.packing')
local takeover = require('lsap.transport.takeover')

local inflight = channel.inflight
local withdraw = {} ---@type table<integer, fun()> approvals to take back if the agent gives up

--- What takes back a token's question to the human if the service gives up on it (nil: none).
function M.on_cancel(token, take_back) withdraw[token] = take_back end

--- Fail the requests still pending on a server that exited, and tell the service it is gone.
function M.client_exited(client_id)
  for _, pending in pairs(channel.inflight) do
    for _, req in ipairs(pending) do
      if req.client_id == client_id and req.fail then req.fail() end
    end
  end
  channel.notify('lsap_client_exit', client_id)
end

--- Whether the text requests were computed from changed since (see `M.request`'s guard).
local function stale(guard)
  local bufnr, tick, on_disk = guard[1], guard[2], guard[3]
  if not vim.api.nvim_buf_is_loaded(bufnr) then return true end
  local state = disk.fresh(bufnr)
  local unsaved = (state == 'changed' or state == 'deleted') and state or ''
  return state == 'gone' or state == 'too_large' or vim.b[bufnr].changedtick ~= tick or unsaved ~= on_disk
end

--- Servers answer about every file, not just the one asked about: send the pending
--- didChange of all buffers first (Neovim only flushes the request's own buffer).
local function flush(calls)
  local flushed = {}
  for _, call in ipairs(calls) do
    local client = vim.lsp.get_client_by_id(call.client_id)
    if client and not flushed[client.id] then
      flushed[client.id] = true
      compat.flush_changes(client)
    end
  end
end

-- How many times a reading request another cancelled is sent again (see `channel.ours`).
local RESENDS = 3

--- Send one call of a token; `finish` gets its answer (or its failure) once. Cancelled by
--- another (see `channel.ours`), a request that only reads is sent again (`left` more
--- times), a command is answered as cancelled.
local function send(token, call, intercept, finish, answered, left)
  local client = vim.lsp.get_client_by_id(call.client_id)
  if not client then
    return finish({ error = { code = -32803, message = 'language server is not running' }, gone = true })
  end
  local bufnr = call.bufnr
  if bufnr == nil or bufnr == vim.NIL or not vim.api.nvim_buf_is_loaded(bufnr) then bufnr = 0 end
  if intercept == true and call.method == 'workspace/executeCommand' then takeover.take_over(client, token) end
  local pack = call.pack == true and packing.PACKERS[call.method] or nil
  heard.listen(client, token)
  local ok, request_id = client:request(
    call.method,
    call.params,
    function(err, result) finish({ error = err, result = pack and not err and pack(result) or result }) end,
    bufnr
  )
  if ok then
    table.insert(inflight[token], {
      client_id = call.client_id,
      request_id = request_id,
      method = call.method,
      fail = function() finish({ error = { code = -32803, message = 'the language server exited before answering' } }) end,
    })
    channel.ours[client.id] = channel.ours[client.id] or {}
    channel.ours[client.id][request_id] = function()
      if not inflight[token] or answered() then return end -- the bridge's own cancel, or answered
      if left > 0 and call.method ~= 'workspace/executeCommand' then
        vim.schedule(function()
          if inflight[token] and not answered() and not client:is_stopped() then
            send(token, call, intercept, finish, answered, left - 1)
          end
        end)
      else
        finish({ error = { code = -32800, message = 'the request was cancelled in the editor' } })
      end
    end
  else
    finish({ error = { code = -32803, message = 'language server refused the request' } })
  end
end

--- Send several LSP requests at once; one `lsap_reply` carries every answer, in order.
--- calls: { {client_id=, method=, params=, bufnr=?, pack=?}, ... }
--- (`pack`: the answer is sent packed, by `PACKERS` of its method.)
--- intercept (optional): the commands among them (`workspace/executeCommand`) are the
--- bridge's: the requests their servers send back meanwhile go to the service (see above).
--- guard (optional): {bufnr, changedtick, disk} of the text the requests were computed from
--- (disk: '', or the `fresh` state 'changed'/'deleted' it was read in); the buffer is brought
--- up to date first, and when it changed since, or its disk state did, nothing is sent and
--- the reply is `{stale = true}`.
function M.request(token, calls, guard, intercept)
  if type(guard) == 'table' and stale(guard) then return channel.reply(token, { stale = true }) end
  local results, pending = {}, #calls
  if pending == 0 then
    channel.reply(token, results)
    return
  end
  inflight[token] = {}
  flush(calls)
  local answered = {}
  for i, call in ipairs(calls) do
    send(token, call, intercept, function(answer)
      if answered[i] then return end -- the server answered after all, or exited first
      answered[i] = true
      -- A command's server stays taken until the service's `release_taken` (after its grace
      -- window: an edit sent just after the reply is still the command's), or `cancel`.
      answer.said = heard.said(token)
      results[i] = answer
      pending = pending - 1
      if pending == 0 then
        heard.stop(token)
        channel.reply(token, results)
      end
    end, function() return answered[i] == true end, RESENDS)
  end
end

-- Requests that pyright and basedpyright (1.40 included) must never see cancelled: when a
-- `$/cancelRequest` arrives before the handler has read its token, the handler leaves a
-- token source behind whose `cancel` is missing, and every later request of the same kind
-- fails with "this._token.cancel is not a function" until the server restarts
-- (`:help lsap-cancellation`). The bridge lets such a request finish and drops its answer.
local UNCANCELLABLE = {
  ['textDocument/references'] = true,
  ['textDocument/implementation'] = true,
  ['workspace/executeCommand'] = true,
}

local function pyright_family(client)
  local names = tostring(client.name) .. ' ' .. tostring((client.server_info or {}).name)
  return names:find('pyright', 1, true) ~= nil
end

--- Cancel what is still in flight for a token (the service gave up waiting, or its client
--- went away): the servers stop that work, except where cancelling would break them.
function M.cancel(token)
  if withdraw[token] then withdraw[token]() end
  withdraw[token] = nil
  takeover.release_taken(token)
  takeover.unpark(token)
  heard.stop(token)
  local pending = inflight[token] or {}
  inflight[token] = nil -- first: these cancels are the bridge's own (see `channel.ours`)
  for _, req in ipairs(pending) do
    local client = vim.lsp.get_client_by_id(req.client_id)
    if client and not (UNCANCELLABLE[req.method] and pyright_family(client)) then
      pcall(client.cancel_request, client, req.request_id)
    end
  end
end

return M
