-- The report window: one reusable scratch buffer `lsap://report` (markdown).
-- <CR> on a location jumps there, q closes; the bang forms fill the quickfix list instead.
local M = {}

local NAME = 'lsap://report'
local state = { root = nil, locations = {} }

function M.notify(message, level)
  vim.notify('(lsap) ' .. message, vim.log.levels[(level or 'info'):upper()] or vim.log.levels.INFO)
end

local function report_buffer()
  local bufnr = vim.fn.bufnr(NAME)
  if bufnr > 0 then return bufnr end
  bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, NAME)
  vim.bo[bufnr].filetype = 'markdown'
  vim.bo[bufnr].bufhidden = 'hide'
  vim.keymap.set('n', '<CR>', function() M.jump() end, { buffer = bufnr, desc = 'lsap: jump to location' })
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = bufnr, desc = 'lsap: close report' })
  return bufnr
end

--- The location under the cursor of the report: `NN|` code lines under a `### path` header.
function M.location_at(bufnr, row)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, row, false)
  local lnum = lines[row] and lines[row]:match('^%s*(%d+)|')
  if not lnum then return nil end
  for i = row - 1, 1, -1 do
    local header = lines[i]:match('^###%s+(.-)%s*$')
    if header then
      local path = header:gsub('%s+>%s+.*$', '')
      lnum = tonumber(lnum)
      local col = 0
      for _, loc in ipairs(state.locations) do
        if loc.path == path and loc.line == lnum then
          col = loc.col or 0
          break
        end
      end
      return { path = path, line = lnum, col = col }
    end
  end
end

function M.jump()
  local loc = M.location_at(vim.api.nvim_get_current_buf(), vim.api.nvim_win_get_cursor(0)[1])
  if not loc then return M.notify('no location on this line', 'warn') end
  local path = loc.path
  if state.root and not vim.startswith(path, '/') then path = state.root .. '/' .. path end
  vim.cmd('wincmd p')
  if vim.api.nvim_buf_get_name(0) == vim.fn.bufname(NAME) or vim.fn.winnr('$') == 1 then vim.cmd('split') end
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  vim.api.nvim_win_set_cursor(0, { loc.line, loc.col })
end

--- Show a report. options: { root = string, bang = boolean, title = string }
function M.show(text, locations, options)
  options = options or {}
  state.root = options.root
  state.locations = locations or {}
  if options.bang then
    local items = {}
    for _, loc in ipairs(state.locations) do
      items[#items + 1] = {
        filename = state.root and (state.root .. '/' .. loc.path) or loc.path,
        lnum = loc.line,
        col = (loc.col or 0) + 1,
        text = loc.text,
      }
    end
    vim.fn.setqflist({}, ' ', { title = options.title or 'lsap', items = items })
    vim.cmd('botright copen')
    return
  end
  local bufnr = report_buffer()
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd('botright ' .. require('lsap').config.report_height .. 'split')
    vim.api.nvim_win_set_buf(0, bufnr)
    win = vim.api.nvim_get_current_win()
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
end

return M
