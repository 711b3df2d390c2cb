-- A client's handlers borrowed while tokens of the bridge's hold it (lua/lsap/transport/borrowed.lua).
local borrowed = require('lsap.transport.borrowed')
local T = {}

local function fake_client(id, handlers)
  local client = { id = id, name = 'fake', handlers = handlers }
  local get = vim.lsp.get_client_by_id
  vim.lsp.get_client_by_id = function(want) return want == id and client or get(want) end
  return client, function() vim.lsp.get_client_by_id = get end
end

T['the first token installs the handlers, the last one gives the client its own back'] = function()
  local mine = function() return 'mine' end
  local client, restore = fake_client(90101, { a = mine })
  local set = borrowed.new({ 'a', 'b' })
  local made = 0
  local function handler(slot, method)
    made = made + 1
    return function() return method .. ':' .. vim.tbl_count(slot.tokens) end
  end
  local slot = borrowed.borrow(set, client, 1, handler)
  expect.equality(borrowed.borrow(set, client, 2, handler), slot)
  expect.equality(made, 2) -- one handler per method, made once
  expect.equality(client.handlers.a(), 'a:2')
  expect.equality(slot.previous.a, mine)
  borrowed.give_back(set, client.id, 3) -- a token that never held it changes nothing
  borrowed.give_back(set, client.id, 1)
  expect.equality(client.handlers.b(), 'b:1')
  borrowed.give_back(set, client.id, 2)
  expect.equality(client.handlers.a, mine)
  expect.equality(client.handlers.b, nil)
  expect.equality(set.slots[client.id], nil)
  restore()
end

T['give_back_all lets go of every client a token holds, and only that token'] = function()
  local one, restore_one = fake_client(90102, {})
  local two, restore_two = fake_client(90103, {})
  local set = borrowed.new({ 'a' })
  local function handler() return function() return 'bridge' end end
  borrowed.borrow(set, one, 5, handler)
  borrowed.borrow(set, two, 5, handler)
  borrowed.borrow(set, two, 6, handler)
  borrowed.give_back_all(set, 5)
  expect.equality(one.handlers.a, nil)
  expect.equality(two.handlers.a(), 'bridge') -- token 6 still holds it
  borrowed.give_back_all(set, 6)
  expect.equality(two.handlers.a, nil)
  restore_two()
  restore_one()
end

return T
