-- What the human is looking at, read for the service: the cursor, the visible lines, the
-- visual selection and a buffer's indent settings. Only reads state.
local M = {}

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

return M
