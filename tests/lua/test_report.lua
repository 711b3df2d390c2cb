-- The report's index: which row leads where (targets), and the entries ]] and [[ move between.
local report = require('lsap.report')
local rows = require('lsap.rows')
local T = {}

local LINES = {
  '# References of Product',
  'Anchor: shop/models.py:5:7',
  '',
  '### shop/models.py',
  'shop/models.py:5:7 class Product:',
  'shop/catalog.py:3:20 from .models import Product',
  'shop/catalog.py:3:20 from .models import Product',
  'not a location',
  'elsewhere/nothing.py:9 is no file of the report',
}
local LOCATIONS = {
  { path = 'shop/models.py', line = 5 },
  { path = 'shop/catalog.py', line = 3 },
}

T['each location row targets its path, line and column'] = function()
  local targets = rows.index(LINES, LOCATIONS, '/nonexistent')
  expect.equality({ targets[5].path, targets[5].line, targets[5].character }, { 'shop/models.py', 5, 6 })
  expect.equality({ targets[6].path, targets[6].line }, { 'shop/catalog.py', 3 })
  expect.truthy(targets[6].loc == LOCATIONS[2], 'the row to carry its location')
  expect.equality(targets[8], nil)
  expect.equality(targets[9], nil) -- not readable and not one of the locations
end

T['entries are the first row of each location, the anchor line aside'] = function()
  local targets, entries = rows.index(LINES, LOCATIONS, '/nonexistent')
  expect.truthy(targets[2] ~= nil, 'the anchor line to lead somewhere')
  expect.equality(entries, { 5, 6 })
end

T[']] and [[ move between entries in the report buffer'] = function()
  local text = table.concat(LINES, '\n')
  report.show(text, LOCATIONS, { root = '/nonexistent' })
  local bufnr = vim.fn.bufnr(report.NAME)
  expect.truthy(bufnr > 0, 'the report buffer')
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(bufnr)[1])
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  report.next_entry(1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 5)
  report.next_entry(1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 6)
  report.next_entry(1) -- past the last: stays
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 6)
  report.next_entry(-1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 5)
end

return T
