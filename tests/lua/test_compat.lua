-- compat.lua's fallbacks when a Neovim lacks the internals it prefers.
local compat = require('lsap.compat')
local T = {}

T['the methods come from vim.lsp.protocol.Methods, requests only'] = function()
  compat.reset()
  local methods = compat.methods()
  expect.truthy(vim.tbl_contains(methods, 'textDocument/references'), 'references listed')
  expect.truthy(not vim.tbl_contains(methods, 'window/showMessageRequest'), 'no server-to-client request')
  expect.truthy(not vim.tbl_contains(methods, '$/cancelRequest'), 'no $/ notification')
end

T['without vim.lsp.protocol.Methods the known methods are used'] = function()
  local saved = vim.lsp.protocol.Methods
  vim.lsp.protocol.Methods = nil
  compat.reset()
  local ok, methods = pcall(compat.methods)
  vim.lsp.protocol.Methods = saved
  compat.reset()
  expect.truthy(ok, 'methods() without Methods')
  expect.equality(methods, compat.KNOWN_METHODS)
end

T['without vim.lsp._changetracking nothing is flushed, and nothing raises'] = function()
  local saved = vim.lsp._changetracking
  vim.lsp._changetracking = nil
  local ok, flushed = pcall(compat.flush_changes, {})
  vim.lsp._changetracking = saved
  expect.equality({ ok, flushed }, { true, false })
  vim.lsp._changetracking = { flush = function() error('internal changed') end }
  ok, flushed = pcall(compat.flush_changes, {})
  vim.lsp._changetracking = saved
  expect.equality({ ok, flushed }, { true, false })
end

return T
