-- The inline review (lsap.inline): hunks shown in the buffer where their lines are now,
-- removed lines as virtual lines, keys mapped but never over the human's own, decisions
-- sent as the review mode's with the hunk's own number.
local inline = require('lsap.inline')
local T = {}

local LINES = { 'a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5' }

--- A buffer of a file holding LINES, and a review of two hunks in it: line 2 changed
--- (was `b = 0`), and one line removed after line 4 (was `gone = 9`).
local function scene()
  local path = vim.fn.tempname() .. '.py'
  vim.fn.writefile(LINES, path)
  vim.cmd.edit(path)
  local review = {
    id = '7',
    label = 'rename',
    who = 'agent',
    files = {
      {
        path = path,
        name = 'shop/x.py',
        hunks = {
          { number = 1, line = 1, added = { 'b = 2' }, removed = { 'b = 0' }, above = 'a = 1' },
          { number = 3, line = 4, added = {}, removed = { 'gone = 9' }, above = 'd = 4' },
        },
      },
    },
  }
  return vim.api.nvim_get_current_buf(), review
end

local function sent(run)
  local service = require('lsap.service')
  local original, got = service.run, nil
  service.run = function(name, opts) got = { name = name, opts = opts } end
  run()
  service.run = original
  return got
end

T['hunks are shown where their lines are, under their own numbers'] = function()
  local bufnr, review = scene()
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# the human typed this' }) -- the text moved down
  inline.show(review, true)
  local hunks = inline.hunks(bufnr)
  expect.equality(vim.tbl_map(function(h) return { h.number, h.row, h.end_row } end, hunks), { { 1, 2, 2 }, { 3, 5, 5 } })
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, inline.NS, 0, -1, { details = true })
  expect.equality(marks[1][4].virt_lines, { { { 'b = 0', 'LsapInlineRemoved' } } })
  expect.truthy(marks[1][4].virt_lines_above, 'removed lines above')
  expect.truthy(marks[1][4].virt_text[1][1]:match('hunk 1 · 2 left'), 'the counter')
  expect.equality(marks[1][4].hl_group, 'LsapInlineAdded')
end

T['keys go from hunk to hunk and decide the one under the cursor'] = function()
  local bufnr, review = scene()
  inline.show(review, true)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  inline.go(1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 2)
  inline.go(1)
  expect.equality(vim.api.nvim_win_get_cursor(0)[1], 5)
  local got = sent(function() inline.decide('hunk', 'reject') end)
  expect.equality(got.name, 'review')
  expect.equality(
    { got.opts.anchor, got.opts.options, got.opts.quiet },
    { '7', { decision = 'reject', file_path = 'shop/x.py', hunk = 3 }, true }
  )
  got = sent(function() inline.decide('file', 'accept') end)
  expect.equality(got.opts.options, { decision = 'accept', file_path = 'shop/x.py' })
  expect.equality(sent(function() inline.decide('all', 'accept') end).opts.options, { decision = 'accept' })
  expect.truthy(vim.fn.maparg(']h', 'n', false, true).buffer == 1, ']h mapped in the buffer')
  -- Another change's hunks sent for someone else's decision leave this review alone.
  inline.show({ id = '8', label = 'x', who = 'agent', files = {} }, false)
  expect.equality(#inline.hunks(bufnr), 2)
  -- Decided: the hunks left are shown, and with none the marks and keys go.
  review.files[1].hunks = {}
  inline.show(review, false)
  expect.equality(inline.hunks(bufnr), {})
  expect.equality(vim.fn.maparg(']h', 'n'), '')
end

T["a key the human mapped stays theirs"] = function()
  local _, review = scene()
  vim.keymap.set('n', ']h', '<Cmd>echo "mine"<CR>', { buffer = 0 })
  inline.show(review, true)
  expect.equality(vim.fn.maparg(']h', 'n'), '<Cmd>echo "mine"<CR>')
  expect.truthy(vim.fn.maparg('[h', 'n', false, true).desc:match('^lsap review'), '[h the review\'s')
end

return T
