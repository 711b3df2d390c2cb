-- lsap.nvim: define the commands; every module loads on first use.
if vim.g.loaded_lsap then return end
vim.g.loaded_lsap = true

local function complete(arglead, cmdline, pos) return require('lsap.commands').complete(arglead, cmdline, pos) end

vim.api.nvim_create_user_command('Lsap', function(opts) require('lsap.commands').run(nil, opts) end,
  { nargs = '*', bang = true, range = true, complete = complete, desc = 'lsap: run a capability' })

for command, mode in pairs({
  LsapReferences = 'references', LsapDefinition = 'definition', LsapHover = 'hover',
  LsapInspect = 'inspect', LsapOutline = 'outline', LsapCalls = 'calls', LsapSearch = 'search',
  LsapDiagnostics = 'diagnostics', LsapRename = 'rename', LsapRequest = 'request',
}) do
  vim.api.nvim_create_user_command(command, function(opts) require('lsap.commands').run(mode, opts) end,
    { nargs = '*', bang = true, range = true, complete = complete, desc = 'lsap: ' .. mode })
end
