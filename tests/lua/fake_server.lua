-- An in-process language server for the Lua tests (not a test file itself): attached to a
-- buffer of a new file, it answers `initialize` with `capabilities`, `shutdown` with null
-- and any other request with `{}`, and tells the test each message it receives:
-- `heard(kind, method, params, dispatchers)`, kind 'request' or 'notify' (`dispatchers`
-- sends to Neovim: `dispatchers.notification(method, params)`).
local M = {}

--- The new file's path, its buffer and the client's id.
function M.attached(name, lines, capabilities, heard)
  local path = vim.fn.tempname() .. '_' .. name .. '.txt'
  vim.fn.writefile(lines, path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start({
    name = 'fake_' .. name,
    cmd = function(dispatchers)
      local closing = false
      return {
        request = function(method, params, callback)
          heard('request', method, params, dispatchers)
          if method == 'initialize' then
            callback(nil, { capabilities = capabilities })
          elseif method == 'shutdown' then
            callback(nil, vim.NIL)
          else
            callback(nil, {})
          end
          return true, 1
        end,
        notify = function(method, params)
          heard('notify', method, params, dispatchers)
          return true
        end,
        is_closing = function() return closing end,
        terminate = function() closing = true end,
      }
    end,
  }, { bufnr = bufnr })
  expect.truthy(id, 'the fake server started')
  vim.wait(1000, function() return #vim.lsp.get_clients({ bufnr = bufnr }) > 0 end, 10)
  return path, bufnr, id
end

return M
