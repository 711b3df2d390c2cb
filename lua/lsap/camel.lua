-- The CamelCase commands (doc/architecture.md, The human's side) and what each runs: the
-- modes that declare one (lsap.modes, generated), and `:LsapRequest`. A leaf, read at
-- start-up by plugin/lsap.lua to define them, and by lsap.commands to complete them.
return vim.tbl_extend('error', require('lsap.modes').camel, { LsapRequest = 'request' })
