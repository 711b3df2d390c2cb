-- Switch files and buffers to a planned workspace edit, in one main-loop call.
--
-- The Python side (lsap_bridge/edits.py) has checked the edit, written each file's new
-- content beside it and recorded all of it in a journal (lsap_bridge/journal.py). Here,
-- with nothing else running in between, every target is checked once more (a buffer's
-- changedtick, the file's stamp and real directory); then buffers with the human's unsaved
-- changes get their edits as ONE undo step each (0-based lines and byte columns) and stay
-- unsaved, their files left alone; then the new files are renamed into place; then each
-- other loaded buffer re-reads its file, which is its one undo step. Files are never
-- written with `:write`: a buffer never goes over a file that changed under it. Any failure
-- puts every buffer back; the Python side then rolls the files back from the journal.
local M = {}

--- Where edit journals live (the service reads this too, and `:checkhealth lsap`).
function M.journal_dir() return vim.fs.joinpath(vim.fn.stdpath('state'), 'lsap', 'journal') end

--- Close the current undo block of a buffer, so that an edit is its own undo step and
--- neither joins the human's earlier typing nor the human's next change.
local function break_undo(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    if vim.bo.undolevels == -123456 then
      vim.o.undolevels = vim.o.undolevels
    else
      vim.bo.undolevels = vim.bo.undolevels
    end
  end)
end

--- Re-read an unmodified buffer from its file, which now holds new text: the reload is
--- the buffer's one undo step ('undoreload' saves it whatever the size), the buffer ends
--- unmodified and in step with the file (no "file changed" prompt later), and no window
--- showing it moves its cursor or view. No autocommands run: nothing of the human's, the
--- filetype stays. `rename_to`: its file was renamed to that path.
local function reload(bufnr, rename_to)
  local saved, old = vim.o.undoreload, vim.api.nvim_buf_get_name(bufnr)
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  end
  vim.o.undoreload = -1
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    if rename_to then vim.cmd('noautocmd keepalt file ' .. vim.fn.fnameescape(rename_to)) end
    vim.cmd('noautocmd keepalt keepjumps edit!')
  end)
  vim.o.undoreload = saved
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_call(win, function() vim.fn.winrestview(view) end) end
  end
  if rename_to then -- `:file` leaves an empty buffer of the old name behind: it names no file now
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if b ~= bufnr and vim.api.nvim_buf_get_name(b) == old and not vim.api.nvim_buf_is_loaded(b) then
        pcall(vim.api.nvim_buf_delete, b, { force = true })
      end
    end
  end
  if not ok then require('lsap').log('warn', ('reloading %s failed: %s'):format(old, err)) end
end

--- Reload the unmodified buffers of files that changed on disk (after a journal was
--- settled at start-up); the reload is their undo step.
function M.reload(paths)
  local find = require('lsap.transport').loaded_buffers()
  for _, path in ipairs(paths) do
    local bufnr = find(path)
    if bufnr and not vim.bo[bufnr].modified then reload(bufnr) end
  end
end

local function same_stamp(stat, stamp)
  return stat ~= nil and stamp ~= nil and stamp ~= vim.NIL and stat.type == 'file'
    and stat.size == stamp.size and stat.mtime.sec == stamp.sec and stat.mtime.nsec == stamp.nsec
    and stat.ino == stamp.ino and stat.dev == stamp.dev
end

local function given(value) return value ~= nil and value ~= vim.NIL end

--- What makes an op unsafe to apply now, or nil.
local function problem(op, bufnr)
  if op.kind ~= 'buffer' then
    if vim.uv.fs_realpath(op.dir) ~= op.dir then
      return ('%s now leads elsewhere (a directory on its path was replaced)'):format(op.path)
    end
    local stat = vim.uv.fs_lstat(op.path)
    if op.kind == 'create' then
      if stat then return op.path .. ' was created by someone else meanwhile' end
    elseif not same_stamp(stat, op.stamp) then
      return op.path .. ' changed on disk while the edit was being applied'
    end
  end
  if given(op.tick) then
    if not bufnr then
      if op.kind == 'buffer' then return 'the buffer of ' .. op.path .. ' was closed meanwhile' end
    elseif vim.b[bufnr].changedtick ~= op.tick then
      return op.path .. ' changed while the edit was prepared'
    end
  elseif bufnr and vim.bo[bufnr].modified then
    return op.path .. ' was opened and changed while the edit was prepared'
  end
end

--- The state to return to: lines and modified flag per buffer.
local function snapshot(state, bufnr)
  if not state.buffers[bufnr] then
    state.buffers[bufnr] = {
      lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
      modified = vim.bo[bufnr].modified,
      tick = vim.b[bufnr].changedtick,
    }
    state.order[#state.order + 1] = bufnr
  end
end

local function restore(state)
  for i = #state.order, 1, -1 do
    local bufnr = state.order[i]
    local saved = state.buffers[bufnr]
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.b[bufnr].changedtick ~= saved.tick then
      pcall(vim.api.nvim_buf_call, bufnr, function() vim.cmd('silent undo') end)
      local now = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
      if not vim.deep_equal(now, saved.lines) then
        vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, saved.lines)
      end
      vim.bo[bufnr].modified = saved.modified
    end
  end
end

--- One file's edits into its buffer, as one undo step.
local function edit_buffer(state, op, bufnr)
  snapshot(state, bufnr)
  break_undo(bufnr)
  for _, step in ipairs(op.steps) do
    -- Positions after the final newline work on an extra empty line; an empty line left at
    -- the end is that final newline (lsap_bridge.edits._splice does the same).
    if step.append then vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '' }) end
    for _, e in ipairs(step.edits) do
      vim.api.nvim_buf_set_text(bufnr, e[1], e[2], e[3], e[4], e[5])
    end
    local count = vim.api.nvim_buf_line_count(bufnr)
    if step.fix_eol and count > 1 and vim.api.nvim_buf_get_lines(bufnr, -2, -1, false)[1] == '' then
      vim.api.nvim_buf_set_lines(bufnr, -2, -1, false, {})
    end
  end
  break_undo(bufnr)
  if not vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), op.lines) then
    error(('the buffer of %s did not take the edit as planned'):format(op.path), 0)
  end
end

local CHANGE = { write = 2, create = 1, remove = 3 }

--- ops: per file, in order: { kind = 'write'|'create'|'remove'|'buffer', path=, dir=,
--- temp=?, stamp=? {size, sec, nsec, ino, dev}, origin=? (renamed from), tick=? (the
--- buffer's changedtick when planned), steps=? {{edits={{sl, sc, el, ec, lines}, …},
--- append=, fix_eol=}, …}, lines=? (the buffer's text after the steps) }.
--- Returns { ok=true }, { ok=false, busy=true|conflict=true, error= } when nothing was
--- changed, or { ok=false, error= } after a failure (buffers put back; the caller rolls the
--- files back).
function M.apply(ops)
  -- Never edit under the human's fingers: a buffer being typed into is left alone.
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  if mode == 'i' or mode == 'R' then
    local current = vim.api.nvim_buf_get_name(0)
    for _, op in ipairs(ops) do
      if op.path == current or op.origin == current then
        return { ok = false, busy = true, error = ('the human is typing in %s'):format(current) }
      end
    end
  end
  local find = require('lsap.transport').loaded_buffers()
  local buffers = {}
  for i, op in ipairs(ops) do
    buffers[i] = find(given(op.origin) and op.origin or op.path)
    local wrong = problem(op, buffers[i])
    if wrong then return { ok = false, conflict = true, error = wrong } end
  end
  local state = { buffers = {}, order = {} }
  local ok, err = pcall(function()
    for i, op in ipairs(ops) do
      if buffers[i] and op.kind == 'buffer' then edit_buffer(state, op, buffers[i]) end
    end
    for _, op in ipairs(ops) do
      local done, why
      if op.kind == 'write' or op.kind == 'create' then
        done, why = vim.uv.fs_rename(op.temp, op.path)
      elseif op.kind == 'remove' then
        done, why = vim.uv.fs_unlink(op.path)
      end
      if op.kind ~= 'buffer' and not done then error(('cannot write %s: %s'):format(op.path, why), 0) end
    end
  end)
  if not ok then
    restore(state)
    return { ok = false, error = tostring(err) }
  end
  local changes = {}
  for i, op in ipairs(ops) do
    local bufnr = buffers[i]
    if bufnr and op.kind ~= 'buffer' and op.kind ~= 'remove' then
      reload(bufnr, given(op.origin) and op.path or nil)
    end
    if CHANGE[op.kind] then changes[#changes + 1] = { uri = vim.uri_from_fname(op.path), type = CHANGE[op.kind] } end
  end
  -- Servers learn of the files no buffer holds (the reloads tell them of the others).
  if #changes > 0 then require('lsap.transport').files_changed(changes) end
  return { ok = true }
end

return M
