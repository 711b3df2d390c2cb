"""One module per language server: what the bridge asks of each (doc/architecture.md, Adding a
language server). `registry.adapter_for(name)` is the one way in; `adapter.Adapter` what an
adapter declares; `tsserver` the diagnostics pull vtsls's adapter asks for."""
