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
  expect.equality(
    out.conflicts,
    { { row = 1, mine = { 'B = mine' }, theirs = { 'B = theirs' }, base = { 'b = 2' }, s = 1, e = 2 } }
  )
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
  local shown = merge.conflicts(bufnr)
  expect.equality(#shown, 1)
  expect.equality({ shown[1].row, shown[1].end_row, shown[1].theirs, shown[1].index }, { 2, 2, { '# theirs' }, 1 })
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

--- What the merges tell the service (lsap.setup() sends it the `merge` mode), as a list.
local function told()
  local out = {}
  merge.watch(function(options) out[#out + 1] = options end)
  return out
end

T['a merge that brought disk changes is told to the service, to be kept as a change set'] = function()
  local bufnr, path = scene({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'E = 50', 'f = 6' })
  local sent = told()
  merge.merge(bufnr)
  expect.equality(#sent, 1)
  local key = sent[1].key
  expect.truthy(key:match('^[0-9a-z-]+$'), 'a key the service accepts')
  expect.equality(sent[1], {
    event = 'merged',
    key = key,
    file_path = path,
    base = BASE,
    theirs = { 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'E = 50', 'f = 6' },
    regions = {},
  })
  vim.cmd('silent! write')
  expect.equality(#sent, 1) -- no conflict: nothing more to tell
end

T['conflicts are told with their rows of the base, and each decision, and those left at a write'] = function()
  local theirs = { 'A = 10', 'b = 2', '# theirs', 'c = 3', 'd = 4', 'e = 5', 'F = 60' }
  local bufnr = scene(theirs)
  vim.cmd('normal! 6GA # mine too')
  local sent = told()
  expect.equality(merge.merge(bufnr), { taken = 1, conflicts = 2 })
  local key = sent[1].key
  expect.equality({ sent[1].event, sent[1].regions }, { 'merged', { { 2, 2 }, { 4, 6 } } })
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  merge.decide('mine')
  expect.equality(sent[2], { event = 'decided', key = key, conflicts = { 1 } })
  expect.equality(#merge.conflicts(bufnr), 1)
  write() -- answered no: not written, the conflict stays
  expect.equality(#sent, 2)
  vim.cmd('silent write!') -- written over the disk's side: decided, mine
  expect.equality(sent[3], { event = 'decided', key = key, conflicts = { 2 } })
  expect.equality(merge.conflicts(bufnr), {})
end

T['conflicts nobody decided are released when the buffer goes'] = function()
  local bufnr = scene({ 'a = 1', 'b = 2', '# theirs', 'c = 3', 'd = 4', 'e = 5', 'f = 6' })
  local sent = told()
  merge.merge(bufnr)
  vim.cmd('bwipeout!')
  expect.equality(sent[2], { event = 'released', key = sent[1].key, conflicts = { 1 } })
end

T["the bridge's edit written beside the unsaved text is the buffer's base: no merge, no conflict"] = function()
  local disk = require('lsap.transport.disk')
  disk.watch(vim.api.nvim_create_augroup('test.disk', { clear = true }))
  local bufnr, path = scene({ 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
  local sent = told()
  merge.merge(bufnr) -- settled: the base is the file as it is now
  local was = require('lsap.transport.filetext').file_text(bufnr, path)
  -- An edit (an undo of a hunk) the buffer and the file took both, beside the human's line.
  vim.api.nvim_buf_set_lines(bufnr, 3, 4, false, { 'C = 30' })
  vim.fn.writefile({ 'a = 1', 'b = 2', 'C = 30', 'd = 4', 'e = 5', 'f = 6', 'g = 7' }, path)
  local stat = assert(vim.uv.fs_stat(path))
  vim.uv.fs_utime(path, stat.atime.sec + 30, stat.mtime.sec + 30)
  disk.took(bufnr, was)
  expect.equality(#vim.api.nvim_buf_get_extmarks(bufnr, merge.NS, 0, -1, {}), 0) -- the merged line's mark goes
  expect.equality(merge.merge(bufnr), nil) -- nothing new on disk
  expect.equality(#sent, 1)
  write()
  expect.equality(vim.fn.readfile(path), { 'a = 1', 'b = 2', '# mine', 'C = 30', 'd = 4', 'e = 5', 'f = 6', 'g = 7' })
end

return T
