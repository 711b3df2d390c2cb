-- lsap.nvim: setup, options, the log file, and the link to the lsap_bridge service.
local M = {}

-- The defaults whose meaning is the service's (lsap_bridge/connection.py, gateway.py,
-- models.py), generated into lua/lsap/shared.lua.
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
  -- Agents in your buffers (:help lsap-presence): a fading mark where an agent looks
  -- (`marks`, gone after `fade_ms`), a sign on the lines it changed (`signs`); false: none.
  presence = { marks = true, signs = true, fade_ms = 4000 },
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
  presence = { marks = 'boolean', signs = 'boolean', fade_ms = 'count' },
}

M.config = vim.deepcopy(M.defaults)

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

--- Configure lsap.nvim. Optional: without it the defaults apply.
function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then fail('setup() takes a table, got ' .. type(opts)) end
  local unknown = {}
  -- `presence = false` turns presence off; a table tunes it.
  check(opts.presence == false and vim.tbl_extend('force', opts, { presence = {} }) or opts, M.schema, '', unknown)
  M.unknown = unknown
  if #unknown > 0 then
    local message = 'unknown option ' .. table.concat(unknown, '; ') .. ': remove it from setup()'
    require('lsap.ui').notify(message, 'warn')
    M.log('warn', message)
  end
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- The agent socket is served from start-up on, not from the first command. The remote
  -- plugin's manifest is read after init.lua (and after lazy.nvim's `opts`), so look for it
  -- once Neovim has started.
  if M.config.socket then
    local function autostart()
      if M.state == 'stopped' and M.registered() then M.start() end
    end
    if vim.v.vim_did_enter == 1 then
      vim.schedule(autostart)
    else
      vim.api.nvim_create_autocmd('VimEnter', {
        group = vim.api.nvim_create_augroup('lsap.autostart', { clear = true }),
        once = true,
        callback = function() vim.schedule(autostart) end,
      })
    end
  end
end

-- -- the log file -------------------------------------------------------------------

local levels = { error = 1, warn = 2, info = 3, debug = 4 }

--- Where the Lua side and the Python service write what went wrong.
function M.log_file() return vim.fs.joinpath(vim.fn.stdpath('log'), 'lsap.log') end

--- Append a line to the log file when `level` is at least `config.log_level`.
function M.log(level, message)
  if (levels[level] or 4) > (levels[M.config.log_level] or 2) then return end
  vim.fn.mkdir(vim.fn.stdpath('log'), 'p')
  local file = io.open(M.log_file(), 'a')
  if not file then return end
  file:write(('%s %s [lua] %s\n'):format(os.date('%Y-%m-%d %H:%M:%S'), level:upper(), message))
  file:close()
end

-- -- installation -------------------------------------------------------------------

--- The directory of this plugin (it holds `lua/`, `rplugin/` and `pyproject.toml`).
M.root = require('lsap.install').root

--- The build step for plugin managers and by-hand installs: the Python host (a venv of its
--- own unless you chose one), lsap_bridge in it, :UpdateRemotePlugins, the help tags and
--- `lsap` on PATH, with progress and a one-line result (`:help lsap.build()`).
function M.build() return require('lsap.install').build() end

-- -- the service --------------------------------------------------------------------

local queue = {}
-- 'stopped', 'starting' or 'running' (the service registered its channel).
M.state = 'stopped'

--- Run a mode at the cursor or on an anchor. opts: { anchor = 'path:Sym@find',
--- options = { max_items = 10, … }, bang = boolean, range = { first_line, last_line },
--- cursor = where to work instead of the cursor }; mode 'request' takes `text`, a Language
--- Server Request block, instead. The report knows, by its ticket, whether you moved on.
function M.run(mode, opts)
  opts = opts or {}
  M.send({
    mode = mode,
    text = opts.text,
    anchor = opts.anchor,
    options = opts.options or {},
    bang = opts.bang or false,
    range = opts.range,
    cursor = opts.cursor or require('lsap.transport').cursor(),
    ticket = require('lsap.ui').ticket(mode),
  })
end

--- Hand a command to the service, starting it through the remote plugin if needed.
function M.send(payload)
  local transport = require('lsap.transport')
  if transport.chan then
    transport.notify('lsap_command', payload)
    return
  end
  table.insert(queue, payload)
  if #queue == 1 then M.start() end
end

--- Called by transport.register: deliver what waited for the service.
function M.flush()
  local transport = require('lsap.transport')
  M.state = 'running'
  for _, payload in ipairs(queue) do
    transport.notify('lsap_command', payload)
  end
  queue = {}
end

--- Whether `:UpdateRemotePlugins` registered the remote plugin. Its functions are
--- defined lazily (a FuncUndefined autocommand) until the Python host first runs.
function M.registered() return vim.fn.exists('*LsapStart') == 1 or vim.fn.exists('#FuncUndefined#LsapStart') == 1 end

-- How long the service may take to connect before the human is told where to look.
M.start_timeout_ms = 15000

-- Why the Python host could not start, once found out: later starts in this session say
-- it again at once instead of retrying the host (its error is the same until a restart).
local host_error

--- The first line of a Vimscript error, without the function chain and the Lua traceback.
local function first_line(err)
  local text = tostring(err):gsub('\n?stack traceback:.*', '')
  text = text:match('.*, line %d+: (.*)') or text
  return vim.trim(text:match('^(.-%.)%s') or text:gsub('\n.*', ''))
end

--- LsapStart failed because Neovim could not run its Python host: ask the host why (off
--- the main loop), then say so in one line with the fix, never with a stack trace.
local function host_failed(err)
  local install = require('lsap.install')
  local prog = install.host()
  local fallback = ('the Python host cannot start (%s): :checkhealth lsap names the missing piece; %s'):format(
    first_line(err),
    install.HOST_FIX
  )
  if not prog then
    host_error = fallback
    return M.start_failed(host_error)
  end
  install.probe_async(prog, function(info, probe_err)
    local problem = install.host_problem(prog, info, probe_err)
    host_error = problem and (problem .. '; ' .. install.HOST_FIX) or fallback
    M.start_failed(host_error)
  end)
end

--- Start the service in the Python host (the remote plugin `LsapStart`).
function M.start()
  if not M.registered() then
    return M.start_failed(
      'the remote plugin is not registered: run :lua require("lsap").build() (it installs the Python half and registers the plugin), then restart Neovim; :checkhealth lsap shows what is missing'
    )
  end
  if M.state ~= 'stopped' then return end
  if host_error then return M.start_failed(host_error) end
  M.state = 'starting'
  local ok, err = pcall(vim.fn.LsapStart, {
    address = vim.v.servername,
    config = M.config,
    cwd = vim.fn.getcwd(),
    log_file = M.log_file(),
  })
  if not ok then return host_failed(err) end
  vim.defer_fn(function()
    if M.state == 'starting' then
      M.start_failed(
        ('the service did not start within %d s: see %s and :checkhealth lsap'):format(
          M.start_timeout_ms / 1000,
          M.log_file()
        )
      )
    end
  end, M.start_timeout_ms)
end

--- The service cannot start: drop what waited for it, log and tell the human why. Also
--- called by the remote plugin when the host cannot import lsap_bridge.
function M.start_failed(message)
  M.state, queue = 'stopped', {}
  M.log('error', message)
  require('lsap.ui').notify(message, 'error')
end

return M
