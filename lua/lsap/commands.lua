-- `:Lsap {mode} [anchor] [key=value …]` and the CamelCase commands: parsing, the picker and
-- completion. Everything here is pure Lua, so pressing <Tab> never starts the Python host.
local M = {}

-- Options every mode takes (lsap_bridge.capabilities.base.Request).
M.shared = { 'max_items', 'start_index', 'pagination_id', 'context_lines', 'format' }

-- Modes and the options each takes besides the shared ones. This mirrors the Python
-- registry (lsap_bridge.capabilities.REGISTRY); a test keeps the two equal.
M.modes = {
  locate = {},
  references = { 'include_declaration' },
  definition = { 'max_code_lines' },
  hover = {},
  diagnostics = { 'file_path', 'min_severity' },
  editor = {},
  rename = { 'new_name', 'exclude_files' },
  rename_preview = { 'new_name' },
  rename_execute = { 'rename_id', 'exclude_files' },
  batch = { 'requests' },
  schema = { 'modes' },
  declaration = { 'max_code_lines' },
  type_definition = { 'max_code_lines' },
  implementations = { 'max_code_lines' },
  inspect = { 'max_code_lines', 'include_external' },
  outline = { 'file_path', 'symbol_path', 'recursive' },
  search = { 'query', 'kinds' },
  calls = { 'direction', 'depth', 'include_external' },
  types = { 'direction', 'depth', 'include_external' },
  inlay_hints = { 'file_path', 'start_line', 'end_line' },
  signature_help = {},
  completion = {},
}

-- Values offered when completing `key=`: `['mode.key']` for one mode, else `key` for every
-- mode. A test keeps them equal to the closed sets (Literal, bool) of the Python models.
M.values = {
  ['calls.direction'] = { 'incoming', 'outgoing', 'both' },
  ['types.direction'] = { 'supertypes', 'subtypes', 'both' },
  include_declaration = { 'true', 'false' },
  format = { 'markdown', 'json' },
  min_severity = { 'error', 'warning', 'information', 'hint' },
  recursive = { 'true', 'false' },
  include_external = { 'true', 'false' },
  kinds = { 'class', 'function', 'method', 'interface', 'variable', 'constant', 'enum', 'module' },
}

local function notify(message, level) require('lsap.report').notify(message, level) end

--- The Language Server Request block to run: the range, else the block around the
--- cursor, else the whole buffer.
local function request_text(opts)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  if opts.range and opts.range > 0 then
    return table.concat(vim.list_slice(lines, opts.line1, opts.line2), '\n')
  end
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local first, last
  for i = row, 1, -1 do
    if lines[i]:match('^%*%*%* Begin Language Server Request') then first = i break end
    if i < row and lines[i]:match('^%*%*%* End Language Server Request') then break end
  end
  if first then
    for i = math.max(first, row), #lines do
      if lines[i]:match('^%*%*%* End Language Server Request') then last = i break end
    end
  end
  if first and last then return table.concat(vim.list_slice(lines, first, last), '\n') end
  return table.concat(lines, '\n')
end

-- Subcommands of `:Lsap` that are not capabilities of the service.
-- name = { run = function(opts, args), complete = function(arglead, words)?, desc = string }
-- (`:Lsap log`, the agent activity view, is registered here by its module.)
M.subcommands = {
  request = {
    desc = 'run the Language Server Request block under the cursor, the range, or the buffer',
    run = function(opts) require('lsap').run('request', { text = request_text(opts), bang = opts.bang }) end,
  },
  health = {
    desc = 'check the set-up (:checkhealth lsap)',
    run = function() vim.cmd('checkhealth lsap') end,
  },
  log = {
    desc = "agents' requests and answers, live",
    run = function() require('lsap.log').open() end,
  },
}

-- The CamelCase commands of DESIGN §7 and what each runs.
M.camel = {
  LsapReferences = 'references',
  LsapDefinition = 'definition',
  LsapHover = 'hover',
  LsapInspect = 'inspect',
  LsapOutline = 'outline',
  LsapCalls = 'calls',
  LsapSearch = 'search',
  LsapDiagnostics = 'diagnostics',
  LsapRename = 'rename',
  LsapRequest = 'request',
}

--- Sorted names of the modes, then of the subcommands.
function M.names()
  local modes, subs = vim.tbl_keys(M.modes), vim.tbl_keys(M.subcommands)
  table.sort(modes)
  table.sort(subs)
  return vim.list_extend(modes, subs)
end

local function options_of(mode)
  return vim.list_extend(vim.list_extend({}, M.shared), M.modes[mode] or {})
end

local function convert(value)
  if value == 'true' then return true end
  if value == 'false' then return false end
  return tonumber(value) or value
end

--- Split raw arguments into an anchor string and trailing `key=value` options the mode knows.
function M.parse(mode, args)
  local known = {}
  for _, key in ipairs(options_of(mode)) do known[key] = true end
  local anchor, options = vim.trim(args), {}
  while true do
    local before, key, value = (' ' .. anchor):match('^(.-)%s+([%a_]+)=(%S*)$')
    if not (key and known[key]) then break end
    options[key] = convert(value)
    anchor = vim.trim(before)
  end
  return (anchor ~= '' and anchor or nil), options
end

--- Run a mode or subcommand. `name` nil: the first word of the arguments, or the picker.
function M.run(name, opts)
  if vim.b.lsap_disable or vim.g.lsap_disable then
    return notify('lsap is disabled here (vim.b.lsap_disable / vim.g.lsap_disable)', 'warn')
  end
  local args = opts.args or ''
  if name == nil then
    local first, rest = args:match('^%s*(%S+)%s*(.*)$')
    if not first then return M.pick(opts) end
    name, args = first, rest
  end
  local sub = M.subcommands[name]
  if sub then return sub.run(opts, args) end
  if not M.modes[name] then
    return notify(('unknown mode %q: use one of %s'):format(name, table.concat(M.names(), ', ')), 'error')
  end
  local anchor, options = M.parse(name, args)
  require('lsap').run(name, {
    anchor = anchor,
    options = options,
    bang = opts.bang,
    range = (opts.range and opts.range > 0) and { opts.line1, opts.line2 } or nil,
  })
end

--- `:Lsap` alone: choose a mode with `vim.ui.select`, then run it at the cursor.
function M.pick(opts)
  vim.ui.select(M.names(), {
    prompt = 'lsap',
    format_item = function(name)
      local sub = M.subcommands[name]
      if sub then return name .. '  — ' .. sub.desc end
      local extra = M.modes[name]
      return #extra > 0 and (name .. '  (' .. table.concat(extra, ', ') .. ')') or name
    end,
  }, function(choice)
    if choice then M.run(choice, vim.tbl_extend('force', opts, { args = '' })) end
  end)
end

local function starting(list, prefix)
  return vim.tbl_filter(function(item) return vim.startswith(item, prefix) end, list)
end

function M.complete(arglead, cmdline, cursorpos)
  local command, rest = cmdline:sub(1, cursorpos):match('^.-(Lsap%a*)!?%s+(.*)$')
  if not command then return {} end
  local words = vim.split(rest, '%s+')
  local name = M.camel[command]
  if command == 'Lsap' then
    if #words <= 1 then return starting(M.names(), arglead) end
    name = table.remove(words, 1)
  end
  local sub = M.subcommands[name]
  if sub then return sub.complete and sub.complete(arglead, words) or {} end
  if not M.modes[name] then return {} end
  local key = arglead:match('^([%a_]+)=')
  if key then
    local values = M.values[name .. '.' .. key] or M.values[key] or {}
    return starting(vim.tbl_map(function(v) return key .. '=' .. v end, values), arglead)
  end
  local given = {}
  for _, word in ipairs(words) do
    local k = word:match('^([%a_]+)=')
    if k then given[k] = true end
  end
  local out = {}
  for _, option in ipairs(options_of(name)) do
    if not given[option] and vim.startswith(option .. '=', arglead) then out[#out + 1] = option .. '=' end
  end
  -- The anchor starts with a file path: offer files until one is given.
  if arglead ~= '' and #words <= 1 then vim.list_extend(out, vim.fn.getcompletion(arglead, 'file')) end
  return out
end

return M
