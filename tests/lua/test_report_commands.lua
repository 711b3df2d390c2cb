-- Commands typed in the report window (issue 46): their own arguments win over the report's
-- line, and ]] walks a report whose rows are change sets.
local commands = require('lsap.commands')
local report = require('lsap.report')
local T = {}

local CHANGES = table.concat({
  '# Changes',
  '',
  '2 change sets, newest first',
  '',
  '- **2** · 10:00:02 · agent · rename · 1 file: a.py · applied · review: `:Lsap review 2` · undo: `:Lsap undo 2`',
  '- **1** · 10:00:01 · agent · move · 2 files: a.py, b.py · applied · review: `:Lsap review 1` · undo: `:Lsap undo 1`',
}, '\n')

--- Show `text` as the report and put the cursor in it on `row`.
local function in_report(text, row)
  report.present({ text = text, locations = {}, root = '/nonexistent', title = 'lsap' }, true, false)
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(vim.fn.bufnr(report.NAME))[1])
  vim.api.nvim_win_set_cursor(0, { row, 0 })
end

--- What `:Lsap {args}` sends to the service (the service itself stubbed).
local function sent(args)
  local service = require('lsap.service')
  local run, got = service.run, nil
  service.run = function(name, opts) got = { name = name, opts = opts } end
  local notify = vim.notify
  vim.notify = function(message) got = { error = message } end
  commands.run(nil, { args = args })
  service.run, vim.notify = run, notify
  return got
end

T['a command in the report window with its own arguments does not read the report line'] = function()
  in_report(CHANGES, 1) -- the title: no location
  expect.equality(sent('changes').name, 'changes')
  local review = sent('review 1 decision=accept')
  expect.equality({ review.name, review.opts.anchor, review.opts.options }, { 'review', '1', { decision = 'accept' } })
  expect.equality(sent('check').name, 'check')
  expect.equality(sent('diagnostics file_path=shop/models.py').name, 'diagnostics')
end

T[']] and [[ move between the change sets of :Lsap changes'] = function()
  in_report(CHANGES, 1)
  report.next_entry(1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 5)
  report.next_entry(1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 6)
  report.next_entry(-1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 5)
end

return T
