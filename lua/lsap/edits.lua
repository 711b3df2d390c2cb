-- Apply a planned workspace edit to buffers and files, all or nothing.
--
-- The Python side (lsap_bridge/edits.py) has already checked the edit and turned every
-- position into 0-based lines and byte columns. Here each file's edits become one undo
-- step in its buffer (hidden buffers are loaded for unloaded files; no window or cursor
-- changes), and each buffer is written unless the human had unsaved changes in it. If
-- any step fails, every buffer and file touched so far is put back as it was.
local M = {}

local function open(path) return require('lsap.transport').open(path) end

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

--- Write a buffer to its file. `:write!` because the edit was computed against the
--- buffer (the buffer is the truth), and so that no "file changed" prompt can block.
local function write(bufnr)
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function() vim.cmd('silent keepalt lockmarks write!') end)
  if not ok then
    local message = tostring(err)
    error(('cannot write %s: %s'):format(vim.api.nvim_buf_get_name(bufnr),
      message:match('(E%d+:[^\n]*)') or vim.split(message, '\n')[1]), 0)
  end
end

local function read_blob(path)
  if vim.uv.fs_stat(path) then return vim.fn.readblob(path) end
  return nil
end

--- The state to return to: lines and modified flag per buffer, bytes per file.
local function snapshot(state, bufnr, path)
  if not state.buffers[bufnr] then
    state.buffers[bufnr] = {
      lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
      modified = vim.bo[bufnr].modified,
      tick = vim.b[bufnr].changedtick,
    }
    state.order[#state.order + 1] = bufnr
  end
  if path and state.disk[path] == nil then state.disk[path] = read_blob(path) or false end
end

local function rollback(state)
  local problems = {}
  for i = #state.undo, 1, -1 do
    local ok, err = pcall(state.undo[i])
    if not ok then problems[#problems + 1] = tostring(err) end
  end
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
  for path, blob in pairs(state.disk) do
    if state.written[path] then
      local ok, err
      if blob == false then
        ok, err = pcall(vim.uv.fs_unlink, path)
      else
        local bufnr = vim.fn.bufnr(path)
        if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then
          ok, err = pcall(write, bufnr) -- the buffer holds the old text again
        end
        if not ok then ok, err = pcall(vim.fn.writefile, blob, path) end
      end
      if not ok then problems[#problems + 1] = path .. ': ' .. tostring(err) end
    end
  end
  return problems
end

local function apply_text(state, op)
  local bufnr = open(op.path)
  if op.tick ~= nil and op.tick ~= vim.NIL and vim.b[bufnr].changedtick ~= op.tick then
    error(('%s changed while the edit was prepared'):format(op.path), 0)
  end
  snapshot(state, bufnr, op.path)
  if not state.started[bufnr] then
    state.started[bufnr] = true
    break_undo(bufnr)
  end
  -- Positions after the final newline work on an extra empty line; an empty line left at
  -- the end is that final newline (lsap_bridge.edits._splice does the same).
  if op.append then vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '' }) end
  for _, e in ipairs(op.edits) do
    vim.api.nvim_buf_set_text(bufnr, e[1], e[2], e[3], e[4], e[5])
  end
  local count = vim.api.nvim_buf_line_count(bufnr)
  if op.fix_eol and count > 1 and vim.api.nvim_buf_get_lines(bufnr, -2, -1, false)[1] == '' then
    vim.api.nvim_buf_set_lines(bufnr, -2, -1, false, {})
  end
  if not state.touched[op.path] then
    state.touched[op.path] = bufnr
    state.touched_order[#state.touched_order + 1] = op.path
  end
end

local function apply_create(state, op)
  if state.disk[op.path] == nil then state.disk[op.path] = read_blob(op.path) or false end
  vim.fn.mkdir(vim.fs.dirname(op.path), 'p')
  state.written[op.path] = true
  if vim.fn.writefile({}, op.path) ~= 0 then error('cannot create ' .. op.path, 0) end
end

local function apply_rename(state, op)
  local ok, err = vim.uv.fs_rename(op.old, op.path)
  if not ok then error(('cannot rename %s: %s'):format(op.old, err), 0) end
  local bufnr = vim.fn.bufnr(op.old)
  if bufnr > 0 then vim.api.nvim_buf_set_name(bufnr, op.path) end
  state.undo[#state.undo + 1] = function()
    assert(vim.uv.fs_rename(op.path, op.old))
    if bufnr > 0 then vim.api.nvim_buf_set_name(bufnr, op.old) end
  end
end

--- ops: { {kind='edit', path=, tick=?, edits={{sl, sc, el, ec, lines}, …}} |
---        {kind='create', path=} | {kind='rename', old=, path=} }, in order.
--- Returns { ok=true, files={[path]={saved=bool}} }, { ok=false, error=, rollback={…} } after
--- a failure, or { ok=false, busy=true, error= } when nothing was tried (Insert mode).
function M.apply(ops)
  -- Never edit under the human's fingers: a buffer being typed into is left alone.
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  if mode == 'i' or mode == 'R' then
    local current = vim.api.nvim_buf_get_name(0)
    for _, op in ipairs(ops) do
      if op.path == current or op.old == current then
        return { ok = false, busy = true, error = ('the human is typing in %s'):format(current) }
      end
    end
  end
  local state = {
    buffers = {}, order = {}, disk = {}, written = {}, touched = {}, touched_order = {}, started = {}, undo = {},
  }
  local ok, err = pcall(function()
    for _, op in ipairs(ops) do
      if op.kind == 'edit' then
        apply_text(state, op)
      elseif op.kind == 'create' then
        apply_create(state, op)
      elseif op.kind == 'rename' then
        apply_rename(state, op)
      end
    end
    for _, path in ipairs(state.touched_order) do
      local bufnr = state.touched[path]
      break_undo(bufnr)
      if not state.buffers[bufnr].modified then
        write(bufnr)
        state.written[path] = true
      end
    end
  end)
  if not ok then
    return { ok = false, error = tostring(err), rollback = rollback(state) }
  end
  local files = {}
  for path, bufnr in pairs(state.touched) do
    files[path] = { saved = not vim.bo[bufnr].modified }
  end
  return { ok = true, files = files }
end

return M
