-- The inline review (`:Lsap review`, :help lsap-inline-review): an agent's change shown in the
-- buffers themselves, the VS Code / Cursor way. The lines it wrote are highlighted, the lines
-- it removed are virtual lines above where they were, each hunk carries its number and what
-- is left; keys go to the next or previous hunk and keep or undo the hunk under the cursor,
-- all of the file, or the whole change. A decision is the `review` mode's (the service puts
-- an undone hunk back through the safe, journalled edits, beside the human's unsaved text),
-- sent without a report window; the service then sends the hunks left (`show`), each under
-- the number it had. Marks are extmarks in the namespace `lsap.inline`: they move with the
-- text as the human types, and change no text, cursor or view. The keys are buffer-local,
-- mapped only while a buffer has hunks left, and never over a mapping of the human's own.
local M = {}

local config = require('lsap.config')
local ui = require('lsap.ui')

M.NS = vim.api.nvim_create_namespace('lsap.inline')
---@type table? { id, label, who, files = { { path, name, hunks = { { number, line, added, removed, above } } } } }
M.review = nil
local buffers = {} -- bufnr -> { file =, marks = { { number =, id =, lines = } }, keys = { lhs… } }

-- The actions, in the order `g?` lists them: name -> description.
M.ACTIONS = {
  { 'next', 'next hunk (then the next file of the change)' },
  { 'prev', 'previous hunk' },
  { 'keep', 'keep the hunk under the cursor' },
  { 'undo', 'undo the hunk under the cursor (put back as it was)' },
  { 'keep_file', 'keep every hunk of this file' },
  { 'undo_file', 'undo every hunk of this file' },
  { 'keep_all', 'keep the whole change' },
  { 'undo_all', 'undo the whole change' },
  { 'help', 'show these keys' },
}

local function path_of(bufnr) return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p') end

local function file_of(path)
  for index, file in ipairs(M.review and M.review.files or {}) do
    if vim.fn.fnamemodify(file.path, ':p') == path then return file, index end
  end
end

local function pending()
  local count = 0
  for _, file in ipairs(M.review and M.review.files or {}) do
    count = count + #file.hunks
  end
  return count
end

local function given(value) return value ~= nil and value ~= vim.NIL end

--- The row where a hunk's lines start in `lines` now: its recorded line, else the nearest
--- place that holds the lines it wrote (the human's edits above moved them), or, for a hunk
--- that only removed lines, the place below the line that was above it. nil: not found.
local function locate(lines, hunk)
  local added, above = hunk.added, given(hunk.above) and hunk.above or nil
  local function holds(at)
    if at < 0 or at + #added > #lines then return false end
    if #added == 0 then return above == nil and at == 0 or (at > 0 and lines[at] == above) end
    for i, text in ipairs(added) do
      if lines[at + i] ~= text then return false end
    end
    return true
  end
  for distance = 0, #lines do
    if holds(hunk.line + distance) then return hunk.line + distance end
    if holds(hunk.line - distance) then return hunk.line - distance end
  end
end

local function counter(hunk)
  local keys = config.options.review.keys
  return (' hunk %d · %d left · %s keep · %s undo · %s keys '):format(
    hunk.number,
    pending(),
    keys.keep,
    keys.undo,
    keys.help
  )
end

--- One hunk's marks at `row`: its lines highlighted, the removed ones above, the counter.
local function mark(bufnr, row, hunk)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local removed = {}
  for _, text in ipairs(hunk.removed) do
    removed[#removed + 1] = { { text, 'LsapInlineRemoved' } }
  end
  local at_end = row >= count -- removed lines at the end of the file: below the last line
  local opts = {
    virt_text = { { counter(hunk), 'LsapInlineHunk' } },
    virt_text_pos = 'eol',
    virt_lines = #removed > 0 and removed or nil,
    virt_lines_above = not at_end,
    priority = 150,
  }
  row = math.min(row, count - 1)
  if #hunk.added > 0 then
    local last = row + #hunk.added - 1
    opts.end_row, opts.end_col = last, #(vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or '')
    opts.hl_group, opts.hl_eol = 'LsapInlineAdded', true
  end
  return vim.api.nvim_buf_set_extmark(bufnr, M.NS, row, 0, opts)
end

--- A merged disk change's hunk in conflict with the unsaved text (`found`: the merge's
--- conflict in the buffer, lsap.transport.merge): its rows, its number, the merge's keys.
local function mark_conflict(bufnr, found, hunk)
  local keys = config.options.merge.keys
  local text = (' hunk %d · %d left · a conflict with your unsaved text: %s keep mine · %s take theirs · %s both '):format(
    hunk.number,
    pending(),
    keys.mine,
    keys.theirs,
    keys.both
  )
  local last = vim.api.nvim_buf_get_lines(bufnr, found.end_row, found.end_row + 1, false)[1] or ''
  return vim.api.nvim_buf_set_extmark(bufnr, M.NS, found.row, 0, {
    virt_text = { { text, 'LsapMergeConflict' } },
    virt_text_pos = 'eol',
    end_row = found.end_row,
    end_col = #last,
    priority = 150,
  })
end

--- Where the merge shows the conflict a hunk of `file` is in, or nil (decided, or gone).
local function conflict_of(bufnr, file, hunk)
  for _, found in ipairs(require('lsap.transport.merge').conflicts(bufnr)) do
    if found.key == file.merged and found.index == hunk.conflict and found.row then return found end
  end
end

--- One hunk's marks in `bufnr`, or nil where it is not found: { number, id, lines, conflict }.
local function place(bufnr, lines, file, hunk)
  if given(hunk.conflict) then
    local found = conflict_of(bufnr, file, hunk)
    if not found then return nil end
    return { number = hunk.number, id = mark_conflict(bufnr, found, hunk), lines = 1, conflict = true }
  end
  local row = locate(lines, hunk)
  if row then return { number = hunk.number, id = mark(bufnr, row, hunk), lines = #hunk.added } end
end

local unmap

--- Show `file`'s hunks in its buffer (none left: the marks and keys go).
local function render(bufnr, file)
  vim.api.nvim_buf_clear_namespace(bufnr, M.NS, 0, -1)
  if not file or #file.hunks == 0 then return unmap(bufnr) end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local marks = {}
  for _, hunk in ipairs(file.hunks) do
    marks[#marks + 1] = place(bufnr, lines, file, hunk)
  end
  local state = buffers[bufnr] or { keys = {} }
  state.file, state.marks = file, marks
  buffers[bufnr] = state
  M.map(bufnr)
end

-- -- the hunks in a buffer -------------------------------------------------------------

--- The hunks shown in `bufnr`, in the order of their rows: { number, row, end_row, conflict }
--- (0-based rows; conflict: a merge's conflict, decided with the merge's keys).
function M.hunks(bufnr)
  local out = {}
  for _, m in ipairs((buffers[bufnr] or {}).marks or {}) do
    local found = vim.api.nvim_buf_get_extmark_by_id(bufnr, M.NS, m.id, { details = true })
    if found[1] then
      local last = m.lines > 0 and found[3].end_row or found[1]
      out[#out + 1] = { number = m.number, row = found[1], end_row = last, conflict = m.conflict or nil }
    end
  end
  table.sort(out, function(a, b) return a.row < b.row end)
  return out
end

--- The hunk under the cursor of the current window, or nil.
local function under_cursor()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, hunk in ipairs(M.hunks(vim.api.nvim_get_current_buf())) do
    if row >= hunk.row and row <= hunk.end_row then return hunk end
  end
end

--- The first (or, `last`, the last) hunk of the file after (before) the current one, opened.
local function other_file(step)
  local _, index = file_of(path_of(0))
  local files = M.review and M.review.files or {}
  local count = #files
  for offset = 1, count do
    local file = files[((index or 0) - 1 + step * offset) % count + 1]
    if #file.hunks > 0 and (offset < count or index == nil) then
      vim.cmd("normal! m'")
      vim.cmd.edit(vim.fn.fnameescape(file.path))
      local hunks = M.hunks(vim.api.nvim_get_current_buf())
      local target = hunks[step > 0 and 1 or #hunks]
      if target then vim.api.nvim_win_set_cursor(0, { target.row + 1, 0 }) end
      return
    end
  end
  ui.notify('no other hunk in this change', 'info')
end

--- Go to the next (1) or previous (-1) hunk: in this buffer, else in the next file.
function M.go(step)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local hunks = M.hunks(vim.api.nvim_get_current_buf())
  local from, to = step > 0 and 1 or #hunks, step > 0 and #hunks or 1
  for i = from, to, step do
    if (step > 0 and hunks[i].row > row) or (step < 0 and hunks[i].row < row) then
      vim.cmd("normal! m'")
      return vim.api.nvim_win_set_cursor(0, { hunks[i].row + 1, 0 })
    end
  end
  other_file(step)
end

--- Decide: `scope` 'hunk' (the one under the cursor), 'file' or 'all'; `decision` 'accept'
--- (keep) or 'reject' (undo). The service answers with the hunks left (`show`).
function M.decide(scope, decision)
  if not M.review then return ui.notify('no review in progress: :Lsap review', 'warn') end
  local options = { decision = decision }
  if scope ~= 'all' then
    local state = buffers[vim.api.nvim_get_current_buf()]
    if not state then return ui.notify('this buffer has no hunk of the change', 'warn') end
    options.file_path = state.file.name
    if scope == 'hunk' then
      local hunk = under_cursor()
      if not hunk then return ui.notify(('no hunk under the cursor (%s: the next)'):format(M.key('next')), 'warn') end
      if hunk.conflict then
        local keys = config.options.merge.keys
        return ui.notify(
          ('hunk %d is a conflict with your unsaved text: %s keep mine · %s take theirs · %s both'):format(
            hunk.number,
            keys.mine,
            keys.theirs,
            keys.both
          ),
          'warn'
        )
      end
      options.hunk = hunk.number
    end
  end
  require('lsap.service').run('review', { anchor = M.review.id, options = options, quiet = true })
end

-- -- keys ----------------------------------------------------------------------------

local RUN = {
  next = function() M.go(1) end,
  prev = function() M.go(-1) end,
  keep = function() M.decide('hunk', 'accept') end,
  undo = function() M.decide('hunk', 'reject') end,
  keep_file = function() M.decide('file', 'accept') end,
  undo_file = function() M.decide('file', 'reject') end,
  keep_all = function() M.decide('all', 'accept') end,
  undo_all = function() M.decide('all', 'reject') end,
  help = function() M.help() end,
}

function M.key(name) return config.options.review.keys[name] end

--- Whether `lhs` is mapped in `bufnr` by someone else (the human): then it stays theirs.
local function taken(bufnr, lhs)
  if config.options.review.override then return false end
  local found = vim.api.nvim_buf_call(bufnr, function() return vim.fn.maparg(lhs, 'n', false, true) end)
  return next(found) ~= nil and not vim.startswith(found.desc or '', 'lsap review: ')
end

--- Map the review's keys in `bufnr` (each once; a key the human mapped is left alone).
function M.map(bufnr)
  local state = buffers[bufnr]
  for _, action in ipairs(M.ACTIONS) do
    local lhs = M.key(action[1])
    if lhs and lhs ~= '' and not state.keys[lhs] and not taken(bufnr, lhs) then
      vim.keymap.set('n', lhs, RUN[action[1]], { buffer = bufnr, nowait = true, desc = 'lsap review: ' .. action[2] })
      state.keys[lhs] = true
    end
  end
end

unmap = function(bufnr)
  local state = buffers[bufnr]
  buffers[bufnr] = nil
  for lhs in pairs(state and state.keys or {}) do
    pcall(vim.keymap.del, 'n', lhs, { buffer = bufnr })
  end
end

function M.help()
  local state = buffers[vim.api.nvim_get_current_buf()] or { keys = {} }
  local title = M.review and ('lsap review %s: %s\n'):format(M.review.id, M.review.label) or 'lsap review\n'
  local chunks = { { title, 'LsapHeader' } }
  for _, action in ipairs(M.ACTIONS) do
    local lhs = M.key(action[1]) or ''
    chunks[#chunks + 1] = { ('%-12s'):format(lhs), 'Special' }
    chunks[#chunks + 1] = { ' ' .. action[2] .. (state.keys[lhs] and '' or ' (not mapped: the key is yours)') .. '\n' }
  end
  vim.api.nvim_echo(chunks, true, {})
end

-- -- the review ------------------------------------------------------------------------

--- The service's hunks left of a change (lsap.rpc `review_inline`): shown in every loaded
--- buffer of its files, and in those opened later; a buffer with none left is cleared.
--- `start`: the human asked for this review; else (an agent's decision, an undo) it only
--- brings the review in progress of the same change up to date.
function M.show(review, start)
  if not start and (not M.review or M.review.id ~= review.id) then return end
  M.review = review
  for bufnr in pairs(buffers) do
    if not vim.api.nvim_buf_is_valid(bufnr) then
      buffers[bufnr] = nil
    elseif not file_of(path_of(bufnr)) then
      render(bufnr, nil)
    end
  end
  for _, file in ipairs(review.files) do
    local bufnr = vim.fn.bufnr(file.path)
    if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then render(bufnr, file) end
  end
  if pending() == 0 then
    M.review = nil
    ui.notify(('change %s: every hunk decided'):format(review.id), 'info')
  end
  vim.api.nvim_create_autocmd('BufWinEnter', {
    group = vim.api.nvim_create_augroup('lsap.inline', { clear = true }),
    callback = function(ev)
      local file = M.review and file_of(path_of(ev.buf))
      if file and not buffers[ev.buf] then render(ev.buf, file) end
    end,
  })
end

return M
