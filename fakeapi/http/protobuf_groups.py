"""The protobuf field tables of the other API groups' messages: what kubectl's typed
clients send (leases, priority classes, RBAC, tokens and reviews; workloads, services,
secrets, quotas, autoscalers, budgets, certificates, ingresses). See
`fakeapi.http.protobuf_core` for the table format.
"""

from __future__ import annotations

from fakeapi.http.protobuf_core import (
    KEEP,
    MessageField,
    b,
    bmap,
    by,
    i32,
    i64,
    inline,
    ios,
    m,
    mt,
    q,
    qmap,
    ri32,
    rm,
    rs,
    s,
    smap,
    t,
)

OTHER_GROUPS: dict[str, dict[int, MessageField]] = {
    # coordination.k8s.io/v1
    "Lease": {1: m("metadata", "ObjectMeta"), 2: m("spec", "LeaseSpec")},
    "LeaseSpec": {
        1: s("holderIdentity", KEEP), 2: i32("leaseDurationSeconds", KEEP),
        3: mt("acquireTime"), 4: mt("renewTime"), 5: i32("leaseTransitions", KEEP),
        6: s("strategy", KEEP), 7: s("preferredHolder", KEEP),
    },
    # scheduling.k8s.io/v1
    "PriorityClass": {
        1: m("metadata", "ObjectMeta"), 2: i32("value", KEEP), 3: b("globalDefault"),
        4: s("description"), 5: s("preemptionPolicy", KEEP),
    },
    # rbac.authorization.k8s.io/v1
    "Role": {1: m("metadata", "ObjectMeta"), 2: rm("rules", "PolicyRule")},
    "ClusterRole": {
        1: m("metadata", "ObjectMeta"), 2: rm("rules", "PolicyRule"),
        3: m("aggregationRule", "AggregationRule"),
    },
    "AggregationRule": {1: rm("clusterRoleSelectors", "LabelSelector")},
    "PolicyRule": {
        1: rs("verbs"), 2: rs("apiGroups"), 3: rs("resources"), 4: rs("resourceNames"),
        5: rs("nonResourceURLs"),
    },
    "RoleBinding": {
        1: m("metadata", "ObjectMeta"), 2: rm("subjects", "Subject"), 3: m("roleRef", "RoleRef"),
    },
    "ClusterRoleBinding": {
        1: m("metadata", "ObjectMeta"), 2: rm("subjects", "Subject"), 3: m("roleRef", "RoleRef"),
    },
    "RoleRef": {1: s("apiGroup", KEEP), 2: s("kind", KEEP), 3: s("name", KEEP)},
    "Subject": {1: s("kind", KEEP), 2: s("apiGroup"), 3: s("name", KEEP), 4: s("namespace")},
    # authentication.k8s.io/v1 (`kubectl create token`)
    "TokenRequest": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "TokenRequestSpec"),
        3: m("status", "TokenRequestStatus"),
    },
    "TokenRequestSpec": {
        1: rs("audiences"), 4: i64("expirationSeconds", KEEP),
        3: m("boundObjectRef", "BoundObjectReference"),
    },
    "BoundObjectReference": {1: s("kind"), 2: s("apiVersion"), 3: s("name"), 4: s("uid")},
    "TokenRequestStatus": {1: s("token", KEEP), 2: t("expirationTimestamp")},
    # authorization.k8s.io/v1 and authentication.k8s.io/v1 reviews (`kubectl auth`); the
    # status is the server's to fill, and field/label selector attributes are not read
    "SelfSubjectAccessReview": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "SelfSubjectAccessReviewSpec"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: m("resourceAttributes", "ResourceAttributes"),
        2: m("nonResourceAttributes", "NonResourceAttributes"),
    },
    "ResourceAttributes": {
        1: s("namespace"), 2: s("verb"), 3: s("group"), 4: s("version"), 5: s("resource"),
        6: s("subresource"), 7: s("name"),
    },
    "NonResourceAttributes": {1: s("path"), 2: s("verb")},
    "SubjectAccessReview": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "SubjectAccessReviewSpec"),
    },
    "SubjectAccessReviewSpec": {
        1: m("resourceAttributes", "ResourceAttributes"),
        2: m("nonResourceAttributes", "NonResourceAttributes"), 3: s("user"), 4: rs("groups"),
        6: s("uid"),
    },
    "SelfSubjectRulesReview": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "SelfSubjectRulesReviewSpec"),
    },
    "SelfSubjectRulesReviewSpec": {1: s("namespace")},
    "SelfSubjectReview": {1: m("metadata", "ObjectMeta")},
}

WORKLOADS: dict[str, dict[int, MessageField]] = {
    # apps/v1, batch/v1, core Secret/Service/ResourceQuota/LimitRange, policy/v1,
    # autoscaling/v2, certificates.k8s.io/v1 and networking.k8s.io/v1 Ingress: what kubectl
    # create/expose/autoscale/drain/certificate send
    "HorizontalPodAutoscaler": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "HorizontalPodAutoscalerSpec"),
    },
    "HorizontalPodAutoscalerSpec": {
        1: m("scaleTargetRef", "CrossVersionObjectReference"), 2: i32("minReplicas", KEEP),
        3: i32("maxReplicas", KEEP), 4: rm("metrics", "MetricSpec"),
        5: m("behavior", "HorizontalPodAutoscalerBehavior"),
    },
    "CrossVersionObjectReference": {1: s("kind", KEEP), 2: s("name", KEEP), 3: s("apiVersion")},
    "MetricSpec": {
        1: s("type", KEEP), 2: m("object", "ObjectMetricSource"),
        3: m("pods", "PodsMetricSource"), 4: m("resource", "ResourceMetricSource"),
        7: m("containerResource", "ContainerResourceMetricSource"),
        5: m("external", "ExternalMetricSource"),
    },
    "ObjectMetricSource": {
        1: m("describedObject", "CrossVersionObjectReference"), 2: m("target", "MetricTarget"),
        3: m("metric", "MetricIdentifier"),
    },
    "PodsMetricSource": {1: m("metric", "MetricIdentifier"), 2: m("target", "MetricTarget")},
    "ResourceMetricSource": {1: s("name", KEEP), 2: m("target", "MetricTarget")},
    "ContainerResourceMetricSource": {
        1: s("name", KEEP), 2: m("target", "MetricTarget"), 3: s("container", KEEP),
    },
    "ExternalMetricSource": {1: m("metric", "MetricIdentifier"), 2: m("target", "MetricTarget")},
    "MetricIdentifier": {1: s("name", KEEP), 2: m("selector", "LabelSelector")},
    "MetricTarget": {
        1: s("type", KEEP), 2: q("value"), 3: q("averageValue"),
        4: i32("averageUtilization", KEEP),
    },
    "HorizontalPodAutoscalerBehavior": {
        1: m("scaleUp", "HPAScalingRules"), 2: m("scaleDown", "HPAScalingRules"),
    },
    "HPAScalingRules": {
        3: i32("stabilizationWindowSeconds", KEEP), 1: s("selectPolicy", KEEP),
        2: rm("policies", "HPAScalingPolicy"), 4: q("tolerance"),
    },
    "HPAScalingPolicy": {1: s("type", KEEP), 2: i32("value", KEEP), 3: i32("periodSeconds", KEEP)},
    "ResourceQuota": {1: m("metadata", "ObjectMeta"), 2: m("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: qmap("hard"), 2: rs("scopes"), 3: m("scopeSelector", "ScopeSelector")},
    "ScopeSelector": {1: rm("matchExpressions", "ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: s("scopeName", KEEP), 2: s("operator", KEEP), 3: rs("values"),
    },
    "LimitRange": {1: m("metadata", "ObjectMeta"), 2: m("spec", "LimitRangeSpec")},
    "LimitRangeSpec": {1: rm("limits", "LimitRangeItem")},
    "LimitRangeItem": {
        1: s("type", KEEP), 2: qmap("max"), 3: qmap("min"), 4: qmap("default"),
        5: qmap("defaultRequest"), 6: qmap("maxLimitRequestRatio"),
    },
    "Deployment": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "DeploymentSpec"),
        3: m("status", "DeploymentStatus"),
    },
    "DeploymentSpec": {
        1: i32("replicas", KEEP), 2: m("selector", "LabelSelector"),
        3: m("template", "PodTemplateSpec"), 4: m("strategy", "DeploymentStrategy"),
        5: i32("minReadySeconds"), 6: i32("revisionHistoryLimit", KEEP), 7: b("paused"),
        9: i32("progressDeadlineSeconds", KEEP),
    },
    "DeploymentStrategy": {1: s("type"), 2: m("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: ios("maxUnavailable"), 2: ios("maxSurge")},
    "DeploymentStatus": {
        1: i64("observedGeneration"), 2: i32("replicas"), 3: i32("updatedReplicas"),
        7: i32("readyReplicas"), 4: i32("availableReplicas"), 5: i32("unavailableReplicas"),
        9: i32("terminatingReplicas", KEEP), 6: rm("conditions", "DeploymentCondition"),
        8: i32("collisionCount", KEEP),
    },
    "DeploymentCondition": {
        1: s("type", KEEP), 2: s("status", KEEP), 6: t("lastUpdateTime"),
        7: t("lastTransitionTime"), 4: s("reason"), 5: s("message"),
    },
    "ReplicaSet": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "ReplicaSetSpec"),
        3: m("status", "ReplicaSetStatus"),
    },
    "ReplicaSetSpec": {
        1: i32("replicas", KEEP), 4: i32("minReadySeconds"), 2: m("selector", "LabelSelector"),
        3: m("template", "PodTemplateSpec"),
    },
    "ReplicaSetStatus": {
        1: i32("replicas", KEEP), 2: i32("fullyLabeledReplicas"), 4: i32("readyReplicas"),
        5: i32("availableReplicas"), 7: i32("terminatingReplicas", KEEP),
        3: i64("observedGeneration"), 6: rm("conditions", "ReplicaSetCondition"),
    },
    "ReplicaSetCondition": {
        1: s("type", KEEP), 2: s("status", KEEP), 3: t("lastTransitionTime"), 4: s("reason"),
        5: s("message"),
    },
    "Job": {1: m("metadata", "ObjectMeta"), 2: m("spec", "JobSpec")},
    "JobSpec": {
        1: i32("parallelism", KEEP), 2: i32("completions", KEEP),
        3: i64("activeDeadlineSeconds", KEEP), 11: m("podFailurePolicy", "PodFailurePolicy"),
        16: m("successPolicy", "SuccessPolicy"), 7: i32("backoffLimit", KEEP),
        12: i32("backoffLimitPerIndex", KEEP), 13: i32("maxFailedIndexes", KEEP),
        4: m("selector", "LabelSelector"), 5: b("manualSelector", KEEP),
        6: m("template", "PodTemplateSpec"), 8: i32("ttlSecondsAfterFinished", KEEP),
        9: s("completionMode", KEEP), 10: b("suspend", KEEP), 14: s("podReplacementPolicy", KEEP),
        15: s("managedBy", KEEP),
    },
    "PodFailurePolicy": {1: rm("rules", "PodFailurePolicyRule")},
    "PodFailurePolicyRule": {
        1: s("action", KEEP), 2: m("onExitCodes", "PodFailurePolicyOnExitCodesRequirement"),
        3: rm("onPodConditions", "PodFailurePolicyOnPodConditionsPattern"),
    },
    "PodFailurePolicyOnExitCodesRequirement": {
        1: s("containerName", KEEP), 2: s("operator", KEEP), 3: ri32("values"),
    },
    "PodFailurePolicyOnPodConditionsPattern": {1: s("type", KEEP), 2: s("status", KEEP)},
    "SuccessPolicy": {1: rm("rules", "SuccessPolicyRule")},
    "SuccessPolicyRule": {1: s("succeededIndexes", KEEP), 2: i32("succeededCount", KEEP)},
    "CronJob": {1: m("metadata", "ObjectMeta"), 2: m("spec", "CronJobSpec")},
    "CronJobSpec": {
        1: s("schedule", KEEP), 8: s("timeZone", KEEP), 2: i64("startingDeadlineSeconds", KEEP),
        3: s("concurrencyPolicy"), 4: b("suspend", KEEP), 5: m("jobTemplate", "JobTemplateSpec"),
        6: i32("successfulJobsHistoryLimit", KEEP), 7: i32("failedJobsHistoryLimit", KEEP),
    },
    "JobTemplateSpec": {1: m("metadata", "ObjectMeta"), 2: m("spec", "JobSpec")},
    "Secret": {
        1: m("metadata", "ObjectMeta"), 5: b("immutable", KEEP), 2: bmap("data"),
        4: smap("stringData"), 3: s("type"),
    },
    "Service": {1: m("metadata", "ObjectMeta"), 2: m("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: rm("ports", "ServicePort"), 2: smap("selector"), 3: s("clusterIP"),
        18: rs("clusterIPs"), 4: s("type"), 5: rs("externalIPs"), 7: s("sessionAffinity"),
        8: s("loadBalancerIP"), 9: rs("loadBalancerSourceRanges"), 10: s("externalName"),
        11: s("externalTrafficPolicy"), 12: i32("healthCheckNodePort"),
        13: b("publishNotReadyAddresses"),
        14: m("sessionAffinityConfig", "SessionAffinityConfig"), 19: rs("ipFamilies"),
        17: s("ipFamilyPolicy", KEEP), 20: b("allocateLoadBalancerNodePorts", KEEP),
        21: s("loadBalancerClass", KEEP), 22: s("internalTrafficPolicy", KEEP),
        23: s("trafficDistribution", KEEP),
    },
    "ServicePort": {
        1: s("name"), 2: s("protocol"), 6: s("appProtocol", KEEP), 3: i32("port", KEEP),
        4: ios("targetPort"), 5: i32("nodePort"),
    },
    "SessionAffinityConfig": {1: m("clientIP", "ClientIPConfig")},
    "ClientIPConfig": {1: i32("timeoutSeconds", KEEP)},
    "PodDisruptionBudget": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "PodDisruptionBudgetSpec"),
    },
    "PodDisruptionBudgetSpec": {
        1: ios("minAvailable"), 2: m("selector", "LabelSelector"), 3: ios("maxUnavailable"),
        4: s("unhealthyPodEvictionPolicy", KEEP),
    },
    "Eviction": {1: m("metadata", "ObjectMeta"), 2: m("deleteOptions", "DeleteOptions")},
    "CertificateSigningRequest": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "CertificateSigningRequestSpec"),
        3: m("status", "CertificateSigningRequestStatus"),
    },
    "CertificateSigningRequestSpec": {
        1: by("request", KEEP), 7: s("signerName", KEEP), 8: i32("expirationSeconds", KEEP),
        5: rs("usages"), 2: s("username"), 3: s("uid"), 4: rs("groups"),
    },
    "CertificateSigningRequestStatus": {
        1: rm("conditions", "CertificateSigningRequestCondition"), 2: by("certificate"),
    },
    "CertificateSigningRequestCondition": {
        1: s("type", KEEP), 6: s("status", KEEP), 2: s("reason"), 3: s("message"),
        4: t("lastUpdateTime"), 5: t("lastTransitionTime"),
    },
    "Ingress": {1: m("metadata", "ObjectMeta"), 2: m("spec", "IngressSpec")},
    "IngressSpec": {
        4: s("ingressClassName", KEEP), 1: m("defaultBackend", "IngressBackend"),
        2: rm("tls", "IngressTLS"), 3: rm("rules", "IngressRule"),
    },
    "IngressBackend": {
        4: m("service", "IngressServiceBackend"), 3: m("resource", "TypedLocalObjectReference"),
    },
    "IngressServiceBackend": {1: s("name", KEEP), 2: m("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: s("name"), 2: i32("number")},
    "IngressRule": {1: s("host"), 2: inline("IngressRuleValue")},
    "IngressRuleValue": {1: m("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: rm("paths", "HTTPIngressPath")},
    "HTTPIngressPath": {1: s("path"), 3: s("pathType", KEEP), 2: m("backend", "IngressBackend")},
    "IngressTLS": {1: rs("hosts"), 2: s("secretName")},
}
