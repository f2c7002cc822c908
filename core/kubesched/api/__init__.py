"""The Kubernetes object model the scheduler reads, with no scheduling semantics.

``objects`` (Pod, Node, Taint, … parsed once from the API's JSON), ``quantity`` (resource
quantities), ``selectors`` (label and field selectors, node affinity terms), ``storage`` (the
storage kinds and the volume helpers kube keeps in component-helpers), ``validation``
(kube-apiserver's rules for the fields the scheduler reads) and ``manifests`` (a file of manifests
read into a cluster). The lowest layer: it imports nothing of kubesched but ``errors``.
"""
