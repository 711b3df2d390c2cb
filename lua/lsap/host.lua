-- The Python 3 host of lsap.nvim, as build() (lsap.install) makes it and :checkhealth lsap
-- reads it back: a venv of lsap's own unless you chose one, what a Python says about
-- itself (the probe), and the remote plugin's registration. A leaf: plugin/lsap.lua reads
-- it at start-up (`use_venv`), without loading the build.
local M = {}

--- The directory of this plugin (it holds `lua/`, `rplugin/`, `doc/` and `pyproject.toml`).
M.root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')

M.min_python = { 3, 10 }

M.windows = vim.fn.has('win32') == 1

--- A script of a venv (`bin/`, or `Scripts/` on Windows).
function M.script(venv, name)
  return vim.fs.joinpath(venv, M.windows and 'Scripts' or 'bin', name .. (M.windows and '.exe' or ''))
end

--- A path as the human reads it (~ for the home directory).
function M.tilde(path) return vim.fn.fnamemodify(path, ':~') end

--- The venv build() creates when `vim.g.python3_host_prog` is unset.
function M.venv() return vim.fs.joinpath(vim.fn.stdpath('data'), 'lsap', 'venv') end

--- The Python of a venv directory.
function M.venv_python(venv) return M.script(venv or M.venv(), 'python') end

-- True when lsap, not your config, set `vim.g.python3_host_prog` (to its venv).
M.chose_host = false

--- At start-up (plugin/lsap.lua): with `python3_host_prog` unset, use the venv build() made.
function M.use_venv()
  local prog = vim.g.python3_host_prog
  if (prog == nil or prog == '') and vim.uv.fs_stat(M.venv_python()) then
    vim.g.python3_host_prog = M.venv_python()
    M.chose_host = true
  end
end

--- Neovim's Python 3 host and where it comes from: 'setting' (your python3_host_prog),
--- 'venv' (the one build() made) or 'path' (Neovim's own search for a Python with pynvim).
--- nil when there is none.
function M.host()
  local prog = vim.g.python3_host_prog
  if prog and prog ~= '' then return vim.fn.expand(prog), M.chose_host and 'venv' or 'setting' end
  local ok, found = pcall(function() return require('vim.provider.python').detect_by_module('neovim') end)
  if ok and found then return vim.fn.exepath(found) ~= '' and vim.fn.exepath(found) or found, 'path' end
  return nil, nil
end

-- What a Python says about itself, as JSON on one line: its version, whether pip may
-- install into it (PEP 668), its scripts directory and lsap's packages in it. With
-- lsap_bridge installed, it imports what the remote plugin imports and each dependency as
-- the code imports it (`imports`: the error of each that fails), so that a package whose
-- metadata is there but which does not import counts as missing. The dependencies and the
-- plugin's imports come from lua/lsap/shared.lua (generated from pyproject.toml and rplugin/).
M.PROBE = [=[
import importlib, importlib.metadata as md, importlib.util, json, os, sys, sysconfig
asked = json.loads(sys.argv[1])
deps = [d for d in asked["dependencies"] if d.get("platform", sys.platform) == sys.platform]
venv = sys.prefix != sys.base_prefix
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
name = "lsap.exe" if os.name == "nt" else "lsap"
dirs = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", os.name + "_user")]  # pip, pip --user
lsap = [p for p in (os.path.join(d, name) for d in dirs) if os.path.isfile(p)]
out = {"executable": sys.executable, "version": list(sys.version_info[:3]), "venv": venv,
       "managed": not venv and os.path.isfile(marker), "pip": importlib.util.find_spec("pip") is not None,
       "lsap": lsap[0] if lsap else False, "packages": {}, "imports": {}}
for name in ["lsap-bridge"] + [d["name"] for d in deps]:
    try:
        out["packages"][name] = md.version(name)
    except md.PackageNotFoundError:
        out["packages"][name] = False
if out["packages"]["lsap-bridge"]:
    for dep in deps:
        try:
            importlib.import_module(dep["module"])
        except Exception as exc:
            out["imports"][dep["name"]] = f"{type(exc).__name__}: {exc}"
    try:
        for module in asked["imports"]:
            importlib.import_module(module)
        import lsap_bridge
        out["location"] = lsap_bridge.__file__
    except Exception as exc:
        out["location"] = False
        out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
]=]

--- The command that probes `prog`; read its result with M.read_probe().
function M.probe_cmd(prog)
  local shared = require('lsap.shared')
  return { prog, '-c', M.PROBE, vim.json.encode({ dependencies = shared.dependencies, imports = shared.imports }) }
end

--- The probe's answer, or nil and what went wrong.
function M.read_probe(prog, result)
  local ok, found = pcall(vim.json.decode, result.stdout or '')
  if result.code == 0 and ok and type(found) == 'table' then return found end
  local why = vim.trim(result.stderr or '')
  return nil, ('%s does not run%s'):format(prog, why ~= '' and (': ' .. why) or '')
end

--- The fix for a Python host that cannot start, the same at start-up and in :checkhealth.
M.HOST_FIX = "run :lua require('lsap').build()"

--- Why Neovim cannot start `prog` as its Python host (from its probe `info`, or the probe's
--- error `err`), or nil when it can: one line, shown at start-up and by :checkhealth lsap.
function M.host_problem(prog, info, err)
  if not info then return 'the Python host cannot start: ' .. tostring(err) end
  if not info.packages.pynvim then return 'the Python host cannot start: pynvim is missing in ' .. M.tilde(prog) end
  return nil
end

--- Ask `prog` about itself off the main loop (a Python start takes a moment), then call
--- `done(info, err)` on it.
function M.probe_async(prog, done)
  local ok, err = pcall(vim.system, M.probe_cmd(prog), { text = true, timeout = 15000 }, function(result)
    vim.schedule(function() done(M.read_probe(prog, result)) end)
  end)
  if not ok then done(nil, ('%s does not run: %s'):format(prog, tostring(err))) end
end

--- Whether a probed Python is new enough, and its version as text.
function M.new_enough(info)
  local v = info.version
  return v[1] > M.min_python[1] or (v[1] == M.min_python[1] and v[2] >= M.min_python[2]),
    ('%d.%d.%d'):format(v[1], v[2], v[3])
end

--- The rplugin adapter of this copy of the plugin, as the manifest names it.
function M.adapter() return vim.fn.resolve(M.root .. '/rplugin/python3/lsap.py') end

--- The Python remote plugins the manifest (`:UpdateRemotePlugins`) registered.
function M.manifest_plugins()
  local manifest = vim.fn.exists('g:loaded_remote_plugins') == 1 and vim.g.loaded_remote_plugins or ''
  local paths = {}
  for _, line in ipairs(vim.fn.filereadable(manifest) == 1 and vim.fn.readfile(manifest) or {}) do
    local path = line:match("RegisterPlugin%('python3', '([^']*)'")
    if path then paths[#paths + 1] = path end
  end
  return paths, manifest
end

--- Where the `lsap` command of a probed Python is, and whether PATH finds that one:
--- 'on_path', 'other' (PATH finds another `lsap`, returned third) or 'off_path'.
function M.command(info)
  if not info.lsap then return nil, 'off_path' end
  local found = vim.fn.exepath('lsap')
  if found == '' then return info.lsap, 'off_path' end
  if vim.fn.resolve(found) == vim.fn.resolve(info.lsap) then return info.lsap, 'on_path' end
  return info.lsap, 'other', found
end

return M
