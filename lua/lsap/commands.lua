-- `:Lsap {mode} [anchor] [key=value …]` and the CamelCase commands: parsing and completion.
-- Completion is pure Lua, so pressing <Tab> never starts the Python host.
local M = {}

local shared = { 'max_items', 'start_index', 'pagination_id', 'context_lines', 'format' }

-- Modes and the options each takes besides the shared ones.
M.modes = {
  locate = {},
  references = {},
  definition = {},
  hover = {},
}

local function options_of(mode)
  local out = vim.list_extend({}, shared)
  return vim.list_extend(out, (M.modes[mode] or {}))
end

local function mode_names()
  local names = vim.tbl_keys(M.modes)
  table.sort(names)
  return names
end

--- Split raw arguments into an anchor string and trailing `key=value` options the mode knows.
function M.parse(mode, args)
  local known = {}
  for _, key in ipairs(options_of(mode)) do known[key] = true end
  local anchor, options = vim.trim(args), {}
  while true do
    local before, key, value = (' ' .. anchor):match('^(.-)%s+([%a_]+)=(%S*)$')
    if not (key and known[key]) then break end
    options[key] = tonumber(value) or value
    anchor = vim.trim(before)
  end
  return (anchor ~= '' and anchor or nil), options
end

function M.run(mode, opts)
  local args = opts.args or ''
  if mode == nil then
    local first, rest = args:match('^%s*(%S+)%s*(.*)$')
    if not first then
      return require('lsap.report').notify('give a mode: :Lsap {' .. table.concat(mode_names(), '|') .. '} [anchor]', 'error')
    end
    mode, args = first, rest
  end
  local anchor, options = M.parse(mode, args)
  local payload = {
    mode = mode,
    anchor = anchor,
    options = options,
    bang = opts.bang,
    cursor = require('lsap.transport').cursor(),
  }
  if opts.range and opts.range > 0 then payload.range = { opts.line1, opts.line2 } end
  require('lsap').send(payload)
end

function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+')
  local command = words[1]:gsub('!$', '')
  local mode = command:match('^Lsap(%u%a*)$')
  if mode then
    mode = mode:gsub('(%l)(%u)', '%1_%2'):lower()
  else
    if #words <= 2 then
      return vim.tbl_filter(function(m) return vim.startswith(m, arglead) end, mode_names())
    end
    mode = words[2]
  end
  local out = {}
  for _, key in ipairs(options_of(mode)) do
    if vim.startswith(key .. '=', arglead) then out[#out + 1] = key .. '=' end
  end
  return out
end

return M
