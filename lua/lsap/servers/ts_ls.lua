-- typescript-language-server (lsap_bridge/servers/typescript.py).
local common = require('lsap.servers.common')

return {
  preference = { 3, 1 },
  package = { npm = 'typescript typescript-language-server' },
  config = {
    cmd = { 'typescript-language-server', '--stdio' },
    filetypes = common.ts_filetypes,
    root_markers = common.ts_roots,
    init_options = {
      hostInfo = 'lsap',
      preferences = {
        includeInlayParameterNameHints = 'all',
        includeInlayParameterNameHintsWhenArgumentMatchesName = false,
        includeInlayFunctionParameterTypeHints = true,
        includeInlayVariableTypeHints = true,
        includeInlayPropertyDeclarationTypeHints = true,
        includeInlayFunctionLikeReturnTypeHints = true,
        includeInlayEnumMemberValueHints = true,
      },
    },
  },
}
