"""What runs the engine: ``run`` (the in-cluster service with leader election, health and
metrics servers), ``simulate`` and ``whatif`` (offline and read-only what-ifs), ``startup``
(loading and checking a profile's plugins), ``extender_server`` (kubesched as an extender)."""
