-- The wait for pushed diagnostics (lua/lsap/transport/diagnostics.lua, `when_diagnosed`)
-- against an in-process fake server: how long it waits for a server that reports work, and
-- which publish is of the buffer's current text.
local channel = require('lsap.transport.channel')
local seen = require('lsap.transport.seen')
local diagnostics = require('lsap.transport.diagnostics')
local T = {}

seen.watch(vim.api.nvim_create_augroup('lsap_test_diagnosed', {}))

local replies = {}
channel.reply = function(token, payload) replies[token] = { payload = payload, at = vim.uv.now() } end

local fake = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'fake_server.lua'))

--- A buffer of a new file with a fake server attached; `script(notify, uri)` runs once the
--- server got the buffer's didOpen (`notify(method, params)` sends to Neovim).
local function attached(name, script)
  local _, bufnr, id = fake.attached(name, { 'text' }, { textDocumentSync = 1 }, function(kind, method, params, to)
    if kind == 'notify' and method == 'textDocument/didOpen' then
      vim.schedule(function() script(to.notification, params.textDocument.uri) end)
    end
  end)
  return bufnr, id
end

local function progress(notify, kind, title)
  notify('$/progress', { token = 'init', value = { kind = kind, title = title } })
end

local function wait(token, bufnr, timeout_ms, work_ms)
  local start = vim.uv.now()
  diagnostics.when_diagnosed(token, { bufnr }, {}, 50, 200, timeout_ms, false, work_ms)
  vim.wait(timeout_ms + work_ms + 2000, function() return replies[token] ~= nil end, 10)
  local got = assert(replies[token], 'an answer')
  return got.payload[1], got.at - start
end

T['a server still reporting its start-up work is waited for past the bound, then analysed'] = function()
  -- typescript-language-server's "Initializing JS/TS language features", 10 to 13 s on a
  -- loaded machine, before its first publish.
  local bufnr = attached('starting', function(notify, uri)
    progress(notify, 'begin', 'Initializing')
    vim.defer_fn(function()
      progress(notify, 'end')
      vim.defer_fn(function() notify('textDocument/publishDiagnostics', { uri = uri, diagnostics = {} }) end, 100)
    end, 700)
  end)
  local entry, waited = wait('starting', bufnr, 300, 5000)
  expect.equality({ entry.analysed, entry.quiet }, { true, false })
  expect.truthy(waited >= 700, 'waited past the start-up work: ' .. waited)
end

T['a silent server reporting no work is bounded by the timeout'] = function()
  local bufnr = attached('silent', function(notify) progress(notify, 'begin', 'x') progress(notify, 'end') end)
  vim.wait(1200, function() return false end, 50) -- past its start-up grace (`seen.busy`)
  local entry, waited = wait('silent', bufnr, 300, 5000)
  expect.equality({ entry.analysed, entry.quiet }, { false, false })
  expect.truthy(waited >= 300 and waited < 3000, 'answered at the bound, not the work bound: ' .. waited)
end

T['work that never ends is bounded by the work bound'] = function()
  local bufnr = attached('endless', function(notify) progress(notify, 'begin', 'Indexing') end)
  local entry, waited = wait('endless', bufnr, 200, 400)
  expect.equality({ entry.analysed, entry.quiet }, { false, false })
  expect.truthy(waited >= 600, 'answered at both bounds: ' .. waited) -- and answered (`wait`)
end

T['a publish naming the old version, read after an edit, is not taken for the new text'] = function()
  local send
  local bufnr = attached('versions', function(notify, uri)
    send = function(version)
      notify('textDocument/publishDiagnostics', { uri = uri, version = version, diagnostics = {} })
    end
  end)
  vim.wait(1000, function() return send ~= nil end, 10)
  send(0) -- of the didOpen's text, which is current
  local entry = wait('v_open', bufnr, 300, 0)
  expect.equality({ entry.analysed, entry.quiet }, { true, false })
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { 'typed' })
  send(0) -- still of the didOpen's text (basedpyright's, read after the edit): neither
  entry = wait('v_old', bufnr, 400, 0)
  expect.equality({ entry.analysed, entry.quiet }, { false, false })
  send(vim.b[bufnr].changedtick) -- of the edit's didChange, sent by now (debounced)
  entry = wait('v_new', bufnr, 300, 0)
  expect.equality({ entry.analysed, entry.quiet }, { true, false })
  vim.bo[bufnr].modified = false -- as a write does: the changedtick moves, the text stays
  entry = wait('v_written', bufnr, 300, 0)
  expect.equality({ entry.analysed, entry.quiet }, { true, false })
end

T['quiet is kept from a buffer by its diagnostics, those of excluded servers aside'] = function()
  local bufnr, id = attached('counted', function() end)
  vim.wait(1200, function() return false end, 50) -- past its start-up grace (`seen.busy`)
  local function after_typing(token)
    vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { 'typed' }) -- nothing published for it
    diagnostics.when_diagnosed(token, { bufnr }, { id }, 50, 200, 600, false, 0)
    vim.wait(3000, function() return replies[token] ~= nil end, 10)
    return assert(replies[token], 'an answer').payload[1]
  end
  -- Pulled from this server (excluded): its diagnostics are no reason to wait.
  local function one() return { { lnum = 0, col = 0, message = 'an error', severity = vim.diagnostic.severity.ERROR } } end
  vim.diagnostic.set(vim.lsp.diagnostic.get_namespace(id, false), bufnr, one())
  local entry = after_typing('c_excluded')
  expect.equality({ entry.analysed, entry.quiet, entry.items }, { false, true, {} })
  -- Another source's diagnostic stands: not quiet.
  vim.diagnostic.set(vim.api.nvim_create_namespace('lsap_test_other'), bufnr, one())
  entry = after_typing('c_other')
  expect.equality({ entry.analysed, entry.quiet, #entry.items }, { false, false, 1 })
end

return T
