"""The plugin contract: everything a plugin may use, and nothing of the runtime behind it.

The hookspecs (one per extension point), ``Status``, ``CycleState``, the results plugins return,
cluster events and queueing hints, ``NodeInfo`` and ``Snapshot``, waiting pods, the ``Handle``
a plugin is built with (and the ``PluginsRunner`` and ``ClusterBackend`` protocols behind it),
the plugin registry (entry-point discovery and the factory contract) and the shared plugin
helpers. kube-scheduler keeps the same split: ``pkg/scheduler/framework`` is the interface,
``framework/runtime`` the implementation (here ``kubesched.engine.runtime``).
"""
