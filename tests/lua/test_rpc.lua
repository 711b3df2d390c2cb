-- The dispatch table the Python service calls by name (lua/lsap/rpc.lua).
local rpc = require('lsap.rpc')
local channel = require('lsap.transport.channel')
local T = {}

T['an unknown name is an error that names it and the fix'] = function()
  local ok, err = pcall(rpc.call, 'no_such_function', 1)
  expect.equality(ok, false)
  expect.truthy(err:find('"no_such_function"', 1, true), 'the name in ' .. err)
  expect.truthy(err:find('build()', 1, true), 'the fix in ' .. err)
end

T['every entry is a function'] = function()
  for name, fn in pairs(rpc.functions) do
    expect.equality({ name, type(fn) }, { name, 'function' })
  end
end

T['arguments go through and the return value comes back'] = function()
  expect.equality(rpc.call('version'), tostring(vim.version()))
  local bufnr = vim.api.nvim_create_buf(true, false)
  vim.bo[bufnr].shiftwidth, vim.bo[bufnr].tabstop, vim.bo[bufnr].expandtab = 3, 7, true
  local got = rpc.call('indent_settings', bufnr)
  expect.equality({ got.shiftwidth, got.tabstop, got.expandtab }, { 3, 7, true })
end

T['a call that answers later replies through the channel with its token'] = function()
  local sent = {}
  local notify = channel.notify
  channel.notify = function(...) sent[#sent + 1] = { ... } end
  local ok, err = pcall(rpc.call, 'request', 41, {})
  channel.notify = notify
  expect.truthy(ok, err)
  expect.equality(sent, { { 'lsap_reply', 41, {} } })
end

T["the service's log entries reach the log and pair presence both"] = function()
  rpc.call('log_append', { { client = 'agent-z', phase = 'done', what = 'references x', ok = true, ms = 5 } })
  expect.equality(require('lsap.presence').agents['agent-z'].calls, 1)
  local lines = require('lsap.log').lines()
  expect.truthy(lines[#lines]:find('agent-z ← ok references x', 1, true), 'the log line, got ' .. lines[#lines])
end

return T
