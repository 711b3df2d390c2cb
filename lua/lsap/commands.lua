-- `:Lsap {mode} [anchor] [key=value …]` and the CamelCase commands: parsing, the picker,
-- the rename prompt and completion. Completing modes, options and files is pure Lua, so
-- pressing <Tab> there never starts the Python host; symbol paths after `path:` come from the
-- attached server, asynchronously, and are kept per file version.
local M = {}

-- What the Python side declares of its modes (lsap_bridge/modes.py), generated into
-- lua/lsap/modes.lua: options every mode takes (`shared`), the options of each mode
-- (`modes`), values offered when completing `key=` (`['mode.key']` for one mode, else `key`
-- for every mode), fields that stay strings when typed as `key=value` (an id of digits is
-- still an id), and the modes a human runs, in the picker's order, with their summaries
-- (agents' plumbing stays out of the picker).
local declared = require('lsap.modes')
M.shared = declared.shared
M.modes = declared.modes
M.values = declared.values
M.strings = declared.strings
M.human = declared.human

local function notify(message, level) require('lsap.ui').notify(message, level) end

--- The Language Server Request block to run: the range, else the block around the
--- cursor, else the whole buffer.
local function request_text(opts)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  if opts.range and opts.range > 0 then return table.concat(vim.list_slice(lines, opts.line1, opts.line2), '\n') end
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local first, last
  for i = row, 1, -1 do
    if lines[i]:match('^%*%*%* Begin Language Server Request') then
      first = i
      break
    end
    if i < row and lines[i]:match('^%*%*%* End Language Server Request') then break end
  end
  if first then
    for i = math.max(first, row), #lines do
      if lines[i]:match('^%*%*%* End Language Server Request') then
        last = i
        break
      end
    end
  end
  if first and last then return table.concat(vim.list_slice(lines, first, last), '\n') end
  return table.concat(lines, '\n')
end

-- Subcommands of `:Lsap` that are not capabilities of the service.
-- name = { run = function(opts, args), complete = function(arglead, words)?, desc = string }
-- (`:Lsap log`, the agent activity view, is registered here by its module.)
M.subcommands = {
  request = {
    desc = 'run the Language Server Request block under the cursor, the range, or the buffer',
    run = function(opts) require('lsap.service').run('request', { text = request_text(opts), bang = opts.bang }) end,
  },
  health = {
    desc = 'check the set-up (:checkhealth lsap)',
    run = function() vim.cmd('checkhealth lsap') end,
  },
  log = {
    desc = "agents' requests and answers, live",
    run = function() require('lsap.log').open() end,
  },
  resume = {
    desc = 'the last report again (resume N: the Nth before)',
    run = function(_, args) require('lsap.report').resume(tonumber(args)) end,
  },
  history = {
    desc = 'choose one of the last reports',
    run = function() require('lsap.report').pick() end,
  },
  approval = {
    desc = "go to the agent's edit waiting for your answer",
    run = function() require('lsap.approval').focus() end,
  },
  agents = {
    desc = 'the agents connected: since when, calls, what each is doing, its edits',
    run = function() require('lsap.presence').show_agents() end,
  },
  follow = {
    desc = 'one window follows what an agent looks at (again: stop)',
    run = function(_, args) require('lsap.presence').follow(vim.trim(args or '')) end,
    complete = function() return require('lsap.presence').names() end,
  },
}

-- The CamelCase commands (doc/architecture.md, The human's side) and what each runs: the
-- modes that declare one, and `:LsapRequest`.
M.camel = vim.tbl_extend('error', declared.camel, { LsapRequest = 'request' })

--- Sorted names of the modes, then of the subcommands.
function M.names()
  local modes, subs = vim.tbl_keys(M.modes), vim.tbl_keys(M.subcommands)
  table.sort(modes)
  table.sort(subs)
  return vim.list_extend(modes, subs)
end

local function options_of(mode) return vim.list_extend(vim.list_extend({}, M.shared), M.modes[mode] or {}) end

local function convert(key, value)
  if M.strings[key] then return value end
  if value == 'true' then return true end
  if value == 'false' then return false end
  return tonumber(value) or value
end

--- Split raw arguments into an anchor string and trailing `key=value` options the mode knows.
function M.parse(mode, args)
  local known = {}
  for _, key in ipairs(options_of(mode)) do
    known[key] = true
  end
  local anchor, options = vim.trim(args), {}
  while true do
    local before, key, value = (' ' .. anchor):match('^(.-)%s+([%a_]+)=(%S*)$')
    if not (key and known[key]) then break end
    options[key] = convert(key, value)
    anchor = vim.trim(before)
  end
  return (anchor ~= '' and anchor or nil), options
end

--- The identifier at (or just after) byte column `col` of `text`.
local function word_at(text, col)
  for _, word, after in text:gmatch('()([%w_$]+)()') do
    if after > col + 1 then return word end
  end
  return ''
end

--- The name a rename starts from, as `vim.lsp.buf.rename` pre-fills it: the word at the
--- cursor (a `cursor` table: its line's text and byte column), or the anchor's (the
--- identifier at its `<|>`, else at the start of its text, else the last part of its
--- symbol path).
function M.current_name(anchor, cursor)
  if not anchor then return word_at(cursor.text or '', cursor.col or 0) end
  local scope, find = anchor:match('^[^@]-:([^@]*)@(.*)$')
  find = find or anchor:match('^[^@:]*@(.*)$')
  if find then
    local after = find:match('<+|>+(.*)$')
    return ((after or find):match('[%w_$]+')) or ''
  end
  scope = scope or anchor:match(':([^:]*)$') or ''
  return scope:match('([%w_$]+)$') or ''
end

--- `:LsapRename` (and `rename_preview`) without `new_name=`: ask for it with `vim.ui.input`,
--- pre-filled with the current name, then run.
local function ask_name(name, run)
  vim.ui.input({ prompt = 'New name: ', default = name }, function(input)
    if input and input ~= '' and input ~= name then run(input) end
  end)
end

-- Modes that need no file under the cursor (neither an anchor nor a file to default to).
M.cursorless = declared.cursorless

--- The cursor a command works at: the human's, or inside the report the location under
--- it. nil, with the reason, in a buffer that is not a file.
local function cursor_for(mode)
  local here = require('lsap.report').cursor()
  if here then return here end
  if here == false and M.cursorless[mode] then return nil end
  if here == false then
    return nil, 'no location on this line of the report: move to an entry (]]) or give an anchor'
  end
  local bt = vim.bo.buftype
  if bt ~= '' and not M.cursorless[mode] then
    return nil, ('this %s buffer is not a file: give an anchor, e.g. :Lsap %s path/to/file.py:Symbol'):format(bt, mode)
  end
  return require('lsap.transport.editor').cursor()
end

--- Run a mode or subcommand. `name` nil: the first word of the arguments, or the picker.
function M.run(name, opts)
  if vim.b.lsap_disable or vim.g.lsap_disable then
    return notify('lsap is disabled here (vim.b.lsap_disable / vim.g.lsap_disable)', 'warn')
  end
  local args = opts.args or ''
  if name == nil then
    local first, rest = args:match('^%s*(%S+)%s*(.*)$')
    if not first then return M.pick(opts) end
    name, args = first, rest
  end
  local sub = M.subcommands[name]
  if sub then return sub.run(opts, args) end
  if not M.modes[name] then
    local close = vim.fn.matchfuzzy(M.names(), name)[1]
    local guess = close and (' (did you mean %s?)'):format(close) or ''
    return notify(('unknown mode %q%s: use one of %s'):format(name, guess, table.concat(M.names(), ', ')), 'error')
  end
  local anchor, options = M.parse(name, args)
  local range = (opts.range and opts.range > 0) and { opts.line1, opts.line2 } or nil
  local cursor, why = cursor_for(name)
  -- The command's own arguments win over the line under the cursor (a report's included).
  if not cursor and not anchor and not M.cursorless[name] and options.file_path == nil then
    return notify(why, 'error')
  end
  local function go()
    require('lsap.service').run(
      name,
      { anchor = anchor, options = options, bang = opts.bang, range = range, cursor = cursor }
    )
  end
  if (name == 'rename' or name == 'rename_preview') and options.new_name == nil then
    return ask_name(M.current_name(anchor, cursor), function(new_name)
      options.new_name = new_name
      go()
    end)
  end
  go()
end

--- `:Lsap` alone: choose a mode a human runs with `vim.ui.select` (telescope, fzf-lua,
--- snacks and dressing show their own picker), then run it at the cursor.
function M.pick(opts)
  local items, desc = {}, {}
  for _, entry in ipairs(M.human) do
    items[#items + 1] = entry[1]
    desc[entry[1]] = entry[2]
  end
  for _, name in ipairs({ 'request', 'resume', 'history', 'log', 'approval', 'health' }) do
    items[#items + 1] = name
    desc[name] = M.subcommands[name].desc
  end
  local width = 0
  for _, name in ipairs(items) do
    width = math.max(width, #name)
  end
  vim.ui.select(items, {
    prompt = 'lsap',
    kind = 'lsap.mode',
    format_item = function(name) return ('%-' .. width .. 's  %s'):format(name, desc[name]) end,
  }, function(choice)
    if choice then M.run(choice, vim.tbl_extend('force', opts, { args = '' })) end
  end)
end

-- -- completion ------------------------------------------------------------------------

local function starting(list, prefix)
  return vim.tbl_filter(function(item) return vim.startswith(item, prefix) end, list)
end

-- Symbol paths per file, from the service: { [path] = { stamp =, paths = {…} } }.
local symbols = {}

--- What the file's symbols were computed from: its buffer's changedtick, else its mtime.
local function stamp(path)
  local bufnr = require('lsap.transport.disk').loaded_buffers()(vim.fn.fnamemodify(path, ':p'))
  if bufnr then return 'tick:' .. vim.b[bufnr].changedtick end
  local stat = vim.uv.fs_stat(path)
  return stat and ('mtime:' .. stat.mtime.sec .. '.' .. stat.mtime.nsec) or nil
end

--- The service's answer to a completion request: the file's symbol paths. If the human still
--- has the same command line, offer them at once (as if <Tab> were pressed again).
function M.symbols_arrived(path, paths, line)
  symbols[path] = { stamp = stamp(path), paths = paths }
  if vim.fn.getcmdtype() == ':' and vim.fn.getcmdline() == line then
    vim.api.nvim_feedkeys(vim.fn.nr2char(vim.o.wildchar), 'nt', false)
  end
end

--- Symbol paths of `path` (relative to the working directory), as anchors `path:A.b`: the
--- ones kept for this version of the file, else the last ones while the service computes
--- them again; never waiting.
local function symbol_anchors(path, cmdline)
  local known = symbols[path]
  if not known or known.stamp ~= stamp(path) then
    if not known or not known.asked then
      require('lsap.service').send({ complete = path, line = cmdline })
      symbols[path] = vim.tbl_extend('force', known or { paths = {} }, { asked = true })
    end
  end
  return vim.tbl_map(function(p) return path .. ':' .. p end, (symbols[path] or {}).paths or {})
end

function M.complete(arglead, cmdline, cursorpos)
  local command, rest = cmdline:sub(1, cursorpos):match('^.-(Lsap%a*)!?%s+(.*)$')
  if not command then return {} end
  local words = vim.split(rest, '%s+')
  local name = M.camel[command]
  if command == 'Lsap' then
    if #words <= 1 then return starting(M.names(), arglead) end
    name = table.remove(words, 1)
  end
  local sub = M.subcommands[name]
  if sub then return sub.complete and sub.complete(arglead, words) or {} end
  if not M.modes[name] then return {} end
  local key = arglead:match('^([%a_]+)=')
  if key then
    local values = M.values[name .. '.' .. key] or M.values[key] or {}
    return starting(vim.tbl_map(function(v) return key .. '=' .. v end, values), arglead)
  end
  local given = {}
  for _, word in ipairs(words) do
    local k = word:match('^([%a_]+)=')
    if k then given[k] = true end
  end
  local out = {}
  if #words <= 1 then
    -- The anchor: a file's symbols after `path:`, else files (the current one first).
    local file = arglead:match('^(.-):[^:]*$')
    if file and vim.fn.filereadable(file) == 1 then
      return starting(symbol_anchors(file, cmdline:sub(1, cursorpos)), arglead)
    end
    local current = vim.fn.expand('%:.')
    if vim.bo.buftype == '' and current ~= '' and vim.startswith(current, arglead) then out[1] = current end
    for _, f in ipairs(vim.fn.getcompletion(arglead, 'file')) do
      if f ~= current then out[#out + 1] = f end
    end
  end
  for _, option in ipairs(options_of(name)) do
    if not given[option] and vim.startswith(option .. '=', arglead) then out[#out + 1] = option .. '=' end
  end
  return out
end

return M
