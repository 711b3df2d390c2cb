-- lsap.nvim's options: their defaults, what each must be, and the ones in force. A leaf:
-- every module reads its options here (`require('lsap.config').options`), none of lsap's
-- is required by it; `require('lsap').config` is the same table (lsap/init.lua).
local M = {}

-- The defaults whose meaning is the service's (lsap_bridge/fair_share.py, gateway.py,
-- models.py), generated into lua/lsap/shared.lua (a leaf: data only).
local python = require('lsap.shared').defaults

M.defaults = {
  -- Start the service and its agent socket once Neovim has started; false: no socket
  -- (agents stay out), and the service starts with the first command.
  socket = true,
  -- What agents may change in your files: 'allow', 'ask' or 'deny'.
  edit_policy = 'allow',
  -- Also listen on TCP, e.g. tcp = '127.0.0.1:0' (loopback only, token in the discovery
  -- file); unset by default. tcp_force = true allows a non-loopback address.
  tcp_force = false,
  -- Agents' share of the service (:help lsap-limits): calls one connection runs at once
  -- and may have waiting beyond those (more are refused with `busy`), the memory one
  -- connection may hold in MiB (unanswered calls and unread replies), and agents' calls
  -- running at once over all connections.
  agent_limits = vim.deepcopy(python.agent_limits),
  report = {
    -- Height of the report window (a horizontal split at the bottom), in lines.
    height = 15,
    -- Open the report in a vertical split on the right instead, this many columns wide.
    vertical = false,
    width = 80,
    -- Move the cursor into the report window when it opens (never when you have typed,
    -- moved or changed mode since asking: it then opens beside you and says where).
    focus = true,
  },
  -- How an agent's edit asks you under edit_policy = 'ask'.
  approval = {
    -- 'float': a window with the diff, answered by its keys (a apply, r refuse);
    -- 'select': vim.ui.select (for UI plugins), with the diff in the log.
    window = 'float',
    -- Seconds to answer before the edit is refused (the agent is told); at most 3600.
    timeout = 300,
  },
  -- Least severe message written to the log file (see require('lsap').log_file()).
  log_level = 'warn',
  -- Files larger than this (bytes) are never opened for the language servers; a request on
  -- one is refused. Default: $LSAP_MAX_FILE_SIZE (how the embedded mode sets it), else 4 MiB.
  max_file_size = tonumber(vim.env.LSAP_MAX_FILE_SIZE) or python.max_file_size,
  -- The budget of one answer, in tokens (cl100k), unless a request sets `max_tokens`: longer
  -- answers are paged or cut, saying what was left out. Default: $LSAP_MAX_TOKENS, else 8000.
  max_tokens = tonumber(vim.env.LSAP_MAX_TOKENS) or python.max_tokens,
  -- Seconds an agent's edit (rename, move, code action, format, the text format's commands)
  -- waits, once written, for the servers to confirm the diagnostics after it; files they have
  -- not confirmed by then are answered `pending`, with the `check` that reports them (a
  -- request's `diagnostics_wait` sets its own). 'settled': wait as long as they take
  -- (bounded). Default: $LSAP_DIAGNOSTICS_WAIT, else 1.
  diagnostics_wait = tonumber(vim.env.LSAP_DIAGNOSTICS_WAIT)
    or (vim.env.LSAP_DIAGNOSTICS_WAIT == 'settled' and 'settled')
    or python.diagnostics_wait,
  -- Agents in your buffers (:help lsap-presence): a fading mark where an agent looks
  -- (`marks`, gone after `fade_ms`), a sign on the lines it changed (`signs`); false: none.
  presence = { marks = true, signs = true, fade_ms = 4000 },
  -- The inline review (:Lsap review, :help lsap-inline-review): its keys, mapped in the
  -- buffers of the change while it has hunks left; a key you mapped yourself stays yours
  -- (`override = true`: the review's wins in those buffers).
  review = {
    keys = {
      next = ']h',
      prev = '[h',
      keep = '<Leader>rk',
      undo = '<Leader>ru',
      keep_file = '<Leader>rK',
      undo_file = '<Leader>rU',
      keep_all = '<Leader>ra',
      undo_all = '<Leader>rx',
      help = 'g?',
    },
    override = false,
  },
  -- A file changed on disk under unsaved text (:help lsap-merge): the keys that decide the
  -- conflict under the cursor, mapped in its buffer while it has one (never over yours).
  merge = { keys = { mine = 'co', theirs = 'ct', both = 'cb' } },
}

-- What each option must be: a type name ('count': a whole number >= 1), a list of allowed
-- values, or a table of sub-options. Add an entry here with every new option.
M.schema = {
  socket = 'boolean',
  edit_policy = { 'allow', 'ask', 'deny' },
  tcp = 'string',
  tcp_force = 'boolean',
  agent_limits = vim.tbl_map(function() return 'count' end, python.agent_limits),
  report = { height = 'number', vertical = 'boolean', width = 'number', focus = 'boolean' },
  approval = { window = { 'float', 'select' }, timeout = 'number' },
  log_level = { 'error', 'warn', 'info', 'debug' },
  max_file_size = 'number',
  max_tokens = 'count',
  diagnostics_wait = 'wait',
  presence = { marks = 'boolean', signs = 'boolean', fade_ms = 'count' },
  review = {
    keys = vim.tbl_map(function() return 'string' end, M.defaults.review.keys),
    override = 'boolean',
  },
  merge = { keys = { mine = 'string', theirs = 'string', both = 'string' } },
}

M.options = vim.deepcopy(M.defaults)

-- Keys given to setup() that no option has (shown by :checkhealth lsap).
M.unknown = {}

local function fail(msg) error('(lsap) ' .. msg, 0) end

local function names_of(schema)
  local names = vim.tbl_keys(schema)
  table.sort(names)
  return names
end

--- Check `opts` against `schema`; a wrong type is an error, an unknown key is collected.
local function check(opts, schema, prefix, unknown)
  for key, value in pairs(opts) do
    local name, rule = prefix .. tostring(key), schema[key]
    if rule == nil then
      unknown[#unknown + 1] = ('%s (valid: %s)'):format(name, table.concat(names_of(schema), ', '))
    elseif rule == 'count' then
      if type(value) ~= 'number' or value < 1 or value % 1 ~= 0 then
        fail(('option %q must be a whole number >= 1, got %s'):format(name, vim.inspect(value)))
      end
    elseif rule == 'wait' then
      if value ~= 'settled' and not (type(value) == 'number' and value >= 0 and value <= 600) then
        fail(('option %q must be seconds (0 to 600) or "settled", got %s'):format(name, vim.inspect(value)))
      end
    elseif type(rule) == 'string' then
      if type(value) ~= rule then fail(('option %q must be a %s, got %s'):format(name, rule, type(value))) end
    elseif vim.islist(rule) then
      if not vim.tbl_contains(rule, value) then
        fail(('option %q must be one of %s, got %s'):format(name, table.concat(rule, ', '), vim.inspect(value)))
      end
    elseif type(value) ~= 'table' then
      fail(('option %q must be a table, got %s'):format(name, type(value)))
    else
      check(value, rule, name .. '.', unknown)
    end
  end
end

--- Check `opts` against the schema and make them the options in force (the defaults under
--- them). A wrong type raises; unknown keys are kept in `M.unknown` and returned.
function M.set(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then fail('setup() takes a table, got ' .. type(opts)) end
  local unknown = {}
  -- `presence = false` turns presence off; a table tunes it.
  check(opts.presence == false and vim.tbl_extend('force', opts, { presence = {} }) or opts, M.schema, '', unknown)
  M.unknown = unknown
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  return unknown
end

return M
