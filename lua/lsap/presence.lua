-- Pair presence: where each agent looks, and which lines it changed, shown in your buffers
-- without ever taking your focus (:help lsap-presence).
--
-- Marks: an agent's request that resolved an anchor in a file shown in one of your windows
-- puts virtual text at the end of that line (`◆ claude: references`), which fades after
-- `presence.fade_ms`. Signs: lines an agent's edit wrote carry `▎` in the agent's colour
-- until the change is reviewed or undone. Both are extmarks in the namespace
-- `lsap.presence`: setting them moves no cursor, view or jumplist, and changes no text, so
-- Insert mode goes on as if nothing happened. Every agent gets a highlight of its own,
-- `LsapAgent1`..`LsapAgent6` by the order they first appear.
local M = {}

M.NS = vim.api.nvim_create_namespace('lsap.presence')
M.SIGN = '▎'

local agents = require('lsap.agents')
local settings = require('lsap.config')

-- The agents seen (lsap.agents, which the approval float shares).
M.agents, M.order = agents.all, agents.order
M.agent, M.highlight, M.names = agents.agent, agents.highlight, agents.names
-- Change sets whose lines are signed: id -> {who=, files={[path]={lines}}, marks={[bufnr]={ids}}}
M.changes = {}
local marks = {} -- agent -> {bufnr=, id=} of its current mark

local function config()
  local value = settings.options.presence
  if value == false then return nil end
  return type(value) == 'table' and value or {}
end

local function option(name, default)
  local c = config() or {}
  if c[name] == nil then return default end
  return c[name]
end

--- A loaded buffer of `path` shown in some window, or nil.
local function shown(path)
  local bufnr = vim.fn.bufnr(path)
  if bufnr <= 0 or not vim.api.nvim_buf_is_loaded(bufnr) then return nil end
  return #vim.fn.win_findbuf(bufnr) > 0 and bufnr or nil
end

local function unmark(name)
  local mark = marks[name]
  marks[name] = nil
  if mark and vim.api.nvim_buf_is_valid(mark.bufnr) then
    pcall(vim.api.nvim_buf_del_extmark, mark.bufnr, M.NS, mark.id)
  end
end

--- An agent looked at `place` ({path=, line= 0-based}) for `what` (its mode): its mark
--- moves there if the file is shown, and fades.
local function look(name, what, place)
  local bufnr = shown(place.path)
  if not bufnr then return end
  unmark(name)
  local line = math.min(place.line, vim.api.nvim_buf_line_count(bufnr) - 1)
  local id = vim.api.nvim_buf_set_extmark(bufnr, M.NS, line, 0, {
    virt_text = { { ('◆ %s: %s'):format(name, what), M.highlight(name) } },
    virt_text_pos = 'eol',
    hl_mode = 'combine',
    priority = 10,
  })
  local mark = { bufnr = bufnr, id = id }
  marks[name] = mark
  vim.defer_fn(function()
    if marks[name] == mark then unmark(name) end
  end, option('fade_ms', 4000))
end

--- Agents' requests, as `:Lsap log` gets them (lsap.log): who is doing what, and where.
function M.activity(entries)
  for _, e in ipairs(entries) do
    if e.client and (e.phase == 'joined' or e.phase == 'left') then
      local agent = M.agent(e.client)
      agent.connections = math.max(0, (agent.connections or 0) + (e.phase == 'joined' and 1 or -1))
      if agent.connections == 0 then agent.left = e.time or os.time() end
    elseif e.client and (e.phase == 'start' or e.phase == 'done') then
      local agent = M.agent(e.client)
      agent.now = e.phase == 'start' and e.what or nil
      agent.last = e.what
      if e.phase == 'done' then
        agent.calls = agent.calls + 1
        local what = (e.what or ''):match('^(%S+)') or 'request'
        for _, place in ipairs(e.places or {}) do
          agent.place = place
          if config() and option('marks', true) then look(e.client, what, place) end
        end
        if agent.place then M.moved(e.client, agent.place) end
      end
    end
  end
end

local function sign(change, bufnr, lines)
  local ids = change.marks[bufnr] or {}
  change.marks[bufnr] = ids
  local count = vim.api.nvim_buf_line_count(bufnr)
  for _, line in ipairs(lines) do
    if line < count then
      ids[#ids + 1] = vim.api.nvim_buf_set_extmark(bufnr, M.NS, line, 0, {
        sign_text = M.SIGN,
        sign_hl_group = M.highlight(change.who),
        priority = 5,
      })
    end
  end
end

-- The rows of a buffer its marks `ids` sit on now, and the marks left off `rows`.
local function rows_of(bufnr, ids, taken)
  local left, rows = {}, {}
  for _, mark in ipairs(ids) do
    local row = vim.api.nvim_buf_get_extmark_by_id(bufnr, M.NS, mark, {})[1]
    if row and not taken[row] then
      left[#left + 1], rows[#rows + 1] = mark, row
    else
      pcall(vim.api.nvim_buf_del_extmark, bufnr, M.NS, mark)
    end
  end
  return left, rows
end

--- A line of `path` written by a later change carries that change's sign alone: the earlier
--- sets let go of `lines` (their marks there go), and a set that signs nothing any more is
--- dropped. Without this an agent editing the same lines again and again (a rename back and
--- forth) stacked a mark per edit on them, and a set per edit here, for as long as Neovim ran.
local function supersede(path, lines)
  local taken = {}
  for _, line in ipairs(lines) do
    taken[line] = true
  end
  local bufnr = vim.fn.bufnr(path)
  for id, entry in pairs(M.changes) do
    local ids = bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) and entry.marks[bufnr] or nil
    if ids then -- where its marks are, as edits since moved them
      local left, rows = rows_of(bufnr, ids, taken)
      entry.marks[bufnr] = #left > 0 and left or nil
      entry.files[path] = #rows > 0 and rows or nil
    elseif entry.files[path] then
      local kept = vim.tbl_filter(function(line) return not taken[line] end, entry.files[path])
      entry.files[path] = #kept > 0 and kept or nil
    end
    if next(entry.files) == nil and next(entry.marks) == nil then M.changes[id] = nil end
  end
end

--- An agent's change set was applied ({id=, who=, label=, files={{path=, lines={…}}}}): its
--- lines get the agent's sign, now in loaded buffers, later in files opened after.
--- `again`: the set's hunks were decided since; its signs are placed anew on what is left.
function M.changed(change, again)
  if again then
    M.reviewed(change.id)
  else
    local agent = M.agent(change.who)
    agent.edits = agent.edits + 1
    -- `:Lsap log` links it: <CR> on the line opens the review.
    require('lsap.log').append({
      {
        client = change.who,
        phase = 'change',
        what = ('change %s: %s (%d file%s) · review `:Lsap review %s` · undo `:Lsap undo %s`'):format(
          change.id,
          change.label,
          #(change.files or {}),
          #(change.files or {}) == 1 and '' or 's',
          change.id,
          change.id
        ),
      },
    })
  end
  local entry = { who = change.who, label = change.label, files = {}, marks = {} }
  M.changes[change.id] = nil
  if not (config() and option('signs', true)) then return end
  for _, file in ipairs(change.files or {}) do
    if #file.lines > 0 then
      supersede(file.path, file.lines)
      M.changes[change.id] = entry
      entry.files[file.path] = file.lines
      local bufnr = vim.fn.bufnr(file.path)
      if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then sign(entry, bufnr, file.lines) end
    end
  end
end

--- A change set reviewed or undone: its signs go (`path`: only that file's).
function M.reviewed(id, path)
  local entry = M.changes[id]
  if not entry then return end
  for bufnr, ids in pairs(entry.marks) do
    if vim.api.nvim_buf_is_valid(bufnr) and (path == nil or vim.api.nvim_buf_get_name(bufnr) == path) then
      for _, mark in ipairs(ids) do
        pcall(vim.api.nvim_buf_del_extmark, bufnr, M.NS, mark)
      end
      entry.marks[bufnr] = nil
    end
  end
  if path then entry.files[path] = nil end
  if path == nil or (next(entry.files) == nil and next(entry.marks) == nil) then M.changes[id] = nil end
end

--- The signs of `bufnr` (line numbers, 0-based, sorted), for tests and the review.
function M.signed(bufnr)
  local out = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, M.NS, 0, -1, { details = true })) do
    if mark[4].sign_text then out[#out + 1] = mark[2] end
  end
  table.sort(out)
  return out
end

-- -- :Lsap follow ---------------------------------------------------------------------

M.following = nil ---@type {name: string, win: integer?}?

--- The follow window: the one it had, else a window showing the report, else a new split
--- where the report opens; never the current window.
local function follow_window()
  local f = assert(M.following)
  local current = vim.api.nvim_get_current_win()
  if f.win and vim.api.nvim_win_is_valid(f.win) and f.win ~= current then return f.win end
  local report = vim.fn.bufnr('lsap://report')
  for _, win in ipairs(report > 0 and vim.fn.win_findbuf(report) or {}) do
    if win ~= current then
      f.win = win
      return win
    end
  end
  local layout = settings.options.report
  f.win = vim.api.nvim_open_win(
    vim.api.nvim_get_current_buf(),
    false,
    layout.vertical and { split = 'right', win = -1, width = layout.width }
      or { split = 'below', win = -1, height = layout.height }
  )
  return f.win
end

--- The followed agent looked at `place`: the follow window shows it (once you are not
--- typing: a window opening then would shift your view).
function M.moved(name, place)
  if not M.following or M.following.name ~= name then return end
  require('lsap.ui').when_free(function()
    if not M.following or M.following.name ~= name then return end
    local win = follow_window()
    local bufnr = vim.fn.bufadd(place.path)
    vim.fn.bufload(bufnr)
    vim.bo[bufnr].buflisted = true
    if vim.api.nvim_win_get_buf(win) ~= bufnr then vim.api.nvim_win_set_buf(win, bufnr) end
    vim.api.nvim_win_set_cursor(win, { math.min(place.line + 1, vim.api.nvim_buf_line_count(bufnr)), 0 })
  end)
end

--- `:Lsap follow [agent]`: follow it (default: the agent active last); again: stop.
function M.follow(name)
  local ui = require('lsap.ui')
  if (name == nil or name == '') and M.following then
    local win = M.following.win
    M.following = nil
    if
      win
      and vim.api.nvim_win_is_valid(win)
      and win ~= vim.api.nvim_get_current_win()
      and vim.api.nvim_win_get_buf(win) ~= vim.fn.bufnr('lsap://report')
      and #vim.api.nvim_list_wins() > 1
    then
      vim.api.nvim_win_close(win, false)
    end
    return ui.notify('lsap: no longer following')
  end
  if name == nil or name == '' then name = M.order[#M.order] end
  if not name or not M.agents[name] then
    return ui.notify(
      ('no agent %s: connected are %s'):format(
        name and ('%q'):format(name) or 'yet',
        #M.order > 0 and table.concat(M.order, ', ') or 'none'
      ),
      'error'
    )
  end
  M.following = { name = name }
  ui.notify(('lsap: following %s (:Lsap follow again stops)'):format(name))
  if M.agents[name].place then M.moved(name, M.agents[name].place) end
end

-- -- :Lsap agents ----------------------------------------------------------------------

--- The agents seen, as a report's lines.
function M.lines()
  local waiting = {}
  for _, item in ipairs(require('lsap.approval').waiting()) do
    waiting[item.client] = (waiting[item.client] or 0) + 1
  end
  local connected = vim.tbl_filter(function(name) return (M.agents[name].connections or 0) > 0 end, M.order)
  local out = { '# Agents', '', ('%d connected, %d seen in this session'):format(#connected, #M.order) }
  for _, name in ipairs(M.order) do
    local a = M.agents[name]
    local state = (a.connections or 0) > 0 and 'connected'
      or ('disconnected at %s'):format(os.date('%H:%M:%S', a.left or os.time()))
    local where = ''
    if a.place then where = (' · at %s:%d'):format(vim.fn.fnamemodify(a.place.path, ':.'), a.place.line + 1) end
    out[#out + 1] = ('- %s · %s · since %s · %d call%s · %s%s · edits %d applied, %d pending'):format(
      name,
      state,
      os.date('%H:%M:%S', a.since),
      a.calls,
      a.calls == 1 and '' or 's',
      a.now and ('now: ' .. a.now) or ('last: ' .. (a.last or '-')),
      where,
      a.edits,
      waiting[name] or 0
    )
  end
  if M.following then
    out[#out + 1] = ''
    out[#out + 1] = ('Following %s: `:Lsap follow` stops.'):format(M.following.name)
  end
  return out
end

function M.show_agents() require('lsap.report').show(table.concat(M.lines(), '\n'), {}, { title = 'lsap agents' }) end

vim.api.nvim_create_autocmd('BufReadPost', {
  group = vim.api.nvim_create_augroup('lsap.presence', { clear = true }),
  callback = function(args)
    if not (config() and option('signs', true)) then return end
    local path = vim.api.nvim_buf_get_name(args.buf)
    for _, entry in pairs(M.changes) do
      if entry.files[path] and not entry.marks[args.buf] then sign(entry, args.buf, entry.files[path]) end
    end
  end,
})

return M
