-- lsap.nvim: setup, options, and the link to the lsap_bridge service.
local M = {}

M.defaults = {
  -- Start the agent socket with the service (set false to keep agents out).
  socket = true,
  -- What agents may change in your files: 'allow', 'ask' or 'deny'.
  edit_policy = 'allow',
  -- Height of the report window, in lines.
  report_height = 15,
}

M.config = vim.deepcopy(M.defaults)

local types = { socket = 'boolean', edit_policy = 'string', report_height = 'number' }

local function fail(msg) error('(lsap) ' .. msg, 0) end

function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then fail('setup() takes a table, got ' .. type(opts)) end
  for key, value in pairs(opts) do
    local expected = types[key]
    if not expected then
      fail(('unknown option %q: valid options are %s'):format(key, table.concat(vim.tbl_keys(types), ', ')))
    end
    if type(value) ~= expected then
      fail(('option %q must be a %s, got %s'):format(key, expected, type(value)))
    end
  end
  if opts.edit_policy and not vim.tbl_contains({ 'allow', 'ask', 'deny' }, opts.edit_policy) then
    fail(('option "edit_policy" must be one of allow, ask, deny; got %q'):format(opts.edit_policy))
  end
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
end

local queue = {}

--- Hand a command to the service, starting it through the remote plugin if needed.
function M.send(payload)
  local transport = require('lsap.transport')
  if transport.chan then
    vim.rpcnotify(transport.chan, 'lsap_command', payload)
    return
  end
  table.insert(queue, payload)
  if #queue == 1 then M.start() end
end

--- Called by transport.register: deliver what waited for the service.
function M.flush()
  local transport = require('lsap.transport')
  for _, payload in ipairs(queue) do vim.rpcnotify(transport.chan, 'lsap_command', payload) end
  queue = {}
end

--- Start the service in the Python host (the remote plugin `LsapStart`).
function M.start()
  if vim.fn.exists('*LsapStart') == 0 then
    queue = {}
    require('lsap.report').notify(
      'the remote plugin is not registered: run :UpdateRemotePlugins and restart Neovim (see :checkhealth lsap)', 'error')
    return
  end
  vim.fn.LsapStart({ address = vim.v.servername, config = M.config, cwd = vim.fn.getcwd() })
end

return M
