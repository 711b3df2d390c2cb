-- Presence: each agent gets its own colour group, an agent's change set signs the lines it
-- wrote in loaded buffers, and reviewing the set takes the signs away.
local presence = require('lsap.presence')
local T = {}

-- A Python file of `lines` on disk, edited in the current window: its path and buffer.
local function edited(lines)
  local path = vim.fn.tempname() .. '.py'
  vim.fn.writefile(lines, path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  return path, vim.api.nvim_get_current_buf()
end

T['agents get their own highlight groups in order of arrival'] = function()
  expect.equality(presence.highlight('agent-a'), 'LsapAgent1')
  expect.equality(presence.highlight('agent-b'), 'LsapAgent2')
  expect.equality(presence.highlight('agent-a'), 'LsapAgent1')
  expect.equality(presence.names(), { 'agent-a', 'agent-b' })
end

T['a change set signs its lines in a loaded buffer; reviewed, the signs go'] = function()
  local path, bufnr = edited({ 'a = 1', 'b = 2', 'c = 3', 'd = 4' })
  presence.changed({ id = '7', who = 'agent-a', label = 'edit', files = { { path = path, lines = { 1, 3, 9 } } } })
  expect.equality(presence.signed(bufnr), { 1, 3 }) -- line 9 is past the end: no sign
  presence.reviewed('7')
  expect.equality(presence.signed(bufnr), {})
  expect.equality(presence.changes['7'], nil)
  -- Reviewed file by file: the set goes with its last file.
  presence.changed({ id = '9', who = 'agent-a', label = 'edit', files = { { path = path, lines = { 0 } } } })
  presence.reviewed('9', vim.api.nvim_buf_get_name(bufnr))
  expect.equality(presence.signed(bufnr), {})
  expect.equality(presence.changes['9'], nil)
end

T['a line written again carries the later change\'s sign alone: sets that sign nothing go'] = function()
  local path, bufnr = edited({ 'def helper(x):', '    return x', '', 'VALUE = helper(1)' })
  presence.changed({ id = 'kept', who = 'agent-a', label = 'edit', files = { { path = path, lines = { 1 } } } })
  -- A rename back and forth, 200 times: each writes lines 0 and 3 again.
  local names = { 'helper', 'helper_b' }
  for i = 1, 200 do
    local old, new = names[i % 2 + 1], names[(i + 1) % 2 + 1]
    for n, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
      local at = line:find(old .. '(', 1, true)
      if at then vim.api.nvim_buf_set_text(bufnr, n - 1, at - 1, n - 1, at - 1 + #old, { new }) end
    end
    presence.changed({ id = tostring(i), who = 'agent-b', label = 'rename', files = { { path = path, lines = { 0, 3 } } } })
  end
  expect.equality(presence.signed(bufnr), { 0, 1, 3 })
  expect.equality(#vim.api.nvim_buf_get_extmarks(bufnr, presence.NS, 0, -1, {}), 3)
  local sets = vim.tbl_keys(presence.changes)
  table.sort(sets)
  expect.equality(sets, { '200', 'kept' })
  presence.reviewed('200') -- the last rename's signs go; the untouched line keeps its own
  expect.equality(presence.signed(bufnr), { 1 })
  presence.reviewed('kept')
  expect.equality(presence.changes, {})
end

T['the signs can be turned off in the setup'] = function()
  require('lsap').config.presence = vim.tbl_extend('force', require('lsap').config.presence or {}, { signs = false })
  local path, bufnr = edited({ 'a = 1', 'b = 2' })
  presence.changed({ id = '8', who = 'agent-b', label = 'edit', files = { { path = path, lines = { 0 } } } })
  expect.equality(presence.signed(bufnr), {})
end

return T
