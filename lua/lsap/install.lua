-- Installing lsap.nvim into Neovim (require('lsap').build()) and what :checkhealth lsap
-- reads back: the Python 3 host (a venv of lsap's own unless you chose one), the
-- lsap_bridge package in it, the remote plugin's registration, the help tags and the
-- `lsap` command on PATH.
local M = {}

--- The directory of this plugin (it holds `lua/`, `rplugin/`, `doc/` and `pyproject.toml`).
M.root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')

M.min_python = { 3, 10 }

-- The longest build() waits when Neovim has no UI to return to (a headless install).
M.timeout_ms = 15 * 60 * 1000
-- The longest quitting Neovim waits for a build's running step (venv, pip) before ending
-- it: an exit is never held longer (doc/lsap.txt, lsap-exit).
M.exit_wait_ms = 500

local windows = vim.fn.has('win32') == 1

local function script(venv, name)
  return vim.fs.joinpath(venv, windows and 'Scripts' or 'bin', name .. (windows and '.exe' or ''))
end

local function tilde(path) return vim.fn.fnamemodify(path, ':~') end

--- The venv build() creates when `vim.g.python3_host_prog` is unset.
function M.venv() return vim.fs.joinpath(vim.fn.stdpath('data'), 'lsap', 'venv') end

--- The Python of a venv directory.
function M.venv_python(venv) return script(venv or M.venv(), 'python') end

-- True when lsap, not your config, set `vim.g.python3_host_prog` (to its venv).
M.chose_host = false

-- The build running in the background, if any: two at once would race in one venv.
M.building = nil

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
-- install into it (PEP 668), its scripts directory and lsap's packages in it.
M.PROBE = [[
import importlib.metadata as md, importlib.util, json, os, sys, sysconfig
venv = sys.prefix != sys.base_prefix
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
name = "lsap.exe" if os.name == "nt" else "lsap"
dirs = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", os.name + "_user")]  # pip, pip --user
lsap = [p for p in (os.path.join(d, name) for d in dirs) if os.path.isfile(p)]
out = {"executable": sys.executable, "version": list(sys.version_info[:3]), "venv": venv,
       "managed": not venv and os.path.isfile(marker), "pip": importlib.util.find_spec("pip") is not None,
       "lsap": lsap[0] if lsap else False, "packages": {}}
for name in ("lsap-bridge", "pynvim", "msgpack", "jinja2", "pydantic", "rapidfuzz", "lsprotocol"):
    try:
        out["packages"][name] = md.version(name)
    except md.PackageNotFoundError:
        out["packages"][name] = False
if out["packages"]["lsap-bridge"]:
    try:
        import lsap_bridge
        out["location"] = lsap_bridge.__file__
    except Exception as exc:
        out["location"] = False
        out["error"] = repr(exc)
print(json.dumps(out))
]]

--- The command that probes `prog`; read its result with M.read_probe().
function M.probe_cmd(prog) return { prog, '-c', M.PROBE } end

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
  if not info.packages.pynvim then return 'the Python host cannot start: pynvim is missing in ' .. tilde(prog) end
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

local function on_path(dir)
  for _, entry in ipairs(vim.split(vim.env.PATH or '', windows and ';' or ':', { trimempty = true })) do
    if vim.fs.normalize(entry) == vim.fs.normalize(dir) then return true end
  end
  return false
end

--- Put `lsap` on PATH when it is not: a link in ~/.local/bin when that is on PATH. Returns
--- what to tell the user.
local function link_command(info)
  local lsap, where, other = M.command(info)
  if not lsap then return 'no lsap command was installed' end
  if where == 'on_path' then return 'lsap is on PATH (' .. tilde(vim.fn.exepath('lsap')) .. ')' end
  if where == 'other' then return ("lsap on PATH is %s, not this install's %s"):format(tilde(other), tilde(lsap)) end
  local bin = vim.fs.normalize('~/.local/bin')
  local link = vim.fs.joinpath(bin, 'lsap')
  if on_path(bin) and not windows then
    local stat = vim.uv.fs_lstat(link)
    if stat and stat.type == 'link' and not vim.uv.fs_stat(link) then os.remove(link) end -- dangling
    if not vim.uv.fs_lstat(link) then
      vim.fn.mkdir(bin, 'p')
      if vim.uv.fs_symlink(lsap, link) then return ('linked %s → %s'):format(tilde(link), tilde(lsap)) end
    end
  end
  return ('lsap is %s: put it on PATH, e.g. ln -s %s ~/.local/bin/lsap'):format(tilde(lsap), lsap)
end

-- -- build() --------------------------------------------------------------------------

-- One run of build(): its steps run in a coroutine so that waiting for venv and pip never
-- holds the editor. lazy.nvim calls build functions in a coroutine of its own, and shows
-- what they yield as progress; elsewhere build() makes its own.
local Job = {}
Job.__index = Job

local failure = {} -- the error value that carries a step's failure message

--- A line for the human. In a UI, steps go through `ui.notify`, which cuts them to the
--- message line so that a long path never stops the editor at a hit-enter prompt while the
--- build goes on; the result, which must be read in full, and everything in a Neovim
--- without a UI (where nothing prompts) are shown whole.
local function tell(message, level, whole)
  if require('lsap.compat').exiting() then return end -- nobody reads it now; the log has it
  if whole or #vim.api.nvim_list_uis() == 0 then
    vim.notify('(lsap) ' .. message, vim.log.levels[(level or 'info'):upper()])
  else
    require('lsap.ui').notify(message, level)
  end
end

--- Show a step: lazy.nvim shows what its build functions yield.
function Job:say(message)
  self.last = message
  if self.lazy then return coroutine.yield(message) end
  tell(message)
end

function Job:fail(message) error({ [failure] = message }, 0) end

--- Run a command and wait for it without blocking Neovim.
function Job:run(cmd)
  if self.stopped then self:fail('Neovim quit before the build was done') end
  local result
  local ok, process = pcall(vim.system, cmd, { text = true }, function(out)
    result = out
    if not self.lazy then vim.schedule(function() coroutine.resume(self.co) end) end
  end)
  if not ok then self:fail(('%s cannot run: %s'):format(cmd[1], process)) end
  self.process = process
  -- lazy.nvim resumes its tasks whenever Neovim's loop wakes (the process's exit wakes it);
  -- our own coroutine is resumed by the callback above.
  while not result do
    coroutine.yield(self.lazy and self.last or nil)
  end
  self.process = nil
  if self.stopped then self:fail('Neovim quit before the build was done') end
  return result
end

function Job:probe(prog)
  local info, err = M.read_probe(prog, self:run(M.probe_cmd(prog)))
  if not info then self:fail(err) end
  return info
end

--- The Python a venv is made from: the first of Neovim's candidates that is >= 3.10.
function Job:base_python()
  local seen = {}
  for _, name in ipairs({ 'python3', 'python3.13', 'python3.12', 'python3.11', 'python3.10', 'python' }) do
    local path = vim.fn.exepath(name)
    if path ~= '' then
      local info = M.read_probe(path, self:run(M.probe_cmd(path)))
      if info and M.new_enough(info) then return info.executable end
      if info then seen[#seen + 1] = ('%s is Python %s'):format(path, select(2, M.new_enough(info))) end
    end
  end
  self:fail(
    ('no Python >= 3.10 on PATH to make a venv with%s: install one (e.g. sudo apt install python3 python3-venv), then run :lua require("lsap").build() again'):format(
      #seen > 0 and (' (' .. table.concat(seen, '; ') .. ')') or ''
    )
  )
end

--- Which Python to install into, and the venv to create first when there is none to use.
function Job:choose()
  local setting = not M.chose_host and vim.g.python3_host_prog or nil
  if setting == nil or setting == '' then return M.venv_python(), M.venv() end
  setting = vim.fn.expand(setting)
  if vim.fn.executable(setting) == 1 then
    local info = self:probe(setting)
    local ok, version = M.new_enough(info)
    if not ok then
      self:fail(
        ('vim.g.python3_host_prog = %s is Python %s; lsap needs >= 3.10: point it at a newer Python, or remove it and run the build again (it then makes a venv)'):format(
          setting,
          version
        )
      )
    end
    if not info.managed then return setting, nil end
    self.advice = ('set vim.g.python3_host_prog = %q in your config: %s is externally managed (PEP 668), so pip cannot install into it'):format(
      M.venv_python(),
      setting
    )
    return M.venv_python(), M.venv(), info.executable
  end
  local venv = setting:match('^(.*)[/\\]' .. (windows and 'Scripts' or 'bin') .. '[/\\]python[%d.]*[%a.]*$')
  if not venv then
    self:fail(
      ('vim.g.python3_host_prog = %s does not exist: point it at a Python >= 3.10, or remove it and run the build again (it then makes a venv)'):format(
        setting
      )
    )
  end
  return setting, venv -- the venv you named, not made yet
end

function Job:make_venv(venv, base)
  base = base or self:base_python()
  self:say(('creating the Python host %s…'):format(tilde(venv)))
  local made = self:run({ base, '-m', 'venv', venv })
  if made.code == 0 then return end
  local why = vim.trim(made.stderr ~= '' and made.stderr or made.stdout)
  if why:find('ensurepip') then
    self:fail(
      ('%s cannot make a venv with pip: install its venv module (Debian/Ubuntu: sudo apt install python3-venv), then run :lua require("lsap").build() again'):format(
        base
      )
    )
  end
  self:fail(('%s -m venv %s failed: %s'):format(base, venv, why))
end

--- :UpdateRemotePlugins with `host` as the Python 3 host, then check the manifest.
function Job:register(host)
  if vim.fn.exists(':UpdateRemotePlugins') ~= 2 then vim.cmd('silent! runtime plugin/rplugin.vim') end
  if vim.fn.exists(':UpdateRemotePlugins') ~= 2 then
    self:fail(
      'Neovim\'s rplugin runtime plugin is not loaded, so :UpdateRemotePlugins does not exist (lazy.nvim: keep "rplugin" out of performance.rtp.disabled_plugins)'
    )
  end
  self:say('registering the remote plugin (:UpdateRemotePlugins)…')
  local before = vim.g.python3_host_prog
  vim.g.python3_host_prog = host
  local ok, out = pcall(vim.api.nvim_exec2, 'UpdateRemotePlugins', { output = true })
  if self.advice then vim.g.python3_host_prog = before end
  local paths, manifest = M.manifest_plugins()
  for _, path in ipairs(paths) do
    if vim.fn.resolve(path) == M.adapter() then return end
  end
  local said = ok and out.output or tostring(out)
  self:fail(('%s did not register %s in %s: %s'):format(host, M.adapter(), manifest, vim.trim(said)))
end

function Job:steps()
  if not vim.uv.fs_stat(M.root .. '/pyproject.toml') then
    self:fail(M.root .. ' has no pyproject.toml: install the plugin from a clone of its repository')
  end
  local host, venv, base = self:choose()
  if venv and vim.fn.executable(host) ~= 1 then self:make_venv(venv, base) end
  if not self:probe(host).pip then
    self:fail(('%s has no pip: run %s -m ensurepip --upgrade, then the build again'):format(host, host))
  end
  local where = tilde(venv or host)
  self:say(('installing lsap_bridge into %s (pip, up to a minute)…'):format(where))
  local pip = self:run({ host, '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-e', M.root })
  if pip.code ~= 0 then self:fail(('%s -m pip install -e %s failed: %s'):format(host, M.root, vim.trim(pip.stderr))) end
  local info = self:probe(host)
  if not info.location then
    self:fail(('lsap_bridge does not import in %s: %s'):format(host, info.error or 'not installed'))
  end
  if not self.advice and (vim.g.python3_host_prog or '') == '' then M.chose_host = true end
  self:register(host)
  local help = pcall(vim.cmd.helptags, vim.fn.fnameescape(M.root .. '/doc')) and ':help lsap'
    or ('no help tags (' .. M.root .. '/doc is not writable)')
  local lsap = link_command(info)
  if self.advice then
    return ('installed lsap_bridge %s into %s, but %s; then restart Neovim (%s; %s)'):format(
      info.packages['lsap-bridge'],
      where,
      self.advice,
      help,
      lsap
    ),
      'warn'
  end
  return ('ready: lsap_bridge %s in %s, remote plugin registered, %s; %s. Restart Neovim to use it.'):format(
    info.packages['lsap-bridge'],
    where,
    help,
    lsap
  ),
    'info'
end

--- The plugin's one wait on the main loop, used only where nobody is editing: in a Neovim
--- without a UI (an install script).
local function finish(job)
  vim.wait(M.timeout_ms, function() return job.done end, 50)
end

--- Neovim quits while the build runs: its running step (venv, pip) gets `exit_wait_ms` to
--- end, then is stopped, so the exit is never held (a pip cut short leaves nothing that the
--- next build() does not redo). Logged, to be read after the restart.
local function interrupt(job)
  vim.wait(M.exit_wait_ms, function() return job.done end, 20)
  if job.done then return end
  job.stopped = true -- no further step starts
  if job.process then pcall(job.process.kill, job.process, 'sigterm') end
  require('lsap').log(
    'warn',
    ('build: interrupted by quitting Neovim (%s): run :lua require("lsap").build() again'):format(
      job.last or 'starting'
    )
  )
end

--- Run every step; returns ok and the one-line result, which is also shown and logged.
function Job:main()
  local ok, message, level = pcall(self.steps, self)
  if not ok then
    message = type(message) == 'table' and message[failure] or ('build failed: ' .. tostring(message))
    level = 'error'
  end
  require('lsap').log(level == 'error' and 'error' or 'info', 'build: ' .. message)
  tell(message, level, true)
  return ok, message
end

--- require('lsap').build(): see `:help lsap.build()`.
function M.build()
  local co, main = coroutine.running()
  local job = setmetatable({ lazy = co ~= nil and not main, co = co }, Job)
  if job.lazy then
    local ok, message = job:main()
    if not ok then error('(lsap) ' .. message, 0) end
    return true, message
  end
  if M.building then
    tell('a build is already running: wait for its result', 'warn')
    return false, 'a build is already running'
  end
  M.building = job
  job.co = coroutine.create(function()
    job.ok, job.message = job:main()
    job.done, M.building = true, nil
  end)
  coroutine.resume(job.co)
  if #vim.api.nvim_list_uis() == 0 then
    -- Headless (`nvim --headless +'lua require("lsap").build()' +qa`): the next command
    -- must see the result.
    finish(job)
    return job.ok == true, job.message
  end
  -- Quitting Neovim while the build runs ends the build (`interrupt`), not the other way round.
  vim.api.nvim_create_autocmd('VimLeavePre', { once = true, callback = function() interrupt(job) end })
  return nil, 'building in the background'
end

return M
