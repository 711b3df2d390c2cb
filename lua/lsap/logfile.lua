-- The log file, `stdpath('log')/lsap.log`: what went wrong, for :checkhealth lsap and the
-- help's troubleshooting. Two processes write it, Neovim (here) and the Python service
-- (lsap_bridge/logfile.py), each through the same rule, so neither needs the other alive
-- to say why it failed (doc/architecture.md, "The log file"):
--   - one handle kept open, reopened only when the file at the path is another one (the
--     other writer rotated it);
--   - before a line, a file of `max_bytes` or more is rotated (like conform.nvim's log):
--     renamed to `lsap.log.1`, replacing the older one, under a lock both sides take (the
--     directory `lsap.log.lock`, made atomically; one older than `STALE_S` is a dead
--     writer's and removed);
--   - each line goes out in one append-mode write, so lines of the two never interleave.
local M = {}

local config = require('lsap.config')

-- Rotation size, bytes (the same in lsap_bridge/logfile.py).
M.max_bytes = 10 * 1024 * 1024
local STALE_S = 10

local levels = { error = 1, warn = 2, info = 3, debug = 4 }
local handle ---@type {fd: integer, path: string, ino: integer}?

--- Where the Lua side and the Python service write what went wrong.
function M.path() return vim.fs.joinpath(vim.fn.stdpath('log'), 'lsap.log') end

--- Rename a full log to `<path>.1` under the shared lock; another writer holding the lock is
--- rotating it already (this line then goes to the file it leaves).
function M.rotate(path)
  local lock = path .. '.lock'
  if not vim.uv.fs_mkdir(lock, 448) then
    local st = vim.uv.fs_stat(lock)
    if not st or os.time() - st.mtime.sec < STALE_S then return end
    vim.uv.fs_rmdir(lock) -- a writer died holding it
    if not vim.uv.fs_mkdir(lock, 448) then return end
  end
  local st = vim.uv.fs_stat(path) -- again, under the lock: it may have been rotated meanwhile
  if st and st.size >= M.max_bytes then vim.uv.fs_rename(path, path .. '.1') end
  vim.uv.fs_rmdir(lock)
end

--- The open handle of `path`, reopened when the file there is not the one it has open.
local function open(path, st)
  if handle and handle.path == path and st and st.ino == handle.ino then return handle.fd end
  if handle then vim.uv.fs_close(handle.fd) end
  handle = nil
  local fd = vim.uv.fs_open(path, 'a', 420)
  if not fd then return nil end
  local now = vim.uv.fs_fstat(fd)
  handle = { fd = fd, path = path, ino = now and now.ino or -1 }
  return fd
end

--- Append one line to the file at `path` by the rule above.
function M.append(path, line)
  local st = vim.uv.fs_stat(path)
  if st and st.size >= M.max_bytes then
    M.rotate(path)
    st = vim.uv.fs_stat(path)
  end
  local fd = open(path, st)
  if fd then vim.uv.fs_write(fd, line .. '\n') end
end

--- Write a line to the log file when `level` is at least the `log_level` option.
function M.write(level, message)
  if (levels[level] or 4) > (levels[config.options.log_level] or 2) then return end
  vim.fn.mkdir(vim.fn.stdpath('log'), 'p')
  M.append(M.path(), ('%s %s [lua] %s'):format(os.date('%Y-%m-%d %H:%M:%S'), level:upper(), message))
end

return M
