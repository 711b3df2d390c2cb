-- What the Python service calls in Neovim, by name: `require('lsap.rpc').call(name, ...)` is
-- the one Lua snippet lsap_bridge sends (EditorGateway.call); each name here is a function
-- of the Lua half. The top of the require graph (doc/architecture.md, Lua): it requires the
-- modules it dispatches to, and nothing of lsap's requires it. A name the Python side asks
-- for that is not here is an error naming it (the two halves are from different versions).
--
-- Functions whose name starts with `when_`, and `request` and `confirm`, take the call's
-- token first and answer later with `lsap_reply` (lsap.transport.channel); the others
-- answer with their return value.
local M = {}

local channel = require('lsap.transport.channel')
local clients = require('lsap.transport.clients')
local commands = require('lsap.commands')
local diagnostics = require('lsap.transport.diagnostics')
local disk = require('lsap.transport.disk')
local edits = require('lsap.edits')
local editor = require('lsap.transport.editor')
local log = require('lsap.log')
local presence = require('lsap.presence')
local report = require('lsap.report')
local requests = require('lsap.transport.requests')
local seen = require('lsap.transport.seen')
local servers = require('lsap.servers')
local service = require('lsap.service')
local takeover = require('lsap.transport.takeover')
local transport = require('lsap.transport')
local ui = require('lsap.ui')

--- Ask the human about an agent's edit; replies with the decision (see lsap.approval).
local function confirm(token, client, summary, preview, timeout_ms, must_ask)
  local answered = false
  local take_back = log.confirm(client, summary, preview, timeout_ms, must_ask == true, function(decision)
    answered = true
    requests.on_cancel(token, nil)
    channel.reply(token, decision)
  end)
  if not answered then requests.on_cancel(token, take_back) end -- 'allow' and 'deny' answer at once
end

M.functions = {
  -- the link
  register = function(chan)
    local started = transport.register(chan)
    vim.schedule(service.flush) -- deliver the commands that waited for the service
    return started
  end,
  start_failed = function(message) service.start_failed(message) end,
  version = function() return tostring(vim.version()) end,
  -- language servers: requests and waits (token first)
  request = requests.request,
  cancel = function(token) requests.cancel(token) end,
  release_taken = function(token) takeover.release_taken(token) end,
  server_answered = function(id, result) takeover.server_answered(id, result) end,
  when_attached = clients.when_attached,
  when_idle = seen.when_idle,
  when_diagnosed = diagnostics.when_diagnosed,
  confirm = confirm,
  edit_policy = function() return require('lsap.config').options.edit_policy end,
  clients = clients.clients,
  all_clients = clients.all_clients,
  servers_expected = clients.servers_expected,
  server_commands = clients.server_commands,
  working = seen.working,
  health = seen.health,
  -- files and buffers
  read = disk.read,
  open = disk.open,
  sync = disk.sync,
  reconfigure = disk.reconfigure,
  reload = function(paths) edits.reload(paths) end,
  apply_edits = edits.apply,
  journal_dir = edits.journal_dir,
  indent_settings = editor.indent_settings,
  editor = editor.editor,
  -- what the human sees
  show_report = function(text, locations, options) report.show(text, locations, options) end,
  symbols_arrived = function(path, paths, cmdline) commands.symbols_arrived(path, paths, cmdline) end,
  notify = function(message, level) ui.notify(message, level) end,
  log_append = function(entries)
    log.append(entries)
    presence.activity(entries)
  end,
  remove_on_exit = function(paths) log.remove_on_exit(paths) end,
  presence_changed = function(change, again) presence.changed(change, again) end,
  presence_reviewed = function(id, path) presence.reviewed(id, path) end,
  review_inline = function(review, start) require('lsap.inline').show(review, start) end,
  -- lsap's own Neovim (embedded mode)
  enable_servers = function(root, names, watchdog)
    vim.cmd.cd(vim.fn.fnameescape(root))
    return servers.enable(names, root, watchdog)
  end,
  quit = function()
    vim.schedule(function() vim.cmd('qall!') end)
  end,
}

--- Run the function `name` with the arguments that follow; its return value is the answer.
function M.call(name, ...)
  local fn = M.functions[name]
  if fn == nil then
    error(
      ('lsap.rpc: no function %q in this Lua half: the Python service is of another version; run :lua require("lsap").build() and restart Neovim'):format(
        tostring(name)
      ),
      0
    )
  end
  return fn(...)
end

return M
