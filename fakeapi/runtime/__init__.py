"""The component runtime: shared informers, work queues, the controller shape, a supervisor.

What every in-process component (controllers, scheduler, kubelets) stands on. It is a
client-side library over `fakeapi.client`: the API-server core never imports it.
"""
