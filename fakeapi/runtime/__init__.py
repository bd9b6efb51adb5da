"""The component runtime: shared informers, work queues, the controller shape, a supervisor.

What every in-process component (controllers, scheduler, kubelets) stands on. It is a
client-side library over `fakeapi.client`: the API-server core never imports it.

Imports: `fakeapi.client`, `fakeapi.machinery`, `fakeapi.kube`; never the rest of the core
(not HTTP either: a component's extra routes are `component.Route`).
"""
