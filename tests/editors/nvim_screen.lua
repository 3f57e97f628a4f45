-- Interactive Neovim for the tmux screen test (tests/editors/test_neovim.py): loads the documented config
-- (docs/neovim/warpwise.lua), opens a CUDA file and puts the cursor on a line, then waits for the user
-- (the test reads what is drawn with `tmux capture-pane` and quits it).
-- Environment: WARPWISE_LUA, WARPWISE_CMD (JSON list), WARPWISE_FILE, WARPWISE_LINE.
local warpwise = dofile(os.getenv('WARPWISE_LUA'))
warpwise.setup({ cmd = vim.json.decode(os.getenv('WARPWISE_CMD')) })
vim.o.number = true
vim.o.wrap = false
vim.o.showmode = false
vim.cmd('filetype on')
vim.cmd.edit(vim.fn.fnameescape(os.getenv('WARPWISE_FILE')))
vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv('WARPWISE_LINE')), 0 })
vim.cmd('normal! zz')
