-- Pair programming: what agents ask through the socket, live in `:Lsap log`, and the human's
-- say over agents' edits (edit_policy = 'ask').
--
-- The service sends entries in small batches ({client=, phase='start'|'done', what=, ok=, ms=,
-- text=}); they are appended to one hidden scratch buffer, `lsap://log`, which any window can
-- show. Nothing here moves the cursor or changes the current window.
local M = {}

M.max_lines = 20000 -- the log buffer keeps the newest lines
M.answer_lines = 12 -- lines of each answer shown under its request

---@type table<string, {requests: integer, failed: integer}>
M.stats = {}

local ui = require('lsap.ui')
M.NAME = 'lsap://log'

local function setup(buf)
  vim.bo[buf].filetype = 'lsaplog'
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true, desc = 'lsap: close the log' })
  vim.keymap.set('n', '<CR>', function()
    local review = vim.api.nvim_get_current_line():match('`:(Lsap review %d+)`')
    if review then vim.cmd(review) end
  end, { buffer = buf, nowait = true, desc = "lsap: open the line's change set" })
  vim.api.nvim_buf_call(
    buf,
    function()
      vim.cmd([[
      syntax match LsapLogTime /^\d\d:\d\d:\d\d/
      syntax match LsapLogAsk / → /
      syntax match LsapLogOk / ← ok /
      syntax match LsapLogFailed / ← failed /
      syntax match LsapLogDecision / — \(applied\|refused\|denied\|no answer\).*$/
      highlight default link LsapLogTime Comment
      highlight default link LsapLogAsk Identifier
      highlight default link LsapLogOk DiagnosticOk
      highlight default link LsapLogFailed DiagnosticError
      highlight default link LsapLogDecision DiagnosticWarn
    ]])
    end
  )
end

--- The log buffer, set up again if it was deleted (`:bd`) or reopened by a session: a
--- buffer that lost its `nofile` would block `:qa` with E162.
local function buffer() return ui.scratch(M.NAME, setup) end

local function windows() return vim.fn.win_findbuf(buffer()) end

local function write(lines)
  local buf = buffer()
  -- Windows whose cursor sits on the last line follow the log as it grows.
  local following = {}
  local count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(windows()) do
    if vim.api.nvim_win_get_cursor(win)[1] >= count then following[#following + 1] = win end
  end
  local empty = count == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
  ui.set_lines(buf, empty and 0 or -1, -1, lines)
  local excess = vim.api.nvim_buf_line_count(buf) - M.max_lines
  if excess > 0 then ui.set_lines(buf, 0, excess, {}) end
  count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(following) do
    vim.api.nvim_win_set_cursor(win, { count, 0 })
  end
end

local function answer_lines(text, out)
  local lines = vim.tbl_filter(function(l) return l:match('%S') ~= nil end, vim.split(text or '', '\n'))
  for i = 1, math.min(#lines, M.answer_lines) do
    out[#out + 1] = '    ' .. lines[i]
  end
  if #lines > M.answer_lines then out[#out + 1] = ('    … %d more lines'):format(#lines - M.answer_lines) end
end

--- Entries from the service (a batch, oldest first); lsap.rpc hands them to presence too.
function M.append(entries)
  local out = {}
  for _, e in ipairs(entries) do
    local stamp = os.date('%H:%M:%S', e.time or os.time())
    if e.phase == 'start' then
      out[#out + 1] = ('%s %s → %s'):format(stamp, e.client, e.what)
    elseif e.phase == 'done' then
      local stat = M.stats[e.client] or { requests = 0, failed = 0 }
      M.stats[e.client] = stat
      stat.requests = stat.requests + 1
      if not e.ok then stat.failed = stat.failed + 1 end
      out[#out + 1] = ('%s %s ← %s %s (%d ms)'):format(stamp, e.client, e.ok and 'ok' or 'failed', e.what, e.ms or 0)
      answer_lines(e.text, out)
    elseif e.phase == 'joined' or e.phase == 'left' then
      -- for :Lsap agents (lsap.presence), not the log: a CLI call would add two lines
    else
      out[#out + 1] = ('%s %s — %s'):format(stamp, e.client, e.what)
    end
  end
  if #out > 0 then write(out) end
end

--- `:Lsap log`: show the log in a split at the bottom (or go to it if it is shown).
function M.open()
  local win = windows()[1]
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buffer())
  end
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buffer()), 0 })
end

--- A buffer `lsap://log` opened by name (a session, `:edit`): the log from now on.
function M.read() buffer() end

--- The lines of the log, for tests and :checkhealth.
function M.lines() return vim.api.nvim_buf_get_lines(buffer(), 0, -1, false) end

--- An agent's edit under `edit_policy` (read now, so setup() changes it live): 'allow' and
--- 'deny' answer at once; 'ask' writes the preview to the log and asks the human
--- (lsap.approval), never holding the service's request on the main loop. `must_ask`: an
--- edit in doubt (a rename that misses uses), which 'allow' withholds rather than applies
--- unasked. `done` gets `{ decision = 'apply' | 'refuse' | 'deny' | 'timeout' | 'withheld',
--- waited = seconds }`. Returns a function that takes the question back (the agent gave up).
function M.confirm(client, summary, preview, timeout_ms, must_ask, done)
  local policy = require('lsap.config').options.edit_policy
  local function finish(answer)
    local why = ({
      apply = 'applied: ',
      refuse = 'refused: ',
      deny = 'denied by edit_policy: ',
      timeout = 'no answer, refused: ',
      withheld = 'refused (it needs a yes, and edit_policy = allow asks no one): ',
    })[answer.decision]
    M.append({ { client = client, phase = 'decision', what = why .. summary } })
    done(answer)
  end
  if policy ~= 'ask' then
    finish({ decision = policy == 'deny' and 'deny' or must_ask and 'withheld' or 'apply' })
    return function() end
  end
  local lines = { ('%s %s wants to %s — preview:'):format(os.date('%H:%M:%S'), client, summary) }
  for _, line in ipairs(vim.split(preview or '', '\n')) do
    lines[#lines + 1] = '  │ ' .. line
  end
  write(lines)
  if require('lsap.config').options.approval.window == 'select' then
    -- vim.ui.select shows no diff: the log, in a split that does not take the cursor, does.
    ui.when_free(function()
      if #windows() == 0 then
        vim.api.nvim_open_win(buffer(), false, { split = 'below', win = -1, height = math.min(#lines + 1, 15) })
      end
      for _, win in ipairs(windows()) do
        vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buffer()), 0 })
      end
    end)
  end
  return require('lsap.approval').ask(client, summary, preview, timeout_ms, finish)
end

--- Delete the socket and discovery file when Neovim quits, even if the host dies first.
function M.remove_on_exit(paths)
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = vim.api.nvim_create_augroup('lsap.socket', { clear = true }),
    callback = function()
      for _, path in ipairs(paths) do
        os.remove(path)
      end
    end,
  })
end

return M
