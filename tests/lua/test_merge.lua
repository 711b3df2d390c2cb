-- A file changed on disk under unsaved text (lsap.diff3, lsap.transport.merge): the disk's
-- changes that touch none of the human's go into the buffer as one undo step and `:w` then
-- writes both without "changed since reading it"; overlapping ones are conflicts, the
-- human's text kept until decided.
local diff3 = require('lsap.diff3')
local merge = require('lsap.transport.merge')
local T = {}

local BASE = { 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6' }

T['diff3: changes apart are merged, the disk ones reported where they go'] = function()
  local mine = { 'a = 1', 'b = 2', '# mine', 'c = 3', 'd = 4', 'e = 5', 'f = 6' }
  local theirs = { 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'E = 50', 'f = 6', 'g = 7' }
  local out = diff3.merge(BASE, mine, theirs)
  expect.equality(out.lines, { 'a = 1', 'b = 2', '# mine', 'c = 3', 'd = 4', 'E = 50', 'f = 6', 'g = 7' })
  expect.equality(#out.conflicts, 0)
  expect.equality(out.taken, {
    { row = 5, at = 5, old = { 'e = 5' }, new = { 'E = 50' } },
    { row = 7, at = 7, old = {}, new = { 'g = 7' } },
  })
end

T['diff3: the same lines changed on both sides are a conflict, mine kept'] = function()
  local mine = { 'a = 1', 'B = mine', 'c = 3', 'd = 4', 'e = 5', 'f = 6' }
  local theirs = { 'a = 1', 'B = theirs', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' }
  local out = diff3.merge(BASE, mine, theirs)
  expect.equality(out.lines, { 'a = 1', 'B = mine', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
  expect.equality(out.conflicts, { { row = 1, mine = { 'B = mine' }, theirs = { 'B = theirs' }, base = { 'b = 2' } } })
end

T['diff3: the same change on both sides is no conflict'] = function()
  local both = { 'a = 1', 'b = 20', 'c = 3', 'd = 4', 'e = 5', 'f = 6' }
  local out = diff3.merge(BASE, both, both)
  expect.equality(out.lines, both)
  expect.equality({ #out.taken, #out.conflicts }, { 0, 0 })
end

--- A buffer of a file holding BASE, the human's unsaved line typed at line 3, and the file
--- then rewritten on disk by someone else (`theirs`), a second later by its time.
local function scene(theirs)
  merge.watch()
  local path = vim.fn.tempname() .. '.py'
  vim.fn.writefile(BASE, path)
  vim.cmd.edit(path)
  local bufnr = vim.api.nvim_get_current_buf()
  vim.cmd('normal! 2Go# mine')
  vim.fn.writefile(theirs, path)
  local stat = assert(vim.uv.fs_stat(path))
  vim.uv.fs_utime(path, stat.atime.sec + 10, stat.mtime.sec + 10)
  return bufnr, path
end

--- `:w`, answering "n" if Neovim asks whether to write over a file changed since it read it.
local function write()
  vim.api.nvim_input('n')
  pcall(vim.cmd, 'write')
  vim.api.nvim_input('<Esc>')
end

T['the disk changes go into the unsaved buffer as one undo step, and :w writes both'] = function()
  local bufnr, path = scene({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'E = 50', 'f = 6', 'g = 7' })
  local done = merge.merge(bufnr)
  expect.equality(done, { taken = 2, conflicts = 0 })
  local want = { 'a = 1', 'b = 2', '# mine', 'c = 3', 'd = 4', 'E = 50', 'f = 6', 'g = 7' }
  expect.equality(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), want)
  expect.truthy(vim.bo[bufnr].modified, 'still unsaved')
  expect.truthy(#vim.api.nvim_buf_get_extmarks(bufnr, merge.NS, 0, -1, {}) == 2, 'the merged lines marked')
  write()
  expect.equality(vim.fn.readfile(path), want)
  expect.truthy(not vim.bo[bufnr].modified, 'written')
  vim.cmd('silent undo')
  expect.equality(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), { 'a = 1', 'b = 2', '# mine', 'c = 3', 'd = 4', 'e = 5', 'f = 6' })
end

T['a write merges first: the file holds both sides'] = function()
  local bufnr, path = scene({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
  write()
  expect.equality(vim.fn.readfile(path), { 'a = 1', 'b = 2', '# mine', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
  expect.truthy(not vim.bo[bufnr].modified, 'written')
end

T['an overlapping disk change is a conflict: mine kept until decided, then theirs taken'] = function()
  local bufnr, path = scene({ 'a = 1', 'b = 2', '# theirs', 'c = 3', 'd = 4', 'e = 5', 'f = 6' })
  expect.equality(merge.merge(bufnr), { taken = 0, conflicts = 1 })
  expect.equality(vim.api.nvim_buf_get_lines(bufnr, 2, 3, false), { '# mine' })
  expect.equality(merge.conflicts(bufnr), { { row = 2, end_row = 2, theirs = { '# theirs' } } })
  write() -- Neovim still asks (answered no): nothing written over the disk's line
  expect.equality(vim.fn.readfile(path)[3], '# theirs')
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  merge.decide('both')
  expect.equality(vim.api.nvim_buf_get_lines(bufnr, 2, 4, false), { '# mine', '# theirs' })
  expect.equality(merge.conflicts(bufnr), {})
  write()
  expect.equality(vim.fn.readfile(path), { 'a = 1', 'b = 2', '# mine', '# theirs', 'c = 3', 'd = 4', 'e = 5', 'f = 6' })
end

T["the bridge's look at the buffer (disk.fresh) merges it, after the call"] = function()
  local disk = require('lsap.transport.disk')
  disk.watch(vim.api.nvim_create_augroup('test.disk', { clear = true }))
  local bufnr = scene({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
  -- disk.lua takes the file as read (its stamp), then it changes again (a second later).
  vim.api.nvim_exec_autocmds('BufReadPost', { group = 'test.disk', buffer = bufnr })
  local name = vim.api.nvim_buf_get_name(bufnr)
  vim.fn.writefile({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7', 'h = 8' }, name)
  local stat = assert(vim.uv.fs_stat(name))
  vim.uv.fs_utime(name, stat.atime.sec + 20, stat.mtime.sec + 20)
  expect.equality(disk.fresh(bufnr), 'changed') -- the request reads the buffer as it is
  expect.equality(vim.api.nvim_buf_line_count(bufnr), 7)
  vim.wait(1000, function() return vim.api.nvim_buf_line_count(bufnr) == 9 end)
  expect.equality(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), {
    'a = 1', 'b = 2', '# mine', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7', 'h = 8' })
  expect.equality(disk.fresh(bufnr), 'same') -- merged: the buffer is based on the file now
end

T["no Neovim record taken while the human has a BufWriteCmd for the file (theirs would write)"] = function()
  local written = false
  vim.api.nvim_create_autocmd('BufWriteCmd', { pattern = '*.py', callback = function() written = true end })
  local bufnr, path = scene({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
  expect.equality(require('lsap.compat').take_file_time(bufnr), false)
  expect.truthy(not written, 'their BufWriteCmd not run')
  expect.equality(vim.fn.readfile(path)[7], 'g = 7')
  vim.api.nvim_clear_autocmds({ event = 'BufWriteCmd', pattern = '*.py' })
end

return T
