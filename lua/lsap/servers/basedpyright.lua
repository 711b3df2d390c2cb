-- basedpyright: Python's type checker, the first choice (lsap_bridge/servers/basedpyright.py).
local common = require('lsap.servers.common')

return {
  preference = { 1, 1 },
  package = { pip = 'basedpyright' },
  config = {
    cmd = { 'basedpyright-langserver', '--stdio' },
    filetypes = { 'python' },
    root_markers = common.python_roots,
    settings = {
      basedpyright = {
        analysis = {
          autoSearchPaths = true,
          diagnosticMode = 'openFilesOnly',
          -- The `inlay_hints` mode and `?` lines: say what each hint kind is, not rely on defaults.
          inlayHints = {
            variableTypes = true,
            callArgumentNames = true,
            functionReturnTypes = true,
            genericTypes = false,
          },
        },
      },
    },
  },
}
