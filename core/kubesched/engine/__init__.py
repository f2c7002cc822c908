"""The scheduling engine: queue → scheduling cycle → binding cycle over a ``ClusterBackend``.

``scheduler`` (the loop and the binding cycle), ``runtime`` (the framework runtime that calls
the plugins, with time limits and the per-call observer), ``algorithm`` (Filter/Score over the
snapshot), ``queue``, ``cache``, ``nominator``, ``event_handlers`` (cluster events into the
cache and queue), ``reuse`` (pod signatures and result reuse), ``extender`` (HTTP extenders),
``metrics`` and ``explain_recorder``. It knows backends only through the protocol in
``kubesched.framework.backend``.
"""
