-- What each row of a report shows: the file and line it leads to (its target) and which
-- rows are the report's entries (]] and [[ move between them), read from the report's
-- Markdown and its locations. Pure: no buffer, no window (tests/lua/test_report.lua).
local M = {}

--- A report path made absolute under its root.
function M.absolute(root, path) return (root and not vim.startswith(path, '/')) and (root .. '/' .. path) or path end

local function readable(root, path) return vim.fn.filereadable(M.absolute(root, path)) == 1 end

--- The byte column where a changed line of a diff changes: the start of the word in which
--- the old and new text first differ (`apply(` → `apply_to(`: at `apply`).
local function first_difference(old, new)
  local i = 1
  while i <= #old and old:byte(i) == new:byte(i) do
    i = i + 1
  end
  i = i - 1 -- bytes 1..i are the same
  while i > 0 and old:sub(i, i):match('[%w_]') do
    i = i - 1
  end
  return i
end

--- What one `index` reads a report with: its locations by `path:line`, the paths they name,
--- and whether each other path names a file (asked once per report).
local function reader(locations, root)
  local known, paths, files = {}, {}, {}
  for _, loc in ipairs(locations) do
    local key = loc.path .. ':' .. loc.line
    known[key] = known[key] or loc
    paths[loc.path] = true
  end
  local r = { paths = paths, locations = locations }
  function r.file(path)
    if files[path] == nil then files[path] = path ~= '' and (paths[path] or readable(root, path)) end
    return files[path]
  end
  function r.target(path, line, extra)
    local t = extra or {}
    t.path, t.line = path, line
    t.loc = known[path .. ':' .. line]
    return t
  end
  return r
end

--- A row inside a diff fence of a file's section: a removed line leads to its old line, an
--- added one to the old line it replaces (its column where the two first differ).
local function diff_row(r, section, diff, targets, row, text)
  local t
  local old = text:match('^@@ %-(%d+)')
  if old then
    diff.old, diff.run = tonumber(old), nil
    return nil
  end
  if diff.old == nil or text:match('^%-%-%- ') or text:match('^%+%+%+ ') then return nil end
  local sign = text:sub(1, 1)
  if sign == '-' then
    if not diff.run then diff.run = { row = row, line = diff.old, text = text:sub(2) } end
    t = r.target(section, diff.old)
    diff.old = diff.old + 1
  elseif sign == '+' then
    local run = diff.run
    t = r.target(section, run and run.line or diff.old)
    if run and not run.paired then
      -- the first line of a change: its column is where the old and new text part
      run.paired = true
      local col = first_difference(run.text, text:sub(2))
      targets[run.row].col = col
      t.col = col
    end
  elseif sign == ' ' or text == '' then -- context (difflib strips a blank one's space)
    diff.old = diff.old + 1
    diff.run = nil
  end
  if sign == '-' and diff.run.row == row then t.change = true end
  return t
end

--- `path:line[:column]` anywhere (search, calls, types, the anchor line): the first that is
--- one of the report's locations, else the first with a column (where an anchor resolved),
--- else the first naming a file.
local function mentioned(r, text)
  local best, rank = nil, 0
  for path, l, c in text:gmatch('([%w%._/%-@+~]+):(%d+):?(%d*)') do
    if r.file(path) then
      local candidate = r.target(path, tonumber(l))
      if c ~= '' then
        candidate.character, candidate.encoding = tonumber(c) - 1, 'utf-32'
      end
      local rank_of = candidate.loc and 3 or (c ~= '' and 2 or 1)
      if rank_of > rank then
        best, rank = candidate, rank_of
      end
    end
  end
  return best
end

--- Any other row: a numbered code line, a `- line:col` item, a mention, a renamed file.
local function text_row(r, section, fence, text)
  local t
  local prefix, number = text:match('^(%s*%-?%s*(%d+)| ?)')
  if number and section then
    t = r.target(section, tonumber(number), { code_at = fence and #prefix or nil })
  else
    local l, c = text:match('^%s*%- (%d+):(%d+) ')
    if l and section then t = r.target(section, tonumber(l), { character = tonumber(c) - 1, encoding = 'utf-32' }) end
  end
  t = t or mentioned(r, text)
  if not t then -- `- path · 3 edits` (a rename): the file's location
    local path = text:match('^%s*%- (%S+)')
    if path and r.paths[path] then
      for _, loc in ipairs(r.locations) do
        if loc.path == path then return r.target(path, loc.line) end
      end
    end
  end
  return t
end

--- Each row's target ({ path, line, loc = the report's location, col = byte column,
--- code_at = where a numbered code line's code starts }) and the entry rows, from the
--- report's lines and its locations.
function M.index(lines, locations, root)
  local r = reader(locations, root)
  local targets, entries, seen = {}, {}, {}
  local section, fence, diff = nil, nil, nil
  for row, text in ipairs(lines) do
    local t
    local header = text:match('^###%s+(.-)%s*$')
    if text:match('^```') then
      fence = (fence == nil) and text:sub(4) or nil
      diff = {}
    elseif header then
      local path = header:gsub(' > .*$', ''):gsub(' · .*$', ''):gsub(' %(.*$', '')
      section = r.file(path) and path or nil
    elseif fence == 'diff' and section then
      t = diff_row(r, section, diff, targets, row, text)
    else
      t = text_row(r, section, fence, text)
    end
    if t then
      targets[row] = t
      -- Entries: the first row showing each of the report's locations; a report without
      -- locations (a rename preview) has the first line of each change.
      local key = t.path .. ':' .. t.line
      if text:match('^Anchor:') then
        -- what the report is about, not one of its entries
      elseif (t.loc and not seen[key]) or (t.change and #locations == 0) then
        seen[key] = true
        entries[#entries + 1] = row
      end
    end
  end
  return targets, entries
end

--- The rows whose <CR> runs a command, the entries of a report without locations: a
--- change set's (`:Lsap changes`, its review), a code action's.
function M.commands(lines)
  local found = {}
  for row, text in ipairs(lines) do
    if text:match('`:Lsap review %d+`') or text:match('^%d+%. `%x+` ') then found[#found + 1] = row end
  end
  return found
end

--- A target's byte column in the line `text` of its file: the report location's (a byte
--- column, or a `character` in an `encoding`), the diff's, else the line's first non-blank.
function M.column(t, text)
  local loc = t.loc or {}
  local character, encoding = loc.character or t.character, loc.encoding or t.encoding
  if loc.col and not loc.character then return loc.col end
  if t.col then return t.col end
  if character then return vim.str_byteindex(text, encoding or 'utf-32', character, false) end
  return #(text:match('^%s*') or '')
end

return M
