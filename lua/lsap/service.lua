-- The lsap_bridge service as the Lua half starts and feeds it: commands queued until it
-- registers, `LsapStart` through the remote plugin, and why it could not start. Its public
-- names are lsap's own (`require('lsap').run`, `.start`: `:help lsap.run()`).
local M = {}

local channel = require('lsap.transport.channel')
local compat = require('lsap.compat')
local config = require('lsap.config')
local logfile = require('lsap.logfile')
local pyhost = require('lsap.host')
local ui = require('lsap.ui')

local queue = {}

--- Run a mode at the cursor or on an anchor. opts: { anchor = 'path:Sym@find',
--- options = { max_items = 10, … }, bang = boolean, range = { first_line, last_line },
--- cursor = where to work instead of the cursor, quiet = no report unless an error };
--- mode 'request' takes `text`, a Language
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
    cursor = opts.cursor or require('lsap.transport.editor').cursor(),
    ticket = ui.ticket(mode),
    quiet = opts.quiet, -- no report window unless it fails (a decision made in the buffers)
  })
end

--- Hand a command to the service, starting it through the remote plugin if needed.
function M.send(payload)
  if channel.chan then
    channel.notify('lsap_command', payload)
    return
  end
  table.insert(queue, payload)
  if #queue == 1 then M.start() end
end

--- The service registered (lsap.rpc `register`): deliver what waited for it.
function M.flush()
  channel.state = 'running'
  for _, payload in ipairs(queue) do
    channel.notify('lsap_command', payload)
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

--- The Python host could not start (`err`: why, as the host or jobstart said it): ask the
--- host why (off the main loop), then say so in one line with the fix, never with a stack
--- trace.
local function host_failed(err)
  local prog = pyhost.host()
  local fallback = ('the Python host cannot start (%s): :checkhealth lsap names the missing piece; %s'):format(
    first_line(err),
    pyhost.HOST_FIX
  )
  if not prog then
    host_error = fallback
    return M.start_failed(host_error)
  end
  pyhost.probe_async(prog, function(info, probe_err)
    local problem = pyhost.host_problem(prog, info, probe_err)
    host_error = problem and (problem .. '; ' .. pyhost.HOST_FIX) or fallback
    M.start_failed(host_error)
  end)
end

--- The host ended (`code`, the last lines of its `stderr`): while the service was still
--- starting, and not because Neovim quits, it could not start.
local function host_ended(code, stderr)
  if channel.state ~= 'starting' or compat.exiting() then return end
  local said = vim.tbl_filter(function(line) return vim.trim(line) ~= '' end, stderr)
  host_failed(#said > 0 and vim.trim(said[#said]) or ('it exited with status %d'):format(code))
end

--- Start the service in a Python host (the remote plugin's `LsapStart`).
function M.start()
  if not M.registered() then
    return M.start_failed(
      'the remote plugin is not registered: run :lua require("lsap").build() (it installs the Python half and registers the plugin), then restart Neovim; :checkhealth lsap shows what is missing'
    )
  end
  if channel.state ~= 'stopped' then return end
  if host_error then return M.start_failed(host_error) end
  channel.state = 'starting'
  local prog = pyhost.host()
  if not prog then return host_failed('no Python 3 host with pynvim was found') end
  -- The remote plugin's `LsapStart`, in a host of its own started without waiting for it:
  -- Neovim's own start of its host holds everything, a `:qa!` too, until Python has loaded
  -- pynvim (lsap.compat.start_python_plugin, doc/lsap.txt lsap-exit).
  local chan, err = compat.start_python_plugin(prog, pyhost.adapter(), 'LsapStart', {
    {
      address = vim.v.servername,
      config = config.options,
      cwd = vim.fn.getcwd(),
      log_file = logfile.path(),
    },
  }, host_ended)
  if not chan then return host_failed(err) end
  vim.defer_fn(function()
    if channel.state == 'starting' then
      M.start_failed(
        ('the service did not start within %d s: see %s and :checkhealth lsap'):format(
          M.start_timeout_ms / 1000,
          logfile.path()
        )
      )
    end
  end, M.start_timeout_ms)
end

--- The service cannot start: drop what waited for it, log and tell the human why. Also
--- called by the remote plugin when the host cannot import lsap_bridge.
function M.start_failed(message)
  channel.state, queue = 'stopped', {}
  logfile.write('error', message)
  ui.notify(message, 'error')
end

return M
