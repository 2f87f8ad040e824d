"""kustomize trees read as `kustomize build` reads them: `kustomization.yaml` files, the resources they name, and
the patches they apply, so that `kcel check config/` checks each object as the build would emit it (patched), never
a patch file as if it were a whole object, and reports a finding at the file and line that wrote it."""
