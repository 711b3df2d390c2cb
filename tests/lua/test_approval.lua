-- The approval float: who asks what with the counts and the diff, a queue shown one at a
-- time, the answer given to the agent's callback, the float gone after.
local approval = require('lsap.approval')
local T = {}

local PREVIEW = table.concat({ '--- a/shop/models.py', '+++ b/shop/models.py', '-class Product:', '+class Item:',
  '+    pass' }, '\n')

local function floats()
  return vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative ~= '' end, vim.api.nvim_list_wins())
end

T['a question opens a float with the diff, not taking the focus; the answer reaches the agent'] = function()
  local before = vim.api.nvim_get_current_win()
  local answers = {}
  approval.ask('agent-1', 'rename Product → Item', PREVIEW, 60000, function(d) answers[#answers + 1] = d.decision end)
  local wins = floats()
  expect.equality(#wins, 1)
  expect.equality(vim.api.nvim_get_current_win(), before)
  local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(wins[1]), 0, -1, false)
  expect.equality(lines[1], 'agent-1 wants to rename Product → Item')
  expect.truthy(lines[2]:match('^1 file · %+2 −1 · refused in 1:00 without an answer'), lines[2])
  expect.truthy(vim.tbl_contains(lines, '+class Item:'), 'the diff shown')
  approval.answer_shown('apply')
  expect.equality(answers, { 'apply' })
  expect.equality(#floats(), 0)
  expect.equality(approval.waiting(), {})
end

T['a second question waits behind the first and is shown after it'] = function()
  local got = {}
  approval.ask('agent-1', 'first edit', PREVIEW, 60000, function(d) got[#got + 1] = 'first:' .. d.decision end)
  approval.ask('agent-2', 'second edit', PREVIEW, 60000, function(d) got[#got + 1] = 'second:' .. d.decision end)
  expect.equality(#approval.waiting(), 2)
  local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(floats()[1]), 0, -1, false)
  expect.truthy(lines[2]:match('1 of 2 waiting'), lines[2])
  approval.answer_shown('refuse')
  lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(floats()[1]), 0, -1, false)
  expect.equality(lines[1], 'agent-2 wants to second edit')
  approval.answer_shown('apply')
  expect.equality(got, { 'first:refuse', 'second:apply' })
end

T['an agent that gives up takes its question back'] = function()
  local got = {}
  local withdraw = approval.ask('agent-3', 'gone', PREVIEW, 60000, function(d) got[#got + 1] = d end)
  withdraw()
  expect.equality(approval.waiting(), {})
  expect.equality(#floats(), 0)
  expect.equality(got, {})
end

return T
