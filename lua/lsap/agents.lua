-- The agents seen in this session, each with its record and its highlight group
-- (`LsapAgent1`..`LsapAgent6` by the order they first appear): shared by pair presence
-- (lsap.presence, which fills the records) and the approval float (lsap.approval).
local M = {}

M.COLOURS = { 'DiagnosticInfo', 'DiagnosticHint', 'DiagnosticWarn', 'Special', 'Constant', 'Identifier' }

---@type table<string, {index: integer, since: integer, calls: integer, now: string?, place: table?, edits: integer}>
M.all = {}
M.order = {} ---@type string[]

--- The agent's record and highlight group, made on first sight.
function M.agent(name)
  local agent = M.all[name]
  if not agent then
    M.order[#M.order + 1] = name
    agent = { index = #M.order, since = os.time(), calls = 0, edits = 0 }
    M.all[name] = agent
    local group = 'LsapAgent' .. ((agent.index - 1) % #M.COLOURS + 1)
    vim.api.nvim_set_hl(0, group, { link = M.COLOURS[(agent.index - 1) % #M.COLOURS + 1], default = true })
  end
  return agent
end

function M.highlight(name) return 'LsapAgent' .. ((M.agent(name).index - 1) % #M.COLOURS + 1) end

--- Completion of `:Lsap follow `: the agents seen.
function M.names() return vim.deepcopy(M.order) end

return M
