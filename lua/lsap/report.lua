-- The report window: one reusable scratch buffer `lsap://report` (markdown), and a short
-- history of the reports shown (`:Lsap resume`, `:Lsap history`).
--
-- Every report that shows locations is a list: each row that shows one (a `42| code` line
-- under a `### path` header, an outline's `- 13| method …`, a diagnostic's `- 10:14 …`, a
-- `path:line` anywhere on a row, a changed line of a diff) is a target for <CR>, and the rows
-- of the report's own locations are the entries `]]` / `[[` move between. The service sends
-- the locations with exact columns; the bang forms fill the quickfix list with them.
local M = {}

local rows = require('lsap.rows')
local ui = require('lsap.ui')

M.NAME = 'lsap://report'
M.history_size = 10
---@type table[] newest first: { text, locations, root, title, time, bang }
M.history = {}

local ns = vim.api.nvim_create_namespace('lsap.report')
-- The report in the buffer, with its targets (row -> what the row shows) and entries.
local current = nil ---@type table?

M.keys = {
  { '<CR>', 'jump to the location under the cursor (a code action: run it)', function() M.jump() end },
  { 'p', 'preview it: show the location, stay in the report (code actions: their diffs)', function() M.jump(true) end },
  { ']]', 'next entry', function() M.next_entry(1) end },
  { '[[', 'previous entry', function() M.next_entry(-1) end },
  { 'x', 'in a review: reject the hunk under the cursor', function() M.decide('reject') end },
  { 'a', 'in a review: accept the hunk under the cursor', function() M.decide('accept') end },
  { 'q', 'close the report', function() M.close() end },
  { 'g?', 'show these keys', function() M.help() end },
}

--- Close the report's window; when it is the last one, show the previous buffer instead.
function M.close()
  if vim.fn.winnr('$') > 1 then return vim.cmd('close') end
  local alt = vim.fn.bufnr('#')
  if alt > 0 and alt ~= vim.api.nvim_get_current_buf() then
    vim.cmd('buffer ' .. alt)
  else
    vim.cmd('enew')
  end
end

function M.help()
  local chunks = { { 'lsap report keys\n', 'LsapHeader' } }
  for _, key in ipairs(M.keys) do
    chunks[#chunks + 1] = { ('%-5s'):format(key[1]), 'Special' }
    chunks[#chunks + 1] = { ' ' .. key[2] .. '\n' }
  end
  chunks[#chunks + 1] = { ':Lsap resume, :Lsap history  reopen this or an earlier report\n' }
  vim.api.nvim_echo(chunks, true, {})
end

local function setup(bufnr)
  vim.bo[bufnr].filetype = 'markdown'
  -- Tree-sitter highlights the code fences in their languages where parsers are installed.
  pcall(vim.treesitter.start, bufnr, 'markdown')
  for _, key in ipairs(M.keys) do
    vim.keymap.set('n', key[1], key[3], { buffer = bufnr, nowait = true, desc = 'lsap: ' .. key[2] })
  end
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = bufnr,
    callback = function() ui.view_options(vim.api.nvim_get_current_win()) end,
  })
end

local function buffer() return ui.scratch(M.NAME, setup) end

--- A reader of files' lines: the loaded buffer's text, else the disk's.
local function lines_of()
  local find = require('lsap.transport.disk').loaded_buffers()
  return function(path, line)
    local bufnr = find(path)
    if bufnr then return vim.api.nvim_buf_get_lines(bufnr, line - 1, line, false)[1] or '' end
    local ok, lines = pcall(vim.fn.readfile, path, '', line)
    return ok and lines[line] or ''
  end
end

-- -- showing ---------------------------------------------------------------------------

local function decorate(bufnr, lines)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  for row, text in ipairs(lines) do
    local number = text:match('^(%s*%d+|)')
    local group = (number and 'LsapLineNr')
      or (text:match('^#') and 'LsapHeader')
      or (text:match('^Anchor:') and 'LsapAnchor')
      or (text:match('^> ') and 'LsapWarning')
    if group then
      vim.api.nvim_buf_set_extmark(bufnr, ns, row - 1, 0, {
        end_col = number and #number or #text,
        hl_group = group,
        priority = 200,
      })
    end
  end
end

local function quickfix_items(report)
  local items, line_of = {}, lines_of()
  local targets = {}
  for _, loc in ipairs(report.locations) do
    targets[#targets + 1] = { path = loc.path, line = loc.line, loc = loc }
  end
  if #targets == 0 then -- the rows' own (a rename preview's changes)
    for _, row in ipairs(report.entries) do
      targets[#targets + 1] = vim.tbl_extend('force', report.targets[row], { text = report.lines[row]:sub(2) })
    end
  end
  for _, t in ipairs(targets) do
    local path = rows.absolute(report.root, t.path)
    items[#items + 1] = {
      filename = path,
      lnum = t.line,
      col = rows.column(t, line_of(path, t.line)) + 1,
      text = t.loc and t.loc.text or t.text,
    }
  end
  return items
end

--- The key that takes the human to window `win`: `<C-w>b` for the bottom-right one.
local function key_to(win)
  local number = vim.api.nvim_win_get_number(win)
  return number == vim.fn.winnr('$') and '<C-w>b' or (number .. '<C-w>w')
end

--- Put `report` in the report window (or, `bang`, its locations in the quickfix list).
--- `focus`: move the cursor there; else the human stays where they are and is told where
--- the report is.
function M.present(report, focus, moved)
  report.lines = vim.split(report.text, '\n', { plain = true })
  report.targets, report.entries = rows.index(report.lines, report.locations, report.root)
  local origin = vim.api.nvim_get_current_win()
  local win
  if report.bang and (#report.locations > 0 or #report.entries > 0) then
    vim.fn.setqflist({}, ' ', { title = report.title_qf or 'lsap', items = quickfix_items(report) })
    vim.cmd('botright copen')
    win = vim.api.nvim_get_current_win()
    if not focus then vim.api.nvim_set_current_win(origin) end
  else
    current = report
    local config = require('lsap.config').options.report
    local bufnr = buffer()
    ui.set_lines(bufnr, 0, -1, report.lines)
    decorate(bufnr, report.lines)
    win = vim.fn.bufwinid(bufnr)
    if win == -1 then
      win = vim.api.nvim_open_win(
        bufnr,
        false,
        config.vertical and { split = 'right', win = -1, width = config.width }
          or { split = 'below', win = -1, height = config.height }
      )
    end
    ui.view_options(win)
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    if focus then vim.api.nvim_set_current_win(win) end
  end
  if moved and not focus then ui.notify(('%s ready: %s goes there'):format(report.title, key_to(win))) end
end

local function remember(report)
  table.insert(M.history, 1, report)
  while #M.history > M.history_size do
    table.remove(M.history)
  end
end

local latest -- the report waiting for the human to stop typing

--- Show a report. options: { root = string, bang = boolean, title = string, ticket = id }
--- With bang and at least one location, the locations go to the quickfix list instead.
--- A report never opens while the human is typing; when they have moved on since asking
--- (`ticket`, see lsap.ui), it opens without taking the cursor and says where it is.
function M.show(text, locations, options)
  options = options or {}
  local report = {
    text = text,
    locations = locations or {},
    root = options.root,
    bang = options.bang,
    title_qf = options.title,
    title = (text:match('^#%s*([^\n]*)') or text:match('^[^\n]*')):gsub('`', ''),
    time = os.time(),
  }
  remember(report)
  ui.answered(options.ticket)
  latest = report
  ui.when_free(function()
    local moved = ui.done(options.ticket)
    if latest ~= report then return end -- a newer report replaced it while the human typed
    M.present(report, require('lsap.config').options.report.focus and not moved, moved)
  end)
end

--- `:Lsap resume [N]`: the last report again (or the Nth before), in the window, focused.
function M.resume(n)
  local report = M.history[n or 1]
  if not report then return ui.notify('no report yet: run a command first (:Lsap)', 'warn') end
  M.present(vim.tbl_extend('force', report, { bang = false }), true, false)
end

--- `:Lsap history`: choose one of the last reports with `vim.ui.select`.
function M.pick()
  if #M.history == 0 then return ui.notify('no report yet: run a command first (:Lsap)', 'warn') end
  vim.ui.select(M.history, {
    prompt = 'lsap reports',
    kind = 'lsap.report',
    format_item = function(r)
      local n = #r.locations
      local count = n > 0 and (' (%d location%s)'):format(n, n == 1 and '' or 's') or ''
      return os.date('%H:%M:%S ', r.time) .. r.title .. count
    end,
  }, function(choice)
    if choice then M.present(vim.tbl_extend('force', choice, { bang = false }), true, false) end
  end)
end

--- A buffer `lsap://report` opened by name (a session, `:edit`): the last report, or a note.
function M.read(bufnr)
  vim.b[bufnr].lsap = nil
  local b = buffer()
  local report = current or M.history[1]
  ui.set_lines(
    b,
    0,
    -1,
    report and vim.split(report.text, '\n', { plain = true })
      or { 'No lsap report yet: run a command (:Lsap), then :Lsap resume reopens it here.' }
  )
end

-- -- moving ----------------------------------------------------------------------------

--- The target under the cursor of the report window, if the current buffer is the report.
local function here()
  if not current or vim.api.nvim_buf_get_name(0) ~= M.NAME then return nil end
  return current.targets[vim.api.nvim_win_get_cursor(0)[1]]
end

--- Jump from the report to the location under the cursor, in the window the human came
--- from. On a code line, the cursor's own column in the code is kept. `preview`: show it
--- there, the cursor staying in the report.
function M.jump(preview)
  local t = here()
  if not t and M.run_action(preview) then return end
  -- A change set's row (`:Lsap changes`) opens its review, the diff of its hunks.
  local review = not t and vim.api.nvim_get_current_line():match('`:(Lsap review %d+)`')
  if review then return vim.cmd(review) end
  if not t then return ui.notify('no location on this line', 'warn') end
  local cursor_col = vim.api.nvim_win_get_cursor(0)[2]
  local report_win = vim.api.nvim_get_current_win()
  vim.cmd('wincmd p')
  if vim.api.nvim_get_current_win() == report_win then vim.cmd('aboveleft split') end
  vim.cmd("normal! m'")
  vim.cmd('edit ' .. vim.fn.fnameescape(rows.absolute(current.root, t.path)))
  local line = math.min(t.line, vim.api.nvim_buf_line_count(0))
  local text = vim.api.nvim_buf_get_lines(0, line - 1, line, false)[1] or ''
  local col = (t.code_at and cursor_col > t.code_at) and (cursor_col - t.code_at) or rows.column(t, text)
  vim.api.nvim_win_set_cursor(0, { line, math.min(col, math.max(#text - 1, 0)) })
  if preview then
    vim.cmd('normal! zz')
    vim.api.nvim_set_current_win(report_win)
  end
end

--- On a row of a code-actions report (`3. `a1b2c3d4` Title · kind · server`): run that
--- action (`:Lsap code_action_execute <id>`), or with `preview` list the actions again
--- with their diffs (the footer's own command). false on any other row.
function M.run_action(preview)
  if not current or vim.api.nvim_buf_get_name(0) ~= M.NAME then return false end
  local id = vim.api.nvim_get_current_line():match('^%d+%. `(%x+)` ')
  if not id or not current.text:match('^# Code actions') then return false end
  if not preview then
    vim.cmd.Lsap({ args = { 'code_action_execute', id } }) -- as if typed: lsap.commands
    return true
  end
  local with_diffs = current.text:match('their diffs: `:(Lsap [^`]+)`')
  if with_diffs then
    vim.cmd(with_diffs)
  else
    ui.notify('the diffs are shown above', 'info')
  end
  return true
end

--- In a review (`:Lsap review`): reject or accept the hunk under the cursor, by the
--- command its header row gives (the review is shown again, with what is left).
function M.decide(decision)
  for row = vim.api.nvim_win_get_cursor(0)[1], 1, -1 do
    local text = vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1] or ''
    if text:match('^### ') then break end
    if text:match('^Hunk %d+ ') then
      local command = text:match(decision .. ' `:(Lsap review [^`]+)`')
      if command then return vim.cmd(command) end
      break
    end
  end
  ui.notify('no hunk under the cursor (a review names them: :Lsap review)', 'warn')
end

--- Move the cursor to the next (1) or previous (-1) entry of the report.
function M.next_entry(direction)
  if not current or vim.api.nvim_buf_get_name(0) ~= M.NAME then return end
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local entries = #current.entries > 0 and current.entries or rows.commands(current.lines)
  local from, to, step = 1, #entries, 1
  if direction < 0 then
    from, to, step = #entries, 1, -1
  end
  for i = from, to, step do
    if (direction > 0 and entries[i] > row) or (direction < 0 and entries[i] < row) then
      return vim.api.nvim_win_set_cursor(0, { entries[i], 0 })
    end
  end
end

--- The human's cursor for a command run inside the report: the location under it, as if
--- the cursor were there in the file. nil elsewhere; false on a row with no location.
function M.cursor()
  if vim.api.nvim_buf_get_name(0) ~= M.NAME then return nil end
  local t = here()
  if not t then return false end
  local path = rows.absolute(current.root, t.path)
  local text = lines_of()(path, t.line)
  return { path = path, line = t.line - 1, col = rows.column(t, text), text = text }
end

return M
