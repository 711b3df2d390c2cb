-- The proof that a server read a change on disk (lua/lsap/transport/seen.lua `ask_proof`,
-- asked by disk.lua `sync`): it must reach the server after the change itself, the
-- didChange of the reloaded buffer that Neovim holds back (debounced), or the answer to it
-- proves nothing and publishes of the old text count as analysis of the new.
local disk = require('lsap.transport.disk')
local seen = require('lsap.transport.seen')
local T = {}

local group = vim.api.nvim_create_augroup('lsap_test_proof', {})
seen.watch(group)
disk.watch(group)

local fake = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'fake_server.lua'))

--- A buffer of a new file with a fake server attached that logs what it receives.
local function attached(name)
  local got = {}
  local path, bufnr = fake.attached(name, { 'one', 'two' }, { textDocumentSync = 2 }, function(_, method)
    got[#got + 1] = method
  end)
  vim.wait(1000, function() return vim.tbl_contains(got, 'textDocument/didOpen') end, 10)
  return path, bufnr, got
end

local function after(got, first)
  for i = first, #got do
    if got[i] == 'textDocument/documentSymbol' then return vim.list_slice(got, first, i) end
  end
  return vim.list_slice(got, first)
end

T['the proof of a sync reaches the server after the reloaded buffer s didChange'] = function()
  local path, bufnr, got = attached('reloaded')
  vim.wait(100, function() return false end, 10) -- Neovim's record of the file, taken
  vim.fn.writefile({ 'one', 'changed' }, path)
  local first = #got + 1
  disk.sync({ { uri = vim.uri_from_fname(path), type = 2 } })
  expect.equality(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), { 'one', 'changed' })
  expect.equality(after(got, first), {
    'workspace/didChangeWatchedFiles',
    'textDocument/didChange',
    'textDocument/documentSymbol',
  })
end

return T
