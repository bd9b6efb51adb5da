"""Strategies of rbac.authorization.k8s.io/v1 roles and bindings: escalation prevention."""

from __future__ import annotations

from fakeapi.auth import authz
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Obj, Strategy


class RoleStrategy(Strategy):
    """Roles and ClusterRoles: same as upstream's policy-based role storage."""

    def admit(self, new: Obj, old: Obj | None, ctx: RequestContext) -> None:
        """No role may grant what its writer doesn't hold (unless they may `escalate`)."""
        authz.check_role_escalation(self.env.authorizer, ctx.requester, self.kind, new, old)


class RoleBindingStrategy(Strategy):
    """RoleBindings and ClusterRoleBindings: same as upstream's policy-based binding storage."""

    def admit(self, new: Obj, old: Obj | None, ctx: RequestContext) -> None:
        """No binding may grant a role its writer doesn't hold (unless they may `bind` it)."""
        authz.check_binding_escalation(self.env.authorizer, ctx.requester, self.kind, new, old)
