-- The language servers on a buffer: what each supports, which will come (`vim.lsp.enable`
-- configs), why none will, and the wait for one (`when_attached`).
local M = {}

local channel = require('lsap.transport.channel')
local compat = require('lsap.compat')
local seen = require('lsap.transport.seen')

local attached_at, progress = seen.attached_at, seen.progress

local function now_ms() return vim.uv.now() end

local function client_info(client, bufnr)
  -- Whatever a mode asks, the client says (`client:supports_method`), for every method of
  -- the protocol: no list of the bridge's own decides what a server can do. With the
  -- buffer, so that a method registered for some documents only (ruff's formatting, by
  -- language) counts where it applies.
  local methods = {}
  for _, method in ipairs(compat.methods()) do
    if client:supports_method(method, bufnr) then methods[#methods + 1] = method end
  end
  return {
    id = client.id,
    name = client.name,
    offset_encoding = client.offset_encoding,
    root_dir = client.root_dir,
    methods = methods,
    filetypes = client.config and client.config.filetypes or {},
    -- How long the server has been attached, when it attached after the service started.
    age_ms = attached_at[client.id] and (now_ms() - attached_at[client.id]) or nil,
    -- Whether it has ever reported work in progress: a quiet one that does is done indexing.
    reports_progress = progress[client.id] ~= nil and progress[client.id].reported == true,
  }
end

--- Clients attached to a buffer, with what each supports.
function M.clients(bufnr)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    out[#out + 1] = client_info(client, bufnr)
  end
  return out
end

--- Every client in this Neovim, with what each supports (the socket's `info`).
function M.all_clients()
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    out[#out + 1] = client_info(client)
  end
  return out
end

local function supporting(bufnr, method)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client:is_stopped() then
      -- exited, and Neovim has not yet detached it: not a server to ask
    elseif method == nil or method == vim.NIL or client:supports_method(method, bufnr) then
      out[#out + 1] = client_info(client, bufnr)
    end
  end
  return out
end

--- Reply with the clients on a buffer once one supporting `method` is attached, or with
--- what is there when `timeout_ms` runs out.
--- Neovim does not restart a server that exited: with none left on the buffer, run the
--- `vim.lsp.enable` configs for it again, as opening the file would (a no-op if none apply).
--- An exited client stays attached until Neovim's scheduled clean-up, and `vim.lsp.start`
--- would reuse it: wait (a few ticks, bounded) until it is gone.
local function restart_if_none(bufnr, tries)
  local clients = compat.clients_starting(bufnr)
  for _, client in ipairs(clients) do
    if not client:is_stopped() then return end
  end
  if #clients > 0 then
    if tries > 0 then vim.defer_fn(function() restart_if_none(bufnr, tries - 1) end, 20) end
    return
  end
  compat.start_enabled(bufnr)
end

--- Why no server will come for a buffer: its filetype, the enabled configs (and what they
--- cover), and configs that cover it but are not enabled (`vim.lsp.config()` ones and those
--- of `lsp/*.lua` files on 'runtimepath', such as nvim-lspconfig's).
function M.coverage(bufnr)
  local filetype = vim.bo[bufnr].filetype
  local enabled, candidates, is_enabled = {}, {}, {}
  for _, name in ipairs(compat.enabled_configs() or {}) do
    is_enabled[name] = true
    local config = vim.lsp.config[name]
    enabled[#enabled + 1] = { name = name, filetypes = config and config.filetypes or {} }
  end
  for _, name in ipairs(compat.config_names()) do
    if not is_enabled[name] then
      local ok, config = pcall(function() return vim.lsp.config[name] end)
      if ok and config and config.filetypes and vim.tbl_contains(config.filetypes, filetype) then
        candidates[#candidates + 1] = name
      end
    end
  end
  table.sort(enabled, function(a, b) return a.name < b.name end)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~:.')
  return { filetype = filetype, name = name, enabled = enabled, candidates = candidates }
end

--- How many enabled configs cover a buffer's filetype (nil: Neovim cannot say).
local function covering(bufnr)
  local enabled = compat.enabled_configs()
  if enabled == nil then return nil end
  local filetype, count = vim.bo[bufnr].filetype, 0
  for _, name in ipairs(enabled) do
    local config = vim.lsp.config[name]
    -- A config whose command is not installed never attaches: not waited for.
    local runs = config
      and (type(config.cmd) ~= 'table' or type(config.cmd[1]) ~= 'string' or vim.fn.executable(config.cmd[1]) == 1)
    if runs and (config.filetypes == nil or vim.tbl_contains(config.filetypes, filetype)) then count = count + 1 end
  end
  return count
end

--- method '*': every server the enabled configs would attach (code actions are gathered
--- from all of them: basedpyright and ruff on one Python file), waiting at most a few
--- seconds for the rest once one is there (a config's root may not match).
function M.when_attached(token, bufnr, method, timeout_ms)
  restart_if_none(bufnr, 50)
  local every = method == '*'
  if every then method = nil end
  local function ready()
    local found = supporting(bufnr, method)
    if not every then return #found > 0 and found or nil end
    local wanted = covering(bufnr)
    return #found > 0 and (wanted == nil or #found >= wanted) and found or nil
  end
  -- For '*', whether every server expected came is part of the answer: a choice made on
  -- fewer (a cold moment, servers still attaching) is not kept by the service; with no
  -- enabled configs to count (servers started another way) it is unknown.
  local function answer(found, complete)
    if not every then return channel.reply(token, found) end
    if covering(bufnr) == nil then return channel.reply(token, { clients = found, unknown = true }) end
    return channel.reply(token, complete and found or { clients = found, incomplete = true })
  end
  local found = ready()
  if found then return answer(found, true) end
  -- No server on it and no enabled config for its filetype: none will come, say so now.
  if not M.servers_expected({ bufnr })[1] then return channel.reply(token, { uncovered = M.coverage(bufnr) }) end
  local done = false
  local autocmd
  local deadline = vim.uv.now() + timeout_ms
  local function finish()
    if done then return end
    -- For '*': a server still initializing on the buffer is coming (basedpyright a few
    -- seconds after ruff on a loaded machine): waited for, up to the full bound.
    if every and #compat.clients_starting(bufnr) > #supporting(bufnr, nil) and vim.uv.now() < deadline then
      return vim.defer_fn(finish, 50)
    end
    done = true
    pcall(vim.api.nvim_del_autocmd, autocmd)
    -- Every client on the buffer, so that the service can say which lacks the method.
    answer(supporting(bufnr, nil), ready() ~= nil)
  end
  autocmd = vim.api.nvim_create_autocmd('LspAttach', {
    buffer = bufnr,
    callback = function()
      -- Capabilities registered dynamically arrive just after attach: look again shortly.
      vim.defer_fn(function()
        if ready() then finish() end
      end, 10)
    end,
  })
  -- Servers already attached that lack the method: only a dynamic registration (or a
  -- server attaching alongside) can still bring it, so do not wait the full timeout.
  local attached = #supporting(bufnr, nil) > 0
  vim.defer_fn(finish, attached and math.min(timeout_ms, 3000) or timeout_ms)
end

--- Whether a language server is, or is about to be, attached to each buffer: a client on it
--- (initialized or not), or a config enabled with `vim.lsp.enable` for its filetype (those
--- with a `root_dir` function start a moment later). Lets the service skip waiting for
--- servers that will never come.
function M.servers_expected(bufnrs)
  local enabled = compat.enabled_configs() -- nil: Neovim cannot say; assume a server
  local out = {}
  for i, bufnr in ipairs(bufnrs) do
    local expected = #compat.clients_starting(bufnr) > 0 or enabled == nil
    if not expected then
      local filetype = vim.bo[bufnr].filetype
      for _, name in ipairs(enabled) do
        local config = vim.lsp.config[name]
        if config and (config.filetypes == nil or vim.tbl_contains(config.filetypes, filetype)) then
          expected = true
          break
        end
      end
    end
    out[i] = expected
  end
  return out
end

--- Commands a server runs through `workspace/executeCommand` (its executeCommandProvider).
function M.server_commands(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local provider = client and client.server_capabilities.executeCommandProvider
  return type(provider) == 'table' and provider.commands or {}
end

return M
