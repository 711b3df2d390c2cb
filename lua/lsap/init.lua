-- lsap.nvim: what users call (`require('lsap')`): setup(), build(), run(), start(), the log
-- file. The top of the Lua half (doc/architecture.md, The Lua half): nothing of lsap's
-- requires it. The options live in lsap.config, the service in lsap.service and its state
-- in lsap.transport.channel; `config`, `defaults`, `schema`, `unknown` and `state` read
-- them here.
local M = {}

local channel = require('lsap.transport.channel')
local config = require('lsap.config')
local pyhost = require('lsap.host')
local logfile = require('lsap.logfile')
local service = require('lsap.service')
local ui = require('lsap.ui')

local views = {
  config = function() return config.options end,
  defaults = function() return config.defaults end,
  schema = function() return config.schema end,
  unknown = function() return config.unknown end,
  state = function() return channel.state end,
}
setmetatable(M, {
  __index = function(_, key)
    local view = views[key]
    return view and view()
  end,
})

--- Configure lsap.nvim. Optional: without it the defaults apply.
function M.setup(opts)
  local unknown = config.set(opts)
  -- A file changed under unsaved text is merged; the service records each merge as a change
  -- set (the `merge` mode, :help lsap-merge), started for it when need be.
  require('lsap.transport.merge').watch(function(options)
    if service.registered() then service.send({ mode = 'merge', options = options, quiet = true }) end
  end)
  if #unknown > 0 then
    local message = 'unknown option ' .. table.concat(unknown, '; ') .. ': remove it from setup()'
    ui.notify(message, 'warn')
    M.log('warn', message)
  end
  -- The agent socket is served from start-up on, not from the first command. The remote
  -- plugin's manifest is read after init.lua (and after lazy.nvim's `opts`), so look for it
  -- once Neovim has started.
  if config.options.socket then
    local function autostart()
      if channel.state == 'stopped' and service.registered() then service.start() end
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

--- Where the Lua side and the Python service write what went wrong (lsap.logfile).
M.log_file = logfile.path

--- Append a line to the log file when `level` is at least `config.log_level`.
M.log = logfile.write

-- -- installation -------------------------------------------------------------------

--- The directory of this plugin (it holds `lua/`, `rplugin/` and `pyproject.toml`).
M.root = pyhost.root

--- The build step for plugin managers and by-hand installs: the Python host (a venv of its
--- own unless you chose one), lsap_bridge in it, :UpdateRemotePlugins, the help tags and
--- `lsap` on PATH, with progress and a one-line result (`:help lsap.build()`).
function M.build() return require('lsap.install').build() end

-- -- the service --------------------------------------------------------------------

-- lsap.service's: run a mode, hand a command to the service, start it (`:help lsap.run()`,
-- `lsap.start()`), and whether the remote plugin is registered.
M.run, M.send, M.start, M.registered = service.run, service.send, service.start, service.registered

return M
