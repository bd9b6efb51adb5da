"""Auth: who is asking (authentication, tokens, certificates, kubeconfig) and what they may do
(RBAC, authorization attributes, impersonation).

Imports: `fakeapi.machinery`."""
