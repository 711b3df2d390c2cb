-- Switch files and buffers to a planned workspace edit, in one main-loop call.
--
-- The Python side (lsap_bridge/edits.py) has checked the edit, turned every position into
-- 0-based lines and byte columns, written each file's new content beside it and recorded
-- all of it in a journal (lsap_bridge/journal.py). Here, with nothing else running in
-- between: every target is checked once more (a buffer's changedtick, the file's stamp
-- and real directory); loaded buffers get their edits as ONE undo step each; the journal
-- is marked committed; then the files switch: a buffer that had no unsaved changes is
-- written to its file (so it ends unmodified and in step with it, and its servers saw the
-- edit as a change), a file no buffer holds gets its new content renamed into place, and
-- a buffer with the human's unsaved changes keeps the edits unsaved, its file left alone
-- or (`op.unsaved`: a rename, a move) given the same edit on the disk's text, renamed in.
-- A write goes only over a file whose stamp was checked a moment before, in this call: once
-- at the start, and again right before that file switches (after the commit marker).
-- A failure before any file switched puts every buffer back and changes nothing; one
-- after puts the buffers back and the Python side rolls the files back from the journal.
local M = {}

--- Where edit journals live (the service reads this too, and `:checkhealth lsap`).
function M.journal_dir() return vim.fs.joinpath(vim.fn.stdpath('state'), 'lsap', 'journal') end

local compat = require('lsap.compat')
local disk = require('lsap.transport.disk')
local filetext = require('lsap.transport.filetext')
local seen = require('lsap.transport.seen')
local logfile = require('lsap.logfile')

local break_undo = disk.break_undo

local function first_error(err)
  local message = tostring(err)
  return message:match('(E%d+:[^\n]*)') or vim.split(message, '\n')[1]
end

--- Write a buffer to its file, in place: no backup file beside it (the journal holds the
--- old and new contents), no autocommands (nothing of the human's, such as a formatter,
--- changes what was approved), no waiting for the disk (the service fsyncs the file before
--- it lets the journal go). Only ever over a file just checked to be as planned.
local function write(bufnr, path, name)
  local writebackup, backup, fsync = vim.o.writebackup, vim.o.backup, vim.o.fsync
  local old = vim.api.nvim_buf_get_name(bufnr)
  vim.o.writebackup, vim.o.backup, vim.o.fsync = false, false, false
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    if old ~= path then vim.cmd('noautocmd keepalt file ' .. vim.fn.fnameescape(path)) end -- renamed
    vim.cmd('silent noautocmd keepalt lockmarks write!')
  end)
  vim.o.writebackup, vim.o.backup, vim.o.fsync = writebackup, backup, fsync
  if old ~= path then -- `:file` leaves an empty buffer of the old name, which names no file now
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if b ~= bufnr and vim.api.nvim_buf_get_name(b) == old and not vim.api.nvim_buf_is_loaded(b) then
        pcall(vim.api.nvim_buf_delete, b, { force = true })
      end
    end
  end
  if not ok then error(('cannot write %s: %s'):format(name, first_error(err)), 0) end
end

--- Bring the unmodified buffers of files that changed on disk up to date, as every read
--- does (`fresh` in lsap.transport.disk): for buffers the bridge did not edit itself (loaded after
--- the edit was planned, or whose files a roll-back or a journal settled at start-up put
--- back).
function M.reload(paths)
  local find = disk.loaded_buffers()
  for _, path in ipairs(paths) do
    local bufnr = find(path)
    if bufnr then disk.fresh(bufnr) end
  end
end

local function same_stamp(stat, stamp)
  return stat ~= nil
    and stamp ~= nil
    and stamp ~= vim.NIL
    and stat.type == 'file'
    and stat.size == stamp.size
    and stat.mtime.sec == stamp.sec
    and stat.mtime.nsec == stamp.nsec
    and stat.ino == stamp.ino
    and stat.dev == stamp.dev
    and stat.ctime.sec == stamp.csec
    and stat.ctime.nsec == stamp.cnsec
end

local function given(value) return value ~= nil and value ~= vim.NIL end

--- What makes an op unsafe to apply now, or nil. `held`: the buffer of the file a rename
--- overwrites (`op.overwrites`): unmodified, and the bridge's own if the renamed file's
--- buffer is to take its name.
local function problem(op, bufnr, held)
  if held then
    if vim.bo[held].modified then return op.name .. ' was changed in its buffer while the edit was prepared' end
    if bufnr and not disk.bridge_buffer(held) then
      return ('%s is open in a buffer: close it (:bdelete) and ask again'):format(op.name)
    end
  end
  if op.kind ~= 'buffer' then
    if vim.uv.fs_realpath(op.dir) ~= op.dir then
      return ('%s now leads elsewhere (a directory on its path was replaced)'):format(op.name)
    end
    local stat = vim.uv.fs_lstat(op.path)
    if op.kind == 'create' then
      if stat then return op.name .. ' was created by someone else meanwhile' end
    elseif not same_stamp(stat, op.stamp) then
      return op.name .. ' changed on disk while the edit was being applied'
    end
  end
  if given(op.tick) then
    if not bufnr then
      if op.kind == 'buffer' then return 'the buffer of ' .. op.name .. ' was closed meanwhile' end
    elseif vim.b[bufnr].changedtick ~= op.tick then
      return op.name .. ' changed while the edit was prepared'
    end
  elseif bufnr and vim.bo[bufnr].modified then
    return op.name .. ' was opened and changed while the edit was prepared'
  end
end

--- A file's bytes (nil when it cannot be read).
local function read(path)
  local fd = vim.uv.fs_open(path, 'r', 0)
  if not fd then return nil end
  local stat = vim.uv.fs_fstat(fd)
  local data = stat and vim.uv.fs_read(fd, stat.size, 0) or nil
  vim.uv.fs_close(fd)
  return data
end

--- Whether a file is still as checked at the start of this call, right before it switches:
--- the journal's commit marker was written (and fsynced) in between. A file whose stamp was
--- racy when proven comes with its bytes (`content`), compared here too.
local function still(op)
  if op.kind == 'buffer' then return nil end
  local stat = vim.uv.fs_lstat(op.path)
  if op.kind == 'create' then
    if stat then return op.name .. ' was created by someone else meanwhile' end
  elseif not same_stamp(stat, op.stamp) or (given(op.content) and read(op.path) ~= op.content) then
    return op.name .. ' changed on disk while the edit was being applied'
  end
end

--- The state to return to: lines and modified flag per buffer.
local function snapshot(state, bufnr)
  if not state.buffers[bufnr] then
    state.buffers[bufnr] = {
      lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
      modified = vim.bo[bufnr].modified,
      tick = vim.b[bufnr].changedtick,
      name = vim.api.nvim_buf_get_name(bufnr),
    }
    state.order[#state.order + 1] = bufnr
  end
end

--- Put every buffer edited so far back as it was (its undo step undone).
local function restore(state)
  for i = #state.order, 1, -1 do
    local bufnr = state.order[i]
    local saved = state.buffers[bufnr]
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.b[bufnr].changedtick ~= saved.tick then
      pcall(vim.api.nvim_buf_call, bufnr, function() vim.cmd('silent undo') end)
      local now = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
      if not vim.deep_equal(now, saved.lines) then vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, saved.lines) end
      if vim.api.nvim_buf_get_name(bufnr) ~= saved.name then
        pcall(
          vim.api.nvim_buf_call,
          bufnr,
          function() vim.cmd('noautocmd keepalt file ' .. vim.fn.fnameescape(saved.name)) end
        )
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
    error(('the buffer of %s did not take the edit as planned'):format(op.name), 0)
  end
end

--- Mark the journal committed (from here a crash completes the edit), durably.
local function commit(marker)
  local fd = assert(vim.uv.fs_open(marker, 'w', 384))
  vim.uv.fs_fsync(fd)
  vim.uv.fs_close(fd)
end

local CHANGE = { write = 2, create = 1, remove = 3 }

--- The path of an op the human is typing in now (never edited under their fingers), or nil.
local function typing_in(ops)
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  if mode ~= 'i' and mode ~= 'R' then return nil end
  local current = vim.api.nvim_buf_get_name(0)
  for _, op in ipairs(ops) do
    if op.path == current or op.origin == current then return op.name end
  end
end

--- Switch every op's file (write its buffer, rename its temp file, remove it), raising on the
--- first failure; `out` collects the paths to reread, the FileEvents to send, whether a file
--- raced the switch, and the paths that may have switched.
local function switch(plan, buffers, held, state, out)
  if given(plan.marker) then commit(plan.marker) end
  for i, op in ipairs(plan.ops) do
    local bufnr, done, why = buffers[i], true, nil
    local changed = still(op)
    if changed then
      out.raced = true
      error(changed, 0)
    end
    if op.kind ~= 'buffer' then out.switched[#out.switched + 1] = op.path end -- it may switch from here
    if op.kind == 'buffer' then
      bufnr = nil -- the human's unsaved buffer: its file is left alone
    elseif op.kind == 'remove' then
      done, why = vim.uv.fs_unlink(op.path)
    elseif bufnr and given(op.steps) and op.unsaved ~= true then
      -- The bridge's own buffer of the file overwritten goes: this one takes its name.
      if held[i] then vim.api.nvim_buf_delete(held[i], { force = true }) end
      write(bufnr, op.path, op.name)
      state.written[#state.written + 1] = bufnr
      state.wrote[bufnr] = filetext.stamp(op.path) -- a write after it is someone else's
    else
      -- The human's buffer beside the edit: its file's text right before (lsap.transport.merge).
      local was = op.unsaved == true and bufnr and filetext.file_text(bufnr, op.path) or nil
      done, why = vim.uv.fs_rename(op.temp, op.path)
      -- Loaded after the plan was made, or holding the file overwritten; or the human's,
      -- which keeps its unsaved text and took the edit: Neovim takes the file as it is.
      if op.unsaved == true then
        if bufnr then out.took[#out.took + 1] = { bufnr = bufnr, was = was } end
      elseif bufnr or held[i] then
        out.reread[#out.reread + 1] = op.path
      end
    end
    if not done then error(('cannot write %s: %s'):format(op.name, why), 0) end
    -- What the switch left (false: no file), for the service's record of what the servers
    -- know of the disk (`DiskWatch.told`).
    if op.kind ~= 'buffer' then out.stamps[op.path] = filetext.stamp(op.path) or false end
    if CHANGE[op.kind] and not bufnr then
      out.changes[#out.changes + 1] = { uri = vim.uri_from_fname(op.path), type = CHANGE[op.kind] }
    end
  end
end

--- After a failed switch: the buffers put back, and those written already write their old
--- text back, so they stay in step with their files and their servers see the change
--- undone (the caller restores the rest). A file written since by someone else keeps what
--- they wrote: it leaves `out.switched`, so that the caller leaves it too.
local function roll_back(state, out)
  restore(state)
  for i = #state.written, 1, -1 do
    local bufnr = state.written[i]
    local name = vim.api.nvim_buf_get_name(bufnr)
    if same_stamp(vim.uv.fs_lstat(name), state.wrote[bufnr]) then
      local back, why = pcall(write, bufnr, name, name)
      if not back then logfile.write('warn', 'rolling back: ' .. tostring(why)) end
    else
      out.switched = vim.tbl_filter(function(path) return path ~= name end, out.switched)
      logfile.write('warn', 'rolling back: ' .. name .. ' was written by someone else meanwhile: left as it is')
    end
  end
end

--- plan: { marker = the journal's commit marker (nil: no file changes on disk), ops = per
--- file, in order: { kind = 'write'|'create'|'remove'|'buffer', path=, name= (to show),
--- dir=, temp=?,
--- stamp=? {size, sec, nsec, ino, dev, csec, cnsec}, content=? (the bytes proven, when the
--- stamp was racy), origin=? (renamed from), overwrites=? (a rename onto an existing
--- file: a buffer holding it must be unmodified), tick=? (the buffer's
--- changedtick when planned), steps=? {{edits={{sl, sc, el, ec, lines}, …}, append=,
--- fix_eol=}, …} and lines=? (the buffer's text after them), for a buffer loaded when
--- planned, unsaved=? (that buffer has the human's unsaved changes and keeps them; its
--- file gets `temp`) } }.
--- Returns { ok=true, stamps={[path]=stamp or false} } (each file as the switch left it),
--- { ok=false, busy=true|conflict=true, error= } when nothing was
--- changed, or { ok=false, switched={paths}, conflict=?, error= } after a failure once the
--- files began to switch (the buffers are put back; the caller rolls back the files named,
--- which may have switched); conflict: a file changed on disk right before its switch.
function M.apply(plan)
  local ops = plan.ops
  -- Never edit under the human's fingers: a buffer being typed into is left alone.
  local typed = typing_in(ops)
  if typed then return { ok = false, busy = true, error = ('the human is typing in %s'):format(typed) } end
  local find = disk.loaded_buffers()
  local buffers, held = {}, {}
  for i, op in ipairs(ops) do
    if op.kind ~= 'remove' then buffers[i] = find(given(op.origin) and op.origin or op.path) end
    if op.overwrites == true then held[i] = find(op.path) end
    local wrong = problem(op, buffers[i], held[i])
    if wrong then return { ok = false, conflict = true, error = wrong } end
  end
  local state = { buffers = {}, order = {}, written = {}, wrote = {} }
  local ok, err = pcall(function()
    for i, op in ipairs(ops) do
      if buffers[i] and given(op.steps) then edit_buffer(state, op, buffers[i]) end
    end
  end)
  if not ok then
    restore(state)
    return { ok = false, conflict = true, error = tostring(err) }
  end
  local out = { reread = {}, took = {}, changes = {}, raced = false, switched = {}, stamps = {} }
  ok, err = pcall(switch, plan, buffers, held, state, out)
  if not ok then
    roll_back(state, out)
    return { ok = false, switched = out.switched, conflict = out.raced, error = tostring(err) }
  end
  -- The files are switched: nothing below may fail the edit.
  M.reload(out.reread)
  for _, took in ipairs(out.took) do
    disk.took(took.bufnr, took.was)
  end
  seen.synced() -- an edit written without a buffer is a change the servers must read (`when_diagnosed`)
  -- The buffers written are announced as Neovim announces a write (a moved one under its new
  -- name); the service does not tell the servers of these files again (`stamps`).
  for _, bufnr in ipairs(state.written) do
    local told, why = pcall(compat.announce_write, bufnr)
    if not told then logfile.write('warn', 'announcing a written buffer failed: ' .. tostring(why)) end
  end
  -- Servers learn of the files no buffer holds (they saw the others change).
  if #out.changes > 0 then
    local sent, why = pcall(disk.files_changed, out.changes)
    if not sent then logfile.write('warn', 'telling the servers of changed files failed: ' .. tostring(why)) end
  end
  return { ok = true, stamps = out.stamps }
end

return M
