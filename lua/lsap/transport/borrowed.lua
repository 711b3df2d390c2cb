-- A client's handlers of some methods, borrowed by the bridge while requests of its own
-- need them (`heard`: what a server says while it answers; `takeover`: the edits a server
-- sends back while its command runs). The client's own handlers are kept and given back
-- once no token of the bridge's holds the client: other clients, and this one when nothing
-- of the bridge's is in flight, keep theirs.
local M = {}

---@class lsap.Borrowed
---@field methods string[]
---@field slots table<integer, {tokens: table<integer, true>, previous: table<string, function?>}>

--- A set of borrowings of `methods`, one slot per client.
---@return lsap.Borrowed
function M.new(methods) return { methods = methods, slots = {} } end

--- `client`'s handlers of the set's methods are `handler(slot, method)`'s while `token`
--- holds it (installed by the first token, shared by the others). Returns the slot.
function M.borrow(set, client, token, handler)
  local slot = set.slots[client.id]
  if not slot then
    slot = { tokens = {}, previous = {} }
    set.slots[client.id] = slot
    for _, method in ipairs(set.methods) do
      slot.previous[method] = rawget(client.handlers, method)
      client.handlers[method] = handler(slot, method)
    end
  end
  slot.tokens[token] = true
  return slot
end

--- `token` lets go of `client_id`: the client's own handlers are back once no token holds it.
function M.give_back(set, client_id, token)
  local slot = set.slots[client_id]
  if not slot or not slot.tokens[token] then return end
  slot.tokens[token] = nil
  if next(slot.tokens) ~= nil then return end
  set.slots[client_id] = nil
  local client = vim.lsp.get_client_by_id(client_id)
  if client then
    for _, method in ipairs(set.methods) do
      client.handlers[method] = slot.previous[method]
    end
  end
end

--- `token` lets go of every client it holds.
function M.give_back_all(set, token)
  for client_id in pairs(set.slots) do
    M.give_back(set, client_id, token)
  end
end

return M
