-- What a server says while it answers the bridge (lua/lsap/transport/heard.lua).
local heard = require('lsap.transport.heard')
local T = {}

--- A client as `vim.lsp.get_client_by_id` gives it, with a handler of the user's own.
local function fake_client(id)
  local mine = function() return 'the human saw it' end
  local client = { id = id, name = 'fake', handlers = { ['window/showMessage'] = mine } }
  local get = vim.lsp.get_client_by_id
  vim.lsp.get_client_by_id = function(want) return want == id and client or get(want) end
  return client, mine, function() vim.lsp.get_client_by_id = get end
end

T["while a request is in flight the messages are the bridge's, then the human's again"] = function()
  local client, mine, restore = fake_client(90001)
  heard.listen(client, 7)
  heard.listen(client, 8)
  local answer = client.handlers['window/showMessageRequest'](nil, { type = 1, message = 'Cannot rename', actions = {} })
  expect.equality(answer, vim.NIL) -- no action chosen, no prompt
  client.handlers['window/showMessage'](nil, { type = 2, message = 'second' })
  expect.equality(heard.said(7), { 'Cannot rename', 'second' })
  expect.equality(heard.said(8), { 'Cannot rename', 'second' })
  local log = table.concat(require('lsap.log').lines(), '\n')
  expect.truthy(log:find('fake — said: Cannot rename', 1, true), 'the message in the log: ' .. log)
  heard.stop(7)
  expect.equality(heard.said(7), nil)
  expect.truthy(client.handlers['window/showMessage'] ~= mine, 'still the bridge while token 8 waits')
  heard.stop(8)
  expect.equality(client.handlers['window/showMessage'], mine)
  expect.equality(client.handlers['window/showMessageRequest'], nil)
  restore()
end

return T
