-- Diagnostics once the servers have analysed the files: the wait `when_diagnosed` and the
-- `vim.diagnostic` items it answers with.
local M = {}

local channel = require('lsap.transport.channel')
local seen = require('lsap.transport.seen')
local servers = require('lsap.servers')

local diagnosed, published_order, published_any = seen.diagnosed, seen.published_order, seen.published_any
local published_tick, republishes, proven = seen.published_tick, seen.republishes, seen.proven
local published_any_order, proven_at, progress = seen.published_any_order, seen.proven_at, seen.progress
local busy, versioned = seen.busy, seen.versioned

-- Silence of a server after its last publish that ends its pass over the open files
-- (basedpyright on rich, two loaded cores: gaps of up to a second between two files).
local PASS_MS = 2000

local function now_ms() return vim.uv.now() end

--- The client whose namespace each of a buffer's LSP diagnostics is in (push and pull).
local function namespace_clients(bufnr)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    for _, pull in ipairs({ false, true }) do
      out[vim.lsp.diagnostic.get_namespace(client.id, pull)] = client.id
    end
  end
  return out
end

local function diagnostic_items(bufnr, excluded)
  local out = {}
  local clients = namespace_clients(bufnr)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if not excluded[d.namespace] then
      out[#out + 1] = {
        lnum = d.lnum,
        col = d.col,
        end_lnum = d.end_lnum,
        end_col = d.end_col,
        severity = d.severity,
        message = d.message,
        code = d.code,
        source = d.source,
        -- The server's own Diagnostic, for its code actions (`textDocument/codeAction`).
        lsp = type(d.user_data) == 'table' and d.user_data.lsp or nil,
        client = clients[d.namespace],
      }
    end
  end
  return out
end

-- Whether the buffer has diagnostics outside `excluded` namespaces: counted, not copied
-- (this runs for each buffer still waited for, every tick of the wait: `vim.diagnostic.get`
-- of rich's 78 files, 150 diagnostics each, took longer than the tick, a core of Neovim's).
local function has_items(bufnr, excluded)
  for ns in pairs(vim.diagnostic.get_namespaces()) do
    if not excluded[ns] and next(vim.diagnostic.count(bufnr, { namespace = ns })) ~= nil then return true end
  end
  return false
end

-- One `when_diagnosed` wait ({excluded=, pulled=, start=, proving=, after_sync=,
-- settle_ms=, quiet_ms=}) is what the checks below are about.

local function pushing(w, bufnr)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if not w.pulled[client.id] and not client:is_stopped() then out[#out + 1] = client end
  end
  return out
end

-- Since when each client's publishes count (nil: not yet known).
local function proof(client)
  local at = proven[client.id]
  return at ~= nil and at > seen.synced_at and at or nil
end

-- A server that reports its analysis as work in progress (basedpyright: "N files to
-- analyze", ended once every open file is checked) re-analyses what the change can affect:
-- once work it reported after reading the change is over, with a publish since, a file it
-- did not publish again is unaffected.
local function passed(client, since)
  local state = progress[client.id]
  return (state and state.worked or -1) > since and (published_any_order[client.id] or -1) > since
end

-- And the server's pass is over: no work in progress, nothing published for `PASS_MS`
-- (basedpyright publishes a file's parse-level diagnostics first, its checked ones later).
-- With no change synced yet (the first look, servers starting), only the pass.
local function republished(w, bufnr)
  if w.after_sync ~= true then return true end
  for _, client in ipairs(pushing(w, bufnr)) do
    local at, since = (published_order[bufnr] or {})[client.id], proof(client)
    -- Each server's own publish for the buffer's current text (another server's, a
    -- pull's, is no evidence of this one's analysis).
    local current = (published_tick[bufnr] or {})[client.id] == vim.b[bufnr].changedtick
    if
      not current
      or (w.proving and not (since and ((at and at > since) or passed(client, since))))
      or busy(client.id, w.settle_ms)
      or now_ms() - (published_any[client.id] or 0) < PASS_MS
    then
      return false
    end
  end
  return true
end

-- A server whose last publish for the buffer named a version, not the one it was last sent:
-- it publishes for each version it reads (basedpyright, clangd), so that one is awaited.
-- Nor has one that published nothing for the buffer since it was opened to it.
local function owes(bufnr, client)
  return (versioned(bufnr, client.id) and not seen.published_current(bufnr, client.id))
    or seen.unpublished_since_open(bufnr, client.id)
end

-- Whether the buffer's last `DiagnosticChanged` is of its current text for each server: by
-- the version a server's publishes name where they name one (a publish for the old text
-- still on its way after an edit typed into the buffer — basedpyright's for its `didOpen`
-- — is not taken for the new one; a write, which moves the changedtick alone, keeps them
-- current); else by the changedtick of that event.
local function text_current(w, bufnr, seen_at)
  local ticked = seen_at.tick == vim.b[bufnr].changedtick
  local clients = pushing(w, bufnr)
  for _, client in ipairs(clients) do
    if owes(bufnr, client) or (not ticked and not versioned(bufnr, client.id)) then return false end
  end
  return ticked or #clients > 0
end

local function analysed(w, bufnr)
  local seen_at = diagnosed[bufnr]
  return seen_at ~= nil
    and vim.api.nvim_buf_is_valid(bufnr)
    and text_current(w, bufnr, seen_at)
    and now_ms() - seen_at.at >= w.settle_ms
    and republished(w, bufnr)
end

-- Only a file whose diagnostics are empty (the case such servers skip), and only while
-- none of its servers reports work in progress, nor owes a publish for the buffer's text
-- (`owes`: its silence is no evidence; a dependent's unchanged text it published for is
-- judged as before).
-- After a change, also only for servers that may skip unchanged diagnostics (neither seen
-- to publish them again nor declared to: `lsap.servers`' `republishing`), once each had
-- read the change and has been silent for `quiet_ms` since (and since its last publish):
-- typescript-language-server publishes nothing after a rename that leaves every file clean.
local function quiet(w, bufnr)
  local seen_at = diagnosed[bufnr]
  if seen_at == nil or now_ms() - math.max(w.start, seen_at.at) < w.quiet_ms then return false end
  if has_items(bufnr, w.excluded) then return false end
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if busy(client.id, w.settle_ms) or (owes(bufnr, client) and not w.pulled[client.id]) then return false end
    local since = proof(client)
    local silent = math.max(proven_at[client.id] or 0, published_any[client.id] or 0)
    if
      w.proving
      and not w.pulled[client.id]
      and (
        republishes[client.id]
        or servers.republishing[client.name]
        or not (since and now_ms() - silent >= w.quiet_ms)
      )
    then
      return false
    end
  end
  return true
end

-- Whether a server the wait is for reports work in progress on this buffer's behalf.
local function reports_work(w, bufnr)
  for _, client in ipairs(pushing(w, bufnr)) do
    if busy(client.id, w.settle_ms) then return true end
  end
  return false
end

--- The answer: each buffer's items, and whether it was analysed or is quiet.
local function answer(w, bufnrs)
  local out = {}
  for _, bufnr in ipairs(bufnrs) do
    local ok = analysed(w, bufnr)
    out[#out + 1] = {
      bufnr = bufnr,
      analysed = ok,
      quiet = not ok and quiet(w, bufnr),
      items = diagnostic_items(bufnr, w.excluded),
    }
  end
  return out
end

--- Reply with each buffer's `vim.diagnostic` items once a server has published for the
--- buffer's latest change (a `DiagnosticChanged` at the current changedtick) and then been
--- quiet for `settle_ms`. Some servers publish nothing when a file's diagnostics stay the
--- same (typescript-language-server skips "still empty"): a buffer diagnosed before, with
--- no diagnostics, that gets no event for `quiet_ms` while its servers report no work in
--- progress comes back `quiet` (its empty diagnostics still stand).
--- Buffers still waiting at `timeout_ms` come back with neither flag. Time in which a
--- pushing server of a buffer still waited for reports work in progress (`seen.busy`) does
--- not count against `timeout_ms`, for up to `work_ms` (`timeouts.index`, the bound of such
--- work): a cold typescript-language-server reports "Initializing JS/TS language features"
--- for 10 to 13 s on a loaded machine before it publishes anything, so a check's baseline,
--- whose wait started with the server, ran out 0.2 s before its first answer and left
--- every file pending (and the next check could only call their errors `current`).
--- Namespaces of `exclude_clients` (whose diagnostics the service pulls) are left out.
--- `after_sync`: a file counts as analysed only once each of its pushing servers reports
--- no work and has published nothing for `PASS_MS` (its pass is over), and, after files
--- changed on disk, published for it after its first answer following the change
--- (`proven`, asked for at the sync: `seen.synced`): a dependent's buffer does
--- not change, so its changedtick proves nothing.
function M.when_diagnosed(token, bufnrs, exclude_clients, settle_ms, quiet_ms, timeout_ms, after_sync, work_ms)
  local excluded, pulled = {}, {}
  for _, id in ipairs(exclude_clients) do
    pulled[id] = true
    for _, pull in ipairs({ false, true }) do
      excluded[vim.lsp.diagnostic.get_namespace(id, pull)] = true
    end
  end
  local start = now_ms()
  local deadline = start + timeout_ms
  local last, limit = start, start + timeout_ms + (work_ms or 0)
  local w = {
    excluded = excluded,
    pulled = pulled,
    start = start,
    proving = after_sync == true and seen.synced_at >= 0,
    after_sync = after_sync,
    settle_ms = settle_ms,
    quiet_ms = quiet_ms,
  }
  if w.proving then seen.ask_proof() end -- servers attached since the sync
  local timer = assert(vim.uv.new_timer())
  local done = false
  timer:start(
    0,
    25,
    vim.schedule_wrap(function()
      if done then return end
      local all, working = true, false
      for _, bufnr in ipairs(bufnrs) do
        if not (analysed(w, bufnr) or quiet(w, bufnr)) then
          all = false
          working = working or reports_work(w, bufnr)
        end
      end
      local t = now_ms()
      if working then deadline = math.min(deadline + (t - last), limit) end
      last = t
      if not all and t < deadline then return end
      done = true
      timer:stop()
      timer:close()
      channel.reply(token, answer(w, bufnrs))
    end)
  )
end

return M
