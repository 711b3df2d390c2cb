-- Answers packed for their trip to the service: a list of locations or a symbol tree as a
-- few flat lists instead of tens of thousands of small tables (doc/architecture.md, Costs).
local M = {}

local function position(p)
  return type(p) == 'table'
    and type(p.line) == 'number'
    and p.line >= 0
    and p.line % 1 == 0
    and type(p.character) == 'number'
    and p.character >= 0
    and p.character % 1 == 0
end

--- A range's four numbers appended to a flat list.
local function numbers(out, range)
  local s, e = range.start, range['end']
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = s.line, s.character, e.line, e.character
end

--- A Location | Location[] | LocationLink[] answer packed for its trip to the service:
--- `{packed = {{uri, {start line, start character, end line, end character, ...}}, ...}}`,
--- one entry per file in the order first seen, the ranges' numbers in one flat list. Twenty
--- thousand references are then a few hundred small tables instead of a hundred thousand,
--- for msgpack and for Python (doc/architecture.md, Costs). Entries that are not a file's
--- location with a valid range are left out, as the service's decoder leaves them out.
local function pack_locations(result)
  if type(result) ~= 'table' then return result end
  if result.uri or result.targetUri then result = { result } end
  local files, by_uri = {}, {}
  for _, item in ipairs(result) do
    if type(item) == 'table' then
      local uri = item.targetUri or item.uri
      local range = item.targetSelectionRange or item.range
      if
        type(uri) == 'string'
        and uri:sub(1, 5) == 'file:'
        and type(range) == 'table'
        and position(range.start)
        and position(range['end'])
      then
        local flat = by_uri[uri]
        if not flat then
          flat = {}
          by_uri[uri] = flat
          files[#files + 1] = { uri, flat }
        end
        numbers(flat, range)
      end
    end
  end
  return { packed = files }
end

--- A DocumentSymbol[] answer packed for its trip to the service: `{symbols = {names,
--- details, numbers}}`, the symbols depth first, ten numbers each (the parent's place,
--- 1-based, or 0; the kind; the range's four; the selection range's four). A 20,000-line
--- file's 20,000 symbols are then three lists instead of 140,000 tables. Anything else (an
--- empty answer, flat SymbolInformation[], an entry without a valid range) goes as it is.
local function pack_symbols(result)
  if type(result) ~= 'table' or type(result[1]) ~= 'table' or result[1].location ~= nil then return result end
  local names, details, nums = {}, {}, {}
  local function visit(items, parent)
    for _, item in ipairs(items) do
      local range = type(item) == 'table' and item.range
      local selection = type(item) == 'table' and (item.selectionRange or range)
      if
        type(range) ~= 'table'
        or type(selection) ~= 'table'
        or type(item.name) ~= 'string'
        or not (
          position(range.start)
          and position(range['end'])
          and position(selection.start)
          and position(selection['end'])
        )
      then
        error('not a DocumentSymbol')
      end
      local at = #names + 1
      names[at], details[at] = item.name, type(item.detail) == 'string' and item.detail or ''
      local n = #nums
      nums[n + 1], nums[n + 2] = parent, type(item.kind) == 'number' and item.kind or 0
      numbers(nums, range)
      numbers(nums, selection)
      if type(item.children) == 'table' then visit(item.children, at) end
    end
  end
  if not pcall(visit, result, 0) then return result end
  return { symbols = { names, details, nums } }
end

-- How an answer is packed when a call asks for it (`pack`), by method.
M.PACKERS = {
  ['textDocument/references'] = pack_locations,
  ['textDocument/definition'] = pack_locations,
  ['textDocument/declaration'] = pack_locations,
  ['textDocument/typeDefinition'] = pack_locations,
  ['textDocument/implementation'] = pack_locations,
  ['textDocument/documentSymbol'] = pack_symbols,
}

return M
