-- setup()'s `diagnostics_wait` (lua/lsap/config.lua): seconds from 0 to 600, or 'settled';
-- anything else is refused with the rule, as a wrong type of any option is.
local config = require('lsap.config')
local T = {}

T['diagnostics_wait takes seconds or settled'] = function()
  for _, value in ipairs({ 0, 2.5, 600, 'settled' }) do
    config.set({ diagnostics_wait = value })
    expect.equality(config.options.diagnostics_wait, value)
  end
  config.set({})
end

T['diagnostics_wait refuses anything else, saying what it must be'] = function()
  for _, value in ipairs({ -1, 601, 'soon', true }) do
    local ok, err = pcall(config.set, { diagnostics_wait = value })
    expect.equality(ok, false)
    expect.equality(err:find('must be seconds (0 to 600) or "settled"', 1, true) ~= nil, true)
  end
  config.set({})
end

return T
