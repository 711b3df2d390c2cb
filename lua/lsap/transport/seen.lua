-- What Neovim has seen of the language servers since the service started: their work in
-- progress (`$/progress`), when they attached, answered and published diagnostics, and when
-- files changed on disk were last synced. Read by the waits (`when_idle`, `when_attached`,
-- `when_diagnosed`) and by `health` for a request that got no answer in time.
local M = {}

local channel = require('lsap.transport.channel')
local compat = require('lsap.compat')

local progress = {} ---@type table<integer, {active: table<string, true>, last: integer}>
local attached_at = {} ---@type table<integer, integer> when each server first attached (ms)
-- When each server last answered a request, anyone's (ms): with `progress`, what tells a
-- server that is indexing from one that is busy or hung (see `health`).
local answered_at = {} ---@type table<integer, integer>
-- When diagnostics last changed per buffer, and at which changedtick (see `when_diagnosed`).
local diagnosed = {} ---@type table<integer, {tick: integer, at: integer}>
-- When each server last published diagnostics (`compat.on_publish`), any buffer's, by client
-- (the order of its publishes, per buffer, is `published_order` below).
local published_any = {} ---@type table<integer, integer>
local published_tick = {} ---@type table<integer, table<integer, integer>> -- the changedtick then
local republishes = {} ---@type table<integer, boolean> -- by client: unchanged ones too
-- The document version each server's last publish for a buffer named (basedpyright, clangd;
-- pylsp for some), by buffer and client; false: it named none. Where it names one, whether
-- it is of the buffer's current text is known, not guessed.
local published_version = {} ---@type table<integer, table<integer, integer|false>>
-- When `sync` last told the servers of files changed on disk (`synced_at`); per client, when
-- the first answer came to a request sent after that: the server had read the change by
-- then, and what it publishes after that answer it sent after the change (a connection
-- keeps the order of messages), unlike a publish still on its way when the change was sent.
-- These are in `order` (one count of events, as the callbacks ran), not on the clock:
-- Neovim's clock is read once per loop turn, so a publish read in the same turn as the
-- answer that proves a server read the change had the same time and passed for later.
M.synced_at = -1
local sent_at = {} ---@type table<integer, table<integer, integer>>
local proven = {} ---@type table<integer, integer>
local proven_at = {} ---@type table<integer, integer> -- by client: when (ms), for `quiet`
local published_order = {} ---@type table<integer, table<integer, integer>> -- by buffer, client
local published_any_order = {} ---@type table<integer, integer> -- by client
-- The document version last sent to each server for a buffer, and when (by buffer, client):
-- a publish that names it (clangd sends `version`) was made from the text sent then.
local version_sent = {} ---@type table<integer, table<integer, {version: integer, order: integer}>>
-- When each server was last sent a buffer's `didOpen` (by buffer, client), in `order`.
local opened = {} ---@type table<integer, table<integer, integer>>
local order = 0
local function next_order()
  order = order + 1
  return order
end

M.progress, M.attached_at, M.answered_at, M.diagnosed = progress, attached_at, answered_at, diagnosed
M.published_any, M.published_tick, M.republishes = published_any, published_tick, republishes
M.published_order, M.published_any_order = published_order, published_any_order
M.proven, M.proven_at = proven, proven_at

--- Whether a server's last publish for a buffer named the document version it was made from.
function M.versioned(bufnr, client_id) return type((published_version[bufnr] or {})[client_id]) == 'number' end

--- Whether a server was sent a buffer's `didOpen` after its last publish for it (or has
--- published none since): every server publishes for a file opened to it, so until then
--- nothing seen of the buffer is its analysis of this text. A version-less publish that
--- cleared the file when it was closed made Neovim a buffer for it, diagnosed and empty;
--- opened again and edited, its server's silence passed for `quiet` (no errors reported).
function M.unpublished_since_open(bufnr, client_id)
  local at = (opened[bufnr] or {})[client_id]
  return at ~= nil and ((published_order[bufnr] or {})[client_id] or -1) < at
end

--- Whether a server's last publish for a buffer, one that named its version (`versioned`),
--- is of the buffer's current text: of the version it was last sent, with no text change
--- since (Neovim numbers one at once, and sends it debounced). A write, which moves the
--- changedtick alone, changes nothing the server was told.
function M.published_current(bufnr, client_id)
  local got = (published_version[bufnr] or {})[client_id]
  local now = compat.buf_version(bufnr)
  -- Sent before the service watched (the human's buffers): the version Neovim numbered.
  local sent = ((version_sent[bufnr] or {})[client_id] or {}).version or now
  return type(got) == 'number' and got == sent and (now == nil or now == sent)
end

local function now_ms() return vim.uv.now() end

-- The sync (`synced_at`) each client was last sent a proof request for.
local asked = {} ---@type table<integer, integer>

--- A cheap request to each running server that gave no answer since the last sync (once per
--- sync), about one of its loaded buffers: its answer proves the server read the change
--- (`proven`), and only what it publishes after that answer counts as analysis of the change.
function M.ask_proof()
  for _, client in ipairs(vim.lsp.get_clients()) do
    local id = client.id
    if not client:is_stopped() and (proven[id] or -1) < M.synced_at and asked[id] ~= M.synced_at then
      for bufnr in pairs(client.attached_buffers) do
        if vim.api.nvim_buf_is_loaded(bufnr) then
          asked[id] = M.synced_at
          -- Behind every change Neovim holds back (debounced didChange, of any buffer: a
          -- request flushes only its own): answered before the server read a reloaded
          -- buffer, the proof let publishes of the old text count (test_check_rich).
          compat.flush_changes(client)
          -- Any request does; this one every Python, TypeScript, C server answers cheaply.
          local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
          pcall(client.request, client, 'textDocument/documentSymbol', params, function() end, bufnr)
          break
        end
      end
    end
  end
end

--- Files changed on disk were just told to the servers, or the bridge changed buffers or
--- files itself (`edits.apply`): a wait for diagnostics `after_sync` takes only what servers
--- published after they read it (see `when_diagnosed`). The proof that they read it is asked
--- for at once, written right behind the change so that the server reads both together:
--- asked only when a wait started, after a check's wait for idle servers, it came after a
--- server's whole pass over the change; asked a loop turn later, a loaded basedpyright had
--- analysed before it read the request. Either way no publish counted and the files stayed
--- "not analysed" (a deleted module's importer, on a loaded machine). Asked ahead of the
--- change itself, its answer proved nothing and publishes of the old text counted (rich's
--- callers, not re-analysed, "nothing new"): `disk.sync` asks once it has reloaded the
--- stale buffers, and `ask_proof` sends Neovim's held-back didChange first. Buffers
--- changed meanwhile are proven by the version their publish names. `prove`: only for
--- files the servers were told of (`workspace/didChangeWatchedFiles`); after the bridge's
--- own edit of buffers the proof is asked when the wait begins (a rename's diagnostics).
function M.synced(prove)
  M.synced_at = next_order()
  if prove then M.ask_proof() end
end

local function on_progress(ev)
  local id = ev.data.client_id
  local value = ev.data.params and ev.data.params.value or {}
  local key = tostring(ev.data.params and ev.data.params.token)
  local state = progress[id] or { active = {}, last = now_ms() }
  progress[id] = state
  state.last = now_ms()
  if value.kind == 'begin' then
    state.active[key] = { title = value.title, percentage = value.percentage }
    state.reported = true
  elseif value.kind == 'report' and state.active[key] then
    state.active[key].percentage = value.percentage
    -- Work that reports how far it got (basedpyright: "N files to analyze"), not a
    -- request's own begin and end ("Finding references"): see `passed` in `when_diagnosed`.
    state.worked = next_order()
  elseif value.kind == 'end' then
    state.active[key] = nil
  end
end

local function on_request(ev)
  local id, request = ev.data.client_id, ev.data.request
  if not request then return end
  sent_at[id] = sent_at[id] or {}
  if request.type == 'pending' then
    sent_at[id][ev.data.request_id] = next_order()
  elseif request.type == 'complete' or request.type == 'cancel' then
    local sent = sent_at[id][ev.data.request_id]
    sent_at[id][ev.data.request_id] = nil
    local ours = channel.ours[id]
    local cancelled = ours and ours[ev.data.request_id]
    if cancelled then
      ours[ev.data.request_id] = nil
      if request.type == 'cancel' then cancelled() end
    end
    if request.type == 'complete' then answered_at[id] = now_ms() end
    if sent and sent > M.synced_at and (proven[id] or -1) < M.synced_at then
      proven[id], proven_at[id] = next_order(), now_ms()
    end
  end
end

local function on_publish(client_id, result)
  -- The buffer Neovim's own handler files them under (it makes one for a file not loaded).
  local bufnr = vim.uri_to_bufnr(result.uri)
  if bufnr > 0 then
    -- Diagnostics of the text sent after the last sync: the server had read the change
    -- (it reads in order), as an answer to a request sent after it shows (`proven`).
    local sent = (version_sent[bufnr] or {})[client_id]
    if
      sent
      and result.version == sent.version
      and sent.order > M.synced_at
      and (proven[client_id] or -1) < M.synced_at
    then
      proven[client_id], proven_at[client_id] = next_order(), now_ms()
    end
    published_order[bufnr] = published_order[bufnr] or {}
    -- Empty again after empty, with a change between the two (a sync, or a new text of the
    -- buffer sent): this server publishes unchanged diagnostics too, so its silence about a
    -- file is no evidence (see `quiet` in `when_diagnosed`). Two in one pass over the same
    -- text are not that: typescript-language-server publishes a file's syntactic and then
    -- its semantic diagnostics, and skips the file after a change that leaves them empty
    -- (taken for one that republishes, its files stayed "not analysed" after a move).
    local before = published_order[bufnr][client_id]
    if
      before
      and (before < M.synced_at or (sent and sent.order > before))
      and #(result.diagnostics or {}) == 0
      and next(vim.diagnostic.count(bufnr, { namespace = vim.lsp.diagnostic.get_namespace(client_id, false) })) == nil
    then
      republishes[client_id] = true
    end
    published_order[bufnr][client_id] = next_order()
    published_version[bufnr] = published_version[bufnr] or {}
    published_version[bufnr][client_id] = type(result.version) == 'number' and result.version or false
    published_tick[bufnr] = published_tick[bufnr] or {}
    -- A publish naming an older version than the one sent is of the old text: not current.
    local old = sent and result.version ~= nil and result.version ~= sent.version
    published_tick[bufnr][client_id] = old and -1 or vim.b[bufnr].changedtick
  end
  published_any[client_id] = now_ms()
  published_any_order[client_id] = next_order()
end

-- The version each server was sent of a buffer (didOpen, didChange), in `order`.
local function on_notify(ev)
  local method, params = ev.data.method, ev.data.params
  if method ~= 'textDocument/didChange' and method ~= 'textDocument/didOpen' then return end
  local document = params and params.textDocument or {}
  local bufnr = document.uri and vim.uri_to_bufnr(document.uri) or 0
  if bufnr > 0 and type(document.version) == 'number' then
    version_sent[bufnr] = version_sent[bufnr] or {}
    version_sent[bufnr][ev.data.client_id] = { version = document.version, order = next_order() }
    if method == 'textDocument/didOpen' then
      opened[bufnr] = opened[bufnr] or {}
      opened[bufnr][ev.data.client_id] = version_sent[bufnr][ev.data.client_id].order
    end
  end
end

--- Start watching (the service registered): progress, requests, publishes and attaches.
function M.watch(group)
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = on_progress })
  vim.api.nvim_create_autocmd('LspRequest', { group = group, callback = on_request })
  vim.api.nvim_create_autocmd('LspNotify', { group = group, callback = on_notify })
  compat.on_publish(on_publish)
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(ev)
      if vim.api.nvim_buf_is_valid(ev.buf) then
        diagnosed[ev.buf] = { tick = vim.b[ev.buf].changedtick, at = now_ms() }
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      progress[ev.data.client_id] = progress[ev.data.client_id] or { active = {}, last = now_ms() }
      attached_at[ev.data.client_id] = attached_at[ev.data.client_id] or now_ms()
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    -- Buffers open before the service started have had their servers' attention already.
    if vim.api.nvim_buf_is_loaded(bufnr) and #vim.lsp.get_clients({ bufnr = bufnr }) > 0 then
      diagnosed[bufnr] = diagnosed[bufnr] or { tick = vim.b[bufnr].changedtick, at = 0 }
    end
  end
end

--- A server's work in progress as the human would read it ("Indexing 40%", '' for work
--- with no title), nil when it reports none.
function M.work(client_id)
  local state = progress[client_id]
  for _, work in pairs(state and state.active or {}) do
    local title = work.title or ''
    return work.percentage and (title .. ' ' .. work.percentage .. '%') or title
  end
end

--- What Neovim has seen of servers lately, for a request that got no answer in time: per
--- client, its work in progress (`work`), and how long ago (ms) it last reported progress,
--- last answered any request, and attached (nil: not seen since the service started).
function M.health(client_ids)
  local out = {}
  for _, id in ipairs(client_ids) do
    local client = vim.lsp.get_client_by_id(id)
    local state, at = progress[id], answered_at[id]
    out[#out + 1] = {
      id = id,
      name = client and client.name or ('server ' .. id),
      work = M.work(id),
      progress_ms = state and state.reported and (now_ms() - state.last) or nil,
      answer_ms = at and (now_ms() - at) or nil,
      age_ms = attached_at[id] and (now_ms() - attached_at[id]) or nil,
    }
  end
  return out
end

-- A server reports its start-up work a moment after attaching (typescript-language-server:
-- ~0.4 s, then ~1.6 s of "Initializing"): until it has reported some, or this grace has
-- passed, a fresh server counts as busy, so its first answers are not from a half-loaded
-- project (doc/architecture.md, Costs: 21 of 420 references).
local STARTUP_GRACE_MS = 1000

function M.busy(client_id, settle_ms)
  local state = progress[client_id]
  local attached = attached_at[client_id]
  if attached and not (state and state.reported) and now_ms() - attached < STARTUP_GRACE_MS then return true end
  if not state then return false end
  return next(state.active) ~= nil or now_ms() - state.last < settle_ms
end

--- The clients of `client_ids` that report work in progress now (see `busy`), at once.
function M.working(client_ids, settle_ms)
  local out = {}
  for _, id in ipairs(client_ids) do
    if M.busy(id, settle_ms) then out[#out + 1] = id end
  end
  return out
end

--- Reply `true` once none of the clients reports work in progress (`$/progress`) and
--- all have been quiet for `settle_ms`; reply `false` when `timeout_ms` runs out first.
function M.when_idle(token, client_ids, settle_ms, timeout_ms)
  local deadline = now_ms() + timeout_ms
  local timer = assert(vim.uv.new_timer())
  local function check()
    local any_busy = false
    for _, id in ipairs(client_ids) do
      if M.busy(id, settle_ms) then any_busy = true end
    end
    if not any_busy or now_ms() >= deadline then
      timer:stop()
      timer:close()
      vim.schedule(function() channel.reply(token, not any_busy) end)
    end
  end
  timer:start(0, 25, check)
end

return M
