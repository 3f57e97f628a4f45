-- Headless Neovim driver for tests/editors/test_neovim.py: loads the documented config
-- (docs/neovim/warpwise.lua), opens a CUDA file, waits for what a user would see and writes it as JSON.
-- Environment: WARPWISE_LUA, WARPWISE_CMD (JSON list), WARPWISE_FILE, WARPWISE_OUT, WARPWISE_TIMEOUT_MS.
local out = { errors = {} }
local timeout = tonumber(os.getenv('WARPWISE_TIMEOUT_MS') or '60000')

local function label_text(label)
  if type(label) == 'string' then
    return label
  end
  local parts = {}
  for _, p in ipairs(label or {}) do
    parts[#parts + 1] = p.value
  end
  return table.concat(parts)
end

local function hover_text(contents)
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    parts[#parts + 1] = type(c) == 'string' and c or c.value
  end
  return table.concat(parts, '\n')
end

local ok, err = pcall(function()
  local warpwise = dofile(os.getenv('WARPWISE_LUA'))
  warpwise.setup({ cmd = vim.json.decode(os.getenv('WARPWISE_CMD')) })
  vim.cmd('filetype on')
  vim.cmd.edit(vim.fn.fnameescape(os.getenv('WARPWISE_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  out.nvim = tostring(vim.version())
  out.filetype = vim.bo[buf].filetype

  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  out.attached = vim.wait(timeout, function()
    return #get({ bufnr = buf, name = 'warpwise' }) > 0
  end, 50)
  local t0 = vim.uv.hrtime()
  vim.wait(timeout, function()
    return #vim.diagnostic.get(buf) > 0
  end, 100)
  out.diagnostics_ms = (vim.uv.hrtime() - t0) / 1e6
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    out.diagnostics[#out.diagnostics + 1] = {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, severity = d.severity,
      source = d.source, code = d.code, message = d.message,
    }
  end
  table.sort(out.diagnostics, function(a, b) return a.lnum < b.lnum end)

  -- hover on every diagnostic's line (where the squiggle starts)
  out.hovers = {}
  for _, d in ipairs(out.diagnostics) do
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = d.lnum, character = d.col } }
    local res = vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, timeout) or {}
    for _, r in pairs(res) do
      if r.result and r.result.contents then
        out.hovers[#out.hovers + 1] = { lnum = d.lnum, text = hover_text(r.result.contents) }
      end
    end
  end

  -- inlay hints as Neovim holds them for display (enabled by the config's on_attach)
  out.inlay_enabled = vim.lsp.inlay_hint.is_enabled({ bufnr = buf })
  vim.wait(timeout, function()
    return #vim.lsp.inlay_hint.get({ bufnr = buf }) > 0
  end, 100)
  out.inlay_hints = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    out.inlay_hints[#out.inlay_hints + 1] = {
      line = h.inlay_hint.position.line, character = h.inlay_hint.position.character,
      label = label_text(h.inlay_hint.label),
    }
  end

  -- no refresh here: the config must fetch the lenses once the server has loaded the profiles
  vim.wait(timeout, function()
    return #vim.lsp.codelens.get(buf) > 0
  end, 100)
  out.codelens = {}
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    out.codelens[#out.codelens + 1] = {
      line = l.range.start.line, title = l.command and l.command.title, command = l.command and l.command.command,
    }
  end

  -- the report through the config's :WarpwiseReport (opens a read-only scratch split)
  local before = #vim.api.nvim_list_bufs()
  vim.cmd('WarpwiseReport')
  vim.wait(timeout, function()
    return #vim.api.nvim_list_bufs() > before
  end, 50)
  local report_buf = vim.api.nvim_get_current_buf()
  if report_buf ~= buf then
    out.report = table.concat(vim.api.nvim_buf_get_lines(report_buf, 0, -1, false), '\n')
    out.report_modifiable = vim.bo[report_buf].modifiable
  end
  out.status = warpwise.status()
end)
if not ok then
  out.errors[#out.errors + 1] = tostring(err)
end
local f = assert(io.open(os.getenv('WARPWISE_OUT'), 'w'))
f:write(vim.json.encode(out))
f:close()
vim.cmd('qa!')
