-- A file changed on disk under the human's unsaved buffer (an agent's own tool, a hook, a
-- formatter) is merged, not fought over (:help lsap-merge). Three versions: the text the
-- buffer was read from (the base: kept when Neovim reads or writes the file, and after each
-- merge), the buffer, the disk. The disk's changes that touch none of the human's go into
-- the buffer as one undo step, highlighted until the buffer is written; where both changed
-- the same lines the buffer keeps the human's and the disk's are shown below them, a
-- conflict decided with keys (keep mine, take theirs, both). With no conflict left, Neovim
-- takes the file's time as read (lsap.compat.take_file_time), so `:w` writes both sides
-- without "changed since reading it"; with one, `:w` still warns.
-- When: Neovim's own check (FileChangedShell, 'conflict': focus, :checktime, entering the
-- buffer), the bridge's look at the buffer (lsap.transport.disk `fresh`, every read and
-- sync), and before the buffer is written (BufWritePre). Never while the human types in it.
-- Each merge that brought something is told to the service (`M.report`, set by setup()):
-- a change set, reviewed inline like an agent's (the `merge` mode), whose conflicts are
-- decided here; it hears of each decision, and of conflicts nobody decided (reloaded, closed).
local M = {}

local compat = require('lsap.compat')
local config = require('lsap.config')
local diff3 = require('lsap.diff3')
local disk = require('lsap.transport.disk')
local filetext = require('lsap.transport.filetext')
local logfile = require('lsap.logfile')
local ui = require('lsap.ui')

M.NS = vim.api.nvim_create_namespace('lsap.merge')
local bases = {} ---@type table<integer, string[]> the text each buffer was read from
-- Buffers with conflicts left: { key = the merge's, theirs = the disk's lines,
-- marks = { { id, conflict, index } }, keys }
local open = {} ---@type table<integer, table>
M.report = nil ---@type fun(options: table)? the service hears of a merge (lsap.setup())
local merges = 0
local marked = {} ---@type table<integer, integer[]> the marks of the disk's lines merged in
local queued = {} ---@type table<integer, true> merges scheduled
local waiting = {} ---@type table<integer, true> merges waiting for the human to leave Insert mode

local function file_buffer(bufnr)
  return vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

--- The file's text as lines of this buffer, or nil (gone, another encoding, 'ff' mac).
local function disk_lines(bufnr)
  local data = filetext.file_text(bufnr, vim.api.nvim_buf_get_name(bufnr))
  return data and filetext.lines_of(bufnr, data) or nil
end

-- -- marks -------------------------------------------------------------------------------

local function lines_of(list, group, prefix)
  return vim.tbl_map(function(text) return { { (prefix or '') .. text, group } } end, list)
end

--- The disk's change applied at `at`: its lines highlighted, the ones it replaced above.
local function mark_taken(bufnr, take)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local row = math.min(take.at, count - 1)
  local opts = {
    virt_text = { { ' from disk (merged) ', 'LsapInlineHunk' } },
    virt_lines = #take.old > 0 and lines_of(take.old, 'LsapInlineRemoved') or nil,
    virt_lines_above = take.at < count,
  }
  if #take.new > 0 then
    local last = take.at + #take.new - 1
    opts.end_row, opts.end_col = last, #(vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or '')
    opts.hl_group, opts.hl_eol = 'LsapInlineAdded', true
  end
  marked[bufnr] = marked[bufnr] or {}
  table.insert(marked[bufnr], vim.api.nvim_buf_set_extmark(bufnr, M.NS, row, 0, opts))
end

--- A conflict at `row`: the human's lines highlighted, the disk's below them, the keys.
local function mark_conflict(bufnr, conflict)
  local keys = config.options.merge.keys
  local count = vim.api.nvim_buf_line_count(bufnr)
  local last = math.min(conflict.row + math.max(#conflict.mine, 1) - 1, count - 1)
  local theirs = #conflict.theirs > 0 and conflict.theirs or { '(the disk removed these lines)' }
  local opts = {
    virt_text = {
      {
        (' conflict with the disk · %s keep mine · %s take theirs · %s both '):format(
          keys.mine,
          keys.theirs,
          keys.both
        ),
        'LsapMergeConflict',
      },
    },
    virt_lines = lines_of(theirs, 'LsapInlineRemoved', 'disk │ '),
    end_row = last,
    end_col = #(vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or ''),
    hl_group = #conflict.mine > 0 and 'LsapMergeConflict' or nil,
    hl_eol = true,
  }
  if #conflict.mine == 0 and conflict.row >= count then
    opts.end_row, opts.end_col = nil, nil
  end
  return vim.api.nvim_buf_set_extmark(bufnr, M.NS, math.min(conflict.row, count - 1), 0, opts)
end

-- -- keys --------------------------------------------------------------------------------

local decide

local function map(bufnr, state)
  for _, choice in ipairs({ 'mine', 'theirs', 'both' }) do
    local lhs = config.options.merge.keys[choice]
    local found = vim.api.nvim_buf_call(bufnr, function() return vim.fn.maparg(lhs, 'n', false, true) end)
    if lhs ~= '' and (next(found) == nil or vim.startswith(found.desc or '', 'lsap merge: ')) then
      vim.keymap.set('n', lhs, function() decide(choice) end, { buffer = bufnr, desc = 'lsap merge: ' .. choice })
      state.keys[#state.keys + 1] = lhs
    end
  end
end

local function unmap(bufnr)
  for _, lhs in ipairs(open[bufnr] and open[bufnr].keys or {}) do
    pcall(vim.keymap.del, 'n', lhs, { buffer = bufnr })
  end
  open[bufnr] = nil
end

local function tell_service(options)
  if not M.report then return end
  local ok, why = pcall(M.report, options)
  if not ok then logfile.write('warn', 'telling the service of a merge failed: ' .. tostring(why)) end
end

--- The conflicts left of a buffer's merge are decided (the buffer written over them) or
--- released (reloaded, closed: nobody decided them): the service hears, they go.
local function settle_conflicts(bufnr, event)
  local state = open[bufnr]
  if not state then return end
  unmap(bufnr)
  local left = vim.tbl_map(function(m) return m.index end, state.marks)
  if #left > 0 then tell_service({ event = event, key = state.key, conflicts = left }) end
end

--- The buffer was just read from or written to its file (`event`: 'read', 'write'): that is
--- its base now (not after a write elsewhere, `:w other`, which leaves it modified).
local function based(bufnr, event)
  if not file_buffer(bufnr) or vim.bo[bufnr].modified then return end
  bases[bufnr], marked[bufnr] = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), nil
  vim.api.nvim_buf_clear_namespace(bufnr, M.NS, 0, -1)
  settle_conflicts(bufnr, event == 'write' and 'decided' or 'released')
end

local function forget(bufnr)
  settle_conflicts(bufnr, 'released')
  bases[bufnr], open[bufnr], queued[bufnr], waiting[bufnr], marked[bufnr] = nil, nil, nil, nil, nil
end

-- -- the merge ---------------------------------------------------------------------------

--- Settled with the disk's `theirs`: the new base, and Neovim and lsap take the file as read.
local function settle(bufnr, theirs)
  bases[bufnr] = theirs
  compat.take_file_time(bufnr)
  disk.remember(bufnr)
end

local function typing_in(bufnr)
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  return (mode == 'i' or mode == 'R') and vim.api.nvim_get_current_buf() == bufnr
end

--- Apply the disk's changes that do not overlap the human's, as one undo step, bottom up.
local function take(bufnr, taken)
  disk.break_undo(bufnr)
  for i = #taken, 1, -1 do
    local t = taken[i]
    vim.api.nvim_buf_set_lines(bufnr, t.row, t.row + #t.old, false, t.new)
  end
  disk.break_undo(bufnr)
  for _, t in ipairs(taken) do
    mark_taken(bufnr, t)
  end
end

--- The conflicts of the merge `key` shown, with their keys; those of an earlier merge of the
--- buffer, which this one shows again, go (released).
local function show_conflicts(bufnr, theirs, conflicts, key)
  for _, m in ipairs(open[bufnr] and open[bufnr].marks or {}) do
    pcall(vim.api.nvim_buf_del_extmark, bufnr, M.NS, m.id)
  end
  settle_conflicts(bufnr, 'released')
  if #conflicts == 0 then return end
  local state = { key = key, theirs = theirs, marks = {}, keys = {} }
  for index, c in ipairs(conflicts) do
    state.marks[#state.marks + 1] = { id = mark_conflict(bufnr, c), conflict = c, index = index }
  end
  open[bufnr] = state
  map(bufnr, state)
end

--- The service records a merge that brought the disk's changes, or conflicts, as a change
--- set: the base, the disk's text, the conflicts' rows of the base.
local function record(bufnr, key, base, theirs, result)
  if #result.taken + #result.conflicts == 0 then return end
  tell_service({
    event = 'merged',
    key = key,
    file_path = vim.api.nvim_buf_get_name(bufnr),
    base = base,
    theirs = theirs,
    regions = vim.tbl_map(function(c) return { c.s, c.e } end, result.conflicts),
  })
end

--- Say what a merge did (nothing: the disk made the human's own changes).
local function tell(bufnr, result)
  if #result.taken + #result.conflicts == 0 then return end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~:.')
  local text = ('%s changed on disk: %d change(s) merged into your unsaved text (u undoes them)'):format(
    name,
    #result.taken
  )
  if #result.conflicts > 0 then
    local keys = config.options.merge.keys
    text = text
      .. ('; %d conflict(s) with your edits, yours kept: %s mine, %s theirs, %s both'):format(
        #result.conflicts,
        keys.mine,
        keys.theirs,
        keys.both
      )
  end
  ui.notify(text, #result.conflicts > 0 and 'warn' or 'info')
end

--- Merge the file into its buffer now (see the top of this file). Returns what it did:
--- nil (nothing new to merge, or not now), or { taken = n, conflicts = n }.
function M.merge(bufnr)
  queued[bufnr] = nil
  if not file_buffer(bufnr) or not vim.bo[bufnr].modified or not bases[bufnr] then return end
  if typing_in(bufnr) then
    if not waiting[bufnr] then
      waiting[bufnr] = true
      vim.api.nvim_create_autocmd('InsertLeave', {
        once = true,
        callback = function()
          waiting[bufnr] = nil
          M.later(bufnr)
        end,
      })
    end
    return
  end
  local theirs = disk_lines(bufnr)
  -- Only its time changed, or the conflicts shown are still with this text.
  if
    not theirs
    or vim.deep_equal(theirs, bases[bufnr])
    or (open[bufnr] and vim.deep_equal(theirs, open[bufnr].theirs))
  then
    return
  end
  local mine, base = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), bases[bufnr]
  local result = diff3.merge(base, mine, theirs)
  merges = merges + 1
  local key = ('%d-%d-%d'):format(vim.fn.getpid(), os.time(), merges)
  if #result.taken > 0 then take(bufnr, result.taken) end
  show_conflicts(bufnr, theirs, result.conflicts, key)
  if #result.conflicts == 0 then settle(bufnr, theirs) end
  tell(bufnr, result)
  record(bufnr, key, base, theirs, result)
  return { taken = #result.taken, conflicts = #result.conflicts }
end

--- Merge soon (outside the caller: an autocommand that may not change text, a request).
function M.later(bufnr)
  if queued[bufnr] then return end
  queued[bufnr] = true
  vim.schedule(function()
    if vim.api.nvim_buf_is_valid(bufnr) then M.merge(bufnr) end
  end)
end

--- The first and last row (0-based) a conflict's mark covers now, or nil.
function M.rows(bufnr, id)
  local found = vim.api.nvim_buf_get_extmark_by_id(bufnr, M.NS, id, { details = true })
  if not found[1] then return nil end
  return found[1], found[3].end_row or found[1]
end

--- Decide the conflict under the cursor: 'mine' (keep the buffer's), 'theirs' (the disk's),
--- 'both' (the buffer's, then the disk's). One undo step.
decide = function(choice)
  local bufnr = vim.api.nvim_get_current_buf()
  local state = open[bufnr]
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for i, m in ipairs(state and state.marks or {}) do
    local first, last = M.rows(bufnr, m.id)
    if first and row >= first and row <= last then
      local mine = #m.conflict.mine > 0 and vim.api.nvim_buf_get_lines(bufnr, first, last + 1, false) or {}
      local lines = choice == 'mine' and mine
        or choice == 'theirs' and m.conflict.theirs
        or vim.list_extend(vim.deepcopy(mine), m.conflict.theirs)
      disk.break_undo(bufnr)
      vim.api.nvim_buf_set_lines(bufnr, first, first + #mine, false, lines)
      disk.break_undo(bufnr)
      vim.api.nvim_buf_del_extmark(bufnr, M.NS, m.id)
      table.remove(state.marks, i)
      tell_service({ event = 'decided', key = state.key, conflicts = { m.index } }) -- it leaves the review
      if #state.marks == 0 then
        unmap(bufnr)
        if vim.deep_equal(disk_lines(bufnr), state.theirs) then settle(bufnr, state.theirs) end
      end
      return
    end
  end
  ui.notify('no conflict with the disk under the cursor', 'warn')
end
M.decide = decide

--- The conflicts left in a buffer: { { row, end_row, theirs, key, index } } (0-based rows;
--- the merge's key, the conflict's number in it).
function M.conflicts(bufnr)
  local out = {}
  for _, m in ipairs(open[bufnr] and open[bufnr].marks or {}) do
    local first, last = M.rows(bufnr, m.id)
    out[#out + 1] = { row = first, end_row = last, theirs = m.conflict.theirs, key = open[bufnr].key, index = m.index }
  end
  return out
end

--- The bridge wrote an edit to the file of a buffer with unsaved text, which took the same
--- edit (lsap.edits: `disk.took`; `was`: the file's bytes right before). When the file then
--- held the buffer's base (or the disk's side of its conflicts), it holds that base with the
--- edit now: a merge would find the edit on both sides, and one beside the human's lines a
--- conflict. Else (the disk had changed meanwhile) the next merge brings it in.
function M.written(bufnr, was)
  local before, theirs = was and filetext.lines_of(bufnr, was), disk_lines(bufnr)
  if not before or not theirs then return end
  for _, id in ipairs(marked[bufnr] or {}) do -- the merged lines' marks: undone, or moved
    pcall(vim.api.nvim_buf_del_extmark, bufnr, M.NS, id)
  end
  marked[bufnr] = nil
  if open[bufnr] and vim.deep_equal(open[bufnr].theirs, before) then
    open[bufnr].theirs = theirs
  elseif not open[bufnr] and vim.deep_equal(bases[bufnr], before) then
    settle(bufnr, theirs)
  end
end

--- Start (lsap.setup()): keep the bases, and merge when Neovim or the bridge finds a file
--- changed under unsaved text, and before such a buffer is written. `report`: how the
--- service hears of a merge (`M.report`).
function M.watch(report)
  M.report = report
  local group = vim.api.nvim_create_augroup('lsap.merge', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost', 'FileChangedShellPost' }, {
    group = group,
    callback = function(ev) based(ev.buf, ev.event == 'BufWritePost' and 'write' or 'read') end,
  })
  vim.api.nvim_create_autocmd('BufUnload', { group = group, callback = function(ev) forget(ev.buf) end })
  vim.api.nvim_create_autocmd('BufWritePre', {
    group = group,
    nested = true, -- lsap.compat.take_file_time's write must reach its BufWriteCmd
    callback = function(ev) -- to its own file (not `:w other`)
      local own = vim.fn.fnamemodify(ev.match, ':p') == vim.api.nvim_buf_get_name(ev.buf)
      if own and vim.bo[ev.buf].modified then M.merge(ev.buf) end
    end,
  })
  -- Neovim found the file changed: with unsaved text, merge (nothing of Neovim's: no
  -- warning, no reload); else what Neovim does without a handler ('ask'), unless the buffer
  -- holds the file already (lsap brought it up to date: nothing to say).
  vim.api.nvim_create_autocmd('FileChangedShell', {
    group = group,
    callback = function(ev)
      if vim.v.fcs_reason == 'conflict' and bases[ev.buf] then
        vim.v.fcs_choice = ''
        M.later(ev.buf)
      else
        local data = vim.v.fcs_reason ~= 'deleted' and filetext.file_text(ev.buf, vim.api.nvim_buf_get_name(ev.buf))
        vim.v.fcs_choice = (data and not vim.bo[ev.buf].modified and filetext.holds(ev.buf, data)) and '' or 'ask'
      end
    end,
  })
  disk.unsaved_changed, disk.unsaved_written = M.later, M.written
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if file_buffer(bufnr) and not bases[bufnr] then
      -- Unsaved text already: what is on disk now is taken as what it was made on.
      bases[bufnr] = vim.bo[bufnr].modified and disk_lines(bufnr) or vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    end
  end
end

return M
