-- A three-way merge of lines (`vim.diff` based): the text a buffer was read from (base),
-- the buffer (mine) and the file on disk now (theirs). Each side's changes to the base are
-- hunks; hunks of both sides that overlap or touch make one region, a conflict unless both
-- sides wrote the same lines there. Pure: lsap.transport.merge applies the result.
local M = {}

--- The hunks turning `base` into `lines`: { s, e (0-based, half-open rows of base), lines }.
local function hunks(base, lines)
  local text_a = table.concat(base, '\n') .. '\n'
  local text_b = table.concat(lines, '\n') .. '\n'
  local out = {}
  for _, h in ipairs(vim.diff(text_a, text_b, { result_type = 'indices', algorithm = 'histogram' })) do
    local start_a, count_a, start_b, count_b = h[1], h[2], h[3], h[4]
    local s = count_a == 0 and start_a or start_a - 1
    local from = count_b == 0 and start_b or start_b - 1
    out[#out + 1] = { s = s, e = s + count_a, lines = vim.list_slice(lines, from + 1, from + count_b) }
  end
  return out
end

--- One side's text of the base rows [s, e), with its hunks in there applied.
local function side_text(base, side, s, e)
  local out, pos = {}, s
  for _, h in ipairs(side) do
    vim.list_extend(out, base, pos + 1, h.s)
    vim.list_extend(out, h.lines)
    pos = h.e
  end
  vim.list_extend(out, base, pos + 1, e)
  return out
end

--- The regions where either side changed the base, in order: { s, e, mine = {hunks},
--- theirs = {hunks} }; hunks that overlap or touch share a region.
local function regions(mine, theirs)
  local all = {}
  for _, h in ipairs(mine) do
    all[#all + 1] = { h = h, side = 'mine' }
  end
  for _, h in ipairs(theirs) do
    all[#all + 1] = { h = h, side = 'theirs' }
  end
  table.sort(all, function(a, b) return a.h.s < b.h.s or (a.h.s == b.h.s and a.h.e < b.h.e) end)
  local out = {}
  for _, item in ipairs(all) do
    local last = out[#out]
    if not last or item.h.s > last.e then
      last = { s = item.h.s, e = item.h.e, mine = {}, theirs = {} }
      out[#out + 1] = last
    end
    last.e = math.max(last.e, item.h.e)
    table.insert(last[item.side], item.h)
  end
  return out
end

--- Merge three versions (lists of lines). Returns { lines = the merged text, taken = {
--- { row, at, old, new } } (disk changes applied: at `row` (0-based) of mine, `old` lines of mine
--- were replaced by `new`), conflicts = { { row, mine, theirs, base, s, e } } (at `row` of the
--- merged text, `mine` kept, `theirs` left out; rows [s, e) of base) }; `row` of `taken` counts
--- in mine before any of them applies, `at` in the merged text.
function M.merge(base, mine, theirs)
  local out = { lines = {}, taken = {}, conflicts = {} }
  local pos, shift = 0, 0 -- base row reached; mine's row minus base's row there
  for _, r in ipairs(regions(hunks(base, mine), hunks(base, theirs))) do
    vim.list_extend(out.lines, base, pos + 1, r.s)
    local ours, other = side_text(base, r.mine, r.s, r.e), side_text(base, r.theirs, r.s, r.e)
    local row = #out.lines
    if #r.theirs == 0 or vim.deep_equal(ours, other) then
      vim.list_extend(out.lines, ours)
    elseif #r.mine == 0 then
      out.taken[#out.taken + 1] = { row = r.s + shift, at = row, old = ours, new = other }
      vim.list_extend(out.lines, other)
    else
      local old = vim.list_slice(base, r.s + 1, r.e)
      out.conflicts[#out.conflicts + 1] = { row = row, mine = ours, theirs = other, base = old, s = r.s, e = r.e }
      vim.list_extend(out.lines, ours)
    end
    shift = shift + #ours - (r.e - r.s)
    pos = r.e
  end
  vim.list_extend(out.lines, base, pos + 1, #base)
  return out
end

return M
