"""`kcel lsp`: a language server for CEL in Kubernetes YAML (`analysis`: what a file holds and what the API server
says of it; `server`: the Language Server Protocol over pygls, the `kcel[lsp]` extra)."""
