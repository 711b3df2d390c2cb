-- basedpyright: Python's type checker, the first choice (lsap_bridge/servers/basedpyright.py).
local common = require('lsap.servers.common')

return {
  preference = { 1, 1 },
  -- After a change it publishes every open file it analysed again, those whose diagnostics
  -- did not change too: its silence is no sign that a file's diagnostics stand (`quiet` in
  -- lsap.transport.diagnostics), known from its start rather than learnt at its first such
  -- publish (on a loaded machine it was silent for seconds before that, re-analysing rich).
  republishes = true,
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
