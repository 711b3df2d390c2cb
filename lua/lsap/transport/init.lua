-- The LSP transport between the lsap_bridge service (Python) and Neovim's LSP clients.
--
-- Every function of it returns at once: language-server requests go out with the
-- asynchronous `client:request`, and answers travel back to the service with
-- `vim.rpcnotify(<service channel>, 'lsap_reply', token, payload)`. Nothing here waits on
-- the main loop, so the human's editor never freezes while an agent asks. Its pieces, by
-- concern (the service calls them through lsap.rpc, by name):
--   channel      the service's channel and state, `notify` and `reply`
--   seen         what Neovim has seen of servers: progress, answers, publishes; `when_idle`
--   disk         buffers brought up to date with the disk; hidden buffers; files changed
--   clients      the servers on a buffer and what they support; `when_attached`
--   requests     LSP requests for the service (`request`, `cancel`)
--   packing      large answers packed into flat lists for the trip
--   takeover     the requests a server sends back while the bridge runs its command
--   diagnostics  `when_diagnosed`
--   editor       what the human is looking at
local M = {}

local channel = require('lsap.transport.channel')
local config = require('lsap.config')
local disk = require('lsap.transport.disk')
local requests = require('lsap.transport.requests')
local seen = require('lsap.transport.seen')

--- Called once by the service after it connects; returns Neovim's pid, `max_file_size`,
--- `max_tokens` and `diagnostics_wait`.
function M.register(chan)
  channel.chan = chan
  local group = vim.api.nvim_create_augroup('lsap.transport', { clear = true })
  seen.watch(group)
  disk.watch(group)
  -- A server that exits (crash, kill) never answers what it had pending: fail that at once.
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if not client or client:is_stopped() then requests.client_exited(ev.data.client_id) end
    end,
  })
  channel.max_file_size = config.options.max_file_size
  return {
    pid = vim.fn.getpid(),
    max_file_size = channel.max_file_size,
    max_tokens = config.options.max_tokens,
    diagnostics_wait = config.options.diagnostics_wait,
  }
end

return M
