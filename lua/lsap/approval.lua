-- Asking the human about an agent's edit (edit_policy = 'ask').
--
-- Each edit waits in a queue. The oldest is shown in a floating window that does not take
-- the cursor: the agent's name, what it wants, the counts and the diff. The human goes there
-- when they choose (`:Lsap approval`, or <C-w>w) and answers with its keys: `a` applies, `r`
-- refuses, `d` / <CR> opens the whole diff in a tab (with the same keys), `q` leaves the
-- window with the edit still waiting. Nothing opens while the human is typing, so no key of
-- theirs is ever taken for an answer. No answer within `approval.timeout` seconds refuses.
-- `approval.window = 'select'` asks with `vim.ui.select` instead (for UI plugins).
local M = {}

local ui = require('lsap.ui')

M.NAME = 'lsap://approval'
M.DIFF = 'lsap://approval-diff'
local ns = vim.api.nvim_create_namespace('lsap.approval')

local queue = {} ---@type table[] waiting edits, oldest first
local shown = nil ---@type { item: table, win: integer, tab: integer?, ticker: uv.uv_timer_t }?
local scheduled = false -- a window waits for the human to stop typing
local next_id = 0

local function config() return require('lsap.config').options.approval end

--- The counts of a diff: files, added and removed lines.
local function counts(preview)
  local files, added, removed = 0, 0, 0
  for _, line in ipairs(vim.split(preview or '', '\n', { plain = true })) do
    if line:match('^%+%+%+ ') then
      files = files + 1
    elseif line:match('^%+') then
      added = added + 1
    elseif line:match('^%-') and not line:match('^%-%-%- ') then
      removed = removed + 1
    end
  end
  return files, added, removed
end

local function remaining(item)
  local left = math.max(0, math.ceil((item.deadline - vim.uv.now()) / 1000))
  return ('%d:%02d'):format(math.floor(left / 60), left % 60)
end

--- The window's lines: who asks what, the counts, then the diff.
local function lines_of(item)
  local files, added, removed = counts(item.preview)
  local position = #queue > 1 and (' · 1 of %d waiting'):format(#queue) or ''
  local out = {
    ('%s wants to %s'):format(item.client, item.summary),
    ('%d file%s · +%d −%d · refused in %s without an answer%s'):format(
      files,
      files == 1 and '' or 's',
      added,
      removed,
      remaining(item),
      position
    ),
    '',
  }
  vim.list_extend(out, vim.split(item.preview or '', '\n', { plain = true }))
  return out
end

local function keys(bufnr)
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = bufnr, nowait = true, desc = 'lsap: ' .. desc })
  end
  map('a', function() M.answer_shown('apply') end, "apply the agent's edit")
  map('r', function() M.answer_shown('refuse') end, "refuse the agent's edit")
  map('d', function() M.full_diff() end, 'the whole diff in a tab')
  map('<CR>', function() M.full_diff() end, 'the whole diff in a tab')
  map('q', function() M.leave() end, 'leave; the edit keeps waiting')
end

local function setup(bufnr)
  vim.bo[bufnr].filetype = 'diff'
  keys(bufnr)
end

--- The window's lines, the asking agent's name in its colour (lsap.presence).
local function fill(bufnr, lines, client)
  ui.set_lines(bufnr, 0, -1, lines)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(bufnr, ns, 0, 0, { end_col = #lines[1], hl_group = 'LsapHeader' })
  vim.api.nvim_buf_set_extmark(bufnr, ns, 0, 0, {
    end_col = math.min(#client, #lines[1]),
    hl_group = require('lsap.agents').highlight(client),
    priority = 200,
  })
  vim.api.nvim_buf_set_extmark(bufnr, ns, 1, 0, { end_col = #lines[2], hl_group = 'LsapWarning' })
end

local FOOTER = ' a apply · r refuse · d full diff · q leave '

local function geometry(lines)
  local width = #FOOTER + 2
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line) + 1)
  end
  width = math.min(width, vim.o.columns - 4)
  local height = math.max(3, math.min(#lines, math.floor((vim.o.lines - 4) * 0.6)))
  return {
    relative = 'editor',
    anchor = 'NE',
    row = 1,
    col = vim.o.columns - 1,
    width = width,
    height = height,
  }
end

local function close_shown()
  if not shown then return end
  shown.ticker:stop()
  shown.ticker:close()
  if shown.tab and vim.api.nvim_tabpage_is_valid(shown.tab) then
    vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(shown.tab))
  end
  if vim.api.nvim_win_is_valid(shown.win) then vim.api.nvim_win_close(shown.win, true) end
  shown = nil
end

--- Open the window of the oldest waiting edit (the human is not typing), or update it.
local function open(item)
  local lines = lines_of(item)
  local bufnr = ui.scratch(M.NAME, setup)
  fill(bufnr, lines, item.client)
  local float = vim.tbl_extend('force', geometry(lines), {
    border = 'rounded',
    title = (' lsap: %s asks '):format(item.client),
    title_pos = 'center',
    footer = FOOTER,
    footer_pos = 'center',
    focusable = true,
    zindex = 60,
  })
  if shown and vim.api.nvim_win_is_valid(shown.win) then
    vim.api.nvim_win_set_config(shown.win, float)
    shown.item = item
    return
  end
  close_shown()
  local win = vim.api.nvim_open_win(bufnr, false, float)
  ui.view_options(win)
  vim.wo[win][0].wrap = false
  vim.wo[win][0].cursorline = false
  local ticker = assert(vim.uv.new_timer())
  ticker:start(
    1000,
    1000,
    vim.schedule_wrap(function()
      if shown and vim.api.nvim_buf_is_valid(bufnr) then fill(bufnr, lines_of(shown.item), shown.item.client) end
    end)
  )
  shown = { item = item, win = win, ticker = ticker }
  ui.notify(('%s asks you (:Lsap approval, then a apply, r refuse): %s'):format(item.client, item.summary))
end

local function ask_select(item)
  vim.ui.select({ 'Apply', 'Refuse' }, {
    prompt = ('lsap: %s wants to %s (preview in the lsap log)'):format(item.client, item.summary),
    kind = 'lsap.approval',
  }, function(choice) M.answer(item, choice == 'Apply' and 'apply' or 'refuse') end)
end

--- Show the oldest waiting edit once the human is not typing.
local function refresh()
  local head = queue[1]
  if not head then return close_shown() end
  if scheduled or (shown and shown.item == head and config().window ~= 'select') then
    if shown then fill(vim.api.nvim_win_get_buf(shown.win), lines_of(shown.item), shown.item.client) end
    return
  end
  scheduled = true
  ui.when_free(function()
    scheduled = false
    head = queue[1]
    if not head or head.asked then return end
    if config().window == 'select' then
      head.asked = true
      ask_select(head)
    else
      open(head)
    end
  end)
end

--- Take an edit out of the queue (and its window away); false if it was already out.
local function remove(item)
  if item.answered then return false end
  item.answered = true
  item.timer:stop()
  item.timer:close()
  for i, waiting in ipairs(queue) do
    if waiting == item then
      table.remove(queue, i)
      break
    end
  end
  if shown and shown.item == item then close_shown() end
  return true
end

--- Answer an edit: 'apply', 'refuse' or 'timeout'. The agent gets `{ decision, waited }`.
function M.answer(item, decision)
  if not remove(item) then return end
  if decision == 'timeout' then
    ui.notify(('%s: no answer within %d s, refused (the agent is told)'):format(item.summary, item.seconds), 'warn')
  end
  item.done({ decision = decision, waited = item.seconds })
  refresh()
end

--- A key of the approval window (or of its diff tab).
function M.answer_shown(decision)
  if shown then M.answer(shown.item, decision) end
end

--- Leave the approval window for the one the human was in; the edit keeps waiting.
function M.leave()
  if shown and shown.tab and vim.api.nvim_get_current_tabpage() == shown.tab then
    vim.cmd('tabclose')
    shown.tab = nil
  else
    vim.cmd('wincmd p')
  end
end

--- The whole diff of the shown edit, in a tab of its own, answered with the same keys.
function M.full_diff()
  if not shown then return end
  local bufnr = ui.scratch(M.DIFF, setup)
  ui.set_lines(bufnr, 0, -1, lines_of(shown.item))
  if shown.tab and vim.api.nvim_tabpage_is_valid(shown.tab) then
    vim.api.nvim_set_current_tabpage(shown.tab)
  else
    vim.cmd('tab split')
    vim.api.nvim_win_set_buf(0, bufnr)
    ui.view_options(0)
    shown.tab = vim.api.nvim_get_current_tabpage()
  end
end

--- `:Lsap approval`: go to the edit waiting for an answer.
function M.focus()
  if not queue[1] then return ui.notify('no agent edit is waiting for your answer') end
  if not (shown and vim.api.nvim_win_is_valid(shown.win)) then
    if config().window == 'select' then return end -- vim.ui.select has it
    open(queue[1])
  end
  vim.api.nvim_set_current_win(shown.win)
end

--- Queue an agent's edit for the human. `done(answer)` gets `{ decision, waited }`.
--- Returns a function that takes the question back (the agent gave up).
function M.ask(client, summary, preview, timeout_ms, done)
  next_id = next_id + 1
  local seconds = math.min(config().timeout, timeout_ms / 1000)
  local item = {
    id = next_id,
    client = client,
    summary = summary,
    preview = preview,
    done = done,
    seconds = seconds,
    deadline = vim.uv.now() + seconds * 1000,
  }
  item.timer = assert(vim.uv.new_timer())
  item.timer:start(seconds * 1000, 0, vim.schedule_wrap(function() M.answer(item, 'timeout') end))
  queue[#queue + 1] = item
  if ui.typing() then ui.notify(('%s asks you about an edit once you stop typing: %s'):format(client, summary)) end
  refresh()
  return function()
    if remove(item) then refresh() end
  end
end

--- The edits waiting, oldest first (for tests and :checkhealth).
function M.waiting()
  return vim.tbl_map(function(i) return { client = i.client, summary = i.summary } end, queue)
end

return M
