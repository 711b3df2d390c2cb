-- The log file's rule (lua/lsap/logfile.lua, shared with lsap_bridge/logfile.py): rotation by
-- size under the shared lock, and a handle reopened when the file at the path changed.
local logfile = require('lsap.logfile')
local T = {}

local function size(path)
  local st = vim.uv.fs_stat(path)
  return st and st.size or nil
end

local function read(path) return table.concat(vim.fn.readfile(path), '\n') end

local function fresh_log()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  return dir .. '/lsap.log'
end

T['a full log is renamed to .1 before the next line, and the lock is gone after'] = function()
  local path = fresh_log()
  logfile.max_bytes = 100
  for i = 1, 5 do
    logfile.append(path, ('line %d %s'):format(i, ('x'):rep(30)))
  end
  -- 37 bytes a line: lines 1-3 fill 111 bytes, so line 4 rotated them out; 4 and 5 are new.
  expect.equality(vim.split(read(path .. '.1'), '\n')[1]:sub(1, 6), 'line 1')
  expect.equality(#vim.fn.readfile(path .. '.1'), 3)
  expect.equality(#vim.fn.readfile(path), 2)
  expect.equality(vim.fn.readfile(path)[1]:sub(1, 6), 'line 4')
  expect.equality(vim.uv.fs_stat(path .. '.lock'), nil)
  logfile.max_bytes = 10 * 1024 * 1024
end

T['the older rotated log is replaced, never a third file'] = function()
  local path = fresh_log()
  logfile.max_bytes = 10
  for i = 1, 4 do
    logfile.append(path, 'line ' .. i .. ' of twenty')
  end
  expect.equality(vim.fn.readfile(path), { 'line 4 of twenty' })
  expect.equality(vim.fn.readfile(path .. '.1'), { 'line 3 of twenty' })
  expect.equality(vim.fn.glob(path .. '*', true, true), { path, path .. '.1' })
  logfile.max_bytes = 10 * 1024 * 1024
end

T['a lock held by a live writer: no rotation now, the line still written'] = function()
  local path = fresh_log()
  logfile.max_bytes = 10
  logfile.append(path, 'first line, long enough')
  vim.uv.fs_mkdir(path .. '.lock', 448)
  logfile.append(path, 'second')
  expect.equality(vim.fn.readfile(path), { 'first line, long enough', 'second' })
  expect.equality(size(path .. '.1'), nil)
  vim.uv.fs_rmdir(path .. '.lock')
  logfile.max_bytes = 10 * 1024 * 1024
end

T["a stale lock (a dead writer's) is taken over"] = function()
  local path = fresh_log()
  logfile.max_bytes = 10
  logfile.append(path, 'first line, long enough')
  vim.uv.fs_mkdir(path .. '.lock', 448)
  vim.uv.fs_utime(path .. '.lock', os.time() - 60, os.time() - 60)
  logfile.append(path, 'second')
  expect.equality(vim.fn.readfile(path .. '.1'), { 'first line, long enough' })
  expect.equality(vim.fn.readfile(path), { 'second' })
  expect.equality(vim.uv.fs_stat(path .. '.lock'), nil)
  logfile.max_bytes = 10 * 1024 * 1024
end

T['rotated by the other writer: the next line goes to the new file, not the renamed one'] = function()
  local path = fresh_log()
  logfile.append(path, 'before')
  vim.uv.fs_rename(path, path .. '.1') -- as lsap_bridge/logfile.py rotates it
  logfile.append(path, 'after')
  expect.equality(vim.fn.readfile(path), { 'after' })
  expect.equality(vim.fn.readfile(path .. '.1'), { 'before' })
end

T['write keeps to log_level and formats one line'] = function()
  local log_dir = vim.fn.tempname()
  vim.env.XDG_STATE_HOME = log_dir -- stdpath('log') lives under it
  require('lsap.config').options.log_level = 'warn'
  logfile.write('info', 'not written')
  logfile.write('error', 'written')
  local lines = vim.fn.readfile(logfile.path())
  expect.equality(#lines, 1)
  expect.truthy(lines[1]:match('^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d ERROR %[lua%] written$'), 'the line format')
end

return T
