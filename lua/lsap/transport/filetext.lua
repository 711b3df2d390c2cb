-- A file as lsap compares it with a buffer: its stamp (size, times, inode: what says it
-- changed, as filestate.DiskStamp) and its bytes read as the buffer's lines. Pure helpers,
-- shared by the disk sync (`transport.disk`), the three-way merge and the edits.
local M = {}

-- Writes this close to a read may leave size and mtime alike (see filestate.RACY_NS).
local RACY_NS = require('lsap.shared').racy_ns

local function stamp_of(name)
  local st = vim.uv.fs_stat(name)
  if not st or st.type ~= 'file' then return nil end
  -- The change time too: a rewrite whose mtime was put back (`touch -d`, `os.utime`) still
  -- moves it (filestate.DiskStamp).
  return {
    size = st.size,
    sec = st.mtime.sec,
    nsec = st.mtime.nsec,
    ino = st.ino,
    dev = st.dev,
    csec = st.ctime.sec,
    cnsec = st.ctime.nsec,
  }
end

local function same(a, b)
  if a == nil or b == nil then return a == b end
  return a.size == b.size
    and a.sec == b.sec
    and a.nsec == b.nsec
    and a.ino == b.ino
    and a.dev == b.dev
    and a.csec == b.csec
    and a.cnsec == b.cnsec
end

local function racy(stamp)
  local now = vim.uv.clock_gettime('realtime')
  local sec, nsec = stamp.sec, stamp.nsec
  if stamp.csec > sec or (stamp.csec == sec and stamp.cnsec > nsec) then
    sec, nsec = stamp.csec, stamp.cnsec
  end
  return (now.sec - sec) * 1e9 + (now.nsec - nsec) < RACY_NS
end

local NEWLINES = { unix = '\n', dos = '\r\n', mac = '\r' }

--- The file's bytes, when they can be compared with the buffer's lines (UTF-8 text: bytes
--- tell), else nil (another encoding, binary, unreadable).
local function file_text(bufnr, name)
  local bo = vim.bo[bufnr]
  if (bo.fileencoding ~= '' and bo.fileencoding ~= 'utf-8') or bo.bomb or bo.binary then return nil end
  local file = io.open(name, 'rb')
  if not file then return nil end
  local data = file:read('*a')
  file:close()
  return data
end

--- Whether the buffer's lines, as Neovim would write them, are these bytes.
local function holds(bufnr, data)
  local bo = vim.bo[bufnr]
  local nl = NEWLINES[bo.fileformat] or '\n'
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  return table.concat(lines, nl) .. (bo.eol and nl or '') == data or (data == '' and #lines == 1 and lines[1] == '')
end

--- A file's text as lines of this buffer, the way Neovim reads it in the buffer's
--- 'fileformat' (dos: a line break with or without its CR), and whether it ends with a
--- newline; nil for 'fileformat' mac.
local function lines_of(bufnr, data)
  local ff = vim.bo[bufnr].fileformat
  if ff == 'mac' then return nil end
  local lines = vim.split(data, '\n', { plain = true })
  local eol = #lines > 1 and lines[#lines] == ''
  if eol then table.remove(lines) end
  if ff == 'dos' then
    for i, line in ipairs(lines) do
      lines[i] = line:gsub('\r$', '')
    end
  end
  return lines, eol
end

M.stamp, M.same, M.racy = stamp_of, same, racy
M.file_text, M.holds, M.lines_of = file_text, holds, lines_of

return M
