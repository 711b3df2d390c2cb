-- luacheck's settings for lua/, plugin/ and tests/lua/ (`make check` runs luacheck on them).
std = 'luajit'
globals = { 'vim' } -- Neovim's API; the plugin sets fields on it (vim.g, vim.bo, ...)
-- Line length is StyLua's (.stylua.toml, column_width = 120): what it leaves longer is a
-- string it cannot break.
max_line_length = false
-- Unused arguments keep a callback's signature readable (`function(_, result)` is the same).
unused_args = false
ignore = {
  '542', -- an empty if branch holding a comment: the code says which case does nothing, and why
  '512', -- a loop run at most once: the idiom for "the first entry of a table, if any"
}
exclude_files = { 'lua/lsap/modes.lua', 'lua/lsap/shared.lua' } -- generated (`make lua`)
files['tests/lua'] = { globals = { 'expect' } } -- set by tests/lua/runner.lua
