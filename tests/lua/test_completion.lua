-- :Lsap completion: subcommands and modes, a mode's options, an option's values.
local commands = require('lsap.commands')
local T = {}

local function complete(line) return commands.complete(line:match('(%S*)$'), line, #line) end

T['the first word offers modes and subcommands by prefix'] = function()
  local got = complete('Lsap ref')
  expect.truthy(vim.tbl_contains(got, 'references'), 'references offered')
  for _, item in ipairs(got) do expect.truthy(vim.startswith(item, 'ref'), item .. ' to start with ref') end
  expect.truthy(#complete('Lsap ') >= #got, 'more offered without a prefix')
end

T['a mode offers its options once, not those already given'] = function()
  local got = complete('Lsap references shop.py:A max_')
  expect.truthy(vim.tbl_contains(got, 'max_items='), 'max_items= offered')
  local again = complete('Lsap references shop.py:A max_items=3 max_')
  expect.truthy(not vim.tbl_contains(again, 'max_items='), 'max_items= not offered twice')
end

T['an option offers its declared values'] = function()
  local got = complete('Lsap references shop.py:A format=')
  expect.equality(got, { 'format=markdown', 'format=json' })
  expect.equality(complete('Lsap references shop.py:A format=j'), { 'format=json' })
end

T['an unknown command completes to nothing'] = function()
  expect.equality(complete('Lsap nosuchmode x'), {})
  expect.equality(complete('Edit foo'), {})
end

return T
