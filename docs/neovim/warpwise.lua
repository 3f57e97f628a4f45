-- warpwise for Neovim (>= 0.10): starts `warpwise lsp` on CUDA buffers with vim.lsp.start.
--
-- Install: copy this file to ~/.config/nvim/lua/warpwise.lua, then in init.lua:
--   require('warpwise').setup({
--     cmd = { vim.fn.expand('~/venvs/warpwise/bin/warpwise'), 'lsp' },  -- default: warpwise on PATH
--     settings = { warpwise = { minShare = 0.05 } },                      -- merged into the defaults
--   })
-- Commands in CUDA buffers: :WarpwiseReport, :WarpwiseReload, :WarpwiseProfile, :WarpwiseTune [kernel].
-- Statusline: require('warpwise').status()  →  "warpwise: 1 profile · 2 kernels".
-- See docs/neovim.md.

local M = {}

M.defaults = {
  cmd = { 'warpwise', 'lsp' },
  filetypes = { 'cuda' },
  -- the project root: the nearest folder with one of these (else the file's folder)
  root_markers = { '.git', 'pyproject.toml', 'CMakeLists.txt', 'Makefile' },
  inlay_hints = true,
  codelens = true,
  -- answered to the server's workspace/configuration requests (section "warpwise")
  settings = {
    warpwise = {
      profiles = { '**/*.ncu-rep' },
      binaries = { '**/*.cubin' },
      minShare = 0.02,
      maxDiagnosticsPerFile = 20,
      severity = vim.empty_dict(), -- e.g. { hotLine = 'warning', global_memory_coalesce = 'error' }
      inlayHints = { enabled = true },
      ncuPath = 'ncu',
      profile = { command = {}, output = 'warpwise.ncu-rep' },
      tune = { iterations = 200, seed = 0, verifySamples = 10000 },
    },
  },
}

M.config = vim.deepcopy(M.defaults)
--- The last `warpwise/status` notification: { profiles = n, kernels = n, message = '...' }.
M.last_status = nil

local function plural(n, word)
  return string.format('%d %s%s', n, word, n == 1 and '' or 's')
end

--- Statusline text: "warpwise: 1 profile · 2 kernels" (empty before the server reported).
function M.status()
  local s = M.last_status
  if not s then
    return ''
  end
  if s.profiles == 0 then
    return 'warpwise: no profile'
  end
  return string.format('warpwise: %s · %s', plural(s.profiles, 'profile'), plural(s.kernels, 'kernel'))
end

-- client:request on 0.11+, client.request on 0.10
local function request(client, method, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function get_client(bufnr)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get({ bufnr = bufnr, name = 'warpwise' })[1]
end

--- Shows text in a read-only scratch split.
function M.show_text(text, title)
  vim.cmd('botright vnew')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  pcall(vim.api.nvim_buf_set_name, buf, title or 'warpwise report')
  return buf
end

--- Runs a server command; `on_result(result)` gets what it returned (errors are notified).
function M.execute(bufnr, command, arguments, on_result)
  local client = get_client(bufnr)
  if not client then
    vim.notify('warpwise: the language server is not running for this buffer', vim.log.levels.WARN)
    return
  end
  request(client, 'workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
    if err then
      vim.notify(string.format('warpwise: %s failed: %s', command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, bufnr)
end

local function show_report(bufnr, uri)
  M.execute(bufnr, 'warpwise.showReport', { uri }, function(text)
    if type(text) == 'string' then
      M.show_text(text, 'warpwise report')
    end
  end)
end

local function notify_result(result)
  if type(result) == 'string' and result ~= '' then
    vim.notify('warpwise: ' .. result)
  end
end

-- Code lenses name server commands; these run them client-side so their results are shown.
vim.lsp.commands['warpwise.showReport'] = function(command, ctx)
  show_report(ctx.bufnr, (command.arguments or {})[1] or vim.uri_from_bufnr(ctx.bufnr))
end
vim.lsp.commands['warpwise.tuneSchedule'] = function(command, ctx)
  M.execute(ctx.bufnr, 'warpwise.tuneSchedule', command.arguments or {}, notify_result)
end

local function on_attach(client, bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  local function cmd(name, fn, opts)
    vim.api.nvim_buf_create_user_command(bufnr, name, fn, opts or {})
  end
  cmd('WarpwiseReport', function()
    show_report(bufnr, uri)
  end, { desc = 'warpwise: show the text report' })
  cmd('WarpwiseReload', function()
    M.execute(bufnr, 'warpwise.reloadProfiles', {}, notify_result)
  end, { desc = 'warpwise: reload profiles' })
  cmd('WarpwiseProfile', function()
    local command = M.config.settings.warpwise.profile.command
    if not command or #command == 0 then
      vim.notify('warpwise: set settings.warpwise.profile.command to the program to profile', vim.log.levels.WARN)
      return
    end
    M.execute(bufnr, 'warpwise.profile', {}, notify_result)
  end, { desc = 'warpwise: run the configured program under Nsight Compute' })
  cmd('WarpwiseTune', function(a)
    local kernel = a.args ~= '' and a.args or vim.fn.input('Kernel to tune: ')
    if kernel == '' then
      return
    end
    M.execute(bufnr, 'warpwise.tuneSchedule', { { uri = uri, kernel = kernel } }, notify_result)
  end, { nargs = '?', desc = 'warpwise: tune the SASS schedule of a kernel (needs a GPU)' })

  if M.config.inlay_hints and client.server_capabilities.inlayHintProvider then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if M.config.codelens and client.server_capabilities.codeLensProvider then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
      buffer = bufnr,
      group = vim.api.nvim_create_augroup('warpwise_codelens_' .. bufnr, { clear = true }),
      callback = function()
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end,
    })
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

local handlers = {
  -- sent when the server has (re)loaded the profiles: update the statusline and the code lenses
  ['warpwise/status'] = function(_, result, ctx)
    M.last_status = result
    vim.cmd('redrawstatus')
    for _, bufnr in ipairs(vim.lsp.get_buffers_by_client_id(ctx.client_id)) do
      if M.config.codelens then
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end
      -- fetch and draw the inlay hints again: a workspace/inlayHint/refresh that arrives while an earlier
      -- request is in flight can leave the old (empty) answer on the screen (seen on cold starts)
      if M.config.inlay_hints and vim.lsp.inlay_hint.is_enabled({ bufnr = bufnr }) then
        vim.lsp.inlay_hint.enable(false, { bufnr = bufnr })
        vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
      end
    end
  end,
}

--- Starts (or reuses) the server for a buffer.
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = vim.fs.root(bufnr, M.config.root_markers) or vim.fs.dirname(name)
  return vim.lsp.start({
    name = 'warpwise',
    cmd = M.config.cmd,
    root_dir = root,
    settings = M.config.settings,
    handlers = handlers,
    on_attach = on_attach,
  }, { bufnr = bufnr })
end

--- Merges `opts` into the defaults and starts the server for every CUDA buffer.
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- an empty table is sent as a JSON list; severity must stay an object
  if next(M.config.settings.warpwise.severity or {}) == nil then
    M.config.settings.warpwise.severity = vim.empty_dict()
  end
  vim.filetype.add({ extension = { cu = 'cuda', cuh = 'cuda' } })
  vim.api.nvim_create_autocmd('FileType', {
    pattern = M.config.filetypes,
    group = vim.api.nvim_create_augroup('warpwise', { clear = true }),
    callback = function(args)
      M.start(args.buf)
    end,
  })
end

return M
