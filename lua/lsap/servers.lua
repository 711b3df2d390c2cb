-- Default language-server configs for the embedded mode (`lsap` with no editor to share).
-- In the human's own Neovim the bridge uses whatever servers the human configured.
local M = {}

-- Each server's module in lua/lsap/servers/ (the Lua half of lsap_bridge/servers/): its
-- `config`, the `package` that brings it and its place in `preference` ({ group, rank }),
-- and `republishes` where it publishes unchanged diagnostics again after a change.
-- Found, not listed: a new server is one module there.
local function declared()
  local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
  local found = {}
  for file, kind in vim.fs.dir(here .. '/servers') do
    local name = file:match('^(.+)%.lua$')
    if kind == 'file' and name then
      local server = require('lsap.servers.' .. name)
      if server.config then found[name] = server end
    end
  end
  return found
end

--- The servers' groups in order, each its servers' names by rank.
local function preference(servers)
  local groups, order = {}, {}
  for name, server in pairs(servers) do
    local group = server.preference[1]
    if not groups[group] then
      groups[group] = {}
      order[#order + 1] = group
    end
    table.insert(groups[group], name)
  end
  table.sort(order)
  local out = {}
  for _, group in ipairs(order) do
    table.sort(groups[group], function(a, b)
      local ra, rb = servers[a].preference[2], servers[b].preference[2]
      return ra < rb or (ra == rb and a < b)
    end)
    out[#out + 1] = groups[group]
  end
  return out
end

local found = declared()
-- `republishing`: the servers declared to publish a file's unchanged diagnostics again
-- after a change (`republishes`), by name.
M.configs, M.packages, M.republishing = {}, {}, {}
for name, server in pairs(found) do
  M.configs[name], M.packages[name] = server.config, server.package
  M.republishing[name] = server.republishes == true
end
-- One server per group unless asked otherwise: the first found on PATH wins. `ruff` is a
-- group of its own: it runs beside Python's type checker (the common set-up), not instead.
-- The package that brings each server (`M.packages`) is `lsap doctor`'s advice.
M.preference = preference(found)

--- For `lsap doctor`: each language's servers in order of preference, each with its
--- command, where PATH has it ('' when nowhere) and the package that brings it.
function M.inventory()
  local languages = {}
  for _, group in ipairs(M.preference) do
    local servers = {}
    for _, name in ipairs(group) do
      local command = M.configs[name].cmd[1]
      servers[#servers + 1] =
        { name = name, command = command, path = vim.fn.exepath(command), package = M.packages[name] }
    end
    languages[#languages + 1] = { filetypes = M.configs[group[1]].filetypes, servers = servers }
  end
  return languages
end

--- A server command run under `watchdog` (a command prefix: the embedded daemon's
--- lsap_bridge/watchdog.py), which ends the server when the Neovim that started it goes,
--- however it goes; the command itself without one.
function M.watched(cmd, watchdog)
  if watchdog == nil or watchdog == vim.NIL or #watchdog == 0 then return cmd end
  return vim.list_extend(vim.list_extend({}, watchdog), cmd)
end

--- Configure and enable servers. `names`: explicit server names, or nil to pick the
--- preferred server of each language that is on PATH. `root`: the session's root.
--- `watchdog`: see `watched` (nil in the human's Neovim, whose servers are the human's).
--- Returns the names enabled.
function M.enable(names, root, watchdog)
  if names == nil or names == vim.NIL or #names == 0 then
    names = {}
    for _, group in ipairs(M.preference) do
      for _, name in ipairs(group) do
        if vim.fn.executable(M.configs[name].cmd[1]) == 1 then
          names[#names + 1] = name
          break
        end
      end
    end
  end
  local enabled = {}
  for _, name in ipairs(names) do
    local config = M.configs[name]
    if config and vim.fn.executable(config.cmd[1]) == 1 then
      config = vim.deepcopy(config)
      -- Each server in a process group of its own (Neovim's default off Windows, said here
      -- because the daemon relies on it): stopping the daemon ends the whole group, the
      -- server's own children included, even when the server ignores `shutdown` and `exit`.
      config.detached = true
      config.cmd = M.watched(config.cmd, watchdog)
      if root and root ~= vim.NIL then config.root_dir = function(_, on_dir) on_dir(root) end end
      vim.lsp.config(name, config)
      vim.lsp.enable(name)
      enabled[#enabled + 1] = name
    end
  end
  return enabled
end

return M
