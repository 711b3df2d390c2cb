-- pyright (lsap_bridge/servers/basedpyright.py covers both).
local common = require('lsap.servers.common')

return {
  preference = { 1, 2 },
  package = { pip = 'pyright' },
  config = {
    cmd = { 'pyright-langserver', '--stdio' },
    filetypes = { 'python' },
    root_markers = common.python_roots,
    settings = { python = { analysis = { autoSearchPaths = true, diagnosticMode = 'openFilesOnly' } } },
  },
}
