-- The other TypeScript server (VS Code's TypeScript extension over LSP,
-- lsap_bridge/servers/vtsls.py): its settings are VS Code's, sent as
-- `workspace/configuration` answers, not `init_options`.
local common = require('lsap.servers.common')

return {
  preference = { 3, 2 },
  package = { npm = '@vtsls/language-server' },
  config = {
    cmd = { 'vtsls', '--stdio' },
    filetypes = common.ts_filetypes,
    root_markers = common.ts_roots,
    init_options = { hostInfo = 'lsap' },
    settings = { typescript = common.ts_inlay, javascript = common.ts_inlay },
  },
}
