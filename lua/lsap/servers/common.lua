-- What several servers' configs share (nvim-lspconfig's root markers; TypeScript's filetypes
-- and inlay-hint settings). No server of its own: `lsap.servers` skips it.
local M = {}

-- nvim-lspconfig's (lsp/basedpyright.lua, pyright.lua; pylsp's lacks only pyrightconfig.json).
M.python_roots =
  { 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', 'Pipfile', 'pyrightconfig.json', '.git' }

M.ts_filetypes = { 'javascript', 'javascriptreact', 'typescript', 'typescriptreact' }
M.ts_roots = { 'tsconfig.json', 'jsconfig.json', 'package.json', '.git' }
-- vtsls's names for the inlay hints ts_ls asks for in its `preferences`.
M.ts_inlay = {
  inlayHints = {
    parameterNames = { enabled = 'all', suppressWhenArgumentMatchesName = true },
    parameterTypes = { enabled = true },
    variableTypes = { enabled = true },
    propertyDeclarationTypes = { enabled = true },
    functionLikeReturnTypes = { enabled = true },
    enumMemberValues = { enabled = true },
  },
}

return M
