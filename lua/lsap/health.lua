-- `:checkhealth lsap`: everything a first-time user needs to get from install to a report.
-- Every warning and error says what to do about it.
local M = {}

local health = vim.health

-- lsap modes and the LSP method each cannot answer without (declared by the Python side,
-- generated into lua/lsap/modes.lua).
local needs = require('lsap.modes').needs

local function neovim()
  health.start('Neovim')
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. version)
  else
    health.error('Neovim ' .. version .. ' is too old', { 'install Neovim 0.11 or newer' })
  end
end

local BUILD = ':lua require("lsap").build()'

--- The lsap command of the host: agents and MCP configs run it by name.
local function command(install, info, fix)
  local lsap, where, other = install.command(info)
  if not lsap then return health.warn('no lsap command next to ' .. info.executable, { fix }) end
  if where == 'on_path' then return health.ok('lsap command: ' .. lsap .. ' (on PATH, for agents and MCP configs)') end
  local link = ('ln -sf %s ~/.local/bin/lsap (with ~/.local/bin on PATH)'):format(lsap)
  if where == 'other' then
    return health.warn(("lsap on PATH is %s, not this host's %s"):format(other, lsap), { 'run: ' .. link })
  end
  health.warn(('lsap command: %s, which is not on PATH, so agents cannot run it by name'):format(lsap), {
    'run: ' .. link .. '; ' .. BUILD .. ' makes that link when ~/.local/bin is on PATH',
  })
end

--- Returns whether the host can run the remote plugin (pynvim and lsap_bridge import).
local function python()
  health.start('Python host')
  local install = require('lsap.install')
  if vim.g.loaded_python3_provider == 0 then
    health.error(
      'the Python 3 provider is disabled (vim.g.loaded_python3_provider = 0)',
      { 'remove that line from your config, then restart Neovim' }
    )
    return false
  end
  local prog, origin = install.host()
  if not prog then
    local python3 = vim.fn.exepath('python3')
    if python3 == '' then
      health.error(
        'Neovim has no Python 3 host, and there is no python3 on PATH',
        { 'install Python >= 3.10 (e.g. sudo apt install python3 python3-venv), then run ' .. BUILD }
      )
    else
      health.error(
        ('Neovim has no Python 3 host: no Python on PATH has pynvim (the first is %s)'):format(python3),
        { 'run ' .. BUILD .. ': it makes a venv for Neovim with pynvim and lsap_bridge in it' }
      )
    end
    return false
  end
  local from = ({
    setting = 'vim.g.python3_host_prog',
    venv = 'the venv of require("lsap").build()',
    path = 'found on PATH',
  })[origin]
  local elsewhere = 'point vim.g.python3_host_prog at a Python >= 3.10, or remove it and run ' .. BUILD
  if vim.fn.executable(prog) ~= 1 then
    health.error(
      ('the Python host %s (%s) does not exist'):format(prog, from),
      { 'run ' .. BUILD .. ' (it makes the venv when the path ends in bin/python), or ' .. elsewhere }
    )
    return false
  end
  local info, err = install.read_probe(prog, vim.system(install.probe_cmd(prog), { text = true }):wait(15000))
  if not info then
    health.error(err, { elsewhere })
    return false
  end
  local new, version = install.new_enough(info)
  if not new then
    health.error(('%s is Python %s; lsap needs 3.10 or newer'):format(prog, version), { elsewhere })
    return false
  end
  local fix = info.managed
      and ('run ' .. BUILD .. ' and set vim.g.python3_host_prog to the venv it makes: ' .. prog .. ' is externally managed (PEP 668), so pip cannot install into it')
    or ('run ' .. BUILD .. ', or in a shell: ' .. prog .. ' -m pip install -e ' .. install.root)
  local found = info.packages
  -- The verdict start-up shows too (lsap.init), with the same fix first.
  local problem = install.host_problem(prog, info)
  if problem then
    health.error(('%s (Python %s, %s)'):format(problem, version, from), { install.HOST_FIX, fix })
  else
    health.ok(('Python host: %s (Python %s, %s)'):format(prog, version, from))
    health.ok('pynvim ' .. found.pynvim)
  end
  if not found['lsap-bridge'] then
    health.error('the Python package lsap_bridge is not installed in ' .. prog, { fix })
  elseif not info.location then
    health.error('lsap_bridge does not import: ' .. tostring(info.error), { fix })
  else
    health.ok('lsap_bridge ' .. found['lsap-bridge'] .. ' (' .. info.location .. ')')
    if not vim.startswith(vim.fn.resolve(info.location), vim.fn.resolve(install.root)) then
      health.warn(
        'lsap_bridge is imported from another copy than this plugin (' .. install.root .. ')',
        { 'install this copy so the Lua and Python halves match: ' .. fix }
      )
    end
  end
  if not found['lsap-bridge'] then return false end -- installing it brings what follows
  for _, dep in ipairs({ 'msgpack', 'jinja2', 'pydantic', 'rapidfuzz', 'lsprotocol' }) do
    if found[dep] then
      health.ok(dep .. ' ' .. found[dep])
    else
      health.error(dep .. ' is missing', { fix })
    end
  end
  command(install, info, fix)
  return (found.pynvim and info.location) and true or false
end

local function remote_plugin(host_ready)
  health.start('Remote plugin')
  local lsap, install = require('lsap'), require('lsap.install')
  local this = install.adapter()
  local paths, manifest = install.manifest_plugins()
  local other
  for _, path in ipairs(paths) do
    if path:match('/rplugin/python3/lsap%.py$') and vim.fn.resolve(path) ~= this then other = path end
  end
  if other then
    health.warn('the manifest registers another copy of lsap: ' .. other, {
      'run :UpdateRemotePlugins, then restart Neovim, so that ' .. this .. ' is the one registered',
    })
  elseif lsap.registered() then
    health.ok('registered (LsapStart), manifest: ' .. manifest)
  elseif host_ready then
    health.error('the remote plugin is not registered, so no command can reach the service', {
      'run :UpdateRemotePlugins, then restart Neovim (' .. BUILD .. ' does it too)',
      'with lazy.nvim, the `build` step of the spec does this (see |lsap-installation|)',
    })
  else
    health.error('the remote plugin is not registered, so no command can reach the service', {
      'run ' .. BUILD .. ': it sets up the Python host above and registers the remote plugin; then restart Neovim',
    })
  end
  local states = {
    running = 'the service is running',
    starting = 'the service is starting',
    stopped = 'the service is not running yet: it starts with the first :Lsap command, or require("lsap").start()',
  }
  health.info(states[lsap.state])
end

local function origin_buffer()
  local alt = vim.fn.bufnr('#')
  if alt > 0 and vim.api.nvim_buf_is_valid(alt) and vim.api.nvim_buf_get_name(alt) ~= 'health://' then return alt end
  return vim.api.nvim_get_current_buf()
end

local function servers()
  health.start('Language servers')
  local bufnr = origin_buffer()
  local name = vim.api.nvim_buf_get_name(bufnr)
  local label = name ~= '' and vim.fn.fnamemodify(name, ':~:.') or ('buffer ' .. bufnr)
  local clients = require('lsap.transport').clients(bufnr)
  if #clients == 0 then
    return health.warn('no language server is attached to ' .. label, {
      'open a file one of your servers handles, or configure one: vim.lsp.config() and vim.lsp.enable() (see |lsp-config|)',
      'agents can still use files of other languages whose servers are attached',
    })
  end
  for _, client in ipairs(clients) do
    local methods = {}
    for _, method in ipairs(client.methods) do
      methods[method] = true
    end
    local can, cannot = {}, {}
    for _, need in ipairs(needs) do
      table.insert(methods[need[2]] and can or cannot, need[1])
    end
    health.ok(
      ('%s on %s (%s, root %s): %s'):format(
        client.name,
        label,
        client.offset_encoding,
        client.root_dir or '-',
        table.concat(can, ', ')
      )
    )
    if #cannot > 0 then health.info(client.name .. ' does not support: ' .. table.concat(cannot, ', ')) end
  end
end

local function mode_of(path)
  local stat = vim.uv.fs_stat(path)
  return stat and ('%o'):format(bit.band(stat.mode, 511)) or nil, stat
end

local function socket()
  health.start('Agent socket')
  local lsap = require('lsap')
  if not lsap.config.socket then
    return health.info('disabled by setup({ socket = false }): agents cannot connect to this Neovim')
  end
  local base = vim.env.XDG_RUNTIME_DIR
  local dir = (base and base ~= '') and (base .. '/lsap') or ('/tmp/lsap-' .. vim.uv.getuid())
  local path = ('%s/nvim-%d.sock'):format(dir, vim.fn.getpid())
  local dir_mode, dir_stat = mode_of(dir)
  if not dir_stat then
    health.info('directory ' .. dir .. ' does not exist yet (the service creates it, mode 700)')
  elseif dir_mode ~= '700' or dir_stat.uid ~= vim.uv.getuid() then
    health.error(
      ('directory %s has mode %s and owner %d'):format(dir, dir_mode, dir_stat.uid),
      { ('run: chmod 700 %s (it must be yours and private)'):format(dir) }
    )
  else
    health.ok('directory ' .. dir .. ' (mode 700)')
  end
  local sock_mode, sock_stat = mode_of(path)
  if lsap.state ~= 'running' then
    return health.info('socket ' .. path .. ': not listening until the service starts')
  end
  if not sock_stat then
    return health.error('the service runs but ' .. path .. ' does not exist', { 'read the log: ' .. lsap.log_file() })
  end
  if sock_mode ~= '600' then
    return health.error(('socket %s has mode %s'):format(path, sock_mode), { 'run: chmod 600 ' .. path })
  end
  health.ok('listening on ' .. path .. ' (mode 600); agents: `lsap sessions`, `lsap references <anchor>`')
end

local function configuration()
  health.start('Configuration')
  local lsap = require('lsap')
  if #lsap.unknown == 0 then health.ok('no unknown options') end
  for _, key in ipairs(lsap.unknown) do
    health.warn(
      'unknown option ' .. key,
      { 'remove it from require("lsap").setup(), or fix its spelling (see |lsap-configuration|)' }
    )
  end
  health.info(
    ('edit_policy = %s, socket = %s, log_level = %s'):format(
      lsap.config.edit_policy,
      tostring(lsap.config.socket),
      lsap.config.log_level
    )
  )
  local file = lsap.log_file()
  local stat = vim.uv.fs_stat(file)
  health.info('log file: ' .. file .. (stat and (' (' .. stat.size .. ' bytes)') or ' (empty)'))
end

-- Edits journalled by the service (lsap_bridge/journal.py): one still being applied, one a
-- crash left (settled when the service next starts), and what was settled lately.
local function journal()
  health.start('Edit journal')
  local dir = require('lsap.edits').journal_dir()
  local pending = vim.fn.glob(vim.fs.joinpath(dir, '*.json'), true, true)
  for _, file in ipairs(pending) do
    local ok, record = pcall(vim.json.decode, table.concat(vim.fn.readfile(file), '\n'))
    record = ok and type(record) == 'table' and record or {}
    local what = ('%s (%d files, started %s)'):format(
      tostring(record.label or '?'),
      #(record.files or {}),
      record.started and os.date('%Y-%m-%d %H:%M:%S', math.floor(record.started)) or '?'
    )
    if record.pid and vim.uv.kill(record.pid, 0) == 0 then
      health.info('being applied by process ' .. record.pid .. ': ' .. what)
    else
      health.warn('an edit left unfinished by a crash: ' .. what .. ' (' .. file .. ')', {
        'it is completed or rolled back when the service next starts: run any :Lsap command, or restart Neovim',
      })
    end
  end
  if #pending == 0 then health.ok('no unfinished edit (' .. dir .. ')') end
  local record = vim.fs.joinpath(dir, 'recovered.log')
  if vim.fn.filereadable(record) == 1 then
    local lines = vim.fn.readfile(record)
    for i = math.max(1, #lines - 4), #lines do
      health.info('settled after a crash: ' .. lines[i])
    end
  end
end

function M.check()
  neovim()
  remote_plugin(python())
  servers()
  socket()
  configuration()
  journal()
end

return M
