-- The disk and the buffers: a buffer brought up to date with its file before the service
-- reads it (`fresh`, `sync`, `read`), hidden buffers opened for the servers (`open`), and
-- the servers told of files changed behind their back (`files_changed`, `reconfigure`).
local M = {}

local channel = require('lsap.transport.channel')
local compat = require('lsap.compat')
local filetext = require('lsap.transport.filetext')
local seen = require('lsap.transport.seen')
local stamp_of, same, racy = filetext.stamp, filetext.same, filetext.racy
local file_text, holds, lines_of = filetext.file_text, filetext.holds, filetext.lines_of

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

--- Remember a buffer's file as Neovim has just read or written it.
local function remember(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local stamp = name ~= '' and stamp_of(name) or nil
  on_disk[bufnr] = { stamp = stamp, racy = stamp ~= nil and racy(stamp) }
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

--- Whether the human (not lsap.transport.merge) has autocommands for `event`.
function M.human_handlers(event)
  for _, au in ipairs(vim.api.nvim_get_autocmds({ event = event })) do
    if au.group_name ~= 'lsap.merge' then return true end
  end
  return false
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
    if not M.human_handlers('FileChangedShell') then checktime(bufnr, false, true) end
  else
    checktime(bufnr, true, false)
  end
end

--- Neovim takes a buffer's file as it is now, without a reload or a warning later: the
--- bridge wrote there the edit this buffer, with the human's unsaved changes, took too
--- (`lsap.edits`; `was`: the file's bytes right before). With handlers of the human's for
--- FileChangedShell, Neovim asks later; the merge's takes it as the buffer's base.
function M.took(bufnr, was)
  if M.unsaved_written then M.unsaved_written(bufnr, was) end
  if vim.fn.exists('#FileChangedShell') == 0 then checktime(bufnr, false, true) end
end

--- A hidden buffer the bridge loaded, not since shown or listed by the human.
local function bridge_buffer(bufnr)
  return opened[bufnr] and not vim.bo[bufnr].buflisted and #vim.fn.win_findbuf(bufnr) == 0
end

local function close(bufnr)
  if bridge_buffer(bufnr) then pcall(vim.api.nvim_buf_delete, bufnr, {}) end
end
M.bridge_buffer = bridge_buffer

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
    if now and M.unsaved_changed then M.unsaved_changed(bufnr) end -- merged, later (lsap.transport.merge)
    return now and 'changed' or 'deleted'
  end
  if now == nil then
    close(bufnr)
    return 'gone'
  end
  if now.size > channel.max_file_size then
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

-- Every server told of files changed on disk, and the sync counted (`seen.synced`); the
-- proof that a server read it is asked for by the caller once all of it was sent.
local function tell(changes)
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:notify('workspace/didChangeWatchedFiles', { changes = changes })
  end
  seen.synced()
end

--- Before a request whose answer spans the workspace: tell the servers what changed on disk
--- (`changes`, see `files_changed`), then bring every loaded buffer up to date. Returns
--- the names of the loaded file buffers (the service skips the next call while nothing
--- changed on disk and all of them are in the trees it watches).
function M.sync(changes)
  if #changes > 0 then tell(changes) end
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
  -- Asked once the buffers are reloaded: the proof request goes out behind their didChange.
  if #changes > 0 then seen.ask_proof() end
  return names
end

-- For lsap.transport.merge, which merges a file changed under unsaved text: set there.
M.remember = remember
M.unsaved_changed = nil ---@type fun(bufnr: integer)?
M.unsaved_written = nil ---@type fun(bufnr: integer, was: string?)?

--- Start watching (the service registered): what Neovim reads and writes, and unloads.
function M.watch(group)
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
    -- Unsaved changes: what is on disk now is taken as what they were made on. The
    -- others are left to Neovim's own timestamps at the first `fresh`.
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified then remember(bufnr) end
  end
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
  seen.synced(true)
  return names
end

--- Tell every server about files created, changed or deleted behind its back
--- (`workspace/didChangeWatchedFiles`): Neovim watches files only where a watcher backend
--- exists, so a module the bridge creates would otherwise stay unknown (unresolved imports).
--- changes: { {uri=, type=1 (created) | 2 (changed) | 3 (deleted)}, ... }
--- From here diagnostics `after_sync` count only what servers published after this (the
--- service's sync, and an edit's files written without a buffer).
function M.files_changed(changes)
  tell(changes)
  seen.ask_proof()
end

return M
