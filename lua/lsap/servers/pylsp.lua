-- pylsp (lsap_bridge/servers/pylsp.py).
local common = require('lsap.servers.common')

return {
  preference = { 1, 3 },
  package = { pip = 'python-lsp-server' },
  config = {
    cmd = { 'pylsp' },
    filetypes = { 'python' },
    root_markers = common.python_roots,
  },
}
