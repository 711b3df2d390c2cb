-- The human's focus and keys: never take them (doc/architecture.md, Layers). Every window
-- lsap opens and every prompt it shows goes through here:
--   * `typing()` / `when_free(fn)`: nothing opens while the human is in the middle of typing
--     (Insert, Replace, Select, Cmdline or Terminal mode, or a command waiting for a key);
--   * tickets: each command the human runs gets one, so that its answer can tell whether the
--     human has moved on (typed, changed window or mode) and must not be interrupted;
--   * a progress line for commands slower than `progress_ms`, naming what is being waited for;
--   * `scratch(name, setup)`: lsap's scratch buffers, rebuilt whatever was done to them
--     (`:bd`, `:%bd!`, a session that reopened them as files).
local M = {}

M.progress_ms = 300 -- a command slower than this shows what it waits for
M.ticket_ms = 130000 -- longer than any request may take: a ticket never outlives it

--- One `vim.notify` line, prefixed like every message of lsap's, cut to fit the command line
--- (a longer message would ask for <Enter>, and that key would be the human's next one).
function M.notify(message, level)
  local text = '(lsap) ' .. message
  local room = math.max(vim.v.echospace, 20)
  if level ~= 'error' and vim.fn.strdisplaywidth(text) > room then
    text = vim.fn.strcharpart(text, 0, room - 1) .. '…'
  end
  vim.notify(text, vim.log.levels[(level or 'info'):upper()] or vim.log.levels.INFO)
end

-- First letters of modes in which the human is typing: Insert, Replace, Select (typing
-- replaces the selection), Cmdline, Terminal.
local TYPING = { i = true, R = true, s = true, S = true, ['\19'] = true, c = true, t = true }

--- Whether the human is in the middle of typing, or Neovim waits for a key (after `r`, `f`,
--- `q`, a `Press ENTER` prompt): a window or a prompt must not open now.
function M.typing()
  local mode = vim.api.nvim_get_mode()
  return mode.blocking or TYPING[mode.mode:sub(1, 1)] == true or mode.mode:sub(1, 2) == 'ni'
end

local waiting = {} ---@type (fun())[]
local poll ---@type uv.uv_timer_t?

local function release()
  if M.typing() then return end
  local ready = waiting
  waiting = {}
  if poll then
    poll:stop()
    poll:close()
    poll = nil
  end
  pcall(vim.api.nvim_del_augroup_by_name, 'lsap.ui.free')
  -- Each on its own turn of the loop, so one failing does not keep the others from running;
  -- typing that started again meanwhile (`<Esc>i` typed at once) makes it wait again.
  for _, fn in ipairs(ready) do
    vim.schedule(function()
      if M.typing() then
        M.when_free(fn)
      else
        fn()
      end
    end)
  end
end

--- Run `fn` now if the human is not typing, else once they stop (they leave Insert, Replace,
--- Cmdline mode; a pending key is given). Callbacks run in the order they waited.
function M.when_free(fn)
  if not M.typing() and #waiting == 0 then return fn() end
  waiting[#waiting + 1] = fn
  if #waiting > 1 then return end
  vim.api.nvim_create_autocmd('ModeChanged', {
    group = vim.api.nvim_create_augroup('lsap.ui.free', { clear = true }),
    callback = function() vim.schedule(release) end,
  })
  -- A pending key or a prompt ends without a ModeChanged: look again now and then.
  poll = assert(vim.uv.new_timer())
  poll:start(250, 250, vim.schedule_wrap(release))
end

-- -- tickets ---------------------------------------------------------------------------

local keys = 0 -- keys typed while any ticket is open
local ns = vim.api.nvim_create_namespace('lsap.ui.keys')
local tickets = {} ---@type table<integer, table>
local next_id = 0
local shown_progress = false

local function listen(on)
  if on then
    vim.on_key(function() keys = keys + 1 end, ns)
  else
    vim.on_key(nil, ns)
  end
end

--- A ticket for a command the human runs now: where they are, and how many keys they had
--- typed. `what` names the command in the progress line ("references").
function M.ticket(what)
  next_id = next_id + 1
  if next(tickets) == nil then listen(true) end
  local ticket = {
    id = next_id,
    what = what,
    win = vim.api.nvim_get_current_win(),
    buf = vim.api.nvim_get_current_buf(),
    mode = vim.api.nvim_get_mode().mode,
    keys = keys,
    started = vim.uv.now(),
    timer = assert(vim.uv.new_timer()),
  }
  tickets[ticket.id] = ticket
  ticket.timer:start(M.progress_ms, 500, vim.schedule_wrap(function() M.progress(ticket) end))
  return ticket.id
end

--- The answer to a ticket arrived (it may still wait for the human to stop typing): its
--- progress line ends.
function M.answered(id)
  local ticket = id and tickets[id]
  if ticket and ticket.timer then
    ticket.timer:stop()
    ticket.timer:close()
    ticket.timer = nil
  end
  for _, t in pairs(tickets) do
    if t.timer then return end
  end
  if shown_progress then
    shown_progress = false
    vim.api.nvim_echo({ { '' } }, false, {})
  end
end

--- Close a ticket (its answer is being shown). Returns whether the human has moved on since
--- asking: typed, changed window or mode. No ticket (a report shown through the Lua API) has
--- not moved on; an unknown one (expired) has.
function M.done(id)
  if id == nil or id == vim.NIL then return false end
  local ticket = tickets[id]
  if not ticket then return true end
  M.answered(id)
  tickets[id] = nil
  if next(tickets) == nil then listen(false) end
  return keys > ticket.keys
    or vim.api.nvim_get_current_win() ~= ticket.win
    or vim.api.nvim_get_mode().mode ~= ticket.mode
end

--- What a command is waiting for, as the human would put it: the service starting, a
--- language server starting or indexing (its `$/progress` title), or a server's answer.
function M.waiting_for(bufnr)
  if require('lsap.transport.channel').state ~= 'running' then return 'starting the lsap service' end
  local compat = require('lsap.compat')
  local clients = compat.clients_starting(bufnr)
  if #clients == 0 then clients = compat.clients_starting(nil) end
  if #clients == 0 then return 'waiting for a language server to start' end
  local states = {}
  for _, client in ipairs(clients) do
    local work = require('lsap.transport.seen').work(client.id)
    if not client.initialized then
      states[#states + 1] = client.name .. ' is starting'
    elseif work then
      states[#states + 1] = client.name .. ' is indexing' .. (work ~= '' and (' (' .. work .. ')') or '')
    else
      states[#states + 1] = 'waiting for ' .. client.name
    end
  end
  return table.concat(states, ', ')
end

--- The progress line of a ticket still open after `progress_ms`; shown where it disturbs
--- nothing (not while a command line is typed), without entering the message history.
function M.progress(ticket)
  if not ticket.timer then return end
  local elapsed = vim.uv.now() - ticket.started
  if elapsed > M.ticket_ms then return M.done(ticket.id) end
  local mode = vim.api.nvim_get_mode()
  if mode.blocking or mode.mode:sub(1, 1) == 'c' then return end
  local bufnr = vim.api.nvim_buf_is_valid(ticket.buf) and ticket.buf or 0
  local text = ('(lsap) %s: %s… %.1f s'):format(ticket.what, M.waiting_for(bufnr), elapsed / 1000)
  local room = math.max(vim.v.echospace, 20)
  if vim.fn.strdisplaywidth(text) > room then text = vim.fn.strcharpart(text, 0, room - 1) .. '…' end
  shown_progress = true
  vim.api.nvim_echo({ { text, 'Comment' } }, false, {})
end

-- -- scratch buffers -------------------------------------------------------------------

--- The loaded buffer named `name`, set up as lsap's: `nofile`, unlisted, no swap file,
--- hidden when its window closes, not modifiable but by lsap. `setup(bufnr)` adds what the
--- buffer's own (filetype, maps, syntax) each time those may have been lost: a `:bdelete`
--- forgets buffer options, maps and variables, and a session reopens the name as a file.
local scratches = {} ---@type table<string, integer> the last buffer of each name

function M.scratch(name, setup)
  local bufnr = scratches[name]
  if not (bufnr and vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) == name) then
    bufnr = nil
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b) == name then bufnr = b end
    end
  end
  if bufnr and not vim.api.nvim_buf_is_loaded(bufnr) then
    -- Deleted (`:bd`): shown in no window, so wiping it loses nothing.
    vim.api.nvim_buf_delete(bufnr, { force = true })
    bufnr = nil
  end
  if not bufnr then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
  end
  if vim.b[bufnr].lsap ~= name then
    vim.bo[bufnr].buftype = 'nofile'
    vim.bo[bufnr].bufhidden = 'hide'
    vim.bo[bufnr].swapfile = false
    vim.bo[bufnr].buflisted = false
    vim.bo[bufnr].undolevels = -1
    vim.bo[bufnr].modifiable = false
    setup(bufnr)
    vim.b[bufnr].lsap = name
  end
  scratches[name] = bufnr
  return bufnr
end

--- Replace (or, `append`, add to) a scratch buffer's lines.
function M.set_lines(bufnr, first, last, lines)
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, first, last, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
end

--- Window options of lsap's views, local to the buffer in that window: nothing of the
--- human's (`number`, `list`, a `statuscolumn`, folds, spelling) garbles the report's own
--- `42|` numbers, and long lines (an `Anchor:` line, a message) wrap instead of being cut.
function M.view_options(win)
  local wo = vim.wo[win][0]
  wo.number = false
  wo.relativenumber = false
  wo.list = false
  wo.spell = false
  wo.signcolumn = 'no'
  wo.foldcolumn = '0'
  wo.foldenable = false
  wo.statuscolumn = ''
  wo.colorcolumn = ''
  wo.conceallevel = 0
  wo.wrap = true
  wo.linebreak = true
  wo.breakindent = true
  wo.breakindentopt = 'shift:4'
end

return M
