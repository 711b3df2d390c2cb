-- Lua unit tests in a child Neovim, in the style of mini.test: each tests/lua/test_*.lua
-- returns a table of cases (name -> function), run here in one headless Neovim per file
-- with the plugin on the runtimepath; `expect` raises with what differed. Run by pytest
-- (tests/unit/test_lua.py):  nvim --headless --clean -l tests/lua/runner.lua FILE
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')
vim.opt.rtp:prepend(root)

_G.expect = {}
function expect.equality(got, want)
  if not vim.deep_equal(got, want) then
    error(('expected %s, got %s'):format(vim.inspect(want), vim.inspect(got)), 2)
  end
end
function expect.truthy(value, what)
  if not value then error(('expected %s to hold, got %s'):format(what or 'a value', vim.inspect(value)), 2) end
end

local file = assert(_G.arg[1], 'usage: nvim --headless --clean -l tests/lua/runner.lua FILE')
local cases = dofile(file)
local names = vim.tbl_keys(cases)
table.sort(names)
local failed = 0
for _, name in ipairs(names) do
  local ok, err = xpcall(cases[name], debug.traceback)
  io.stdout:write(('%s %s\n'):format(ok and 'ok  ' or 'FAIL', name))
  if not ok then
    failed = failed + 1
    io.stdout:write(tostring(err) .. '\n')
  end
  vim.cmd('silent! %bwipeout!')
end
io.stdout:write(('%d passed, %d failed\n'):format(#names - failed, failed))
vim.cmd(failed == 0 and 'qall!' or 'cquit! 1')
