-- `:checkhealth lsap`: everything a first-time user needs to get from install to a report.
-- Every warning and error says what to do about it.
local M = {}

local health = vim.health

-- lsap modes and the LSP method each needs (what a client's capabilities make possible).
local needs = {
  { 'references', 'textDocument/references' },
  { 'definition', 'textDocument/definition' },
  { 'declaration', 'textDocument/declaration' },
  { 'type_definition', 'textDocument/typeDefinition' },
  { 'implementations', 'textDocument/implementation' },
  { 'hover', 'textDocument/hover' },
  { 'outline', 'textDocument/documentSymbol' },
  { 'search', 'workspace/symbol' },
  { 'calls', 'textDocument/prepareCallHierarchy' },
  { 'inlay_hints', 'textDocument/inlayHint' },
  { 'signature_help', 'textDocument/signatureHelp' },
  { 'completion', 'textDocument/completion' },
  { 'rename', 'textDocument/rename' },
}

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

local VERSIONS = [[
import importlib.metadata as md, json
out = {}
for name in ("lsap-bridge", "pynvim", "msgpack", "jinja2", "pydantic", "rapidfuzz"):
    try:
        out[name] = md.version(name)
    except md.PackageNotFoundError:
        out[name] = False
try:
    import lsap_bridge
    out["location"] = lsap_bridge.__file__
except Exception as exc:
    out["location"] = False
    out["error"] = repr(exc)
print(json.dumps(out))
]]

local function python()
  health.start('Python host')
  local lsap = require('lsap')
  local plugin_root, prog = lsap.root, lsap.python()
  local install = ('run :lua require("lsap").build(), or in a shell: %s -m pip install -e %s')
    :format(prog or 'python3', plugin_root)
  if not prog then
    return health.error('no Python 3 host found', {
      'install Python >= 3.10 and set vim.g.python3_host_prog to its path (see |provider-python|)',
    })
  end
  local result = vim.system({ prog, '-c', VERSIONS }, { text = true }):wait(15000)
  local ok, found = pcall(vim.json.decode, result.stdout or '')
  if result.code ~= 0 or not ok then
    return health.error(('%s did not run: %s'):format(prog, vim.trim(result.stderr or '')),
      { 'set vim.g.python3_host_prog to a working Python >= 3.10' })
  end
  health.ok('Python host: ' .. prog)
  if not found['lsap-bridge'] then
    health.error('the Python package lsap_bridge is not installed in this Python', { install })
  else
    health.ok('lsap_bridge ' .. found['lsap-bridge'] .. ' (' .. tostring(found.location) .. ')')
    if found.location and not vim.startswith(vim.fn.resolve(found.location), vim.fn.resolve(plugin_root)) then
      health.warn('lsap_bridge is imported from another copy than this plugin (' .. plugin_root .. ')',
        { 'install this copy so the Lua and Python halves match: ' .. install })
    end
  end
  if found.location == false and found['lsap-bridge'] then
    health.error('lsap_bridge does not import: ' .. tostring(found.error), { install })
  end
  for _, dep in ipairs({ 'pynvim', 'msgpack', 'jinja2', 'pydantic', 'rapidfuzz' }) do
    if found[dep] then
      health.ok(dep .. ' ' .. found[dep])
    else
      health.error(dep .. ' is missing', { install })
    end
  end
end

local function remote_plugin()
  health.start('Remote plugin')
  local lsap = require('lsap')
  local manifest = vim.fn.exists('g:loaded_remote_plugins') == 1 and vim.g.loaded_remote_plugins or ''
  local this = vim.fn.resolve(lsap.root .. '/rplugin/python3/lsap.py')
  local other
  for _, line in ipairs(vim.fn.filereadable(manifest) == 1 and vim.fn.readfile(manifest) or {}) do
    local path = line:match("RegisterPlugin%('python3', '([^']*/rplugin/python3/lsap%.py)'")
    if path and vim.fn.resolve(path) ~= this then other = path end
  end
  if other then
    health.warn('the manifest registers another copy of lsap: ' .. other, {
      'run :UpdateRemotePlugins, then restart Neovim, so that ' .. this .. ' is the one registered',
    })
  elseif lsap.registered() then
    health.ok('registered (LsapStart), manifest: ' .. manifest)
  else
    health.error('the remote plugin is not registered, so no command can reach the service', {
      'run :UpdateRemotePlugins, then restart Neovim',
      'with lazy.nvim, the `build` step of the spec does this (see |lsap-installation|)',
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
    for _, method in ipairs(client.methods) do methods[method] = true end
    local can, cannot = {}, {}
    for _, need in ipairs(needs) do
      table.insert(methods[need[2]] and can or cannot, need[1])
    end
    health.ok(('%s on %s (%s, root %s): %s'):format(client.name, label, client.offset_encoding,
      client.root_dir or '-', table.concat(can, ', ')))
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
    health.error(('directory %s has mode %s and owner %d'):format(dir, dir_mode, dir_stat.uid),
      { ('run: chmod 700 %s (it must be yours and private)'):format(dir) })
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
  if #lsap.unknown == 0 then
    health.ok('no unknown options')
  end
  for _, key in ipairs(lsap.unknown) do
    health.warn('unknown option ' .. key, { 'remove it from require("lsap").setup(), or fix its spelling (see |lsap-configuration|)' })
  end
  health.info(('edit_policy = %s, socket = %s, log_level = %s'):format(
    lsap.config.edit_policy, tostring(lsap.config.socket), lsap.config.log_level))
  local file = lsap.log_file()
  local stat = vim.uv.fs_stat(file)
  health.info('log file: ' .. file .. (stat and (' (' .. stat.size .. ' bytes)') or ' (empty)'))
end

function M.check()
  neovim()
  python()
  remote_plugin()
  servers()
  socket()
  configuration()
end

return M
