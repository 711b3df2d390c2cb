-- lsap.nvim: the :Lsap command (and :LsapX, <Plug> maps, highlight groups); everything else
-- loads when first used. Nothing here starts the Python host or loads the transport, the
-- commands or the build: the service starts with the first command that needs it.
if vim.g.loaded_lsap then return end
vim.g.loaded_lsap = true

-- With vim.g.python3_host_prog unset, Neovim's Python host is the venv that
-- require('lsap').build() made (one stat; nothing starts).
require('lsap.host').use_venv()

local function complete(arglead, cmdline, pos) return require('lsap.commands').complete(arglead, cmdline, pos) end

local function define(command, name)
  vim.api.nvim_create_user_command(
    command,
    function(opts) require('lsap.commands').run(name, opts) end,
    { nargs = '*', bang = true, range = true, complete = complete, desc = 'lsap: ' .. (name or 'run a capability') }
  )
end

define('Lsap', nil)
for command, name in pairs(require('lsap.camel')) do
  define(command, name)
end

-- <Plug>(lsap-{mode}) for the main modes (declared with the modes: `plug` in
-- lua/lsap/modes.lua, generated) and the text format's `request`; no default mappings. In
-- visual mode the selected lines become the range (a line scope).
for _, name in ipairs(vim.list_extend(vim.deepcopy(require('lsap.modes').plugs), { 'request' })) do
  local plug = '<Plug>(lsap-' .. name:gsub('_', '-') .. ')'
  vim.keymap.set('n', plug, '<Cmd>Lsap ' .. name .. '<CR>', { desc = 'lsap: ' .. name })
  vim.keymap.set('x', plug, ':Lsap ' .. name .. '<CR>', { silent = true, desc = 'lsap: ' .. name .. ' (range)' })
end

-- Reports and prompts that wait are reached from anywhere; no default mappings either.
vim.keymap.set('n', '<Plug>(lsap-resume)', '<Cmd>Lsap resume<CR>', { desc = 'lsap: the last report again' })
vim.keymap.set('n', '<Plug>(lsap-approval)', '<Cmd>Lsap approval<CR>', { desc = "lsap: the agent's edit waiting" })

-- lsap's buffers opened by name (a session, `:edit lsap://report`) become lsap's again.
vim.api.nvim_create_autocmd('BufReadCmd', {
  group = vim.api.nvim_create_augroup('lsap.buffers', { clear = true }),
  pattern = { 'lsap://report', 'lsap://log' },
  callback = function(ev) require(ev.match == 'lsap://log' and 'lsap.log' or 'lsap.report').read(ev.buf) end,
})

-- Highlight groups of the report window, linked by default so colour schemes can override them.
local function highlights()
  for group, link in pairs({
    LsapHeader = 'Title',
    LsapLineNr = 'LineNr',
    LsapAnchor = 'Special',
    LsapWarning = 'WarningMsg',
    LsapInlineAdded = 'DiffAdd', -- the inline review: lines the change wrote
    LsapInlineRemoved = 'DiffDelete', -- lines it removed, shown above where they were
    LsapInlineHunk = 'DiagnosticVirtualTextInfo', -- the hunk counter
  }) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end
highlights()
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('lsap.highlights', { clear = true }),
  callback = highlights,
})
