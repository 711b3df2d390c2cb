-- The LSP transport between the lsap_bridge service (Python) and Neovim's LSP clients.
--
-- Every function here returns at once: language-server requests go out with the
-- asynchronous `client:request`, and answers travel back to the service with
-- `vim.rpcnotify(<service channel>, 'lsap_reply', token, payload)`. Nothing here waits on
-- the main loop, so the human's editor never freezes while an agent asks.
local M = {}

local compat = require('lsap.compat')

---@type integer? channel of the lsap_bridge service
M.chan = nil
-- Files over this many bytes are not opened or reloaded for the servers (`max_file_size`,
-- as it was when the service started).
M.max_file_size = math.huge
local inflight = {} ---@type table<integer, {client_id: integer, request_id: integer}[]>
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
-- Silence of a server after its last publish that ends its pass over the open files
-- (basedpyright on rich, two loaded cores: gaps of up to a second between two files).
local PASS_MS = 2000
-- When `sync` last told the servers of files changed on disk; per client, when the first
-- answer came to a request sent after that: the server had read the change by then, and
-- what it publishes after that answer it sent after the change (a connection keeps the
-- order of messages), unlike a publish still on its way when the change was sent.
-- These are in `order` (one count of events, as the callbacks ran), not on the clock:
-- Neovim's clock is read once per loop turn, so a publish read in the same turn as the
-- answer that proves a server read the change had the same time and passed for later.
local synced_at = -1
local sent_at = {} ---@type table<integer, table<integer, integer>>
local proven = {} ---@type table<integer, integer>
local proven_at = {} ---@type table<integer, integer> -- by client: when (ms), for `quiet`
local published_order = {} ---@type table<integer, table<integer, integer>> -- by buffer, client
local published_any_order = {} ---@type table<integer, integer> -- by client
-- The document version last sent to each server for a buffer, and when (by buffer, client):
-- a publish that names it (clangd sends `version`) was made from the text sent then.
local version_sent = {} ---@type table<integer, table<integer, {version: integer, order: integer}>>
local order = 0
local function next_order()
  order = order + 1
  return order
end

local function now_ms() return vim.uv.now() end

-- -- the disk --------------------------------------------------------------------------
-- The disk is the truth for every buffer nobody is editing. Before the service reads a
-- buffer, or sends a request computed from its text, `fresh` compares the file with the disk
-- and brings a stale unmodified buffer up to date in place: the lines that differ are
-- replaced, so the servers get an ordinary didChange (what an editor that reloads a
-- document in place sends), and Neovim then takes the file's new time and size as read, so
-- that it neither reloads the buffer nor warns about the change later. Neovim's own reload
-- (`:checktime` with 'autoread') is left for text in another encoding: it sends the servers
-- didClose + didOpen, after which basedpyright may no longer count the file as the
-- project's own and rename within it alone (doc/lsap.txt, lsap-disk). A buffer with
-- unsaved changes is the human's truth: never touched; the service is told its file changed.

-- Each buffer's file as it was when Neovim last read or wrote it, or the bridge brought the
-- buffer up to date with it (nil stamp: no file then).
local on_disk = {} ---@type table<integer, {stamp: table?, racy: boolean}>
-- Buffers the bridge loaded for the servers: closed when their file goes away.
local opened = {} ---@type table<integer, true>
-- Writes this close to a read may leave size and mtime alike (see filestate.RACY_NS).
local RACY_NS = 2e9

local function stamp_of(name)
  local st = vim.uv.fs_stat(name)
  if not st or st.type ~= 'file' then return nil end
  -- The change time too: a rewrite whose mtime was put back (`touch -d`, `os.utime`) still
  -- moves it (filestate.DiskStamp).
  return {
    size = st.size,
    sec = st.mtime.sec,
    nsec = st.mtime.nsec,
    ino = st.ino,
    dev = st.dev,
    csec = st.ctime.sec,
    cnsec = st.ctime.nsec,
  }
end

local function same(a, b)
  if a == nil or b == nil then return a == b end
  return a.size == b.size
    and a.sec == b.sec
    and a.nsec == b.nsec
    and a.ino == b.ino
    and a.dev == b.dev
    and a.csec == b.csec
    and a.cnsec == b.cnsec
end

local function racy(stamp)
  local now = vim.uv.clock_gettime('realtime')
  local sec, nsec = stamp.sec, stamp.nsec
  if stamp.csec > sec or (stamp.csec == sec and stamp.cnsec > nsec) then
    sec, nsec = stamp.csec, stamp.cnsec
  end
  return (now.sec - sec) * 1e9 + (now.nsec - nsec) < RACY_NS
end

--- Remember a buffer's file as Neovim has just read or written it.
local function remember(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local stamp = name ~= '' and stamp_of(name) or nil
  on_disk[bufnr] = { stamp = stamp, racy = stamp ~= nil and racy(stamp) }
end

local NEWLINES = { unix = '\n', dos = '\r\n', mac = '\r' }

--- The file's bytes, when they can be compared with the buffer's lines (UTF-8 text: bytes
--- tell), else nil (another encoding, binary, unreadable).
local function file_text(bufnr, name)
  local bo = vim.bo[bufnr]
  if (bo.fileencoding ~= '' and bo.fileencoding ~= 'utf-8') or bo.bomb or bo.binary then return nil end
  local file = io.open(name, 'rb')
  if not file then return nil end
  local data = file:read('*a')
  file:close()
  return data
end

--- Whether the buffer's lines, as Neovim would write them, are these bytes.
local function holds(bufnr, data)
  local bo = vim.bo[bufnr]
  local nl = NEWLINES[bo.fileformat] or '\n'
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  return table.concat(lines, nl) .. (bo.eol and nl or '') == data or (data == '' and #lines == 1 and lines[1] == '')
end

--- A file's text as lines of this buffer, the way Neovim reads it in the buffer's
--- 'fileformat' (dos: a line break with or without its CR), and whether it ends with a
--- newline; nil for 'fileformat' mac.
local function lines_of(bufnr, data)
  local ff = vim.bo[bufnr].fileformat
  if ff == 'mac' then return nil end
  local lines = vim.split(data, '\n', { plain = true })
  local eol = #lines > 1 and lines[#lines] == ''
  if eol then table.remove(lines) end
  if ff == 'dos' then
    for i, line in ipairs(lines) do
      lines[i] = line:gsub('\r$', '')
    end
  end
  return lines, eol
end

--- Close the current undo block of a buffer, so that a change is its own undo step and
--- neither joins the human's earlier typing nor the human's next change.
function M.break_undo(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    if vim.bo.undolevels == -123456 then
      vim.o.undolevels = vim.o.undolevels
    else
      vim.bo.undolevels = vim.bo.undolevels
    end
  end)
end

--- Put a file's text into its unmodified buffer: only the lines that differ are replaced,
--- as one undo step of their own, and the buffer stays unmodified. False (nothing changed)
--- for 'fileformat' mac.
local function load_text(bufnr, data)
  local lines, eol = lines_of(bufnr, data)
  if not lines then return false end
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local first, old_last, new_last = 1, #old, #lines
  while first <= old_last and first <= new_last and old[first] == lines[first] do
    first = first + 1
  end
  while old_last >= first and new_last >= first and old[old_last] == lines[new_last] do
    old_last, new_last = old_last - 1, new_last - 1
  end
  M.break_undo(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, first - 1, old_last, false, vim.list_slice(lines, first, new_last))
  M.break_undo(bufnr)
  vim.bo[bufnr].eol = eol
  vim.bo[bufnr].modified = false
  return true
end

--- `:checktime` for one buffer with 'autoread' on or off for it meanwhile. With `quiet`, a
--- FileChangedShell handler of the bridge's own, which leaves v:fcs_choice empty, makes
--- Neovim take the file's time, size and mode as they are now and do nothing else (no
--- reload, no warning); without it, the human's handlers (which may prompt) are left out.
local function checktime(bufnr, autoread, quiet)
  local own = vim.api.nvim_get_option_value('autoread', { scope = 'local', buf = bufnr })
  local effective = own
  if effective == nil then effective = vim.o.autoread end
  local forced = effective ~= autoread
  if forced then vim.api.nvim_set_option_value('autoread', autoread, { scope = 'local', buf = bufnr }) end
  local ignored, handler = vim.o.eventignore, nil
  if quiet then
    handler = vim.api.nvim_create_autocmd('FileChangedShell', { buffer = bufnr, callback = function() end })
  elseif vim.fn.exists('#FileChangedShell') == 1 then
    vim.o.eventignore = ignored == '' and 'FileChangedShell' or ignored .. ',FileChangedShell'
  end
  pcall(vim.cmd.checktime, { args = { bufnr }, mods = { emsg_silent = true } })
  vim.o.eventignore = ignored
  if handler then pcall(vim.api.nvim_del_autocmd, handler) end
  if forced and own == nil then
    vim.api.nvim_buf_call(bufnr, function() vim.cmd('set autoread<') end)
  elseif forced then
    vim.api.nvim_set_option_value('autoread', own, { scope = 'local', buf = bufnr })
  end
end

--- Bring a stale unmodified buffer up to date with its file: its text in place and then
--- Neovim's record of the file (`checktime` quiet) where bytes tell (UTF-8 text), else
--- Neovim's own reload. The human's FileChangedShell handlers would run beside the bridge's
--- own: with some defined, Neovim's record is left for Neovim to bring up to date, through
--- them, when it next looks (on focus, `:checktime`).
local function update(bufnr, name)
  local data = file_text(bufnr, name)
  if data and (holds(bufnr, data) or load_text(bufnr, data)) then
    if vim.fn.exists('#FileChangedShell') == 0 then checktime(bufnr, false, true) end
  else
    checktime(bufnr, true, false)
  end
end

--- A hidden buffer the bridge loaded, not since shown or listed by the human.
local function bridge_buffer(bufnr)
  return opened[bufnr] and not vim.bo[bufnr].buflisted and #vim.fn.win_findbuf(bufnr) == 0
end

local function close(bufnr)
  if bridge_buffer(bufnr) then pcall(vim.api.nvim_buf_delete, bufnr, {}) end
end

--- Bring a loaded buffer up to date with its file unless it has unsaved changes, and say
--- how it stands:
---   'same'       in sync (or no file buffer: nothing to compare)
---   'reloaded'   it was stale and has been reloaded in place
---   'gone'       unmodified, and its file no longer exists (a bridge buffer is closed)
---   'too_large'  unmodified, and its file is over `max_file_size` (second value: the size);
---                not reloaded (a bridge buffer is closed)
---   'changed', 'deleted'  unsaved changes, and its file changed / was deleted on disk since
function M.fresh(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then return 'same' end
  local now, known = stamp_of(name), on_disk[bufnr]
  if vim.bo[bufnr].modified then
    if known == nil or same(known.stamp, now) then return 'same' end
    return now and 'changed' or 'deleted'
  end
  if now == nil then
    close(bufnr)
    return 'gone'
  end
  if now.size > M.max_file_size then
    close(bufnr)
    return 'too_large', now.size
  end
  if known and same(known.stamp, now) then
    if not known.racy then return 'same' end
    local data = file_text(bufnr, name)
    if not data or holds(bufnr, data) then
      known.racy = racy(now)
      return 'same'
    end
  end
  local tick = vim.b[bufnr].changedtick
  update(bufnr, name)
  remember(bufnr) -- also when only the stamp had changed
  return vim.b[bufnr].changedtick ~= tick and 'reloaded' or 'same'
end

--- Before a request whose answer spans the workspace: tell the servers what changed on disk
--- (`changes`, see `files_changed`), then bring every loaded buffer up to date. Returns
--- the names of the loaded file buffers (the service skips the next call while nothing
--- changed on disk and all of them are in the trees it watches).
function M.sync(changes)
  if #changes > 0 then
    M.files_changed(changes)
    synced_at = next_order()
  end
  local names = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      M.fresh(bufnr) -- may close a bridge buffer whose file is gone
      if vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == '' then
        local name = vim.api.nvim_buf_get_name(bufnr)
        if name ~= '' then names[#names + 1] = name end
      end
    end
  end
  return names
end

--- Send the service a notification; never raises, and sends nothing while Neovim quits:
--- its channel may be closed by then ("Invalid channel"), and an error raised in an exiting
--- Neovim opens a --More-- prompt that no UI draws any more, which holds the exit for good.
--- Returns whether it was sent.
function M.notify(method, ...)
  if not M.chan or compat.exiting() then return false end
  return (pcall(vim.rpcnotify, M.chan, method, ...))
end

local function reply(token, payload)
  inflight[token] = nil
  M.notify('lsap_reply', token, payload)
end

--- Called once by the service after it connects; returns Neovim's pid and `max_file_size`.
function M.register(chan)
  M.chan = chan
  local group = vim.api.nvim_create_augroup('lsap.transport', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    callback = function(ev)
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
    end,
  })
  vim.api.nvim_create_autocmd('LspRequest', {
    group = group,
    callback = function(ev)
      local id, request = ev.data.client_id, ev.data.request
      if not request then return end
      sent_at[id] = sent_at[id] or {}
      if request.type == 'pending' then
        sent_at[id][ev.data.request_id] = next_order()
      elseif request.type == 'complete' or request.type == 'cancel' then
        local sent = sent_at[id][ev.data.request_id]
        sent_at[id][ev.data.request_id] = nil
        if request.type == 'complete' then answered_at[id] = now_ms() end
        if sent and sent > synced_at and (proven[id] or -1) < synced_at then
          proven[id], proven_at[id] = next_order(), now_ms()
        end
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspNotify', {
    group = group,
    callback = function(ev)
      local method, params = ev.data.method, ev.data.params
      if method ~= 'textDocument/didChange' and method ~= 'textDocument/didOpen' then return end
      local document = params and params.textDocument or {}
      local bufnr = document.uri and vim.uri_to_bufnr(document.uri) or 0
      if bufnr > 0 and type(document.version) == 'number' then
        version_sent[bufnr] = version_sent[bufnr] or {}
        version_sent[bufnr][ev.data.client_id] = { version = document.version, order = next_order() }
      end
    end,
  })
  require('lsap.compat').on_publish(function(client_id, result)
    -- The buffer Neovim's own handler files them under (it makes one for a file not loaded).
    local bufnr = vim.uri_to_bufnr(result.uri)
    if bufnr > 0 then
      -- Diagnostics of the text sent after the last sync: the server had read the change
      -- (it reads in order), as an answer to a request sent after it shows (`proven`).
      local sent = (version_sent[bufnr] or {})[client_id]
      if
        sent
        and result.version == sent.version
        and sent.order > synced_at
        and (proven[client_id] or -1) < synced_at
      then
        proven[client_id], proven_at[client_id] = next_order(), now_ms()
      end
      published_order[bufnr] = published_order[bufnr] or {}
      -- Empty again after empty: this server publishes unchanged diagnostics too, so its
      -- silence about a file is no evidence (see `quiet` in `when_diagnosed`).
      if
        published_order[bufnr][client_id]
        and #(result.diagnostics or {}) == 0
        and #vim.diagnostic.get(bufnr, { namespace = vim.lsp.diagnostic.get_namespace(client_id, false) }) == 0
      then
        republishes[client_id] = true
      end
      published_order[bufnr][client_id] = next_order()
      published_tick[bufnr] = published_tick[bufnr] or {}
      -- A publish naming an older version than the one sent is of the old text: not current.
      local old = sent and result.version ~= nil and result.version ~= sent.version
      published_tick[bufnr][client_id] = old and -1 or vim.b[bufnr].changedtick
    end
    published_any[client_id] = now_ms()
    published_any_order[client_id] = next_order()
  end)
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(ev)
      if vim.api.nvim_buf_is_valid(ev.buf) then
        diagnosed[ev.buf] = { tick = vim.b[ev.buf].changedtick, at = now_ms() }
      end
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost', 'FileChangedShellPost' }, {
    group = group,
    callback = function(ev) remember(ev.buf) end,
  })
  vim.api.nvim_create_autocmd('BufUnload', {
    group = group,
    callback = function(ev)
      on_disk[ev.buf], opened[ev.buf] = nil, nil
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      -- Buffers open before the service started have had their servers' attention already.
      if #vim.lsp.get_clients({ bufnr = bufnr }) > 0 then
        diagnosed[bufnr] = diagnosed[bufnr] or { tick = vim.b[bufnr].changedtick, at = 0 }
      end
      -- Unsaved changes: what is on disk now is taken as what they were made on. The
      -- others are left to Neovim's own timestamps at the first `fresh`.
      if vim.bo[bufnr].modified then remember(bufnr) end
    end
  end
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      progress[ev.data.client_id] = progress[ev.data.client_id] or { active = {}, last = now_ms() }
      attached_at[ev.data.client_id] = attached_at[ev.data.client_id] or now_ms()
    end,
  })
  -- A server that exits (crash, kill) never answers what it had pending: fail that at once.
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if not client or client:is_stopped() then M.client_exited(ev.data.client_id) end
    end,
  })
  vim.schedule(function() require('lsap').flush() end)
  M.max_file_size = require('lsap').config.max_file_size
  return { pid = vim.fn.getpid(), max_file_size = M.max_file_size, max_tokens = require('lsap').config.max_tokens }
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

local function client_info(client, bufnr)
  -- Whatever a mode asks, the client says (`client:supports_method`), for every method of
  -- the protocol: no list of the bridge's own decides what a server can do. With the
  -- buffer, so that a method registered for some documents only (ruff's formatting, by
  -- language) counts where it applies.
  local methods = {}
  for _, method in ipairs(compat.methods()) do
    if client:supports_method(method, bufnr) then methods[#methods + 1] = method end
  end
  return {
    id = client.id,
    name = client.name,
    offset_encoding = client.offset_encoding,
    root_dir = client.root_dir,
    methods = methods,
    filetypes = client.config and client.config.filetypes or {},
    -- How long the server has been attached, when it attached after the service started.
    age_ms = attached_at[client.id] and (now_ms() - attached_at[client.id]) or nil,
    -- Whether it has ever reported work in progress: a quiet one that does is done indexing.
    reports_progress = progress[client.id] ~= nil and progress[client.id].reported == true,
  }
end

--- Clients attached to a buffer, with what each supports.
function M.clients(bufnr)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    out[#out + 1] = client_info(client, bufnr)
  end
  return out
end

--- Every client in this Neovim, with what each supports (the socket's `info`).
function M.all_clients()
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    out[#out + 1] = client_info(client)
  end
  return out
end

local withdraw = {} ---@type table<integer, fun()> approvals to take back if the agent gives up

--- Ask the human about an agent's edit; replies with the decision (see lsap.approval).
function M.confirm(token, client, summary, preview, timeout_ms)
  local answered = false
  local take_back = require('lsap.log').confirm(client, summary, preview, timeout_ms, function(decision)
    answered = true
    withdraw[token] = nil
    reply(token, decision)
  end)
  if not answered then withdraw[token] = take_back end -- 'allow' and 'deny' answer at once
end

--- Fail the requests still pending on a server that exited, and tell the service it is gone.
function M.client_exited(client_id)
  for _, pending in pairs(inflight) do
    for _, req in ipairs(pending) do
      if req.client_id == client_id and req.fail then req.fail() end
    end
  end
  M.notify('lsap_client_exit', client_id)
end

-- -- the bridge's own commands -----------------------------------------------------------
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
local INTERCEPTED = { 'workspace/applyEdit', '_typescript.rename' }
local taking = {} ---@type table<integer, {tokens: table<integer, true>, previous: table<string, function>}>
local parked = {} ---@type table<integer, {co: thread, token: integer, method: string}>
local parked_count = 0

local function refusal(method)
  if method == 'workspace/applyEdit' then
    return { applied = false, failureReason = 'the request that ran this command was withdrawn' }
  end
  return vim.NIL
end

local function take_over(client, token)
  local slot = taking[client.id]
  if not slot then
    slot = { tokens = {}, previous = {} }
    taking[client.id] = slot
    for _, method in ipairs(INTERCEPTED) do
      slot.previous[method] = rawget(client.handlers, method)
      client.handlers[method] = function(err, params, ctx, config)
        local owner = next(slot.tokens)
        local co, main = coroutine.running()
        if owner == nil or main or not M.chan or compat.exiting() then
          local fallback = slot.previous[method] or vim.lsp.handlers[method]
          if fallback then return fallback(err, params, ctx, config) end
          return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
        end
        parked_count = parked_count + 1
        parked[parked_count] = { co = co, token = owner, method = method }
        M.notify('lsap_server_request', owner, parked_count, method, params or vim.NIL)
        return coroutine.yield()
      end
    end
  end
  slot.tokens[token] = true
end

local function release(client_id, token)
  local slot = taking[client_id]
  if not slot or not slot.tokens[token] then return end
  slot.tokens[token] = nil
  if next(slot.tokens) ~= nil then return end
  taking[client_id] = nil
  local client = vim.lsp.get_client_by_id(client_id)
  if client then
    for _, method in ipairs(INTERCEPTED) do
      client.handlers[method] = slot.previous[method]
    end
  end
end

--- The service is done with a token's commands (their grace window is over): their servers'
--- requests are Neovim's again.
function M.release_taken(token)
  for client_id in pairs(taking) do
    release(client_id, token)
  end
end

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
local function unpark(token)
  for id, waiting in pairs(parked) do
    if waiting.token == token then M.server_answered(id, refusal(waiting.method)) end
  end
end

local function position(p)
  return type(p) == 'table'
    and type(p.line) == 'number'
    and p.line >= 0
    and p.line % 1 == 0
    and type(p.character) == 'number'
    and p.character >= 0
    and p.character % 1 == 0
end

--- A range's four numbers appended to a flat list.
local function numbers(out, range)
  local s, e = range.start, range['end']
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = s.line, s.character, e.line, e.character
end

--- A Location | Location[] | LocationLink[] answer packed for its trip to the service:
--- `{packed = {{uri, {start line, start character, end line, end character, ...}}, ...}}`,
--- one entry per file in the order first seen, the ranges' numbers in one flat list. Twenty
--- thousand references are then a few hundred small tables instead of a hundred thousand,
--- for msgpack and for Python (doc/architecture.md, Costs). Entries that are not a file's
--- location with a valid range are left out, as the service's decoder leaves them out.
local function pack_locations(result)
  if type(result) ~= 'table' then return result end
  if result.uri or result.targetUri then result = { result } end
  local files, by_uri = {}, {}
  for _, item in ipairs(result) do
    if type(item) == 'table' then
      local uri = item.targetUri or item.uri
      local range = item.targetSelectionRange or item.range
      if
        type(uri) == 'string'
        and uri:sub(1, 5) == 'file:'
        and type(range) == 'table'
        and position(range.start)
        and position(range['end'])
      then
        local flat = by_uri[uri]
        if not flat then
          flat = {}
          by_uri[uri] = flat
          files[#files + 1] = { uri, flat }
        end
        numbers(flat, range)
      end
    end
  end
  return { packed = files }
end

--- A DocumentSymbol[] answer packed for its trip to the service: `{symbols = {names,
--- details, numbers}}`, the symbols depth first, ten numbers each (the parent's place,
--- 1-based, or 0; the kind; the range's four; the selection range's four). A 20,000-line
--- file's 20,000 symbols are then three lists instead of 140,000 tables. Anything else (an
--- empty answer, flat SymbolInformation[], an entry without a valid range) goes as it is.
local function pack_symbols(result)
  if type(result) ~= 'table' or type(result[1]) ~= 'table' or result[1].location ~= nil then return result end
  local names, details, nums = {}, {}, {}
  local function visit(items, parent)
    for _, item in ipairs(items) do
      local range = type(item) == 'table' and item.range
      local selection = type(item) == 'table' and (item.selectionRange or range)
      if
        type(range) ~= 'table'
        or type(selection) ~= 'table'
        or type(item.name) ~= 'string'
        or not (
          position(range.start)
          and position(range['end'])
          and position(selection.start)
          and position(selection['end'])
        )
      then
        error('not a DocumentSymbol')
      end
      local at = #names + 1
      names[at], details[at] = item.name, type(item.detail) == 'string' and item.detail or ''
      local n = #nums
      nums[n + 1], nums[n + 2] = parent, type(item.kind) == 'number' and item.kind or 0
      numbers(nums, range)
      numbers(nums, selection)
      if type(item.children) == 'table' then visit(item.children, at) end
    end
  end
  if not pcall(visit, result, 0) then return result end
  return { symbols = { names, details, nums } }
end

-- How an answer is packed when a call asks for it (`pack`), by method.
local PACKERS = {
  ['textDocument/references'] = pack_locations,
  ['textDocument/definition'] = pack_locations,
  ['textDocument/declaration'] = pack_locations,
  ['textDocument/typeDefinition'] = pack_locations,
  ['textDocument/implementation'] = pack_locations,
  ['textDocument/documentSymbol'] = pack_symbols,
}

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
  if type(guard) == 'table' then
    local bufnr, tick, disk = guard[1], guard[2], guard[3]
    if not vim.api.nvim_buf_is_loaded(bufnr) then return reply(token, { stale = true }) end
    local state = M.fresh(bufnr)
    local unsaved = (state == 'changed' or state == 'deleted') and state or ''
    if state == 'gone' or state == 'too_large' or vim.b[bufnr].changedtick ~= tick or unsaved ~= disk then
      return reply(token, { stale = true })
    end
  end
  local results, pending = {}, #calls
  if pending == 0 then
    reply(token, results)
    return
  end
  inflight[token] = {}
  -- Servers answer about every file, not just the one asked about: send the pending
  -- didChange of all buffers first (Neovim only flushes the request's own buffer).
  local flushed = {}
  for _, call in ipairs(calls) do
    local client = vim.lsp.get_client_by_id(call.client_id)
    if client and not flushed[client.id] then
      flushed[client.id] = true
      compat.flush_changes(client)
    end
  end
  local answered = {}
  local function finish(i, answer)
    if answered[i] then return end -- the server answered after all, or exited first
    answered[i] = true
    -- A command's server stays taken until the service's `release_taken` (after its grace
    -- window: an edit sent just after the reply is still the command's), or `cancel`.
    results[i] = answer
    pending = pending - 1
    if pending == 0 then reply(token, results) end
  end
  for i, call in ipairs(calls) do
    local client = vim.lsp.get_client_by_id(call.client_id)
    if not client then
      finish(i, { error = { code = -32803, message = 'language server is not running' }, gone = true })
    else
      local bufnr = call.bufnr
      if bufnr == nil or bufnr == vim.NIL or not vim.api.nvim_buf_is_loaded(bufnr) then bufnr = 0 end
      if intercept == true and call.method == 'workspace/executeCommand' then take_over(client, token) end
      local pack = call.pack == true and PACKERS[call.method] or nil
      local ok, request_id = client:request(
        call.method,
        call.params,
        function(err, result) finish(i, { error = err, result = pack and not err and pack(result) or result }) end,
        bufnr
      )
      if ok then
        table.insert(inflight[token], {
          client_id = call.client_id,
          request_id = request_id,
          method = call.method,
          fail = function()
            finish(i, { error = { code = -32803, message = 'the language server exited before answering' } })
          end,
        })
      else
        finish(i, { error = { code = -32803, message = 'language server refused the request' } })
      end
    end
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
  for client_id in pairs(taking) do
    release(client_id, token)
  end
  unpark(token)
  for _, req in ipairs(inflight[token] or {}) do
    local client = vim.lsp.get_client_by_id(req.client_id)
    if client and not (UNCANCELLABLE[req.method] and pyright_family(client)) then
      pcall(client.cancel_request, client, req.request_id)
    end
  end
  inflight[token] = nil
end

--- A finder of loaded buffers by file path: by name, else by the real path of a buffer
--- opened through a symlink (the service's paths are real). One pass over the buffers
--- instead of `bufnr(path)` per path, which stats every buffer each time (80 paths: 10 ms
--- of the human's main loop) and reads the path as a pattern.
function M.loaded_buffers()
  local by_name, by_real = {}, nil
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' then by_name[name] = b end
    end
  end
  return function(path)
    if by_name[path] then return by_name[path] end
    if not by_real then
      by_real = {}
      for name, b in pairs(by_name) do
        by_real[vim.uv.fs_realpath(name) or name] = b
      end
    end
    return by_real[path]
  end
end

--- Text of files: the buffer when one is loaded (brought up to date first, see `fresh`;
--- unsaved edits included), else nothing (the service reads the disk itself). Returns
--- { [path] = {bufnr=, changedtick=, modified=, disk=, lines=} }, disk being '' or the
--- `fresh` state 'changed'/'deleted' of a buffer with unsaved changes; a file over the
--- size limit comes back as {too_large = size}.
--- `known` ({ [path] = {bufnr, changedtick} }, optional): buffers still at that tick come
--- back without their lines, since the service already holds them.
function M.read(paths, known)
  local out = {}
  known = type(known) == 'table' and known or {}
  local find = M.loaded_buffers()
  for _, path in ipairs(paths) do
    local bufnr = find(path)
    local state, size
    if bufnr then
      state, size = M.fresh(bufnr)
    end
    if state == 'too_large' then
      out[path] = { too_large = size }
    elseif bufnr and state ~= 'gone' then
      local tick = vim.b[bufnr].changedtick
      local held = known[path]
      local unchanged = type(held) == 'table' and held[1] == bufnr and held[2] == tick
      out[path] = {
        bufnr = bufnr,
        changedtick = tick,
        modified = vim.bo[bufnr].modified,
        sent = compat.sent_version(bufnr),
        disk = (state == 'changed' or state == 'deleted') and state or '',
        lines = not unchanged and vim.api.nvim_buf_get_lines(bufnr, 0, -1, false) or nil,
      }
    end
  end
  return out
end

--- Load a file into a hidden buffer (no window, no cursor touched) so servers can attach.
function M.open(path)
  local bufnr = vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    local listed = vim.bo[bufnr].buflisted
    vim.bo[bufnr].swapfile = false
    vim.fn.bufload(bufnr)
    opened[bufnr] = true
    vim.bo[bufnr].buflisted = listed
    if vim.bo[bufnr].filetype == '' then
      vim.api.nvim_buf_call(bufnr, function() vim.cmd('silent! filetype detect') end)
    end
  end
  return bufnr
end

local function supporting(bufnr, method)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client:is_stopped() then
      -- exited, and Neovim has not yet detached it: not a server to ask
    elseif method == nil or method == vim.NIL or client:supports_method(method, bufnr) then
      out[#out + 1] = client_info(client, bufnr)
    end
  end
  return out
end

--- Reply with the clients on a buffer once one supporting `method` is attached, or with
--- what is there when `timeout_ms` runs out.
--- Neovim does not restart a server that exited: with none left on the buffer, run the
--- `vim.lsp.enable` configs for it again, as opening the file would (a no-op if none apply).
--- An exited client stays attached until Neovim's scheduled clean-up, and `vim.lsp.start`
--- would reuse it: wait (a few ticks, bounded) until it is gone.
local function restart_if_none(bufnr, tries)
  local clients = compat.clients_starting(bufnr)
  for _, client in ipairs(clients) do
    if not client:is_stopped() then return end
  end
  if #clients > 0 then
    if tries > 0 then vim.defer_fn(function() restart_if_none(bufnr, tries - 1) end, 20) end
    return
  end
  compat.start_enabled(bufnr)
end

--- Why no server will come for a buffer: its filetype, the enabled configs (and what they
--- cover), and configs that cover it but are not enabled (`vim.lsp.config()` ones and those
--- of `lsp/*.lua` files on 'runtimepath', such as nvim-lspconfig's).
function M.coverage(bufnr)
  local filetype = vim.bo[bufnr].filetype
  local enabled, candidates, is_enabled = {}, {}, {}
  for _, name in ipairs(compat.enabled_configs() or {}) do
    is_enabled[name] = true
    local config = vim.lsp.config[name]
    enabled[#enabled + 1] = { name = name, filetypes = config and config.filetypes or {} }
  end
  for _, name in ipairs(compat.config_names()) do
    if not is_enabled[name] then
      local ok, config = pcall(function() return vim.lsp.config[name] end)
      if ok and config and config.filetypes and vim.tbl_contains(config.filetypes, filetype) then
        candidates[#candidates + 1] = name
      end
    end
  end
  table.sort(enabled, function(a, b) return a.name < b.name end)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~:.')
  return { filetype = filetype, name = name, enabled = enabled, candidates = candidates }
end

--- How many enabled configs cover a buffer's filetype (nil: Neovim cannot say).
local function covering(bufnr)
  local enabled = compat.enabled_configs()
  if enabled == nil then return nil end
  local filetype, count = vim.bo[bufnr].filetype, 0
  for _, name in ipairs(enabled) do
    local config = vim.lsp.config[name]
    -- A config whose command is not installed never attaches: not waited for.
    local runs = config
      and (type(config.cmd) ~= 'table' or type(config.cmd[1]) ~= 'string' or vim.fn.executable(config.cmd[1]) == 1)
    if runs and (config.filetypes == nil or vim.tbl_contains(config.filetypes, filetype)) then count = count + 1 end
  end
  return count
end

--- method '*': every server the enabled configs would attach (code actions are gathered
--- from all of them: basedpyright and ruff on one Python file), waiting at most a few
--- seconds for the rest once one is there (a config's root may not match).
function M.when_attached(token, bufnr, method, timeout_ms)
  restart_if_none(bufnr, 50)
  local every = method == '*'
  if every then method = nil end
  local function ready()
    local found = supporting(bufnr, method)
    if not every then return #found > 0 and found or nil end
    local wanted = covering(bufnr)
    return #found > 0 and (wanted == nil or #found >= wanted) and found or nil
  end
  -- For '*', whether every server expected came is part of the answer: a choice made on
  -- fewer (a cold moment, servers still attaching) is not kept by the service; with no
  -- enabled configs to count (servers started another way) it is unknown.
  local function answer(found, complete)
    if not every then return reply(token, found) end
    if covering(bufnr) == nil then return reply(token, { clients = found, unknown = true }) end
    return reply(token, complete and found or { clients = found, incomplete = true })
  end
  local found = ready()
  if found then return answer(found, true) end
  -- No server on it and no enabled config for its filetype: none will come, say so now.
  if not M.servers_expected({ bufnr })[1] then return reply(token, { uncovered = M.coverage(bufnr) }) end
  local done = false
  local autocmd
  local deadline = now_ms() + timeout_ms
  local function finish()
    if done then return end
    -- For '*': a server still initializing on the buffer is coming (basedpyright a few
    -- seconds after ruff on a loaded machine): waited for, up to the full bound.
    if every and #compat.clients_starting(bufnr) > #supporting(bufnr, nil) and now_ms() < deadline then
      return vim.defer_fn(finish, 50)
    end
    done = true
    pcall(vim.api.nvim_del_autocmd, autocmd)
    -- Every client on the buffer, so that the service can say which lacks the method.
    answer(supporting(bufnr, nil), ready() ~= nil)
  end
  autocmd = vim.api.nvim_create_autocmd('LspAttach', {
    buffer = bufnr,
    callback = function()
      -- Capabilities registered dynamically arrive just after attach: look again shortly.
      vim.defer_fn(function()
        if ready() then finish() end
      end, 10)
    end,
  })
  -- Servers already attached that lack the method: only a dynamic registration (or a
  -- server attaching alongside) can still bring it, so do not wait the full timeout.
  local attached = #supporting(bufnr, nil) > 0
  vim.defer_fn(finish, attached and math.min(timeout_ms, 3000) or timeout_ms)
end

-- A server reports its start-up work a moment after attaching (typescript-language-server:
-- ~0.4 s, then ~1.6 s of "Initializing"): until it has reported some, or this grace has
-- passed, a fresh server counts as busy, so its first answers are not from a half-loaded
-- project (doc/architecture.md, Costs: 21 of 420 references).
local STARTUP_GRACE_MS = 1000

local function busy(client_id, settle_ms)
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
    if busy(id, settle_ms) then out[#out + 1] = id end
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
      if busy(id, settle_ms) then any_busy = true end
    end
    if not any_busy or now_ms() >= deadline then
      timer:stop()
      timer:close()
      vim.schedule(function() reply(token, not any_busy) end)
    end
  end
  timer:start(0, 25, check)
end

--- Whether a language server is, or is about to be, attached to each buffer: a client on it
--- (initialized or not), or a config enabled with `vim.lsp.enable` for its filetype (those
--- with a `root_dir` function start a moment later). Lets the service skip waiting for
--- servers that will never come.
function M.servers_expected(bufnrs)
  local enabled = compat.enabled_configs() -- nil: Neovim cannot say; assume a server
  local out = {}
  for i, bufnr in ipairs(bufnrs) do
    local expected = #compat.clients_starting(bufnr) > 0 or enabled == nil
    if not expected then
      local filetype = vim.bo[bufnr].filetype
      for _, name in ipairs(enabled) do
        local config = vim.lsp.config[name]
        if config and (config.filetypes == nil or vim.tbl_contains(config.filetypes, filetype)) then
          expected = true
          break
        end
      end
    end
    out[i] = expected
  end
  return out
end

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

--- Reply with each buffer's `vim.diagnostic` items once a server has published for the
--- buffer's latest change (a `DiagnosticChanged` at the current changedtick) and then been
--- quiet for `settle_ms`. Some servers publish nothing when a file's diagnostics stay the
--- same (typescript-language-server skips "still empty"): a buffer diagnosed before, with
--- no diagnostics, that gets no event for `quiet_ms` while its servers report no work in
--- progress comes back `quiet` (its empty diagnostics still stand).
--- Buffers still waiting at `timeout_ms` come back with neither flag.
--- Namespaces of `exclude_clients` (whose diagnostics the service pulls) are left out.
--- `after_sync`: a file counts as analysed only once each of its pushing servers reports
--- no work and has published nothing for `PASS_MS` (its pass is over), and, after files
--- changed on disk, published for it after its first answer following the change
--- (`proven`; a cheap request is sent to those that gave none): a dependent's buffer does
--- not change, so its changedtick proves nothing. A file it did not publish again counts
--- too once work in progress it reported after that answer is over (`passed`).
function M.when_diagnosed(token, bufnrs, exclude_clients, settle_ms, quiet_ms, timeout_ms, after_sync)
  local excluded, pulled = {}, {}
  for _, id in ipairs(exclude_clients) do
    pulled[id] = true
    for _, pull in ipairs({ false, true }) do
      excluded[vim.lsp.diagnostic.get_namespace(id, pull)] = true
    end
  end
  local start = now_ms()
  local deadline = start + timeout_ms
  local proving = after_sync == true and synced_at >= 0
  local function pushing(bufnr)
    local out = {}
    for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
      if not pulled[client.id] and not client:is_stopped() then out[#out + 1] = client end
    end
    return out
  end
  -- Since when each client's publishes count (nil: not yet known).
  local function proof(client)
    local at = proven[client.id]
    return at ~= nil and at > synced_at and at or nil
  end
  -- A server that reports its analysis as work in progress (basedpyright: "N files to
  -- analyze", ended once every open file is checked) re-analyses what the change can
  -- affect: once work it reported after reading the change is over, with a publish since,
  -- a file it did not publish again is unaffected.
  local function passed(client, since)
    local state = progress[client.id]
    return (state and state.worked or -1) > since and (published_any_order[client.id] or -1) > since
  end
  if proving then
    local asked = {}
    for _, bufnr in ipairs(bufnrs) do
      for _, client in ipairs(pushing(bufnr)) do
        if not asked[client.id] and proof(client) == nil and vim.api.nvim_buf_is_loaded(bufnr) then
          asked[client.id] = true
          -- Any request does; this one every Python, TypeScript, C server answers cheaply.
          pcall(
            client.request,
            client,
            'textDocument/documentSymbol',
            { textDocument = { uri = vim.uri_from_bufnr(bufnr) } },
            function() end,
            bufnr
          )
        end
      end
    end
  end
  -- And the server's pass is over: no work in progress, nothing published for `PASS_MS`
  -- (basedpyright publishes a file's parse-level diagnostics first, its checked ones later).
  -- With no change synced yet (the first look, servers starting), only the pass.
  local function republished(bufnr)
    if after_sync ~= true then return true end
    for _, client in ipairs(pushing(bufnr)) do
      local at, since = (published_order[bufnr] or {})[client.id], proof(client)
      -- Each server's own publish for the buffer's current text (another server's, a
      -- pull's, is no evidence of this one's analysis).
      local current = (published_tick[bufnr] or {})[client.id] == vim.b[bufnr].changedtick
      if
        not current
        or (proving and not (since and ((at and at > since) or passed(client, since))))
        or busy(client.id, settle_ms)
        or now_ms() - (published_any[client.id] or 0) < PASS_MS
      then
        return false
      end
    end
    return true
  end
  local function analysed(bufnr)
    local seen = diagnosed[bufnr]
    return seen ~= nil
      and vim.api.nvim_buf_is_valid(bufnr)
      and seen.tick == vim.b[bufnr].changedtick
      and now_ms() - seen.at >= settle_ms
      and republished(bufnr)
  end
  -- Only a file whose diagnostics are empty (the case such servers skip), and only while
  -- none of its servers reports work in progress.
  -- After a change, also only for servers seen to skip unchanged diagnostics, once each
  -- had read the change and has been silent for `quiet_ms` since (and since its last
  -- publish): typescript-language-server publishes nothing after a rename that leaves
  -- every file clean.
  local function quiet(bufnr)
    local seen = diagnosed[bufnr]
    if seen == nil or now_ms() - math.max(start, seen.at) < quiet_ms then return false end
    if #diagnostic_items(bufnr, excluded) > 0 then return false end
    for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
      if busy(client.id, settle_ms) then return false end
      local since = proof(client)
      local silent = math.max(proven_at[client.id] or 0, published_any[client.id] or 0)
      if
        proving
        and not pulled[client.id]
        and (republishes[client.id] or not (since and now_ms() - silent >= quiet_ms))
      then
        return false
      end
    end
    return true
  end
  local timer = assert(vim.uv.new_timer())
  local done = false
  timer:start(
    0,
    25,
    vim.schedule_wrap(function()
      if done then return end
      local all = true
      for _, bufnr in ipairs(bufnrs) do
        if not (analysed(bufnr) or quiet(bufnr)) then all = false end
      end
      if not all and now_ms() < deadline then return end
      done = true
      timer:stop()
      timer:close()
      local out = {}
      for _, bufnr in ipairs(bufnrs) do
        local ok = analysed(bufnr)
        out[#out + 1] = {
          bufnr = bufnr,
          analysed = ok,
          quiet = not ok and quiet(bufnr),
          items = diagnostic_items(bufnr, excluded),
        }
      end
      reply(token, out)
    end)
  )
end

--- Where the human is: file, cursor (0-based line, byte column) and the visual selection.
function M.cursor()
  local bufnr = vim.api.nvim_get_current_buf()
  local pos = vim.api.nvim_win_get_cursor(0)
  return {
    path = vim.api.nvim_buf_get_name(bufnr),
    bufnr = bufnr,
    line = pos[1] - 1,
    col = pos[2],
    text = vim.api.nvim_get_current_line(),
  }
end

local VISUAL = { v = 'charwise', V = 'linewise', ['\22'] = 'blockwise' }

--- What the human is looking at: `cursor()` plus the visible lines, unsaved state and the
--- visual selection (the active one, else the last one in this buffer). Only reads state.
function M.editor()
  local state = M.cursor()
  state.modified = vim.bo[state.bufnr].modified
  state.filetype = vim.bo[state.bufnr].filetype
  state.buftype = vim.bo[state.bufnr].buftype
  state.top, state.bottom = vim.fn.line('w0') - 1, vim.fn.line('w$') - 1
  local kind = vim.api.nvim_get_mode().mode:sub(1, 1)
  local active = VISUAL[kind] ~= nil
  local first, last
  if active then
    first, last = vim.fn.getpos('v'), vim.fn.getpos('.')
  else
    kind = vim.fn.visualmode()
    first, last = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  end
  if VISUAL[kind] and first[2] > 0 and last[2] > 0 then
    if last[2] < first[2] or (last[2] == first[2] and last[3] < first[3]) then
      first, last = last, first
    end
    local ok, text = pcall(vim.fn.getregion, first, last, { type = kind })
    state.selection = {
      active = active,
      type = VISUAL[kind],
      start_line = first[2] - 1,
      start_col = first[3] - 1, -- 0-based line, byte column
      end_line = last[2] - 1,
      end_col = last[3] - 1,
      text = ok and text or {},
    }
  end
  return state
end

--- A buffer's indent settings, for the `FormattingOptions` the bridge computes
--- (lsap_bridge/indentation.py): 'shiftwidth', 'tabstop', 'expandtab', and whether an
--- `.editorconfig` set the indent (Neovim's own support fills `b:editorconfig`).
function M.indent_settings(bufnr)
  local config = vim.b[bufnr].editorconfig
  return {
    shiftwidth = vim.bo[bufnr].shiftwidth,
    tabstop = vim.bo[bufnr].tabstop,
    expandtab = vim.bo[bufnr].expandtab,
    editorconfig = type(config) == 'table' and (config.indent_style ~= nil or config.indent_size ~= nil),
  }
end

--- Commands a server runs through `workspace/executeCommand` (its executeCommandProvider).
function M.server_commands(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local provider = client and client.server_capabilities.executeCommandProvider
  return type(provider) == 'table' and provider.commands or {}
end

--- A server's configuration file changed on disk (`changes`: FileEvents of it): every
--- server hears of the file, and is told to read its configuration again (it asks for
--- its settings with `workspace/configuration`, and reads its files). Returns their names.
function M.reconfigure(changes)
  local names = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    if not client:is_stopped() then
      client:notify('workspace/didChangeWatchedFiles', { changes = changes })
      client:notify('workspace/didChangeConfiguration', { settings = client.settings or vim.empty_dict() })
      names[#names + 1] = client.name
    end
  end
  synced_at = next_order()
  return names
end

--- The bridge changed buffers or files itself (`edits.apply`): as after a `sync` with
--- changes, a wait for diagnostics `after_sync` takes only what servers published after
--- they read it (see `when_diagnosed`); rename and code actions wait as `check` does.
function M.changed() synced_at = next_order() end

--- Tell every server about files created, changed or deleted behind its back
--- (`workspace/didChangeWatchedFiles`): Neovim watches files only where a watcher backend
--- exists, so a module the bridge creates would otherwise stay unknown (unresolved imports).
--- changes: { {uri=, type=1 (created) | 2 (changed) | 3 (deleted)}, ... }
function M.files_changed(changes)
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:notify('workspace/didChangeWatchedFiles', { changes = changes })
  end
end

return M
