"""Authorization as the API server answers it: RBAC from Role and Binding manifests. The contract an authorizer
fulfils (attributes, decisions) is the authorizer library's, `kcel.libs.k8s_authz`."""
