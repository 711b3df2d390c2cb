-- The few things lsap needs of Neovim's LSP client (and of its remote-plugin host) that it
-- offers no public API for, in one place: each function prefers the public API, falls back
-- to the internal it replaces where the public one is missing, and to a safe answer where
-- neither exists (a later Neovim may rename its internals). `tests/integration/test_compat.py`
-- runs every fallback.
local M = {}

-- The LSP methods the bridge may ask a client about when no list of `vim.lsp.protocol`
-- is there (an older Neovim): the ones its code names (lua/lsap/shared.lua, generated).
M.KNOWN_METHODS = require('lsap.shared').methods

local methods_cache ---@type string[]?

--- Every request method a client may be asked whether it supports: all the protocol's
--- (`vim.lsp.protocol.Methods`, public), else the known ones. Computed once.
function M.methods()
  if methods_cache then return methods_cache end
  local methods = vim.lsp.protocol and vim.lsp.protocol.Methods
  if type(methods) ~= 'table' or next(methods) == nil then
    methods_cache = M.KNOWN_METHODS
    return methods_cache
  end
  local out = {}
  for _, method in pairs(methods) do
    -- Requests a client sends a server (notifications and server-to-client requests aside).
    if
      type(method) == 'string'
      and method:find('/', 1, true)
      and not method:match('^%$/')
      and not method:match('^window/')
      and not method:match('^client/')
    then
      out[#out + 1] = method
    end
  end
  table.sort(out)
  methods_cache = out
  return out
end

--- Forget the methods computed (for tests that take `vim.lsp.protocol` away).
function M.reset() methods_cache = nil end

--- Send the didChange notifications Neovim holds back for `client` (every buffer, not only
--- the one a request is about). No public API: the internal `_changetracking.flush`, else
--- nothing (each request still flushes its own buffer). Returns whether it flushed.
function M.flush_changes(client)
  local tracking = vim.lsp._changetracking
  if type(tracking) ~= 'table' or type(tracking.flush) ~= 'function' then return false end
  return (pcall(tracking.flush, client))
end

--- Clients on a buffer, those still initializing too (`_uninitialized`, which an older or
--- later Neovim may ignore: then the initialized ones).
function M.clients_starting(bufnr)
  local filter = { _uninitialized = true }
  if bufnr then filter.bufnr = bufnr end
  return vim.lsp.get_clients(filter)
end

--- The names of the LSP configs known: `lsp/*.lua` files on 'runtimepath' (public) and
--- those given to `vim.lsp.config()` (the internal `vim.lsp.config._configs`, where it is).
function M.config_names()
  local names = {}
  for _, file in ipairs(vim.api.nvim_get_runtime_file('lsp/*.lua', true)) do
    names[vim.fn.fnamemodify(file, ':t:r')] = true
  end
  local configs = type(vim.lsp.config) == 'table' and rawget(vim.lsp.config, '_configs') or nil
  for name in pairs(type(configs) == 'table' and configs or {}) do
    names[name] = true
  end
  for name in pairs(type(vim.lsp._enabled_configs) == 'table' and vim.lsp._enabled_configs or {}) do
    names[name] = true
  end
  names['*'] = nil
  local out = vim.tbl_keys(names)
  table.sort(out)
  return out
end

--- The names of the configs enabled with `vim.lsp.enable()`: by the public
--- `vim.lsp.is_enabled`, else the internal `_enabled_configs`; nil when neither says.
function M.enabled_configs()
  if type(vim.lsp.is_enabled) == 'function' then
    return vim.tbl_filter(function(name) return vim.lsp.is_enabled(name) end, M.config_names())
  end
  if type(vim.lsp._enabled_configs) == 'table' then
    local out = vim.tbl_keys(vim.lsp._enabled_configs)
    table.sort(out)
    return out
  end
  return nil
end

--- The document version of a buffer's text as Neovim numbers it for the servers: 0 from its
--- `didOpen`, then the changedtick of each text change (set as the change is made, before a
--- debounced `didChange` carries it). The internal `vim.lsp.util.buf_versions`; nil where
--- it is missing.
function M.buf_version(bufnr)
  local ok, versions = pcall(function() return vim.lsp.util.buf_versions end)
  local version = ok and type(versions) == 'table' and versions[bufnr] or nil
  return type(version) == 'number' and version or nil
end

--- The document version the servers last heard for a buffer (its `didChange`): the
--- changedtick of its last text change, which a write (resetting 'modified') moves past.
--- `buf_version` where it is known and past the `didOpen`, else the changedtick.
function M.sent_version(bufnr)
  local version = M.buf_version(bufnr)
  if version ~= nil and version > 0 then return version end
  return vim.b[bufnr].changedtick
end

--- Tell a buffer's servers it was written, as Neovim does after `:write` (the bridge writes
--- with `noautocmd`, so that nothing of the human's runs): a buffer that took a new name
--- (a file the edit moved) is closed under the old one and opened under the new one, and
--- servers that asked for it get `didSave`. Neovim's own handler, in its internal
--- `nvim.lsp.b_<bufnr>_save` group, else `didSave` sent here (a renamed buffer then stays
--- under its old name for its servers until Neovim next writes it).
function M.announce_write(bufnr)
  local group = ('nvim.lsp.b_%d_save'):format(bufnr)
  if pcall(vim.api.nvim_exec_autocmds, 'BufWritePost', { group = group, buffer = bufnr, modeline = false }) then
    return true
  end
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    local save = vim.tbl_get(client.server_capabilities or {}, 'textDocumentSync', 'save')
    if save then
      local text = type(save) == 'table'
          and save.includeText
          and table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
        or nil
      client:notify('textDocument/didSave', { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, text = text })
    end
  end
  return false
end

--- Start the enabled configs for a buffer again, as opening it would (a server of it exited
--- and Neovim does not restart it): the buffer's FileType in Neovim's `nvim.lsp.enable`
--- group, else `vim.lsp.enable()` of each enabled config again (which does the same for
--- every buffer). Returns whether it could.
function M.start_enabled(bufnr)
  if pcall(vim.api.nvim_exec_autocmds, 'FileType', { group = 'nvim.lsp.enable', buffer = bufnr, modeline = false }) then
    return true
  end
  local enabled = M.enabled_configs()
  if not enabled or type(vim.lsp.enable) ~= 'function' then return false end
  for _, name in ipairs(enabled) do
    pcall(vim.lsp.enable, name)
  end
  return true
end

--- Make Neovim take the file's time now as the time it read the buffer from it, so that `:w`
--- does not warn "changed since reading it" (the buffer holds what changed: lsap merged it).
--- No API sets it (`:checktime` records the time it saw, not the one `:w` compares): a write
--- that a BufWriteCmd of the buffer's own handles by doing nothing makes Neovim "assume the
--- buffer was written" and take the file's time, and leaves the buffer modified (bufwrite.c,
--- `ml_timestamp`). Not done when the human has BufWriteCmd autocommands (theirs would run
--- and write) or the buffer cannot be written. Returns whether it was done. Never from an
--- autocommand that is not `nested` (the write would not reach the BufWriteCmd: a real one).
function M.take_file_time(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  for _, au in ipairs(vim.api.nvim_get_autocmds({ event = 'BufWriteCmd' })) do
    local pattern = au.buflocal and '' or au.pattern
    local target = pattern:find('/', 1, true) and name or vim.fs.basename(name)
    if au.buffer == bufnr or (pattern ~= '' and vim.fn.match(target, vim.fn.glob2regpat(pattern)) >= 0) then
      return false
    end
  end
  if vim.bo[bufnr].readonly then return false end
  local group = vim.api.nvim_create_augroup('lsap.file_time', { clear = true })
  vim.api.nvim_create_autocmd('BufWriteCmd', { group = group, buffer = bufnr, callback = function() end })
  local ok = pcall(vim.api.nvim_buf_call, bufnr, function() vim.cmd('silent! keepalt lockmarks write') end)
  vim.api.nvim_del_augroup_by_id(group)
  return ok and vim.bo[bufnr].modified
end

--- Whether Neovim is quitting: `v:exiting` is v:null until the exit begins and holds the
--- exit code from just before VimLeavePre on (public, but say it here: Neovim may change it).
--- While it quits, the service's channel may already be closed and nothing is drawn, so the
--- bridge sends nothing and waits for nothing then (doc/lsap.txt, lsap-exit).
function M.exiting()
  local code = vim.v.exiting
  return code ~= nil and code ~= vim.NIL
end

-- The program of Neovim's Python host (`vim.provider.python.require`): pynvim's plugin host
-- for the plugin files named after it. First a SIGTERM handler, the one lsap's host sets
-- (lsap_bridge/hostexit.py) before anything loads: Neovim's exit may come while Python
-- still imports pynvim, and the host then leaves at once with status 0.
local PYTHON_HOST = table.concat({
  'import os, signal',
  'signal.signal(signal.SIGTERM, lambda *_: os._exit(0))',
  'import sys',
  'sys.path = [p for p in sys.path if p != ""]',
  'import pynvim',
  'pynvim.start_host()',
}, '; ')

--- Run `prog` as a Python remote-plugin host for the one plugin file `plugin` and call its
--- function `name` (declared `sync=False`) with the list `args`, waiting for nothing. The
--- host and the call are Neovim's (a remote function `F` of `path` is the RPC method
--- `path:function:F`, `remote#define#FunctionOnChannel`), but Neovim's start of its host
--- (`remote#host#Require`, `provider#Poll`) sends it a request, 'poll', and waits for the
--- answer: as long as Python takes to load pynvim (0.1 s idle, a second loaded), during
--- which Neovim runs nothing else, a `:qa!` included. Here the call is a notification the
--- channel holds until the host reads it. `on_exit(code, stderr)` when the host ends
--- (`stderr`: its last lines). Returns the channel, or nil and why not.
function M.start_python_plugin(prog, plugin, name, args, on_exit)
  plugin = plugin:gsub('\\', '/') -- as pynvim normalises it in the method's name
  local stderr = {}
  local ok, chan = pcall(vim.fn.jobstart, { prog, '-c', PYTHON_HOST, plugin }, {
    rpc = true,
    overlapped = true, -- Windows: as Neovim starts its host
    on_stderr = function(_, lines)
      vim.list_extend(stderr, lines)
      while #stderr > 20 do
        table.remove(stderr, 1)
      end
    end,
    on_exit = function(_, code) on_exit(code, stderr) end,
  })
  if not ok then return nil, tostring(chan) end
  if chan <= 0 then return nil, ('%s is not executable'):format(prog) end
  vim.rpcnotify(chan, plugin .. ':function:' .. name, args)
  return chan
end

--- Call `on(client_id, result)` for every `textDocument/publishDiagnostics` a server sends,
--- before Neovim handles it: the evidence that a server re-analysed a file after a change
--- (DiagnosticChanged names no server). No event for it: the default handler is wrapped,
--- once; a server given its own handler in its config is not seen (its files wait).
--- Once Neovim is exiting, publishes are dropped, Neovim's handler and `on` alike: nothing
--- reads diagnostics then, and the exit runs every event still queued (its process teardown
--- waits until the queue is empty) while a server still sending adds to it: a flood of
--- publishes (100 files an edit changed, each republished for all of them) held the exit
--- for seconds (doc/lsap.txt, lsap-exit; tests/integration/test_quit_publishes.py).
local publish_wrapped = false
function M.on_publish(on)
  if publish_wrapped then return end
  publish_wrapped = true
  local method = 'textDocument/publishDiagnostics'
  local inner = vim.lsp.handlers[method]
  vim.lsp.handlers[method] = function(err, result, ctx, ...)
    if M.exiting() then return end -- see above
    if type(result) == 'table' and type(result.uri) == 'string' and ctx then pcall(on, ctx.client_id, result) end
    return inner(err, result, ctx, ...)
  end
end

return M
