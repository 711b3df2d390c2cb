-- The report window: one reusable scratch buffer `lsap://report` (markdown).
-- <CR> on a location jumps there, q closes, ]] / [[ move between entries, g? lists the keys;
-- the bang forms fill the quickfix list instead.
local M = {}

M.NAME = 'lsap://report'
local ns = vim.api.nvim_create_namespace('lsap.report')
-- root: the workspace root the report's paths are relative to; locations: the report's
-- locations ({path, line, col, text}); entries: rows of the buffer that show one.
local state = { root = nil, locations = {}, entries = {} }

function M.notify(message, level)
  vim.notify('(lsap) ' .. message, vim.log.levels[(level or 'info'):upper()] or vim.log.levels.INFO)
end

M.keys = {
  { '<CR>', 'jump to the location under the cursor', function() M.jump() end },
  { ']]', 'next entry', function() M.next_entry(1) end },
  { '[[', 'previous entry', function() M.next_entry(-1) end },
  { 'q', 'close the report', function() M.close() end },
  { 'g?', 'show these keys', function() M.help() end },
}

--- Close the report's window; when it is the last one, show the previous buffer instead.
function M.close()
  if vim.fn.winnr('$') > 1 then return vim.cmd('close') end
  local alt = vim.fn.bufnr('#')
  if alt > 0 and alt ~= vim.api.nvim_get_current_buf() then vim.cmd('buffer ' .. alt) else vim.cmd('enew') end
end

function M.help()
  local chunks = { { 'lsap report keys\n', 'LsapHeader' } }
  for _, key in ipairs(M.keys) do
    chunks[#chunks + 1] = { ('%-5s'):format(key[1]), 'Special' }
    chunks[#chunks + 1] = { ' ' .. key[2] .. '\n' }
  end
  vim.api.nvim_echo(chunks, true, {})
end

local function report_buffer()
  local bufnr = vim.fn.bufnr(M.NAME)
  if bufnr > 0 then return bufnr end
  bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, M.NAME)
  vim.bo[bufnr].bufhidden = 'hide'
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = 'markdown'
  -- Tree-sitter highlights the code fences in their languages where parsers are installed.
  pcall(vim.treesitter.start, bufnr, 'markdown')
  for _, key in ipairs(M.keys) do
    vim.keymap.set('n', key[1], key[3], { buffer = bufnr, nowait = true, desc = 'lsap: ' .. key[2] })
  end
  return bufnr
end

--- A report path (relative to the workspace root) as a file name.
local function absolute(path)
  return (state.root and not vim.startswith(path, '/')) and (state.root .. '/' .. path) or path
end

local function column_of(path, lnum)
  for _, loc in ipairs(state.locations) do
    if loc.path == path and loc.line == lnum then return loc.col or 0 end
  end
  return 0
end

--- The location row `row` of the report's `lines` shows: a `NN| code` line under a
--- `### path` header, or a `path:line[:column]` anywhere on the line (the anchor line).
function M.location_at(lines, row)
  local line = lines[row] or ''
  local lnum = line:match('^%s*(%d+)|')
  if lnum then
    for i = row - 1, 1, -1 do
      local header = lines[i]:match('^###%s+(.-)%s*$')
      if header then
        local path = header:gsub('%s+>%s+.*$', '')
        lnum = tonumber(lnum)
        return { path = path, line = lnum, col = column_of(path, lnum) }
      end
    end
  end
  for path, l, c in line:gmatch('([%w%._/%-]+%.[%w]+):(%d+):?(%d*)') do
    if vim.fn.filereadable(absolute(path)) == 1 then
      return { path = path, line = tonumber(l), col = c ~= '' and tonumber(c) - 1 or column_of(path, tonumber(l)) }
    end
  end
end

--- Jump from the report to the location under the cursor, in the window the human came from.
function M.jump()
  local report_win = vim.api.nvim_get_current_win()
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local loc = M.location_at(vim.api.nvim_buf_get_lines(0, 0, row, false), row)
  if not loc then return M.notify('no location on this line', 'warn') end
  vim.cmd('wincmd p')
  if vim.api.nvim_get_current_win() == report_win then vim.cmd('aboveleft split') end
  vim.cmd("normal! m'")
  vim.cmd('edit ' .. vim.fn.fnameescape(absolute(loc.path)))
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(loc.line, last), loc.col })
end

--- Move the cursor to the next (1) or previous (-1) entry of the report.
function M.next_entry(direction)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local entries = state.entries
  local from, to, step = 1, #entries, 1
  if direction < 0 then from, to, step = #entries, 1, -1 end
  for i = from, to, step do
    if (direction > 0 and entries[i] > row) or (direction < 0 and entries[i] < row) then
      return vim.api.nvim_win_set_cursor(0, { entries[i], 0 })
    end
  end
end

--- Rows that show one of the report's locations; without locations, every `###` header.
local function find_entries(lines)
  local known, rows = {}, {}
  for _, loc in ipairs(state.locations) do known[loc.path .. ':' .. loc.line] = true end
  for row, text in ipairs(lines) do
    if next(known) then
      local loc = text:match('^%s*%d+|') and M.location_at(lines, row)
      if loc and known[loc.path .. ':' .. loc.line] then rows[#rows + 1] = row end
    elseif text:match('^###%s') then
      rows[#rows + 1] = row
    end
  end
  return rows
end

local function decorate(bufnr, lines)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  for row, text in ipairs(lines) do
    local number = text:match('^(%s*%d+|)')
    local group = (number and 'LsapLineNr') or (text:match('^#') and 'LsapHeader')
      or (text:match('^Anchor:') and 'LsapAnchor') or (text:match('^> ') and 'LsapWarning')
    if group then
      vim.api.nvim_buf_set_extmark(bufnr, ns, row - 1, 0, {
        end_col = number and #number or #text, hl_group = group, priority = 200,
      })
    end
  end
end

local function quickfix(locations, title)
  local items = {}
  for _, loc in ipairs(locations) do
    items[#items + 1] = {
      filename = absolute(loc.path),
      lnum = loc.line,
      col = (loc.col or 0) + 1,
      text = loc.text,
    }
  end
  vim.fn.setqflist({}, ' ', { title = title or 'lsap', items = items })
  vim.cmd('botright copen')
end

--- Show a report. options: { root = string, bang = boolean, title = string }
--- With bang and at least one location, the locations go to the quickfix list instead.
function M.show(text, locations, options)
  options = options or {}
  state.root = options.root
  state.locations = locations or {}
  if options.bang and #state.locations > 0 then return quickfix(state.locations, options.title) end
  local config = require('lsap').config.report
  local bufnr = report_buffer()
  local lines = vim.split(text, '\n', { plain = true })
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  decorate(bufnr, lines)
  state.entries = find_entries(lines)
  local origin = vim.api.nvim_get_current_win()
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd(config.vertical and ('botright vertical ' .. config.width .. 'split') or ('botright ' .. config.height .. 'split'))
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
    vim.wo[win].wrap = false
    if not config.focus then vim.api.nvim_set_current_win(origin) end
  elseif config.focus then
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
end

return M
